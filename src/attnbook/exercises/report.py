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
* :class:`Refused` names a function the answer may not call — the library's own answer to the
  exercise, or autograd where the exercise asks for a derivation. While a report's case runs,
  :func:`call` watches for it (wherever the learner's code reaches it: the module, the learner's
  own globals, the ``attnbook`` modules that re-export it) and the case says so in words.
"""

from __future__ import annotations

import copy
import functools
import numbers
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from attnbook.i18n import N_, tr

__all__ = [
    "Report",
    "LearnerError",
    "Refused",
    "RefusedCall",
    "as_int",
    "call",
    "call_as_is",
    "changed_inputs",
    "expect_tensor",
    "fresh",
    "library",
]


class LearnerError(Exception):
    """An exception raised inside the learner's function; the original is ``__cause__``."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(f"{type(original).__name__}: {original}")
        self.original = original


@dataclass(frozen=True)
class Refused:
    """A function the learner's answer may not call: ``getattr(owner, name)``, shown as ``label``.

    ``when(*args, **kwargs)``, if given, says which calls count (e.g. only with one keyword).
    """

    owner: Any
    name: str
    label: str
    when: Callable[..., bool] | None = None


def library(*functions: Callable[..., Any]) -> tuple[Refused, ...]:
    """:class:`Refused` entries for library functions, found by their module and name."""
    return tuple(Refused(sys.modules[f.__module__], f.__name__, f.__name__) for f in functions)


class RefusedCall(LearnerError):
    """The learner's function called a :class:`Refused` function; ``names`` says which."""

    def __init__(self, names: Sequence[str]) -> None:
        Exception.__init__(self, ", ".join(names))
        self.names = tuple(dict.fromkeys(names))
        self.original = self


# The refused functions of the report whose case is running (empty outside Report.run).
_REFUSED: ContextVar[tuple[Refused, ...]] = ContextVar("refused", default=())


@contextmanager
def _watch(fn: Callable[..., Any]) -> Iterator[list[str]]:
    """Replace every refused function, wherever ``fn`` can reach it, by a wrapper that records
    the call; yield the list of labels called. Everything is restored afterwards."""
    used: list[str] = []
    refused = _REFUSED.get()
    if not refused:
        yield used
        return
    spaces = [
        vars(module)
        for name, module in list(sys.modules.items())
        if module is not None and (name == "attnbook" or name.startswith("attnbook."))
    ]
    inner = fn.func if isinstance(fn, functools.partial) else fn
    spaces.append(getattr(inner, "__globals__", {}))
    restore: list[Callable[[], None]] = []
    try:
        for r in refused:
            original = getattr(r.owner, r.name)
            if inner is original:
                used.append(r.label)

            def wrapper(*a: Any, _o: Any = original, _r: Refused = r, **kw: Any) -> Any:
                if _r.when is None or _r.when(*a, **kw):
                    used.append(_r.label)
                return _o(*a, **kw)

            setattr(r.owner, r.name, wrapper)
            restore.append(lambda o=r.owner, n=r.name, v=original: setattr(o, n, v))
            for space in spaces:
                for key in [k for k, v in space.items() if v is original]:
                    space[key] = wrapper
                    restore.append(lambda s=space, k=key, v=original: s.__setitem__(k, v))
        yield used
    finally:
        for undo in reversed(restore):
            undo()


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
    return call_as_is(fn, *fresh(args), **fresh(kwargs))


def call_as_is(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """:func:`call` without the copies: for a checker that reads the gradients of the very
    tensors it passes."""
    with _watch(fn) as used:
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:  # the learner's code may fail in any way; it is theirs to fix
            if used:
                raise RefusedCall(used) from exc
            raise LearnerError(exc) from exc
    if used:
        raise RefusedCall(used)
    return result


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
    what: str = N_("your function"),
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


#: What a case says when the answer calls a refused function (the library's own answer).
LIBRARY_ADVICE = N_(
    "your function calls {names}, which computes the answer for you (the checker compares with "
    "it, so calling it proves nothing): write the computation yourself"
)


@dataclass
class Report:
    """What a checker found. ``passed`` is True only if every case passed.

    ``refused``: functions the answer may not call (see ``Refused``); ``advice``, the
    English template (with ``{names}``) that a case shows the first time one is called.
    """

    exercise: str
    lines: list[tuple[bool, str]] = field(default_factory=list)
    refused: tuple[Refused, ...] = ()
    advice: str = LIBRARY_ADVICE
    _refusals: set[tuple[str, ...]] = field(default_factory=set, repr=False)

    @contextmanager
    def refusing(self) -> Iterator[None]:
        """Watch for the refused functions in every ``call`` inside the block. Each case of
        :meth:`Report.run` is watched; a checker that calls the learner before its cases uses
        this."""
        token = _REFUSED.set(self.refused)
        try:
            yield
        finally:
            _REFUSED.reset(token)

    def refusal(self, names: Sequence[str]) -> str:
        """The advice for a refused call, in full the first time, then "see above"."""
        key = tuple(names)
        joined = ", ".join(key)
        if key in self._refusals:
            return tr("your function calls {names} (see above)").format(names=joined)
        self._refusals.add(key)
        return tr(self.advice).format(names=joined)

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
            with self.refusing():
                problem = case()
        except RefusedCall as exc:
            problem = self.refusal(exc.names)
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
