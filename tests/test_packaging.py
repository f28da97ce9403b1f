"""The library installs by itself: every third-party module it imports is a declared dependency."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "attnbook"
# Import name -> distribution name, where they differ.
DISTRIBUTION = {
    "IPython": "ipython",
    "PIL": "pillow",
    "matplotlib_inline": "matplotlib-inline",
    "sklearn": "scikit-learn",
}


def imported_top_level_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def declared_dependencies() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {
        re.split(r"[<>=!~ \[;]", spec, maxsplit=1)[0].lower() for spec in project["dependencies"]
    }


def test_every_third_party_import_of_the_library_is_declared_in_pyproject():
    imported = set().union(*(imported_top_level_modules(p) for p in SRC.rglob("*.py")))
    third_party = {
        name
        for name in imported
        if name not in sys.stdlib_module_names and name not in {"attnbook", "__future__"}
    }
    assert third_party, "the scan found no third-party import at all: it is not reading the library"
    missing = {
        DISTRIBUTION.get(name, name).lower() for name in third_party
    } - declared_dependencies()
    assert not missing, (
        f"imported by src/attnbook but not in pyproject's dependencies: {sorted(missing)}"
    )


def test_the_import_scan_sees_imports_inside_functions(tmp_path):
    scratch = tmp_path / "module.py"
    scratch.write_text(
        "def f():\n    from safetensors import safe_open\n    import tqdm.auto\n"
        "from . import sibling\n"
    )
    assert imported_top_level_modules(scratch) == {"safetensors", "tqdm"}
