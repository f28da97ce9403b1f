"""Chapter 9's checkers: merge two online-softmax blocks, and attention over key blocks.

* ``merge(state_a, state_b) -> state`` with ``state = (m, l, acc)`` of shapes (L, 1), (L, 1),
  (L, Ev): the running maximum, sum of exponentials and weighted sum of values of a block of keys
  (see :func:`attnbook.efficient.online_softmax_merge`).
* ``block_attention(query, key, value, block) -> output``: exact attention of (L, E) queries over
  (S, E) keys and (S, Ev) values, visiting the keys ``block`` at a time with the online softmax.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.cases import random_qkv
from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor
from attnbook.i18n import tr

__all__ = [
    "check_online_softmax_merge",
    "check_block_attention",
    "check_causal_tiles",
    "check_how_long",
]

State = tuple[Tensor, Tensor, Tensor]
ATOL = RTOL = 1e-5


def _state(scores: Tensor, values: Tensor) -> State:
    m = scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores - m.masked_fill(torch.isneginf(m), 0.0))
    return m, p.sum(dim=-1, keepdim=True), p @ values


def _close(a: Tensor, b: Tensor, atol: float = ATOL) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol, rtol=RTOL)


def _as_state(out: object, L: int, Ev: int) -> State | str:
    """The learner's (m, l, acc), checked once: a triple of tensors of the right shapes."""
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        return tr("return a triple (m, l, acc); got {out_type}").format(out_type=type(out).__name__)
    for name, t, shape in zip(("m", "l", "acc"), out, ((L, 1), (L, 1), (L, Ev))):
        problem = expect_tensor(t, shape, what=tr("the merged {name}").format(name=name))
        if problem is not None:
            return problem
    return tuple(out)


def check_online_softmax_merge(merge: Callable[[State, State], State]) -> Report:
    """Run the reader's ``merge`` on pairs of blocks and compare with a softmax over both."""
    report = Report("online softmax merge")
    g = torch.Generator().manual_seed(0)
    scores, values = 3 * torch.randn(4, 9, generator=g), torch.randn(9, 2, generator=g)
    a, b = _state(scores[:, :4], values[:4]), _state(scores[:, 4:], values[4:])
    expected = torch.softmax(scores, dim=-1) @ values

    def result(x: State, y: State) -> State | str:
        return _as_state(call(merge, x, y), 4, 2)

    def union() -> str | None:
        out = result(a, b)
        if isinstance(out, str):
            return out
        m, l, acc = out
        if not _close(m, scores.amax(dim=-1, keepdim=True)):
            return tr("m must be the larger of the two maxima")
        if _close(acc / l, expected):
            return None
        if _close(l, a[1] + b[1]) and _close(acc, a[2] + b[2]):
            return tr(
                "you add l and acc without rescaling: multiply each block's l and acc by exp(m_block - m)"
            )
        if _close(l, a[1] + b[1]):
            return tr(
                "you add l without rescaling: multiply each block's l by exp(m_block - m), as acc"
            )
        if _close(acc, a[2] + b[2]):
            return tr(
                "you add acc without rescaling: multiply each block's acc by exp(m_block - m), as l"
            )
        reversed_sign = (a[2] * torch.exp(m - a[0]) + b[2] * torch.exp(m - b[0])) / (
            a[1] * torch.exp(m - a[0]) + b[1] * torch.exp(m - b[0])
        )
        if _close(acc / l, reversed_sign):
            return tr(
                "the rescaling factor is exp(m_block - m), at most 1: it shrinks the block whose "
                "maximum is smaller; you used exp(m - m_block)"
            )
        return tr(
            "acc / l of the merged state is not the softmax over both blocks times the values"
        )

    def symmetric() -> str | None:
        one, two = result(a, b), result(b, a)
        if isinstance(one, str) or isinstance(two, str):
            return tr("cannot check: wrong result (see above)")
        if _close(one[2] / one[1], two[2] / two[1]):
            return None
        return tr("merging (a, b) and (b, a) must give the same output")

    def wrong_already() -> bool:
        """The ordinary case fails: later cases cannot tell what else is wrong."""
        return union() is not None

    cannot_check = tr("cannot check: wrong for ordinary blocks already (see above)")

    def huge() -> str | None:
        if wrong_already():
            return cannot_check
        big = _state(scores[:, :4] + 1000, values[:4]), _state(scores[:, 4:] + 1000, values[4:])
        out = result(*big)
        if isinstance(out, str):
            return out
        m, l, acc = out
        if not (torch.isfinite(l).all() and torch.isfinite(acc).all()):
            return tr(
                "scores near 1000 overflow: never exponentiate m itself, only differences such as "
                "m_a - m"
            )
        if _close(acc / l, expected):
            return None
        return tr("with all scores shifted by 1000 the output must not change")

    def empty() -> str | None:
        if wrong_already():
            return cannot_check
        nothing = (torch.full((4, 1), float("-inf")), torch.zeros(4, 1), torch.zeros(4, 2))
        out = result(a, nothing)
        if isinstance(out, str):
            return out
        m, l, acc = out
        if not (torch.isfinite(l).all() and torch.isfinite(acc).all()):
            return tr(
                "merging with an empty block (m = -inf, l = 0, acc = 0) gives NaN; exp(-inf - m) is "
                "0, but check -inf - (-inf)"
            )
        if not _close(acc / l, a[2] / a[1]):
            return tr("merging with an empty block must leave the output unchanged")
        out = result(nothing, nothing)
        if isinstance(out, str):
            return out
        if torch.isnan(out[1]).any() or torch.isnan(out[2]).any():
            return tr(
                "merging two empty blocks gives NaN: when both maxima are -inf, rescale against 0 instead"
            )
        return None

    def mixed() -> str | None:
        # Row 0: every key masked in both blocks; row 1: in block a only; row 2: in block b only;
        # row 3: none. A merge must decide per row, not once for the whole tensor.
        if wrong_already():
            return cannot_check
        masked = scores.clone()
        masked[0] = float("-inf")
        masked[1, :4] = float("-inf")
        masked[2, 4:] = float("-inf")
        out = result(_state(masked[:, :4], values[:4]), _state(masked[:, 4:], values[4:]))
        if isinstance(out, str):
            return out
        m, l, acc = out
        if not (torch.isfinite(l[0]).all() and torch.isfinite(acc[0]).all()):
            return tr(
                "a row whose keys are masked in both blocks gives NaN when the other rows are not "
                "empty: decide per row (e.g. torch.where(torch.isneginf(m), 0, m)), not with one if "
                "for the whole tensor"
            )
        if not (torch.isneginf(m[0]).all() and (l[0] == 0).all() and (acc[0] == 0).all()):
            return tr("a row empty in both blocks must stay empty: m = -inf, l = 0, acc = 0")
        expected_rows = torch.softmax(masked[1:], dim=-1) @ values
        if not (torch.isfinite(acc[1:] / l[1:]).all() and _close(acc[1:] / l[1:], expected_rows)):
            return tr(
                "rows empty in one block only (and ordinary rows next to them) must keep the other "
                "block's result; is the rescaling decided per row?"
            )
        return None

    report.run("acc / l equals the softmax over both blocks", union)
    report.run("the order of the blocks does not matter", symmetric)
    report.run("stays finite and exact for very large scores", huge)
    report.run("empty blocks (all keys masked) are harmless", empty)
    report.run("rows empty in both, one or neither block, side by side", mixed)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(merge, ("state_a", "state_b"), a, b),
    )
    return report


def _block_mistake(q: Tensor, k: Tensor, v: Tensor, block: int, out: Tensor) -> str:
    """The likeliest mistake behind a wrong ``block_attention`` output."""
    E, S = q.size(-1), k.size(0)
    for scale, mistake in [
        (1.0, tr("multiply the scores by 1 / sqrt(E) (E = {E} here)").format(E=E)),
        (1.0 / E, tr("scale the scores by 1 / sqrt(E), not 1 / E")),
        (1.0 / v.size(-1) ** 0.5, tr("E is the size of the queries and keys, not of the values")),
    ]:
        if _close(out, scaled_dot_product_attention(q, k, v, scale=scale)[0], atol=1e-4):
            return mistake
    full = S - S % block
    if 0 < full < S and _close(
        out, scaled_dot_product_attention(q, k[:full], v[:full])[0], atol=1e-4
    ):
        return tr("the last, shorter block is missing: range(0, S, block) visits it too")
    tail = S % block or block
    if _close(out, scaled_dot_product_attention(q, k[-tail:], v[-tail:])[0], atol=1e-4):
        return tr("only the last block counts: keep a running (m, l, acc) across the blocks")
    return tr(
        "the output differs from exact attention; is every block rescaled by exp(m_old - m_new)?"
    )


def check_block_attention(
    block_attention: Callable[[Tensor, Tensor, Tensor, int], Tensor],
) -> Report:
    """Compare the reader's ``block_attention(query, key, value, block)`` with exact attention."""
    report = Report("attention over key blocks")

    def blocks(size: int, seed: int = 1, L: int = 5, S: int = 11, E: int = 4, Ev: int = 3):
        def case() -> str | None:
            q, k, v = random_qkv(seed, L, S, E, Ev)
            out = call(block_attention, q, k, v, size)
            problem = expect_tensor(out, (L, Ev), what="block_attention")
            if problem is not None:
                return problem
            if _close(out, scaled_dot_product_attention(q, k, v)[0]):
                return None
            return _block_mistake(q, k, v, size, out)

        return case

    def huge() -> str | None:
        q, k, v = random_qkv(1, 5, 11, 4, 3)
        out = call(block_attention, q * 500, k, v, 3)
        problem = expect_tensor(out, (5, 3), what="block_attention")
        if problem is not None:
            return problem
        if not torch.isfinite(out).all():
            return tr("large scores overflow: subtract the running maximum before exponentiating")
        if _close(out, scaled_dot_product_attention(q * 500, k, v)[0], atol=1e-4):
            return None
        normal = call(block_attention, q, k, v, 3)
        if expect_tensor(normal, (5, 3)) is None and not _close(
            normal, scaled_dot_product_attention(q, k, v)[0]
        ):
            return tr("cannot check: wrong at ordinary scores already (see above)")
        return tr("wrong for large scores: subtract the running maximum before exponentiating")

    def very_negative() -> str | None:
        # Every score below -250: exp underflows unless the running maximum is subtracted. Integer
        # q, k in quarters: scores exact in float32 (near -2000 a rounding step is 1e-4 otherwise).
        q, k, v = random_qkv(6, 5, 11, 4, 3)
        q, k = -torch.round(1000 * (q.abs() + 0.5)), torch.round(4 * (k.abs() + 0.5)) / 4
        out = call(block_attention, q, k, v, 3)
        problem = expect_tensor(out, (5, 3), what="block_attention")
        if problem is not None:
            return problem
        if _close(out, scaled_dot_product_attention(q, k, v)[0], atol=1e-4):
            return None
        plain = random_qkv(1, 5, 11, 4, 3)
        normal = call(block_attention, *plain, 3)
        if expect_tensor(normal, (5, 3)) is None and not _close(
            normal, scaled_dot_product_attention(*plain)[0]
        ):
            return tr("cannot check: wrong at ordinary scores already (see above)")
        if torch.isfinite(out).all():
            return tr("wrong when every score is very negative: subtract the running maximum")
        large = call(block_attention, plain[0] * 500, plain[1], plain[2], 3)
        if expect_tensor(large, (5, 3)) is None and not torch.isfinite(large).all():
            return tr(
                "every score here is below -250 and exp underflows to 0, giving 0 / 0: subtract the "
                "running maximum before exponentiating"
            )
        return tr(
            "every score here is below -250 and the output is NaN: start the running maximum "
            "at -inf, not 0; with m = 0, exp(s - m) underflows to 0 for every key and acc / l "
            "is 0 / 0"
        )

    report.run("equals exact attention with blocks of 3 (the last block is shorter)", blocks(3))
    report.run("equals exact attention with blocks of 1", blocks(1))
    report.run("equals exact attention with one block larger than S", blocks(20))
    report.run(
        "other sizes: 7 queries, 16 keys of 8, values of 5, blocks of 4", blocks(4, 2, 7, 16, 8, 5)
    )
    report.run("stays finite for very large scores", huge)
    report.run("stays finite when every score is very negative", very_negative)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(
            lambda q, k, v: block_attention(q, k, v, 3),
            ("query", "key", "value"),
            *random_qkv(3, 4, 9, 4, 2),
        ),
    )
    return report


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
    report = Report("half the tiles")
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
    report = Report("how long can a sequence be?")
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
