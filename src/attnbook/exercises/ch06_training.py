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

from attnbook.exercises.report import Report, call, call_as_is, changed_inputs, expect_tensor
from attnbook.i18n import N_, tr

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
    """Record calls of F.cross_entropy and F.nll_loss (nn.CrossEntropyLoss and nn.NLLLoss call
    them too) while the block runs, also when the learner's module imported them by name
    (``from torch.nn.functional import cross_entropy``): either does the picking of the target's
    entry that the exercise asks for."""
    calls: list[str] = []
    namespace = getattr(fn, "__globals__", {})
    originals = {"cross_entropy": F.cross_entropy, "nll_loss": F.nll_loss}
    patched: list[tuple[object, str, object]] = []
    for name, original in originals.items():

        def watched(*args, _name=name, _original=original, **kwargs):
            calls.append(f"F.{_name}")
            return _original(*args, **kwargs)

        patched.append((F, name, original))
        setattr(F, name, watched)
        for alias, value in list(namespace.items()):
            if value is original:
                patched.append((namespace, alias, original))
                namespace[alias] = watched
    try:
        yield calls
    finally:
        for where, name, original in reversed(patched):
            if isinstance(where, dict):
                where[name] = original
            else:
                setattr(where, name, original)


def _gradient_problem(my_pointer_loss: Callable[[Tensor, Tensor], Tensor]) -> str | None:
    """None if backward through the reader's loss gives (softmax - one_hot) / N, finite, and 0 at
    the -inf positions; else what is wrong."""
    x, target = _logits(4)
    before = x.clone()  # the logits as given: an answer may still edit them in place
    x.requires_grad_(True)
    out = call_as_is(my_pointer_loss, x, target.clone())
    if not isinstance(out, Tensor) or out.shape != ():
        return tr("cannot check: the loss is not a scalar tensor (see above)")
    if not torch.allclose(
        out.detach().double(), F.cross_entropy(before, target).double(), atol=ATOL
    ):
        return tr("cannot check the gradient: the loss is wrong already (see above)")
    if not out.requires_grad:
        return tr(
            "the value is right but carries no gradient, so training could not use it: do not "
            "call .item(), .detach() or torch.tensor(...) on the loss; return the tensor that "
            "log_softmax and indexing compute"
        )
    (grad,) = torch.autograd.grad(out, x)
    if not torch.isfinite(grad).all():
        return tr("the gradient is not finite (NaN or inf); use log_softmax and pick by indexing")
    padding = torch.isinf(before)
    if (grad[padding] != 0).any():
        return tr("the gradient at the -inf (padding) positions must be exactly 0")
    expected = (before.softmax(-1) - F.one_hot(target, x.shape[-1])) / len(target)
    if not torch.allclose(grad, expected, atol=ATOL):
        return tr(
            "the gradient with respect to the logits should be (softmax - one_hot(target)) / N; "
            "it differs by up to {value:.2e}"
        ).format(value=(grad - expected).abs().max().item())
    return None


def check_pointer_loss(my_pointer_loss: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 6: compare the reader's pointer loss with ``F.cross_entropy``."""
    report = Report(N_("pointer loss"))

    def loss(x: Tensor, target: Tensor) -> Tensor | str:
        with _watch_cross_entropy(my_pointer_loss) as used:
            out = call(my_pointer_loss, x, target)
        if used:
            return tr(
                "the exercise asks you to write the loss without F.cross_entropy or F.nll_loss "
                "(or nn.CrossEntropyLoss, nn.NLLLoss): use log_softmax and pick the target's entry"
            )
        if isinstance(out, Tensor) and out.shape == x.shape[:1]:
            return tr(
                "return the MEAN over sentences, a scalar of shape (); you returned one loss per "
                "sentence, shape {out_shape}: add .mean()"
            ).format(out_shape=tuple(out.shape))
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
            if torch.isnan(out).any() and not padding:  # no 0 · log 0 without -inf logits
                return tr(
                    "not finite for large scores: exp() overflows, or log(softmax(x)) underflows to "
                    "log(0); use log_softmax, which never forms the probabilities"
                )
            if torch.isnan(out).any():
                return tr(
                    "got NaN {what}: 0 · log(0) = 0 · (-inf) is NaN; pick the target's log-probability "
                    "with indexing or gather instead of multiplying by a one-hot"
                ).format(what=tr(what))
            if not torch.isfinite(out):
                return tr(
                    "not finite for large scores: exp() overflows, or log(softmax(x)) underflows to "
                    "log(0); use log_softmax, which never forms the probabilities"
                )
            if torch.allclose(out, expected, atol=ATOL):
                return None
            if torch.allclose(out, -expected, atol=ATOL):
                return tr("the sign is wrong: the loss is MINUS the log-probability of the target")
            if torch.allclose(out, F.cross_entropy(x, target, reduction="sum"), atol=ATOL):
                return tr("you sum over sentences; take the mean")
            if torch.allclose(out, F.nll_loss(x, target), atol=ATOL):
                return tr("you use the raw scores as log-probabilities; apply log_softmax first")
            if torch.allclose(out, -x.softmax(-1).gather(1, target[:, None]).mean(), atol=ATOL):
                return tr("you take the probability, not its logarithm: use log_softmax")
            if torch.allclose(out, -x.log_softmax(0)[torch.arange(len(target)), target].mean()):
                return tr(
                    "you normalise over dim 0, the sentences; each sentence's softmax runs over its "
                    "positions, the last dimension: log_softmax(dim=-1)"
                )
            return tr("expected {expected:.5f}, got {out:.5f}").format(
                expected=expected.item(), out=out.item()
            )

        return case

    # The cases are made before report.run(): extraction does not see an N_() inside its call.
    finite = matches(0, N_("on finite scores"), padding=False)
    padded = matches(0, N_("with -inf on padding"), padding=True)
    another = matches(1, N_("on 7 x 9"), padding=True, N=7, S=9)
    large = matches(2, N_("for large scores"), padding=False, scale=100.0)
    report.run("equals F.cross_entropy on finite scores", finite)
    report.run("handles -inf on padding positions", padded)
    report.run("another batch: 7 sentences of 9 positions", another)
    report.run("stays finite for very large scores", large)
    report.run("its gradient trains the scores", lambda: _gradient_problem(my_pointer_loss))
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_pointer_loss, ("logits", "target"), *_logits(3)),
    )
    return report
