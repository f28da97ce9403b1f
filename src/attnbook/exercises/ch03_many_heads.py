"""Chapter 3's coding exercise: count the parameters of multi-head attention by formula.

The reader writes ``mha_param_count(embed_dim, num_heads, bias=True, kdim=None, vdim=None)``
returning the number of parameters of ``torch.nn.MultiheadAttention(embed_dim, num_heads,
bias=bias, kdim=kdim, vdim=vdim)`` — without building one. :func:`check_param_count` compares the
answer with the count of a real :class:`~attnbook.mha.MultiHeadAttention` and, when it is wrong, names
the usual mistake: forgetting the biases, forgetting the output projection (the 786,432 of one of
the source articles), a count that grows with the number of heads, or ignoring ``kdim``/``vdim``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnbook.exercises.report import LearnerError, Report, as_int, call, library
from attnbook.i18n import N_, tr
from attnbook.mha import MultiHeadAttention

__all__ = ["check_param_count", "check_fixed_head_size", "mha_param_count_reference"]

ParamCount = Callable[..., int]


def mha_param_count_reference(
    embed_dim: int,
    num_heads: int,
    bias: bool = True,
    kdim: int | None = None,
    vdim: int | None = None,
) -> int:
    """The true count: the parameters of a real module (built on the meta device, so no memory)."""
    module = MultiHeadAttention(
        embed_dim, num_heads, bias=bias, kdim=kdim, vdim=vdim, device="meta"
    )
    return sum(p.numel() for p in module.parameters())


def _slips(E: int, H: int, bias: bool, kdim: int | None, vdim: int | None) -> dict[str, int]:
    """What each usual slip counts for these sizes, keyed by what it gets wrong."""
    kd = E if kdim is None else kdim
    vd = E if vdim is None else vdim
    weights = E * E + kd * E + vd * E + E * E
    biases = 4 * E if bias else 0
    missing = (
        tr("the output projection and the biases are missing")
        if bias
        else tr("the output projection is missing")
    )
    return {
        tr(
            "you counted the weights but not the biases (each of the four projections has E)"
        ): weights,
        tr(
            "this is 3·E², the source article's count (786,432 for E = 512): only the Q, K and V "
            "weights; {missing}"
        ).format(missing=missing): 3 * E * E,
        (
            tr("the output projection (E x E, plus E biases) is missing")
            if bias
            else tr("the output projection (E x E) is missing")
        ): weights - E * E + (3 * E if bias else 0),
        tr("each head does not get full E x E matrices: it uses a slice of E/H rows of each"): H
        * (weights + biases),
        tr("k_proj maps kdim features to E (weight E x kdim), v_proj maps vdim to E"): (
            4 * E * E + biases
        ),
        tr("with bias=False there are no biases to count"): weights + 4 * E,
    }


def check_param_count(mha_param_count: ParamCount) -> Report:
    """Run the reader's ``mha_param_count`` on known sizes and say what is right and wrong.

    Every size runs first; a slip is named only when it gives the learner's count for all of
    them (a count that is wrong in one way for one size is not taken as that slip)."""
    report = Report("mha_param_count", refused=library(mha_param_count_reference))
    sizes = [
        (512, 8, True, None, None),
        (512, 8, False, None, None),
        (512, 1, True, None, None),
        (512, 2, True, None, None),
        (512, 16, True, None, None),
        (12, 3, True, None, None),
        (64, 4, True, 32, 16),
        (64, 4, False, 32, 16),
    ]
    given: dict[tuple, object] = {}
    with report.refusing():
        for E, H, bias, kdim, vdim in sizes:
            try:
                given[E, H, bias, kdim, vdim] = call(
                    mha_param_count, E, H, bias=bias, kdim=kdim, vdim=vdim
                )
            except LearnerError as exc:
                given[E, H, bias, kdim, vdim] = exc
    answers = {size: as_int(g) for size, g in given.items() if not isinstance(g, LearnerError)}
    keys = list(_slips(*sizes[0]))  # the slips in order, as named for the first size
    named = [
        i
        for i in range(len(keys))
        if len(answers) == len(sizes)
        and all(list(_slips(*size).values())[i] == answers[size] for size in sizes)
        and any(
            list(_slips(*size).values())[i] != mha_param_count_reference(*size) for size in sizes
        )
    ]

    def case(*size: object) -> str | None:
        got = given[size]
        if isinstance(got, LearnerError):
            raise got
        answer = as_int(got)
        if answer is None:
            return tr(
                "return the count as an integer (a number of parameters is whole); got "
                "{given_type} {given!r}"
            ).format(given_type=type(got).__name__, given=got)
        expected = mha_param_count_reference(*size)
        if answer == expected:
            return None
        if len(named) == 1:
            return list(_slips(*size))[named[0]]
        return tr("expected {value:,}, got {answer:,}").format(value=expected, answer=answer)

    report.run("d_model = 512, 8 heads: 1,050,624 parameters", lambda: case(*sizes[0]))
    report.run("bias=False: 1,048,576 parameters", lambda: case(*sizes[1]))

    def any_number_of_heads() -> str | None:
        for size in sizes[2:5]:
            problem = case(*size)
            if problem is not None:
                return tr("with {heads} heads: {problem}").format(heads=size[1], problem=problem)
        return None

    report.run("the same count for 1, 2 and 16 heads", any_number_of_heads)
    report.run("a small module: embed_dim 12, 3 heads", lambda: case(*sizes[5]))
    report.run("keys and values of other sizes: kdim = 32, vdim = 16", lambda: case(*sizes[6]))
    report.run("kdim and vdim without biases", lambda: case(*sizes[7]))
    return report


def check_fixed_head_size(counts: dict[int, int]) -> Report:
    """Check ``{H: count}`` for a head size fixed at D = 64 (E = 64 H), H in 1, 2, 4, 8, 16."""
    report = Report(N_("parameters with a fixed head size"))
    heads = (1, 2, 4, 8, 16)

    def case() -> str | None:
        if not isinstance(counts, dict) or sorted(counts) != list(heads):
            got = sorted(counts) if isinstance(counts, dict) else type(counts).__name__
            return tr("give a dict with one count for each H in {heads}; got keys {got}").format(
                heads=heads, got=got
            )
        for H in heads:
            answer, E = as_int(counts[H]), 64 * H
            expected = mha_param_count_reference(E, H)
            if answer is None:
                return tr(
                    "H = {H}: give the count as an integer; got {type_counts_H___name}"
                ).format(H=H, type_counts_H___name=type(counts[H]).__name__)
            if answer == expected:
                continue
            if answer == mha_param_count_reference(512, H):
                return tr("H = {H}: that is the count for E = 512; here E = 64 H = {E}").format(
                    H=H, E=E
                )
            if answer == 4 * E * E:
                return tr("H = {H}: the four biases of E = {E} are missing").format(H=H, E=E)
            return tr("H = {H} (E = {E}): expected {expected:,}, got {answer:,}").format(
                H=H, E=E, expected=expected, answer=answer
            )
        return None

    report.run("E = 64 H: the count grows like H²", case)
    return report
