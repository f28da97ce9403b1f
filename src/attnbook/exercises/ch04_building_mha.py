"""Chapter 4's coding exercises: split into heads, merge them back, and adapt a mask.

* ``split_heads(x, num_heads)``: (N, L, E) -> (N, H, L, D), where head ``h`` holds the features
  ``h*D : (h+1)*D`` of every position, D = E // H.
* ``merge_heads(x)``: (N, H, L, D) -> (N, L, H*D), the inverse.
* ``article_mask(key_padding_mask, causal=False)``: a PyTorch padding mask (N, S), ``True`` on
  padding, turned into the mask that article 000's code expects (it keeps a score where the
  mask is nonzero), combined with a causal mask if asked.

:func:`check_split_heads` and :func:`check_merge_heads` compare the reader's functions with the
reference on tensors whose sizes all differ (so that a wrong order shows), and name the usual
mistakes: reshaping straight to (N, H, L, D), which cuts the sequence instead of the features;
interleaving features across heads; merging without moving the heads back next to the features;
and merging with ``view`` after a ``transpose`` (``view`` can always split one dimension in two,
but it can merge two only if they sit together in memory, which a transpose undoes).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook import mha
from attnbook.exercises.report import (
    LearnerError,
    Report,
    call,
    changed_inputs,
    expect_tensor,
    library,
)
from attnbook.i18n import N_, tr

__all__ = ["check_split_heads", "check_merge_heads", "check_article_mask", "check_kdim_shapes"]

# (N, L, H, D), all different within a shape, so that a mixed-up order gives a different tensor;
# several shapes, so that a function with sizes written into it fails.
SHAPES = [(2, 3, 4, 5), (3, 5, 2, 7), (1, 6, 3, 2)]


def _numbered(*shape: int) -> Tensor:
    """A tensor whose entries are 0, 1, 2, ...: every mix-up gives different numbers."""
    return torch.arange(float(torch.Size(shape).numel())).reshape(shape)


def _split_mistake(x: Tensor, out: Tensor, H: int) -> str:
    N, L, E = x.shape
    D = E // H
    if torch.equal(out, x.reshape(N, H, L, D)):
        return tr(
            "reshaping straight to (N, H, L, D) cuts the sequence, not the features; view as (N, "
            "L, H, D), then transpose(1, 2)"
        )
    if torch.equal(out, x.reshape(N, L, D, H).permute(0, 3, 1, 2)):
        return tr(
            "your heads take every H-th feature; head h must get the block of features h*D to "
            "(h+1)*D: view as (N, L, H, D), not (N, L, D, H)"
        )
    return tr("head h at position i must hold x[:, i, h*D:(h+1)*D]")


def check_split_heads(split_heads: Callable[[Tensor, int], Tensor]) -> Report:
    """Run the reader's ``split_heads(x, num_heads)`` and say what is right and wrong."""
    report = Report("split_heads", refused=library(mha.split_heads))

    def case(N: int, L: int, H: int, D: int) -> Callable[[], str | None]:
        def run() -> str | None:
            x = _numbered(N, L, H * D)
            out = call(split_heads, x, H)
            problem = expect_tensor(
                out,
                (N, H, L, D),
                what=tr("split_heads(x of {N_L_H_D}, {H})").format(N_L_H_D=(N, L, H * D), H=H),
            )
            if problem is not None:
                return problem
            if torch.equal(out, mha.split_heads(x, H)):
                return None
            return _split_mistake(x, out, H)

        return run

    for N, L, H, D in SHAPES:
        report.run(
            tr("x of shape {N_L_H_D} into {H} heads of {D}").format(
                N_L_H_D=(N, L, H * D), H=H, D=D
            ),
            case(N, L, H, D),
        )

    def non_contiguous() -> str | None:
        x = _numbered(3, 4, 6).transpose(0, 1)  # (N, L, E) = (4, 3, 6), not contiguous
        out = call(split_heads, x, 2)
        problem = expect_tensor(out, (4, 2, 3, 3), what="split_heads")
        if problem is not None:
            return problem
        return None if torch.equal(out, mha.split_heads(x, 2)) else _split_mistake(x, out, 2)

    report.run("an x that is not contiguous in memory", non_contiguous)
    report.run(
        "does not modify its input",
        lambda: changed_inputs(lambda x: split_heads(x, 4), ("x",), _numbered(2, 3, 20)),
    )
    return report


def check_merge_heads(merge_heads: Callable[[Tensor], Tensor]) -> Report:
    """Run the reader's ``merge_heads(x)`` and say what is right and wrong."""
    report = Report("merge_heads", refused=library(mha.merge_heads))
    advised: list[bool] = []  # the view advice is given once; later cases refer to it

    def merged(x: Tensor) -> Tensor | str:
        try:
            return call(merge_heads, x)
        except LearnerError as exc:
            if not (isinstance(exc.original, RuntimeError) and "view" in str(exc.original)):
                raise
            if advised:
                return tr("view fails here too (see above)")
            advised.append(True)
            return tr(
                "view cannot merge the heads after transpose(1, 2): heads stored contiguously, as "
                "attention returns them, are no longer contiguous once transposed; use reshape, or "
                ".contiguous().view(...)"
            )

    def case(N: int, L: int, H: int, D: int) -> Callable[[], str | None]:
        def run() -> str | None:
            x = _numbered(N, H, L, D)
            out = merged(x)
            if isinstance(out, str):
                return out
            problem = expect_tensor(
                out,
                (N, L, H * D),
                what=tr("merge_heads(x of {N_H_L_D})").format(N_H_L_D=(N, H, L, D)),
            )
            if problem is not None:
                return problem
            if torch.equal(out, mha.merge_heads(x)):
                return None
            if torch.equal(out, x.reshape(N, L, H * D)):
                return tr(
                    "reshaping (N, H, L, D) straight to (N, L, E) mixes positions; first transpose(1, 2) "
                    "to (N, L, H, D)"
                )
            return tr(
                "position i must hold head 0's features, then head 1's, ... for that position"
            )

        return run

    for N, L, H, D in SHAPES:
        report.run(
            tr("x of shape {N_H_L_D} back to {N_L_H_D}").format(
                N_H_L_D=(N, H, L, D), N_L_H_D=(N, L, H * D)
            ),
            case(N, L, H, D),
        )

    def round_trip() -> str | None:
        x = _numbered(2, 3, 20)
        # contiguous, as after attention: the bare split is a transposed view, and transposing
        # it back would let a view-based merge pass here and fail inside a model
        out = merged(mha.split_heads(x, 4).contiguous())  # (N, H, L, D)
        if isinstance(out, str):
            return out
        if not isinstance(out, Tensor) or out.shape != x.shape or not torch.equal(out, x):
            return tr("merge_heads(split_heads(x)) should give back x")
        return None

    def unchanged() -> str | None:
        x = _numbered(2, 4, 3, 5)
        if isinstance(merged(x), str):
            return tr("cannot check: view fails on this input too (see above)")
        return changed_inputs(merge_heads, ("x",), x)

    report.run("undoes split_heads exactly, on heads made contiguous as attention does", round_trip)
    report.run("does not modify its input", unchanged)
    return report


def _expected_keep(key_padding_mask: Tensor, causal: bool) -> Tensor:
    """Where the article's code must keep the score: (N, 1, L, S) with L = S."""
    keep = ~key_padding_mask[:, None, None, :]  # (N, 1, 1, S)
    if causal:
        S = key_padding_mask.size(1)
        keep = keep & torch.ones(S, S, dtype=torch.bool).tril()  # (N, 1, S, S)
    return keep


def check_article_mask(article_mask: Callable[..., Tensor]) -> Report:
    """Check ``article_mask(key_padding_mask, causal=False)``: a mask that article 000's
    ``masked_fill(mask == 0, -1e9)`` reads as "keep where nonzero", for scores (N, H, L, S)."""
    report = Report("article_mask")
    padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])  # right-padded, N=2, S=5
    H = 3

    def kept(causal: bool) -> Tensor | str:
        out = call(article_mask, padding, causal=causal)
        if not isinstance(out, Tensor):
            return tr("return a tensor the article can compare with 0; got {out_type}").format(
                out_type=type(out).__name__
            )
        try:
            return (out != 0).broadcast_to(2, H, 5, 5)
        except RuntimeError:
            return tr(
                "the article compares your mask with scores of shape (N, H, L, S) = {value}; shape "
                "{out_shape} does not broadcast to it (add the head and query dimensions: "
                "key_padding_mask[:, None, None, :])"
            ).format(value=(2, H, 5, 5), out_shape=tuple(out.shape))

    def case(causal: bool) -> Callable[[], str | None]:
        def run() -> str | None:
            keep = kept(causal)
            if isinstance(keep, str):
                return keep
            expected = _expected_keep(padding, causal).broadcast_to(keep.shape)
            if torch.equal(keep, expected):
                return None
            if torch.equal(keep, ~expected):
                return tr(
                    "the mask is inverted: the article KEEPS scores where the mask is nonzero"
                )
            inverted_padding = padding[:, None, None, :] & (
                torch.ones(5, 5, dtype=torch.bool).tril() if causal else True
            )
            if torch.equal(keep, inverted_padding.broadcast_to(keep.shape)):
                return tr("the padding part is inverted: padding (True) must become 0 (dropped)")
            if causal:
                no_pad = _expected_keep(padding, False).broadcast_to(keep.shape)
                for name, tri in [
                    (
                        tr("a query must also see itself: use tril(), not tril(-1)"),
                        torch.ones(5, 5).tril(-1),
                    ),
                    (
                        tr("that lets each query see the NEXT token too: tril(), not tril(1)"),
                        torch.ones(5, 5).tril(1),
                    ),
                    (
                        tr("triu keeps the future; a causal mask keeps the past: use tril()"),
                        torch.ones(5, 5).triu(),
                    ),
                ]:
                    if torch.equal(keep, no_pad & tri.bool()):
                        return name
                if torch.equal(keep, no_pad):
                    return tr("causal=True must also hide the keys after each query")
            return tr("some kept (or dropped) scores are wrong; compare with ~key_padding_mask")

        return run

    report.run("padding only: padded keys dropped, the rest kept", case(False))
    report.run("padding and causal: also no key after the query", case(True))
    report.run(
        "does not modify the padding mask",
        lambda: changed_inputs(
            lambda m: article_mask(m, causal=True), ("key_padding_mask",), padding
        ),
    )
    return report


def check_kdim_shapes(
    k_proj_weight: tuple[int, ...],
    output: tuple[int, ...],
    weights: tuple[int, ...],
    parameters: int,
) -> Report:
    """Check the shapes predicted for ``MultiHeadAttention(8, 2, kdim=12, vdim=12)`` with a query
    (1, 6, 8) and keys and values (1, 5, 12), per-head weights, and its parameter count."""
    report = Report(N_("cross-attention between widths"))
    module = mha.MultiHeadAttention(8, 2, kdim=12, vdim=12)
    out, w = module(
        torch.zeros(1, 6, 8),
        torch.zeros(1, 5, 12),
        torch.zeros(1, 5, 12),
        average_attn_weights=False,
    )
    truth = {
        "k_proj.weight": (
            tuple(module.k_proj.weight.shape),
            tuple(k_proj_weight),
            tr("a Linear from 12 to 8 features has weight (out, in) = (8, 12)"),
        ),
        "output": (
            tuple(out.shape),
            tuple(output),
            tr("one row per QUERY, in the query's width: (N, L, E) = (1, 6, 8)"),
        ),
        N_("per-head weights"): (
            tuple(w.shape),
            tuple(weights),
            tr("one (L, S) = (6, 5) matrix per head: (N, H, L, S)"),
        ),
    }
    for name, (expected, answer, hint) in truth.items():
        report.run(
            tr("the shape of {name}").format(name=tr(name)),
            lambda e=expected, a=answer, h=hint: (
                None if e == a else tr("expected {e}, got {a}: {h}").format(e=e, a=a, h=h)
            ),
        )
    count = sum(p.numel() for p in module.parameters())

    def parameter_count() -> str | None:
        if parameters == count:
            return None
        if parameters == 4 * 8 * 8 + 4 * 8:
            return tr("k_proj and v_proj map 12 features to 8: their weights are 8 x 12, not 8 x 8")
        if parameters == count - 32:
            return tr("the four biases (8 each) are missing")
        if parameters == count - (8 * 8 + 8):
            return tr(
                "out_proj is missing: there are four projections, q, k and v and the output "
                "projection out_proj (8 x 8 weights and 8 biases, 72 parameters)"
            )
        if parameters == count - (8 * 8 + 8) - 24:
            return tr("out_proj and the biases are missing: four projections, each with a bias")
        return tr("expected {count}, got {parameters}").format(count=count, parameters=parameters)

    report.run("the parameter count", parameter_count)
    return report
