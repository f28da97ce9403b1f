"""Both editions' notebooks in one pytest session (``make test``), each on its own CPU kernels.

``make test`` checks the English notebooks with this machine's PyTorch kernels and the Chinese
ones with another processor's (the Makefile's OTHER_CPU), in one session with one queue for
the workers instead of two sessions one after the other (each ended with a worker idle). The
variables that choose the kernels are read when a notebook's Jupyter kernel starts, which nbval
does while setting up the notebook's first cell: so before each cell is set up, the variables
in ATTNBOOK_ZH_KERNEL_ENV (``NAME=value`` words) are set for a notebook under ``zh/`` and put
back as they were for any other.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

ZH = Path(__file__).resolve().parent / "zh"
_ZH_ENV = dict(
    word.split("=", 1) for word in shlex.split(os.environ.get("ATTNBOOK_ZH_KERNEL_ENV", ""))
)
_OWN_ENV = {name: os.environ.get(name) for name in _ZH_ENV}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if not _ZH_ENV:
        return
    chinese = ZH in Path(item.path).resolve().parents
    for name, value in (_ZH_ENV if chinese else _OWN_ENV).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
