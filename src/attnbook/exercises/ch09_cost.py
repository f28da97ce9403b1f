"""Chapter 9's checkers of the cost questions: the tiles a causal mask skips, the longest
sequence that fits, and where to put the checkpoints.

The online-softmax exercises (merging two blocks, attention over key blocks) are checked in
:mod:`attnbook.exercises.ch09_online_softmax`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from attnbook.exercises.report import Report, call
from attnbook.i18n import N_, tr

__all__ = ["check_causal_tiles", "check_how_long", "check_checkpoint_segments"]


def _causal_tiles(n: int, block: int) -> tuple[int, int]:
    """Tiles that chunked attention visits with is_causal, and those that need the mask inside.

    The same rule as :func:`~attnbook.efficient.chunked_attention` (and the chapter's tile map):
    a tile whose first key comes after its last query is skipped; one whose last key comes
    after its first query crosses the diagonal.
    """
    computed = masked = 0
    for q0 in range(0, n, block):
        q1 = min(q0 + block, n)
        for k0 in range(0, n, block):
            k1 = min(k0 + block, n)
            if k0 > q1 - 1:
                continue
            computed += 1
            masked += k1 - 1 > q0
    return computed, masked


def check_causal_tiles(computed: int, masked: int, fraction: float) -> Report:
    """Check the tile counts for n = 16,384, square blocks of 512, ``is_causal=True``: tiles
    computed, tiles that need the mask inside them, and the fraction of the non-causal work."""
    report = Report(N_("half the tiles"))
    n, b = 16_384, 512
    true_computed, true_masked = _causal_tiles(n, b)
    T = n // b

    def computed_case() -> str | None:
        if computed == true_computed:
            return None
        if computed == T * (T - 1) // 2:
            return tr("the diagonal tiles are computed too (with the mask inside): T(T+1)/2")
        if computed == T * T // 2:
            return tr("not exactly half: the T tiles on the diagonal are computed as well")
        return tr("with T = n / b = {T} blocks per side, expected {want}, got {got}").format(
            T=T, want=true_computed, got=computed
        )

    def masked_case() -> str | None:
        if masked == true_masked:
            return None
        return tr(
            "only the tiles on the diagonal cross it: expected {true_masked}, got {masked}"
        ).format(true_masked=true_masked, masked=masked)

    def fraction_case() -> str | None:
        expected = true_computed / T**2
        if abs(fraction - expected) < 5e-3:
            return None
        if abs(fraction - 100 * expected) < 0.05:
            return tr("give the fraction as a number between 0 and 1, not a percentage")
        return tr("expected {true_computed}/{T_T} = {expected:.4f}, got {fraction}").format(
            true_computed=true_computed, T_T=T * T, expected=expected, fraction=fraction
        )

    report.run("tiles computed", computed_case)
    report.run("tiles that need the mask", masked_case)
    report.run("fraction of the non-causal work", fraction_case)
    return report


def check_how_long(naive_max_n: int, chunked_max_tokens: int) -> Report:
    """Check the longest sequences that fit a hypothetical machine with 24 GiB of memory (8
    head-batches, d = 64, float32): naive attention (two n x n tensors) and chunked attention
    (Q, K, V, the output and 16 MiB of tiles: one 512 x 512 tile of scores and its weights)."""
    report = Report(N_("how long can a sequence be?"))
    memory = 24 * 2**30

    def naive_case() -> str | None:
        expected = math.isqrt(memory // (2 * 8 * 4))
        if naive_max_n == expected:
            return None
        if naive_max_n == math.isqrt(memory // (8 * 4)):
            return tr("the peak holds TWO n x n tensors per head-batch: the scores and the weights")
        if naive_max_n == math.isqrt(memory // (2 * 8)):
            return tr("each float32 takes 4 bytes")
        if naive_max_n == math.isqrt(24 * 10**9 // (2 * 8 * 4)):
            return tr("24 GiB is 24 · 2³⁰ bytes, not 24 · 10⁹ (that would be 24 GB)")
        return tr(
            "expected the largest n with 2 · 8 · n² · 4 bytes ≤ 24 GiB, {expected:,}; got {got:,}"
        ).format(expected=expected, got=naive_max_n)

    def chunked_case() -> str | None:
        expected = (memory - 16 * 2**20) // (4 * 8 * 64 * 4)
        if abs(chunked_max_tokens - expected) <= 0.02 * expected:
            return None
        in_gb = (24 * 10**9 - 16 * 2**20) // (4 * 8 * 64 * 4)
        if abs(chunked_max_tokens - in_gb) <= 0.02 * in_gb:
            return tr("24 GiB is 24 · 2³⁰ bytes, not 24 · 10⁹ (that would be 24 GB)")
        return tr(
            "four tensors of 8 x n x 64 floats of 4 bytes, plus 16 MiB of tiles: about "
            "{expected:,}; got {chunked_max_tokens:,}"
        ).format(expected=expected, chunked_max_tokens=chunked_max_tokens)

    report.run("naive attention", naive_case)
    report.run("chunked attention (within 2%)", chunked_case)
    return report


LAYERS = 24


def check_checkpoint_segments(
    memory: Callable[[int, float, float], float], best_segment: Callable[[float, float], float]
) -> Report:
    """Check ``memory(s, a, A)``, the peak memory of a 24-layer stack checkpointed in segments of
    ``s`` layers (inputs of size ``a`` kept at every segment's start, the activations ``A`` of
    each layer of the one segment being recomputed), and ``best_segment(a, A)``, the ``s`` that
    minimises it: √(24a/A), or the best whole number of layers."""
    report = Report(N_("where to put the checkpoints"))

    def right(s: int, a: float, A: float) -> float:
        return LAYERS / s * a + s * A

    # Each slip as a function of the number of segments n (24/s, or ceil(24/s) when s does not
    # divide 24: the last segment is shorter), s, a and A.
    slips = {
        N_(
            "only the input of each segment is kept: 24/s inputs of size a, not 24"
        ): lambda n, s, a, A: LAYERS * a + s * A,
        N_(
            "the segment being recomputed holds the activations of all its s layers at once: s·A, "
            "not A"
        ): lambda n, s, a, A: n * a + A,
        N_(
            "only one segment is recomputed at a time: its s layers' activations, s·A, not those of "
            "all 24 layers"
        ): lambda n, s, a, A: n * a + LAYERS * A,
        N_(
            "you swapped the roles: segments of s layers keep 24/s inputs and recompute s layers, "
            "24a/s + s·A"
        ): lambda n, s, a, A: s * a + n * A,
    }
    sizes = [
        (s, a, A) for s in (1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24) for a, A in ((1.0, 6.0), (3.0, 2.0))
    ]

    def counts(s: int) -> tuple[float, ...]:
        """The number of segments: 24/s, or the whole number of them when s does not divide 24."""
        return (LAYERS / s,) if LAYERS % s == 0 else (LAYERS / s, float(math.ceil(LAYERS / s)))

    def memory_case() -> str | None:
        values = []
        for s, a, A in sizes:
            got = call(memory, s, a, A)
            try:
                values.append(float(got))
            except (TypeError, ValueError):
                return tr("return a number; got {got_type}").format(got_type=type(got).__name__)

        def fits(rule: Callable[..., float]) -> bool:
            return all(
                any(math.isclose(v, rule(n, s, a, A)) for n in counts(s))
                for (s, a, A), v in zip(sizes, values)
            )

        if fits(lambda n, s, a, A: n * a + s * A):
            return None
        for why, slip in slips.items():
            if fits(slip):
                return tr(why)
        (s, a, A), value = next(
            (x, v)
            for x, v in zip(sizes, values)
            if not any(math.isclose(v, n * x[1] + x[0] * x[2]) for n in counts(x[0]))
        )
        return tr(
            "for s = {s}, a = {a:g}, A = {A:g}: expected 24a/s + s·A = {expected:g}, got {value:g}"
        ).format(s=s, a=a, A=A, expected=right(s, a, A), value=value)

    def best_case() -> str | None:
        # 24a/A = 4, 36, 16, 24, 60, 4.5 and 6.1875: the best whole number is sometimes below the
        # optimum √(24a/A) (2.12 -> 2) and sometimes above it though nearer below (2.49 -> 3).
        pairs = ((1.0, 6.0), (3.0, 2.0), (2.0, 3.0), (1.0, 1.0), (5.0, 2.0), (0.1875, 1.0))
        pairs += ((0.7734375, 3.0),)
        values = []
        for a, A in pairs:
            got = call(best_segment, a, A)
            try:
                values.append(float(got))
            except (TypeError, ValueError):
                return tr("return a number; got {got_type}").format(got_type=type(got).__name__)

        def whole_best(a: float, A: float) -> int:
            return min(range(1, LAYERS + 1), key=lambda n: right(n, a, A))

        def fine(a: float, A: float, s: float) -> bool:
            return math.isclose(s, math.sqrt(LAYERS * a / A), rel_tol=1e-6) or s == whole_best(a, A)

        if all(fine(a, A, s) for (a, A), s in zip(pairs, values)):
            return None
        best_slips = {
            N_(
                "the optimum is where the derivative -24a/s² + A is 0: s² = 24a/A, so s = √(24a/A) "
                "(you left out the square root)"
            ): lambda a, A: LAYERS * a / A,
            N_(
                "s = √(24a/A): many inputs (large a) call for longer segments, large activations "
                "for shorter ones; you have it upside down"
            ): lambda a, A: math.sqrt(LAYERS * A / a),
            N_("s = √(24a/A): the number of layers, 24, belongs under the root"): lambda a, A: (
                math.sqrt(a / A)
            ),
        }
        for why, slip in best_slips.items():
            if all(math.isclose(s, slip(a, A), rel_tol=1e-6) for (a, A), s in zip(pairs, values)):
                return tr(why)
        if len(set(values)) == 1:
            return tr(
                "you gave s = {s:g} whatever a and A are; the best segment depends on them: "
                "√(24a/A)"
            ).format(s=values[0])
        (a, A), s = next(((x, s) for x, s in zip(pairs, values) if not fine(*x, s)))
        if float(s).is_integer() and 1 <= s <= LAYERS:
            return tr(
                "for a = {a:g}, A = {A:g}: s = {s:g} gives 24a/s + s·A = {mine:.4g}, but s = "
                "{n} gives {least:.4g}; the best is √(24a/A) = {best:.4g}, or the whole number "
                "whose memory is least"
            ).format(
                a=a,
                A=A,
                s=s,
                mine=right(int(s), a, A),
                n=whole_best(a, A),
                least=right(whole_best(a, A), a, A),
                best=math.sqrt(LAYERS * a / A),
            )
        return tr(
            "for a = {a:g}, A = {A:g}: 24a/s + s·A is smallest at s = √(24a/A) = {best:.4g}; "
            "got {s:g}"
        ).format(a=a, A=A, best=math.sqrt(LAYERS * a / A), s=s)

    report.run("memory(s, a, A) for segments of 1 to 24 layers", memory_case)
    report.run("the best segment length for several a and A", best_case)
    return report
