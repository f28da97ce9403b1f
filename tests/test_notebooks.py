"""The committed notebooks are as `make notebooks` leaves them: executed in order, normalised,
light, and with no error or stray warning in their outputs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
_spec = importlib.util.spec_from_file_location(
    "execute_notebooks", ROOT / "scripts" / "execute_notebooks.py"
)
execute_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute_notebooks)


def test_there_are_notebooks_to_check():
    assert len(NOTEBOOKS) >= 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_executed_top_to_bottom_in_one_fresh_kernel(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_carries_no_editor_or_execution_metadata(path):
    nb = json.loads(path.read_text())
    assert not set(execute_notebooks.VOLATILE_NOTEBOOK_METADATA) & set(nb["metadata"])
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for n, cell in enumerate(nb["cells"]):
        stray = set(execute_notebooks.VOLATILE_CELL_METADATA) & set(cell.get("metadata", {}))
        assert not stray, f"cell {n} carries {sorted(stray)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_have_no_error_and_no_stderr(path):
    for n, cell in enumerate(json.loads(path.read_text())["cells"]):
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", f"cell {n} stored an error"
            assert output.get("name") != "stderr", f"cell {n} stored stderr: {output.get('text')}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stays_under_two_mebibytes(path):
    assert path.stat().st_size < 2 * 2**20
