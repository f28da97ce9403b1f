"""Chapter 15's checkers: cutting images into patches, and attention rollout.

* ``my_patchify(images, p)``: images (N, H, W) -> (N, P, p*p), patches row by row, each
  flattened row by row (what :func:`attnbook.models.vit.patchify` returns for one channel).
* ``my_rollout(weights)``: one (N, H, S, S) tensor per layer, first layer first -> (N, S, S),
  the head-averaged weights mixed half and half with the identity and multiplied through the
  layers, the last layer leftmost (:func:`attnbook.interp.rollout.attention_rollout`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor, library
from attnbook.i18n import N_, tr
from attnbook.interp.rollout import attention_rollout
from attnbook.models.vit import patchify

__all__ = ["check_patchify", "check_rollout"]

ATOL = 1e-5


def _numbered(N: int, H: int, W: int) -> Tensor:
    """Pixels 0, 1, 2, ... row by row: every pixel's value says where it was."""
    return torch.arange(float(N * H * W)).reshape(N, H, W)


def _patch_mistake(images: Tensor, p: int, out: Tensor) -> str | None:
    N, H, W = images.shape
    if torch.equal(out, images.reshape(N, -1, p * p)):
        return tr(
            "you reshaped without permuting: that cuts each image into strips of p*p consecutive "
            "pixels, not p x p squares; reshape to (N, H/p, p, W/p, p), then permute so that the "
            "two patch axes come before the two pixel axes"
        )
    x = images.reshape(N, H // p, p, W // p, p)
    by_columns = x.permute(0, 3, 1, 2, 4).reshape(N, -1, p * p)
    if torch.equal(out, by_columns):
        return tr(
            "your patches go down the columns first; number them row by row: patch i * (W/p) + j "
            "is in patch row i, column j"
        )
    transposed = x.permute(0, 1, 3, 4, 2).reshape(N, -1, p * p)
    if torch.equal(out, transposed):
        return tr("the pixels inside each patch are read column by column; flatten them row by row")
    return None


def check_patchify(my_patchify: Callable[[Tensor, int], Tensor]) -> Report:
    """Chapter 15: non-overlapping p x p patches, row by row, each flattened row by row."""
    report = Report("patchify", refused=library(patchify))

    def case(images: Tensor, p: int) -> Callable[[], str | None]:
        def run() -> str | None:
            N, H, W = images.shape
            P = (H // p) * (W // p)
            out = call(my_patchify, images, p)
            problem = expect_tensor(out, (N, P, p * p), what="my_patchify")
            if problem is not None:
                return problem
            expected = patchify(images, p)
            if torch.equal(out, expected):
                return None
            mistake = _patch_mistake(images, p, out)
            if mistake is not None:
                return mistake
            first = expected[0, 1].tolist()
            return tr("patch 1 of the first image should be {first}; got {out_0_1_tolist}").format(
                first=first, out_0_1_tolist=out[0, 1].tolist()
            )

        return run

    report.run("one numbered 4x4 image, 2x2 patches", case(_numbered(1, 4, 4), 2))
    report.run("three numbered 8x8 images, 2x2 patches", case(_numbered(3, 8, 8), 2))
    report.run("two numbered 8x8 images, 4x4 patches", case(_numbered(2, 8, 8), 4))
    report.run("a wide 4x6 image, 2x2 patches", case(_numbered(2, 4, 6), 2))
    images = torch.rand(2, 8, 8, generator=torch.Generator().manual_seed(0))
    report.run(
        "does not modify its input",
        lambda: changed_inputs(lambda x: my_patchify(x, 2), ("images",), images),
    )
    return report


def _weights(seed: int, layers: int, N: int = 3, H: int = 2, S: int = 5) -> list[Tensor]:
    """Random attention weights whose heads differ a lot (so averaging them matters)."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(N, H, S, S, generator=g) * 2).softmax(-1) for _ in range(layers)]


def _product(mixed: list[Tensor]) -> Tensor:
    out = mixed[0]
    for m in mixed[1:]:
        out = m @ out
    return out


def _rollout_mistake(weights: list[Tensor], out: Tensor) -> str | None:
    close = lambda other: torch.allclose(out, other, atol=ATOL)  # noqa: E731
    S = weights[0].size(-1)
    eye = torch.eye(S)
    mixed = [0.5 * w.mean(1) + 0.5 * eye for w in weights]
    wrong_order = mixed[0]
    for m in mixed[1:]:
        wrong_order = wrong_order @ m
    if len(weights) > 1 and close(wrong_order):
        return tr(
            "the layers are multiplied in the wrong order: each new layer goes on the LEFT, "
            "rollout = mixed @ rollout, so that the result is A_L ... A_2 A_1"
        )
    if close(_product([w.mean(1) for w in weights])):
        return tr("you left out the identity: mix each layer as 0.5 * mean weights + 0.5 * I")
    if close(_product([0.5 * w.sum(1) + 0.5 * eye for w in weights])) or close(
        _product([0.5 * w[:, 0] + 0.5 * eye for w in weights])
    ):
        return tr("average the weights over the heads (dim 1) before mixing with the identity")
    if close(_product([w.mean(1) + eye for w in weights])):
        return tr(
            "W + I has rows that sum to 2, and the product grows layer by layer; use 0.5 * W + "
            "0.5 * I (or renormalise the rows)"
        )
    if close(_product([0.5 * w.max(1).values + 0.5 * eye for w in weights])):
        return tr(
            "you took the maximum over the heads: its rows no longer sum to 1; average the heads "
            "(w.mean(1)) before mixing with the identity"
        )
    per_head = _product([0.5 * w + 0.5 * eye for w in weights])  # (N, H, S, S)
    if len(weights) > 1 and close(per_head.mean(1)):
        return tr(
            "you rolled out each head separately and averaged at the end; average the heads of "
            "each layer first, then multiply the layers"
        )
    if len(weights) > 1 and close(0.5 * _product([w.mean(1) for w in weights]) + 0.5 * eye):
        return tr(
            "the identity was added once, after multiplying; it stands for the residual "
            "connection of every layer, so mix each layer as 0.5 * W + 0.5 * I before multiplying"
        )
    transposed = _product([0.5 * w.mean(1).transpose(-1, -2) + 0.5 * eye for w in weights])
    if close(transposed) or close(transposed.transpose(-1, -2)):
        return tr(
            "the weights are transposed: row i of a layer's weights (N, H, S, S) is what "
            "position i takes from every position; do not transpose them or the result"
        )
    return None


def check_rollout(my_rollout: Callable[[list[Tensor]], Tensor]) -> Report:
    """Chapter 15: attention rollout with half the weight on the identity."""
    report = Report(N_("attention rollout"), refused=library(attention_rollout))

    def case(
        seed: int, layers: int, N: int = 3, H: int = 2, S: int = 5
    ) -> Callable[[], str | None]:
        def run() -> str | None:
            weights = _weights(seed, layers, N, H, S)
            out = call(my_rollout, weights)
            problem = expect_tensor(out, (N, S, S), what="my_rollout")
            if problem is not None:
                return problem
            expected = attention_rollout(weights, residual=0.5)
            if torch.allclose(out, expected, atol=ATOL):
                return None
            return _rollout_mistake(weights, out) or (
                tr("the first image's row 0 should be {value}; got {value2}").format(
                    value=[round(x, 4) for x in expected[0, 0].tolist()],
                    value2=[round(x, 4) for x in out[0, 0].tolist()],
                )
            )

        return run

    def identity() -> str | None:
        weights = [torch.eye(4).expand(2, 3, 4, 4)] * 2
        out = call(my_rollout, weights)
        problem = expect_tensor(out, (2, 4, 4), what="my_rollout")
        if problem is not None:
            return problem
        if not torch.allclose(out, torch.eye(4).expand(2, 4, 4), atol=ATOL):
            return tr("when every token attends only to itself, rollout must be the identity")
        return None

    report.run("every token attends to itself: the identity", identity)
    report.run("one layer", case(0, 1))
    report.run("two layers, 2 heads", case(1, 2))
    report.run("three layers, 4 heads, 7 tokens", case(2, 3, N=2, H=4, S=7))
    weights = _weights(3, 2)
    report.run(
        "does not modify its input",
        lambda: changed_inputs(my_rollout, ("weights",), weights),
    )
    return report
