"""Which text outputs of the notebooks differ from a git revision (default HEAD)?

    python scripts/diff_outputs.py            # working tree against HEAD
    python scripts/diff_outputs.py main~3     # against another revision

Compares what nbval compares — text outputs, cell by cell — and ignores what legitimately
changes on every run: images (figures of timings and measured memory), widget model ids, and
the outputs of cells tagged ``nbval-ignore-output`` (listed separately). Exit status 1 if a
compared output differs: after ``make notebooks`` on an unchanged book, it should be 0.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT_TYPES = ("text/plain", "text/markdown", "text/latex")
VOLATILE = [
    (re.compile(r"model_id='[0-9a-f]{32}'"), "model_id='ID'"),
    (re.compile(r"0x[0-9a-f]{6,16}"), "0xADDRESS"),
]


def text_outputs(cell: dict) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append("".join(output["text"]))
        elif output["output_type"] == "error":
            parts.append(f"error: {output['ename']}")
        elif "image/png" not in output.get("data", {}):
            parts += ["".join(output["data"][t]) for t in TEXT_TYPES if t in output["data"]]
    text = "".join(parts)
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def code_cells(notebook: dict) -> list[dict]:
    return [c for c in notebook["cells"] if c["cell_type"] == "code"]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("rev", nargs="?", default="HEAD")
    args = parser.parse_args()
    differ = 0
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        rel = path.relative_to(ROOT).as_posix()
        old_text = subprocess.run(
            ["git", "show", f"{args.rev}:{rel}"], cwd=ROOT, capture_output=True, text=True
        )
        if old_text.returncode:
            print(f"{rel}: new")
            continue
        old, new = code_cells(json.loads(old_text.stdout)), code_cells(json.loads(path.read_text()))
        if [c["source"] for c in old] != [c["source"] for c in new]:
            print(f"{rel}: code changed; outputs not compared")
            continue
        for n, (a, b) in enumerate(zip(old, new), start=1):
            if text_outputs(a) == text_outputs(b):
                continue
            ignored = "nbval-ignore-output" in b.get("metadata", {}).get("tags", [])
            print(f"{rel} cell {n}: {'differs (ignored by nbval)' if ignored else 'DIFFERS'}")
            differ += not ignored
    print(f"{differ} compared text output(s) differ")
    return int(differ > 0)


if __name__ == "__main__":
    sys.exit(main())
