"""The library's shape: small modules, a core that depends on nothing else, no private API
across modules, and nothing that depends on the exercises or the figures."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "attnbook"
CORE = {"attention", "masks", "mha", "positional", "blocks", "transformer", "values"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def attnbook_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) for every ``from attnbook... import ...`` in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("attnbook"):
            found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.startswith("attnbook")]
    return found


MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def test_the_scan_sees_the_whole_library():
    assert {"attnbook.mha", "attnbook.interop", "attnbook.viz.explorer"} <= set(MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_longer_than_400_lines(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"{name} has {lines} lines: it probably holds two concepts"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_is_imported_from_another_module(name):
    private = [
        (module, n)
        for module, names in attnbook_imports(MODULES[name])
        for n in names
        if n.startswith("_")
    ]
    assert not private, f"{name} imports private names {private}"


@pytest.mark.parametrize("name", sorted(f"attnbook.{m}" for m in CORE))
def test_the_core_imports_only_the_core(name):
    outside = {
        module
        for module, _ in attnbook_imports(MODULES[name])
        if module != "attnbook" and module.split(".")[1] not in CORE
    }
    assert not outside, f"{name} (core) depends on {sorted(outside)}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_nothing_outside_them_imports_the_exercises_or_the_figures(name):
    own = name.split(".")[1] if "." in name else ""
    for forbidden in ("exercises", "viz"):
        if own == forbidden:
            continue
        used = [
            module
            for module, names in attnbook_imports(MODULES[name])
            if module.startswith(f"attnbook.{forbidden}")
            or (module == "attnbook" and forbidden in names)
        ]
        assert not used, f"{name} imports {used}"


def test_no_two_modules_share_a_file_name():
    by_name: dict[str, list[str]] = {}
    for path in SRC.rglob("*.py"):
        if path.name != "__init__.py":
            by_name.setdefault(path.stem, []).append(module_name(path))
    for package in SRC.rglob("__init__.py"):  # a module named like a package holds its concept too
        if package.parent != SRC:
            by_name.setdefault(package.parent.name, []).append(module_name(package))
    shared = {name: sorted(found) for name, found in by_name.items() if len(found) > 1}
    assert not shared, f"modules that share a file name (name each by what it holds): {shared}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("attnbook.efficient")))
def test_the_kernels_import_no_model_and_no_training(name):
    """Experiments live apart from kernels: a study that trains a model is in ``studies``."""
    outside = {"models", "train", "studies"}
    used = [
        module
        for module, names in attnbook_imports(MODULES[name])
        if module.split(".")[1:2]
        and module.split(".")[1] in outside
        or (module == "attnbook" and outside & set(names))
    ]
    assert not used, f"{name} imports {used}"
