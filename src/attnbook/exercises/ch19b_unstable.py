"""Checkers for the exercises of chapter 19's section on long inputs and unstable training.

* ``largest_dot(head_dim, scale_first)``: the largest ``|q·k|`` (the unscaled dot product of one
  query and one key) whose score float16 still holds, when the scale ``1/sqrt(head_dim)``
  multiplies the query first or the product after;
* ``my_rotate(x)``: rotary positions, compared with :func:`attnbook.positional.rotate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.report import (
    LearnerError,
    Report,
    call,
    changed_inputs,
    expect_tensor,
    library,
)
from attnbook.i18n import N_, tr
from attnbook.positional import rotate

__all__ = ["check_largest_dot", "check_rotate"]

FLOAT16_MAX = 65504.0


def check_largest_dot(largest_dot: Callable[[int, bool], float]) -> Report:
    """Check the reader's ``largest_dot(head_dim, scale_first)``.

    The function runs on all four cases first; a slip is named only when it gives every one of
    the learner's answers (the same number for both orders, say, is not "the cases swapped").
    """
    report = Report("largest_dot")

    def right(d: int, first: bool) -> float:
        return FLOAT16_MAX * math.sqrt(d) if first else FLOAT16_MAX

    mistakes = {
        N_("the two cases are swapped: scaling the query FIRST keeps the product small, so it is "
        "the case that allows the larger q·k"): lambda d, f: right(d, not f),
        N_("you gave 65504·sqrt(head_dim) whether or not the query is scaled first; when the "
        "scale multiplies after the product, q·k itself must fit in float16 — the scale comes "
        "too late to help"): lambda d, f: right(d, True),
        N_("you gave 65504 whether or not the query is scaled first; scaling the query first "
        "stores q·k / sqrt(head_dim), so q·k itself may be sqrt(head_dim) times larger"):
            lambda d, f: FLOAT16_MAX,
        N_("the scale is 1/sqrt(head_dim), not 1/head_dim"):
            lambda d, f: FLOAT16_MAX * d if f else FLOAT16_MAX,
        N_("scaling the query first lets q·k be sqrt(head_dim) times LARGER, not smaller"):
            lambda d, f: FLOAT16_MAX / math.sqrt(d) if f else FLOAT16_MAX,
        N_("float16's largest finite value is 65504 (2**16 = 65536 is already infinity)"):
            lambda d, f: 65536.0 * (math.sqrt(d) if f else 1.0),
        N_("that is float32's largest value; the question is about float16"):
            lambda d, f: float(torch.finfo(torch.float32).max) * (math.sqrt(d) if f else 1.0),
    }  # fmt: skip
    cases = [(d, first) for d in (16, 32, 64) for first in (False, True)]  # 32: not a square
    given: dict[tuple[int, bool], object] = {}
    for d, first in cases:
        try:
            given[d, first] = float(call(largest_dot, d, first))
        except LearnerError as exc:
            given[d, first] = exc
        except (TypeError, ValueError):
            given[d, first] = None

    def explains(wrong: Callable[[int, bool], float]) -> bool:
        return all(
            isinstance(given[c], float) and math.isclose(given[c], wrong(*c), rel_tol=1e-5)
            for c in cases
        )

    named = [why for why, wrong in mistakes.items() if explains(wrong)]

    def case(d: int, first: bool) -> Callable[[], str | None]:
        def run() -> str | None:
            value = given[d, first]
            if isinstance(value, LearnerError):
                raise value
            if value is None:
                got = call(largest_dot, d, first)
                return tr("return a number; got {got_type}").format(got_type=type(got).__name__)
            expected = right(d, first)
            if math.isclose(value, expected, rel_tol=1e-5):
                return None
            if named:
                return tr(named[0])
            return tr("expected {expected:.6g}; got {value:.6g}").format(
                expected=expected, value=value
            )

        return run

    for d, first in cases:
        where = tr("the query first") if first else tr("the product after")
        report.run(tr("head size {d}, scale on {where}").format(d=d, where=where), case(d, first))
    return report


def check_rotate(my_rotate: Callable[[Tensor], Tensor]) -> Report:
    """Check the reader's ``my_rotate(x)``: rotary positions for (..., L, D) features."""
    report = Report("my_rotate", refused=library(rotate))
    g = torch.Generator().manual_seed(0)

    def diagnose(x: Tensor, out: Tensor) -> str:
        L, D = x.shape[-2], x.shape[-1]
        close = lambda other: torch.allclose(out, other, atol=1e-5)  # noqa: E731
        if close(x):
            return tr("nothing was rotated: position p turns pair i by the angle p·θ_i")
        if close(rotate(x, start=1)):
            return tr("positions count from 0 (the first row is not rotated); you started at 1")
        back = torch.stack(  # rotated the other way
            (
                x[..., 0::2] * _cos(L, D) + x[..., 1::2] * _sin(L, D),
                -x[..., 0::2] * _sin(L, D) + x[..., 1::2] * _cos(L, D),
            ),
            dim=-1,
        ).flatten(-2)
        if close(back):
            return tr("the rotation turns the wrong way: (a, b) -> (a cos - b sin, a sin + b cos)")
        a, b = x[..., 0::2], x[..., 1::2]
        c, s = _cos(L, D), _sin(L, D)
        theta = 10000.0 ** (-torch.arange(0, D // 2, dtype=torch.float64) / D)  # base**(-i/D)
        if close(_turn(x, theta)):
            return tr("θ_i = 10000**(-2i/D) for pair i; you used 10000**(-i/D)")
        interleaved = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
        if close(interleaved.unflatten(-1, (D // 2, 2)).transpose(-2, -1).flatten(-2)):
            return tr(
                "the rotated values are right but in the wrong order: you concatenated all the new "
                "first members, then all the second ones; interleave them so that pair i lands back "
                "on features (2i, 2i+1) (torch.stack(..., dim=-1).flatten(-2))"
            )
        half = D // 2
        a, b = x[..., :half], x[..., half:]
        if close(torch.cat((a * c - b * s, a * s + b * c), dim=-1)):
            return tr(
                "you paired feature i with i + D/2 (the layout of GPT-NeoX and many libraries); this "
                "book's rotate() pairs neighbours (2i, 2i+1) — the same idea, a different order of "
                "features"
            )
        return tr("the rotated features differ from rotate(x)")

    def case(shape: tuple[int, ...]) -> Callable[[], str | None]:
        def run() -> str | None:
            x = torch.randn(*shape, generator=g)
            out = call(my_rotate, x)
            problem = expect_tensor(out, shape, what="my_rotate")
            if problem:
                return problem
            if torch.allclose(out, rotate(x), atol=1e-5):
                return changed_inputs(my_rotate, ["x"], x)
            return diagnose(x, out)

        return run

    report.run("one sequence of 5 positions, head size 8", case((5, 8)))
    report.run("batch and heads in front: (2, 3, 12, 16)", case((2, 3, 12, 16)))
    report.run(
        "relative: the score of rotated q and k depends only on their distance",
        lambda: _relative(my_rotate),
    )
    return report


def _angle(L: int, D: int) -> Tensor:
    theta = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    return torch.arange(L, dtype=torch.float64)[:, None] * theta  # (L, D/2)


def _cos(L: int, D: int) -> Tensor:
    return _angle(L, D).cos().float()


def _sin(L: int, D: int) -> Tensor:
    return _angle(L, D).sin().float()


def _turn(x: Tensor, theta: Tensor) -> Tensor:
    L = x.shape[-2]
    angle = torch.arange(L, dtype=torch.float64)[:, None] * theta
    c, s = angle.cos().float(), angle.sin().float()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


def _relative(my_rotate: Callable[[Tensor], Tensor]) -> str | None:
    q, k = torch.randn(1, 8), torch.randn(1, 8)
    rows = call(my_rotate, torch.cat([q] * 6))  # (6, 8): q at positions 0..5
    keys = call(my_rotate, torch.cat([k] * 6))
    if not isinstance(rows, Tensor) or rows.shape != (6, 8):
        return tr("my_rotate must return a (6, 8) tensor for a (6, 8) input")
    scores = [float(rows[i] @ keys[i - 2]) for i in range(2, 6)]  # distance 2 each time
    if max(scores) - min(scores) > 1e-4:
        return tr("q·k at distance 2 changes with the position: {value}").format(
            value=[round(s, 4) for s in scores]
        )
    return None
