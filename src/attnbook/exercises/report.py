"""The harness every checker uses: run the learner's code safely, report in words.

* :func:`call` runs the learner's function on **fresh copies** of its inputs, so that a function
  that edits its inputs in place cannot corrupt the cases that follow, and marks exceptions
  raised inside it as the learner's (:class:`LearnerError`).
* :func:`changed_inputs` names the inputs a function modified in place.
* :func:`expect_tensor` checks what came back — a tensor, of the right shape and dtype — once,
  with a message that says what was expected.
* :class:`Report` collects one line per case. Only an exception raised inside the learner's
  code is reported as "your function raised"; anything else the checker could not handle says
  so, instead of blaming the learner.
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from attnbook.i18n import tr

__all__ = ["Report", "LearnerError", "as_int", "call", "changed_inputs", "expect_tensor", "fresh"]


class LearnerError(Exception):
    """An exception raised inside the learner's function; the original is ``__cause__``."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}")
        self.original = original


def fresh(value: Any) -> Any:
    """A deep copy of tensors, modules and containers of them (other values as they are)."""
    if isinstance(value, Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, torch.nn.Module):
        return copy.deepcopy(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        return type(value)(*(fresh(v) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(fresh(v) for v in value)
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    return value


def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` on fresh copies of the arguments; its exceptions become
    :class:`LearnerError`."""
    args, kwargs = fresh(args), fresh(kwargs)
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # the learner's code may fail in any way; it is theirs to fix
        raise LearnerError(exc) from exc


def changed_inputs(fn: Callable[..., Any], names: Sequence[str], *args: Any) -> str | None:
    """Call ``fn`` on copies of ``args`` and say which ones it modified in place (None if none)."""
    copies = fresh(args)
    try:
        fn(*copies)
    except Exception as exc:
        raise LearnerError(exc) from exc

    def same(a: Any, b: Any) -> bool:
        if isinstance(a, Tensor):
            return a.shape == b.shape and bool(torch.equal(a.detach(), b.detach()))
        if isinstance(a, torch.nn.Module):
            return all(same(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
        if isinstance(a, (tuple, list)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return True

    changed = [name for name, a, b in zip(names, args, copies) if not same(a, b)]
    if changed:
        return tr(
            "your function changed its input {names} in place (for example with x /= ... or "
            "x[...] = ...); compute a new tensor instead, the caller may still need it"
        ).format(names=", ".join(changed))
    return None


def expect_tensor(
    result: Any,
    shape: Sequence[int],
    *,
    dtype: torch.dtype | None = torch.float32,
    what: str = "your function",
) -> str | None:
    """None if ``result`` is a tensor of ``shape`` (and ``dtype``); otherwise what is wrong."""
    expected = tuple(shape)
    if not isinstance(result, Tensor):
        if isinstance(result, (tuple, list)):
            kinds = ", ".join(type(r).__name__ for r in result)
            return tr(
                "{what} must return one tensor of shape {expected}; got a {kind} ({kinds})"
            ).format(what=tr(what), expected=expected, kind=type(result).__name__, kinds=kinds)
        return tr("{what} must return a tensor of shape {expected}; got {kind}").format(
            what=tr(what), expected=expected, kind=type(result).__name__
        )
    if tuple(result.shape) != expected:
        scalar = tr(" (a scalar: reduce with .mean())") if expected == () else ""
        return tr("{what} must return shape {expected}{scalar}; got {shape}").format(
            what=tr(what), expected=expected, scalar=scalar, shape=tuple(result.shape)
        )
    if dtype is not None and result.dtype != dtype:
        return tr(
            "{what} must return {dtype}, the dtype of its inputs; got {got} (a tensor made with "
            "torch.tensor(...) or an integer division can change it)"
        ).format(what=tr(what), dtype=dtype, got=result.dtype)
    return None


def as_int(value: Any) -> int | None:
    """``value`` as an int if it is a whole number of an integer type (Python, NumPy, or a
    one-element integer tensor); None otherwise (floats, strings, bools)."""
    if isinstance(value, Tensor) and value.numel() == 1 and not value.is_floating_point():
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


@dataclass
class Report:
    """What a checker found. ``passed`` is True only if every case passed."""

    exercise: str
    lines: list[tuple[bool, str]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.lines) and all(ok for ok, _ in self.lines)

    def check(self, ok: bool, message: str) -> bool:
        """Record one case; ``message`` is the English text (shown in the current language)."""
        return self._record(ok, tr(message))

    def _record(self, ok: bool, shown: str) -> bool:
        self.lines.append((bool(ok), shown))
        return bool(ok)

    def run(self, description: str, case: Callable[[], str | None]) -> bool:
        """Run one case; it returns None when right or a sentence saying what is wrong."""
        try:
            problem = case()
        except LearnerError as exc:
            problem = tr("your function raised {error}").format(error=exc)
        except Exception as exc:  # a checker must report, never crash
            problem = tr(
                "the checker could not use your answer ({kind}: {error}); check that it returns "
                "what the exercise asks for"
            ).format(kind=type(exc).__name__, error=exc)
        description = tr(description)
        if problem is not None:
            description = tr("{description}: {problem}").format(
                description=description, problem=problem
            )
        return self._record(problem is None, description)  # translated above, once

    def __str__(self) -> str:
        verdict = tr("all checks passed") if self.passed else tr("not yet")
        head = tr("{exercise}: {verdict}").format(exercise=tr(self.exercise), verdict=verdict)
        body = [f"  {'✓' if ok else '✗'} {message}" for ok, message in self.lines]
        return "\n".join([head, *body])

    def _repr_markdown_(self) -> str:
        return "```text\n" + str(self) + "\n```"

    def __repr__(self) -> str:
        return str(self)
