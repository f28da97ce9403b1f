"""The mistake catalogue: wrong answers a learner plausibly writes, for every checker.

Each :class:`Mistake` is one wrong answer and the words its report must contain (``says``: the
fragment of the message that names the slip; None when no specific slip should be named, only
a failure). ``tests/exercises/test_catalogue.py`` runs them all: every one must fail, without
the checker crashing, and its report must not contain the fragment that names another mistake
of the same checker (unless listed in ``also``: the answer makes that mistake too).

Two kinds of entries:

* generic mistakes, made by wrapping a right answer (:func:`generic`): an input edited in place,
  the first answer returned whatever the input (hard-coded to the visible example), a result of
  the wrong dtype, and the library's own function (or autograd) called instead of written;
* each checker's own mistakes, in ``chapters_*.py``: wrong axis, missing or wrong scale,
  inverted mask, off-by-one, transposed operands, NaN on edge cases, one global statistic
  where a per-row one is needed, and the slips particular to each exercise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

__all__ = ["Mistake", "Fact", "fn", "values", "generic", "IN_PLACE", "REFUSED"]

#: What the reports say for the generic mistakes.
IN_PLACE = "in place"
REFUSED = "which computes the answer for you"
FLOAT64 = "float64"


class Fact(str):
    """A fragment that states a fact about the answer (a shape, a type, the number expected)
    rather than naming a slip: other answers may show it too, so it is never "foreign"."""


def _own(says: str | None) -> str | None:
    """One fragment per generic mistake: the tables of the chapter tests word it variously."""
    if says is not None and not isinstance(says, Fact) and "changed its input" in says:
        return IN_PLACE
    return says


@dataclass(frozen=True)
class Mistake:
    """One wrong answer to one checker."""

    checker: str  # a name in attnbook.exercises
    name: str  # what the learner did
    answer: tuple  # the checker's arguments
    says: str | None  # a fragment its report must contain
    also: tuple[str, ...] = ()  # fragments of other mistakes this answer makes too

    @property
    def id(self) -> str:
        return f"{self.checker}: {self.name}"


def fn(checker: str, name: str, answer: Callable, says: str | None, *also: str) -> Mistake:
    """A wrong function."""
    return Mistake(checker, name, (answer,), _own(says), also)


def values(checker: str, name: str, answer: tuple, says: str | None, *also: str) -> Mistake:
    """Wrong values (the checker's arguments as a tuple)."""
    return Mistake(checker, name, tuple(answer), _own(says), also)


def _first_tensor(value: Any) -> Tensor | None:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, torch.nn.Module):
        return None
    if isinstance(value, (tuple, list)):
        for v in value:
            found = _first_tensor(v)
            if found is not None:
                return found
    return None


def edits_input(right: Callable) -> Callable:
    """The right result, but the first tensor input is overwritten afterwards."""

    @functools.wraps(right)
    def answer(*args: Any, **kwargs: Any) -> Any:
        result = right(*args, **kwargs)
        target = next(t for t in map(_first_tensor, args) if t is not None)
        with torch.no_grad():
            target.fill_(1) if target.dtype != torch.bool else target.logical_not_()
        return result

    return answer


def first_answer_always(right: Callable) -> Callable:
    """Hard-coded to the first example it saw: the same answer whatever the input."""
    seen: list = []

    def answer(*args: Any, **kwargs: Any) -> Any:
        if not seen:
            seen.append(right(*args, **kwargs))
        return seen[0]

    return answer


def _double(result: Any) -> Any:
    if isinstance(result, Tensor):
        return result.double()
    if isinstance(result, (tuple, list)):
        return type(result)(_double(r) for r in result)
    return result


def as_float64(right: Callable) -> Callable:
    """The right numbers, returned as float64."""
    return lambda *args, **kwargs: _double(right(*args, **kwargs))


def generic(
    checker: str,
    right: Callable,
    *,
    library: Callable | Iterable[Callable] = (),
    refused: str = REFUSED,
    tensors: bool = True,
    float64: bool = True,
    hard_coded: bool = True,
) -> list[Mistake]:
    """The generic mistakes of a function checker, made from a right answer."""
    found = []
    if tensors:
        found.append(fn(checker, "edits its input in place", edits_input(right), IN_PLACE))
    if float64:
        found.append(fn(checker, "returns float64", as_float64(right), FLOAT64))
    if hard_coded:
        found.append(
            fn(checker, "hard-coded to the first example", first_answer_always(right), None)
        )
    for i, own in enumerate([library] if callable(library) else library):
        found.append(fn(checker, f"calls the library's own function ({i})", own, refused))
    return found
