"""Chapter 8's checkers: the entropy of each head's attention rows, and switching one head off.

* ``my_head_entropy(weights, key_padding_mask)``: weights (N, H, S, S); the entropy (in nats)
  of each head's rows, averaged over the real (non-padding) query positions; (H,).
* ``my_replace_head(x, head, num_heads, value)``: the heads' outputs side by side, (N, S, H*D),
  as ``out_proj`` receives them; a new tensor with head ``head``'s D features set to ``value``
  (a number, or a (D,) tensor such as the head's mean). This is what zero and mean ablation do.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.cases import random_attention
from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor, library
from attnbook.i18n import N_, tr
from attnbook.interp.ablation import replace_head
from attnbook.interp.head_stats import head_entropy

__all__ = ["check_head_entropy", "check_replace_head"]

ATOL = 1e-4


def _one_layer_entropy(weights: Tensor, padding: Tensor) -> Tensor:
    """The library's answer for one layer's (N, H, S, S) weights: (H,)."""
    return head_entropy([weights], padding)[0]


def _per_sentence_first(weights: Tensor, padding: Tensor) -> Tensor:
    """The other defensible average: each sentence's mean over its real queries, then the
    mean over sentences (short sentences then weigh as much as long ones)."""
    plogp = torch.where(weights > 0, weights * weights.clamp_min(1e-30).log(), 0.0)
    rows = -plogp.sum(-1)  # (N, H, S)
    real = (~padding).float()[:, None, :]
    return ((rows * real).sum(-1) / real.sum(-1)).mean(0)


def check_head_entropy(my_head_entropy: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 8: the mean entropy of each head's attention rows, padding queries excluded.

    The mean is over all real query positions of all sentences together: every real query
    counts once (the average :func:`~attnbook.interp.head_stats.head_entropy` takes).
    """
    report = Report(N_("head entropy"), refused=library(head_entropy))

    def case(seed: int, N: int, H: int, S: int) -> Callable[[], str | None]:
        def run() -> str | None:
            weights, padding, _, _ = random_attention(seed, N, H, S)
            out = call(my_head_entropy, weights, padding)
            problem = expect_tensor(out, (H,), what="my_head_entropy")
            if problem is not None:
                return problem
            expected = _one_layer_entropy(weights, padding)
            if torch.isnan(out).any():
                return tr(
                    "got NaN: a zero weight gives 0 · log 0 = NaN in floating point; count 0 · log 0 as 0"
                )
            if torch.allclose(out, expected, atol=ATOL):
                return None
            if torch.allclose(
                out, _one_layer_entropy(weights, torch.zeros_like(padding)), atol=ATOL
            ):
                return tr(
                    "you average over padding queries too; average over real query positions only"
                )
            inverted = _one_layer_entropy(weights, ~padding)
            if padding.any() and torch.allclose(out, inverted, atol=ATOL):
                return tr(
                    "you averaged over the padding queries only: key_padding_mask is True on padding "
                    "(PyTorch's convention), so the real queries are ~key_padding_mask"
                )
            if torch.allclose(out, -expected, atol=ATOL):
                return tr("the sign is wrong: entropy is MINUS the sum of p log p")
            if torch.allclose(out, _per_sentence_first(weights, padding), atol=ATOL):
                return tr(
                    "you average per sentence first, then over sentences; this exercise takes one mean "
                    "over all real queries of all sentences (each query counts once). Both are "
                    "defensible; they differ when sentences have different lengths"
                )
            if torch.allclose(out, expected.mean().expand(H), atol=ATOL):
                return tr(
                    "every head got the same number, the mean over all heads: keep the heads apart and "
                    "average only over sentences and query positions, one value per head"
                )
            if torch.allclose(out, expected / torch.log(torch.tensor(2.0)), atol=ATOL):
                return tr("you used log base 2 (bits); the exercise asks for nats, the natural log")
            return tr("expected {value}, got {value2}").format(
                value=[round(x, 4) for x in expected.tolist()],
                value2=[round(x, 4) for x in out.tolist()],
            )

        return run

    def uniform() -> str | None:
        w = torch.full((1, 1, 4, 4), 0.25)
        out = call(my_head_entropy, w, torch.zeros(1, 4, dtype=torch.bool))
        problem = expect_tensor(out, (1,), what="my_head_entropy")
        if problem is not None:
            return problem
        if not torch.allclose(out, torch.tensor([4.0]).log(), atol=ATOL):
            return tr(
                "uniform weights over 4 keys have entropy log 4 = 1.386 nats; got {out_tolist}"
            ).format(out_tolist=out.tolist())
        return None

    report.run("6 sentences of different lengths, 3 heads", case(0, 6, 3, 7))
    report.run("9 sentences, 2 heads, 10 positions", case(1, 9, 2, 10))
    report.run("uniform attention over 4 keys gives log 4", uniform)
    weights, padding, _, _ = random_attention(2)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_head_entropy, ("weights", "key_padding_mask"), weights, padding),
    )
    return report


def _numbered(N: int, S: int, E: int) -> Tensor:
    """Entries 1, 2, 3, ...: no entry is 0, so every feature that was set shows."""
    return torch.arange(1.0, N * S * E + 1).reshape(N, S, E)


def _replace_mistake(x: Tensor, out: Tensor, head: int, H: int, value: Tensor | float) -> str:
    D = x.size(-1) // H
    interleaved = x.clone()
    interleaved[..., head::H] = value
    if torch.equal(out, interleaved):
        return tr(
            "you set every H-th feature (x[..., head::num_heads]); the heads sit side by side, "
            "as merge_heads puts them: head h is the block of features h*D to (h+1)*D - 1"
        )
    for other, words in ((head + 1, tr("the next head")), (head - 1, tr("the previous head"))):
        if 0 <= other < H and torch.equal(out, replace_head(x, other, H, value)):
            return tr(
                "you set {words}'s features; heads are counted from 0: head h starts at h*D"
            ).format(words=words)
    changed = (out != x).any(dim=(0, 1))  # (H*D,) which features differ
    inside = torch.zeros_like(changed)
    inside[head * D : (head + 1) * D] = True
    short = inside.clone()
    short[(head + 1) * D - 1] = False
    if torch.equal(changed, short):
        return tr(
            "only {D_1} of head {head}'s {D} features changed: slice ends are exclusive, so "
            "x[..., h*D:(h+1)*D] is the whole head (h*D:(h+1)*D - 1 leaves out its last feature)"
        ).format(D_1=D - 1, head=head, D=D)
    if torch.equal(changed, inside):
        block, before = out[..., head * D : (head + 1) * D], x[..., head * D : (head + 1) * D]
        if torch.equal(block, before * value) or torch.equal(block, before + value):
            return tr(
                "set the features, don't scale or shift them: head h's features become the value "
                "itself (x[..., h*D:(h+1)*D] = value), whatever they held before"
            )
    if changed.all():
        return tr("you set every feature; only head h's D features change, the other heads stay")
    if torch.equal(out, x):
        return tr(
            "nothing changed: return the new tensor with head h's features set (an empty slice? "
            "head h of num_heads is x[..., h*D:(h+1)*D], heads counted from 0)"
        )
    if not (changed & ~inside).any():
        block = out[..., head * D : (head + 1) * D]
        target = torch.as_tensor(value, dtype=x.dtype)
        if target.numel() > 1 and torch.allclose(block, target.mean().expand_as(block)):
            return tr(
                "only head {head}'s features changed, but all to one number: a (D,) value gives "
                "each of the head's D features its own number, the same at every position "
                "(broadcast it over N and S)"
            ).format(head=head)
        if (block == 0).all() and (target != 0).any():
            return tr(
                "you set head {head}'s features to 0; set them to the value passed in (0 for zero "
                "ablation, the head's mean for mean ablation)"
            ).format(head=head)
        return tr("only head {head}'s features changed, but not to the value passed in").format(
            head=head
        )
    return tr(
        "head {head} of {H} is features {head_D} to {head_1_D_1}; other features changed"
    ).format(head=head, H=H, head_D=head * D, head_1_D_1=(head + 1) * D - 1)


def check_replace_head(
    my_replace_head: Callable[[Tensor, int, int, Tensor | float], Tensor],
) -> Report:
    """Chapter 8: set one head's features of the concatenated head outputs (N, S, H*D).

    The reference is :func:`attnbook.interp.ablation.replace_head`.
    """
    report = Report(N_("replace one head"), refused=library(replace_head))

    def case(N: int, S: int, H: int, D: int, head: int, mean: bool) -> Callable[[], str | None]:
        def run() -> str | None:
            x = _numbered(N, S, H * D)
            value = -torch.arange(1.0, D + 1) if mean else 0.0
            out = call(my_replace_head, x, head, H, value)
            problem = expect_tensor(out, (N, S, H * D), what="my_replace_head")
            if problem is not None:
                return problem
            if torch.equal(out, replace_head(x, head, H, value)):
                return None
            return _replace_mistake(x, out, head, H, value)

        return run

    report.run("zero ablation of head 1 of 4 (D = 3)", case(2, 5, 4, 3, 1, mean=False))
    report.run("a mean (D,) into head 0 of 2 (D = 5)", case(3, 4, 2, 5, 0, mean=True))
    report.run("a mean into the last head, 3 of 4 (D = 2)", case(2, 3, 4, 2, 3, mean=True))
    report.run(
        "does not modify its input",
        lambda: changed_inputs(lambda x: my_replace_head(x, 1, 4, 0.0), ("x",), _numbered(2, 3, 8)),
    )
    return report
