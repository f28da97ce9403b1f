"""The library installs by itself: every third-party module it imports is a declared dependency,
and `python -m build` makes a wheel and an sdist that carry the code, its data files and the
licence, and that install and import in a fresh virtual environment."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest
import tomllib

import attnbook

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


# --- the wheel and the sdist ------------------------------------------------------------------

# What `python -m build` reads: the project's metadata, the licence it names, and the package
# (whose README is the package's long description).
BUILD_INPUTS = ("pyproject.toml", "LICENSE", "LICENSE-CC-BY-4.0", "src")
# The package's files that are not modules (the figure style, the views' scripts and style sheet,
# the README): each must be in the wheel and the sdist, and found by importlib.resources.
PACKAGE_DATA = sorted(
    p.relative_to(SRC).as_posix()
    for p in SRC.rglob("*")
    if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts
)


@pytest.fixture(scope="module")
def distributions(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel of `python -m build`, built offline with this environment's
    setuptools (--no-isolation) from a copy of BUILD_INPUTS, so that the build's own folders
    (build/, *.egg-info) never appear in the repository."""
    tmp = tmp_path_factory.mktemp("build")
    source = tmp / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    result = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", tmp / "dist", source],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (sdist,) = (tmp / "dist").glob("*.tar.gz")
    (wheel,) = (tmp / "dist").glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def test_the_wheel_carries_every_module_the_package_data_and_the_licence(distributions):
    assert "viz/attnbook.mplstyle" in PACKAGE_DATA and "viz/static/attnview.js" in PACKAGE_DATA
    version = attnbook.__version__
    assert distributions["wheel"].name == f"attnbook-{version}-py3-none-any.whl"
    with zipfile.ZipFile(distributions["wheel"]) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"attnbook-{version}.dist-info/METADATA").decode("utf-8")
    modules = {p.relative_to(SRC.parent).as_posix() for p in SRC.rglob("*.py")}
    assert modules - names == set(), "modules missing from the wheel"
    assert {f"attnbook/{name}" for name in PACKAGE_DATA} <= names
    assert f"attnbook-{version}.dist-info/licenses/LICENSE" in names
    assert f"attnbook-{version}.dist-info/licenses/LICENSE-CC-BY-4.0" in names
    assert "corpus/book_prose_en.txt" in PACKAGE_DATA
    assert not [
        n for n in names if n.split("/")[0] not in {"attnbook", f"attnbook-{version}.dist-info"}
    ]
    headers = metadata.split("\n\n", 1)[0].splitlines()
    for header in (
        f"Version: {version}",
        "License-Expression: MIT AND CC-BY-4.0",
        "License-File: LICENSE",
        "License-File: LICENSE-CC-BY-4.0",
    ):
        assert header in headers, header
    # The long description is the package's README, not the book's.
    assert metadata.split("\n\n", 1)[1].startswith("# attnbook\n")


def test_the_sdist_carries_the_sources_and_the_licence(distributions):
    version = attnbook.__version__
    with tarfile.open(distributions["sdist"]) as sdist:
        names = set(sdist.getnames())
    top = f"attnbook-{version}"
    for name in ("LICENSE", "pyproject.toml", "PKG-INFO", "src/attnbook/README.md"):
        assert f"{top}/{name}" in names, name
    assert {f"{top}/src/attnbook/{name}" for name in PACKAGE_DATA} <= names


def test_the_wheel_installs_and_imports_in_a_fresh_venv(distributions, tmp_path):
    """The wheel goes into a new virtual environment with pip (--no-deps: PyTorch and the other
    dependencies are read from this environment, through a .pth file added after the install, not
    downloaded); attnbook then imports from that environment, outside the repository, with its
    version, its data files and its README's example working."""
    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps"]
        + ["--no-index", distributions["wheel"]],
        check=True,
        capture_output=True,
    )
    site_packages = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site_packages / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    readme = (SRC / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", readme, flags=re.S).group(1)
    probe = (
        "import importlib.metadata, importlib.resources, json\n"
        "import attnbook\n"
        "data = importlib.resources.files('attnbook')\n"
        f"missing = [n for n in {tuple(PACKAGE_DATA)!r} if not data.joinpath(n).is_file()]\n"
        "print(json.dumps({'file': attnbook.__file__, 'version': attnbook.__version__,\n"
        "    'metadata': importlib.metadata.version('attnbook'), 'missing': missing}))\n"
    )
    env_vars = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    result = subprocess.run(
        [python, "-c", probe + example],
        cwd=tmp_path,
        env=env_vars | {"OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.splitlines()[0])
    assert Path(found["file"]).is_relative_to(site_packages), found["file"]
    assert found["version"] == found["metadata"] == attnbook.__version__
    assert found["missing"] == []
