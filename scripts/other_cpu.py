"""Print the ATEN_CPU_CAPABILITY for the second notebook pass: kernels that did not write the outputs.

The second pass (``make nbval-zh``) checks that every stored number holds on another processor.
What counts as "another" is relative to the machine that computed the stored outputs, which each
notebook records (``metadata.attnbook.cpu_capability``, written by ``execute_notebooks.py``):

* this machine's own kernels, if no notebook was computed with them — an AVX2 laptop checking
  outputs computed with AVX-512 is already another processor, at its full speed;
* otherwise AVX2 on an AVX-512 machine (a third faster than the generic kernels), or the generic
  kernels anywhere else.

    python scripts/other_cpu.py            # e.g. "avx2"
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = {"AVX512": "avx512", "AVX2": "avx2", "DEFAULT": "default"}


def recorded() -> set[str]:
    """The kernels that computed the stored outputs, over both editions."""
    found = set()
    for path in sorted([*(ROOT / "book").glob("*.ipynb"), *(ROOT / "zh" / "book").glob("*.ipynb")]):
        meta = json.loads(path.read_text("utf-8"))["metadata"]
        found.add(meta.get("attnbook", {}).get("cpu_capability", "unknown"))
    return found


def other(native: str, written_with: set[str]) -> str:
    """The capability to run the second pass with, as ATEN_CPU_CAPABILITY spells it."""
    if native in NAMES and native not in written_with and "unknown" not in written_with:
        return NAMES[native]
    return "avx2" if native.startswith("AVX512") else "default"


def main() -> None:
    os.environ.pop("ATEN_CPU_CAPABILITY", None)  # this machine's own, not an override's
    import torch

    print(other(torch.backends.cpu.get_cpu_capability(), recorded()))


if __name__ == "__main__":
    main()
