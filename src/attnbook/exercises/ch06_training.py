"""Chapter 6's checker: the pointer loss.

``my_pointer_loss(logits, target)``: logits (N, S) with ``-inf`` on positions that cannot be
chosen (padding), target (N,) integer positions; the mean cross-entropy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor

__all__ = ["check_pointer_loss"]

ATOL = 1e-5


def _logits(seed: int = 0, N: int = 4, S: int = 6) -> tuple[Tensor, Tensor]:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(N, S, generator=g) * 2
    target = torch.randint(0, S - 2, (N,), generator=g)
    logits[0, S - 2 :] = float("-inf")  # two padding positions
    logits[N - 1, S - 1] = float("-inf")
    return logits, target


@contextlib.contextmanager
def _watch_cross_entropy(fn: Callable) -> Iterator[list[str]]:
    """Record calls of F.cross_entropy (nn.CrossEntropyLoss calls it too) while the block runs,
    also when the learner's module imported it by name (``from torch.nn.functional import
    cross_entropy``)."""
    calls: list[str] = []
    original = F.cross_entropy

    def watched(*args, **kwargs):
        calls.append("F.cross_entropy")
        return original(*args, **kwargs)

    namespace = getattr(fn, "__globals__", {})
    aliases = [name for name, value in namespace.items() if value is original]
    F.cross_entropy = watched
    for name in aliases:
        namespace[name] = watched
    try:
        yield calls
    finally:
        F.cross_entropy = original
        for name in aliases:
            namespace[name] = original


def check_pointer_loss(my_pointer_loss: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 6: compare the reader's pointer loss with ``F.cross_entropy``."""
    report = Report("pointer loss")

    def loss(x: Tensor, target: Tensor) -> Tensor | str:
        with _watch_cross_entropy(my_pointer_loss) as used:
            out = call(my_pointer_loss, x, target)
        if used:
            return (
                "the exercise asks you to write the loss without F.cross_entropy (or "
                "nn.CrossEntropyLoss): use log_softmax and pick the target's entry"
            )
        if isinstance(out, Tensor) and out.shape == x.shape[:1]:
            return (
                f"return the MEAN over sentences, a scalar of shape (); you returned one loss "
                f"per sentence, shape {tuple(out.shape)}: add .mean()"
            )
        return expect_tensor(out, (), what="my_pointer_loss") or out

    def matches(seed: int, what: str, *, padding: bool, N: int = 4, S: int = 6, scale: float = 1.0):
        def case() -> str | None:
            x, target = _logits(seed, N, S)
            if not padding:
                x[torch.isinf(x)] = -30.0
            x = x * scale
            out = loss(x, target)
            if isinstance(out, str):
                return out
            expected = F.cross_entropy(x, target)
            if torch.isnan(out).any():
                return (
                    f"got NaN {what}: 0 · log(0) = 0 · (-inf) is NaN; pick the target's "
                    "log-probability with indexing or gather instead of multiplying by a one-hot"
                )
            if not torch.isfinite(out):
                return (
                    "not finite for large scores: exp() overflows, or log(softmax(x)) underflows "
                    "to log(0); use log_softmax, which never forms the probabilities"
                )
            if torch.allclose(out, expected, atol=ATOL):
                return None
            if torch.allclose(out, -expected, atol=ATOL):
                return "the sign is wrong: the loss is MINUS the log-probability of the target"
            if torch.allclose(out, F.cross_entropy(x, target, reduction="sum"), atol=ATOL):
                return "you sum over sentences; take the mean"
            if torch.allclose(out, F.nll_loss(x, target), atol=ATOL):
                return "you use the raw scores as log-probabilities; apply log_softmax first"
            if torch.allclose(out, -x.softmax(-1).gather(1, target[:, None]).mean(), atol=ATOL):
                return "you take the probability, not its logarithm: use log_softmax"
            return f"expected {expected.item():.5f}, got {out.item():.5f}"

        return case

    report.run(
        "equals F.cross_entropy on finite scores", matches(0, "on finite scores", padding=False)
    )
    report.run(
        "handles -inf on padding positions", matches(0, "with -inf on padding", padding=True)
    )
    report.run(
        "another batch: 7 sentences of 9 positions", matches(1, "on 7 x 9", padding=True, N=7, S=9)
    )
    report.run(
        "stays finite for very large scores",
        matches(2, "for large scores", padding=False, scale=100.0),
    )
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_pointer_loss, ("logits", "target"), *_logits(3)),
    )
    return report
