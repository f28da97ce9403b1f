"""A text progress bar for everything in the book that trains.

``progress(iterable, desc=...)`` is tqdm's text bar written to standard output, with a format
that holds no clock: while a run lasts the bar moves (in a terminal and in a notebook), and what
stays behind is one line, ``training: 100%|██████████| 1500/1500``, that reads the same on every
machine. So the book's stored outputs show a finished bar on the static site (a widget bar would
need a kernel and leave a blank gap) and notebooks compare equal under nbval.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.std import tqdm

__all__ = ["BAR_FORMAT", "progress"]

T = TypeVar("T")

#: The bar's format. It holds no elapsed time, rate or estimate, so the finished line is the same
#: on every machine.
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar:20}| {n_fmt}/{total_fmt}"


def progress(
    iterable: Iterable[T], *, desc: str, total: int | None = None, disable: bool = False
) -> Iterator[T]:
    """Iterate over ``iterable`` showing a text progress bar labelled ``desc``.

    ``total`` defaults to ``len(iterable)``; ``disable=True`` shows nothing. The bar stays on
    screen when the loop ends, finished.
    """
    if not isinstance(desc, str) or not desc:
        raise ValueError("desc must be a non-empty string naming what runs")
    return iter(
        tqdm(
            iterable,
            desc=desc,
            total=total,
            disable=disable,
            leave=True,
            file=sys.stdout,
            bar_format=BAR_FORMAT,
            ascii=False,
            dynamic_ncols=False,
            mininterval=0.5,
        )
    )
