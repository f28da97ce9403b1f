"""Re-execute every notebook of both editions (book/, zh/book/) top to bottom, each in a fresh kernel, in place.

This is the only way the book's outputs are produced: execution counts run 1, 2, 3, ...,
volatile metadata is dropped so that a re-run changes only what really changed, and a stream
that redraws itself with carriage returns (a progress bar) is stored as what it finally shows.
No widget state is stored: the book's views are HTML outputs that need no widget manager, and a
widget shown only to a live kernel (chapter 7's live explorer) is dropped from the outputs.

Usage:
    python scripts/execute_notebooks.py                 # every notebook, both editions
    python scripts/execute_notebooks.py book/01_*.ipynb # some of them
    python scripts/execute_notebooks.py --timings t.json book/03_*.ipynb  # and each cell's seconds

Each notebook records the CPU kernels that computed it (``metadata.attnbook.cpu_capability``,
PyTorch's name: AVX512, AVX2 or DEFAULT): ``scripts/other_cpu.py`` reads it to pick, for the
second notebook pass, kernels other than the ones that wrote the stored outputs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
ZH_BOOK = ROOT / "zh" / "book"  # the Chinese edition: the same notebooks, translated
# Metadata that execution tools and editors add and that carries no meaning for the book.
VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime", "lines_to_next_cell")
VOLATILE_NOTEBOOK_METADATA = ("papermill", "jupytext")


def notebooks(paths: list[str]) -> list[Path]:
    if paths:
        return [Path(p).resolve() for p in paths]
    found = [*BOOK.rglob("*.ipynb"), *ZH_BOOK.rglob("*.ipynb")]
    return sorted(p for p in found if ".ipynb_checkpoints" not in p.parts)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# What a terminal shows of a line that a carriage return rewrote: the text after the last "\r".
OVERWRITTEN = re.compile(r"^.*\r(?=[^\n])", re.MULTILINE)


def settle_streams(nb: nbformat.NotebookNode) -> None:
    """Join consecutive pieces of one stream (as nbval does) and keep only the final state of
    lines redrawn with carriage returns (progress bars)."""
    for cell in nb.cells:
        merged: list = []
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (
                output.get("output_type") == "stream"
                and previous is not None
                and previous.get("output_type") == "stream"
                and previous.get("name") == output.get("name")
            ):
                previous["text"] += output["text"]
            else:
                merged.append(output)
        for output in merged:
            if output.get("output_type") == "stream":
                output["text"] = OVERWRITTEN.sub("", output["text"].replace("\r\n", "\n"))
        if "outputs" in cell:
            cell.outputs = merged


def drop_dangling_widget_views(nb: nbformat.NotebookNode) -> None:
    """Remove outputs that show a widget which no longer exists (e.g. a closed progress bar).

    Their model is not in the stored widget state, so the static site could not render them.
    """
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    alive = set(state.get("state", {}))
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = [
            o
            for o in cell.outputs
            if WIDGET_VIEW not in o.get("data", {}) or o["data"][WIDGET_VIEW]["model_id"] in alive
        ]


def cpu_capability() -> str:
    """The kernels PyTorch picks here (ATEN_CPU_CAPABILITY included), as the kernels will."""
    import torch

    return torch.backends.cpu.get_cpu_capability()


def cell_seconds(nb: nbformat.NotebookNode) -> dict[int, float]:
    """Each code cell's run time, from the timestamps nbclient records (before clean drops them)."""
    from datetime import datetime

    out = {}
    for i, cell in enumerate(nb.cells):
        times = cell.metadata.get("execution", {})
        start, end = times.get("iopub.execute_input"), times.get("shell.execute_reply")
        if start and end:
            out[i] = round(
                (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 2
            )
    return out


def clean(nb: nbformat.NotebookNode, capability: str) -> None:
    drop_dangling_widget_views(nb)
    settle_streams(nb)
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
    for key in VOLATILE_NOTEBOOK_METADATA:
        nb.metadata.pop(key, None)
    if not nb.metadata.get("widgets"):
        nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["attnbook"] = {"cpu_capability": capability}


def execute(path: Path, timeout: int, capability: str, timings: dict | None = None) -> float:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)
    start = time.perf_counter()
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=timeout,
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
        record_timing=timings is not None,
        allow_errors=False,
    )
    client.execute()
    elapsed = time.perf_counter() - start
    if timings is not None:
        timings[str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)] = {
            "total": round(elapsed, 1),
            "cells": cell_seconds(nb),
        }
    clean(nb, capability)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="*", help="notebooks to execute (default: all under book/)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    parser.add_argument("--timings", type=Path, help="also write each cell's seconds to this JSON")
    args = parser.parse_args()
    capability = cpu_capability()
    timings: dict | None = {} if args.timings else None
    for path in notebooks(args.paths):
        elapsed = execute(path, args.timeout, capability, timings)
        if args.timings:
            args.timings.write_text(json.dumps(timings, indent=1) + "\n", "utf-8")
        size = path.stat().st_size / 2**20
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"executed {shown} in {elapsed:.1f} s ({size:.2f} MiB)")
        if size > 2:
            print(
                f"  warning: {path.name} is over 2 MiB; lower figure dpi or pre-render less",
                file=sys.stderr,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
