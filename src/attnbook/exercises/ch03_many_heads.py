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

from attnbook.exercises.report import Report, as_int, call
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


def _diagnose(answer: int, E: int, H: int, bias: bool, kdim: int | None, vdim: int | None) -> str:
    kd = E if kdim is None else kdim
    vd = E if vdim is None else vdim
    weights = E * E + kd * E + vd * E + E * E
    biases = 4 * E
    if bias and answer == weights:
        return "you counted the weights but not the biases (each of the four projections has E)"
    if answer == 3 * E * E and (kd, vd) == (E, E):
        return (
            "this is 3·E², the source article's count (786,432 for E = 512): only the Q, K and "
            "V weights; the output projection"
            + (" and the biases are" if bias else " is")
            + " missing"
        )
    if answer == E * E + kd * E + vd * E + (3 * E if bias else 0):
        return "the output projection (E x E" + (", plus E biases" if bias else "") + ") is missing"
    if answer == H * (weights + (biases if bias else 0)):
        return "each head does not get full E x E matrices: it uses a slice of E/H rows of each"
    if (kd, vd) != (E, E) and answer == 4 * E * E + (biases if bias else 0):
        return "k_proj maps kdim features to E (weight E x kdim), v_proj maps vdim to E"
    if not bias and answer == weights + biases:
        return "with bias=False there are no biases to count"
    return f"expected {weights + (biases if bias else 0):,}, got {answer:,}"


def check_param_count(mha_param_count: ParamCount) -> Report:
    """Run the reader's ``mha_param_count`` on known sizes and say what is right and wrong."""
    report = Report("mha_param_count")

    def case(
        E: int, H: int, bias: bool = True, kdim: int | None = None, vdim: int | None = None
    ) -> Callable[[], str | None]:
        def run() -> str | None:
            given = call(mha_param_count, E, H, bias=bias, kdim=kdim, vdim=vdim)
            answer = as_int(given)
            if answer is None:
                return (
                    f"return the count as an integer (a number of parameters is whole); got "
                    f"{type(given).__name__} {given!r}"
                )
            if answer == mha_param_count_reference(E, H, bias, kdim, vdim):
                return None
            return _diagnose(answer, E, H, bias, kdim, vdim)

        return run

    report.run("d_model = 512, 8 heads: 1,050,624 parameters", case(512, 8))
    report.run("bias=False: 1,048,576 parameters", case(512, 8, bias=False))

    def any_number_of_heads() -> str | None:
        for heads in (1, 2, 16):
            problem = case(512, heads)()
            if problem is not None:
                return f"with {heads} heads: {problem}"
        return None

    report.run("the same count for 1, 2 and 16 heads", any_number_of_heads)
    report.run("a small module: embed_dim 12, 3 heads", case(12, 3))
    report.run(
        "keys and values of other sizes: kdim = 32, vdim = 16", case(64, 4, kdim=32, vdim=16)
    )
    report.run("kdim and vdim without biases", case(64, 4, bias=False, kdim=32, vdim=16))
    return report


def check_fixed_head_size(counts: dict[int, int]) -> Report:
    """Check ``{H: count}`` for a head size fixed at D = 64 (E = 64 H), H in 1, 2, 4, 8, 16."""
    report = Report("parameters with a fixed head size")
    heads = (1, 2, 4, 8, 16)

    def case() -> str | None:
        if not isinstance(counts, dict) or sorted(counts) != list(heads):
            got = sorted(counts) if isinstance(counts, dict) else type(counts).__name__
            return f"give a dict with one count for each H in {heads}; got keys {got}"
        for H in heads:
            answer, E = as_int(counts[H]), 64 * H
            expected = mha_param_count_reference(E, H)
            if answer is None:
                return f"H = {H}: give the count as an integer; got {type(counts[H]).__name__}"
            if answer == expected:
                continue
            if answer == mha_param_count_reference(512, H):
                return f"H = {H}: that is the count for E = 512; here E = 64 H = {E}"
            if answer == 4 * E * E:
                return f"H = {H}: the four biases of E = {E} are missing"
            return f"H = {H} (E = {E}): expected {expected:,}, got {answer:,}"
        return None

    report.run("E = 64 H: the count grows like H²", case)
    return report
