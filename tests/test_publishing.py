"""What the repository offers beyond the book (issue 37): licences that GitHub and PyPI recognise,
a citation file that validates, a short README for readers with the contributor rules in
CONTRIBUTING.md, a changelog, `make serve`, and a GitHub Actions workflow that runs CI's script
and publishes the site, checked by actionlint.

The wheel and the sdist themselves are tested in test_packaging.py.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml

import attnbook

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
COPYRIGHT = "Copyright (c) 2026 The Attention, Head by Head authors"
# SHA-256 of the licence texts as choosealicense.com has them, the texts that GitHub's licence
# detection (licensee) matches: MIT's permission, condition and disclaimer (from "Permission is
# hereby granted" to the end), and the whole legal code of CC BY 4.0 (Creative Commons'
# legalcode.txt). Both files were checked with licensee 9.15: an exact match, 100%.
MIT_BODY_SHA256 = "f9c4c77baa3828004ee54b8a4f2db2e88ed44a6237a493965bf551fac0fcb62d"
CC_BY_4_SHA256 = "f5b745ef98087f531e719ee8ca6a96809444573ecc7173c6fa68eaad39b3cc3f"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def venv_tool(name: str) -> str:
    """A command installed beside this Python (requirements.txt pins it)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is not installed beside {sys.executable}: make setup installs it"
    return found


# --- licences ---------------------------------------------------------------------------------


def test_license_is_the_standard_mit_text_for_the_code():
    lines = (ROOT / "LICENSE").read_text(encoding="utf-8").splitlines(keepends=True)
    # GitHub's detection drops a first line that starts with the licence's name, so the line that
    # says what the licence covers stays on that one line; then the copyright, then the text.
    assert lines[0].startswith("MIT License: the code (") and "LICENSE-CC-BY-4.0" in lines[0]
    assert [lines[1], lines[2], lines[3]] == ["\n", COPYRIGHT + "\n", "\n"]
    assert lines[4].startswith("Permission is hereby granted, free of charge")
    assert sha256("".join(lines[4:])) == MIT_BODY_SHA256, "LICENSE differs from the MIT text"


def test_the_text_and_figures_licence_is_the_official_cc_by_4_legal_code():
    text = (ROOT / "LICENSE-CC-BY-4.0").read_text(encoding="utf-8")
    assert text.startswith("Attribution 4.0 International\n")
    sections = re.findall(r"^Section (\d) -- ", text, flags=re.M)
    assert sections == [str(i) for i in range(1, 9)]
    assert sha256(text) == CC_BY_4_SHA256, "LICENSE-CC-BY-4.0 differs from CC's legal code"


def test_pyproject_declares_the_code_licence_as_pep_639_says():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    # The wheel carries one file of the book's text (attnbook/corpus), so both licences apply to it.
    assert project["license"] == "MIT AND CC-BY-4.0"
    assert project["license-files"] == ["LICENSE", "LICENSE-CC-BY-4.0"]
    # An SPDX expression replaces the licence classifiers; setuptools refuses both at once.
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")]
    assert pyproject["build-system"]["requires"] == ["setuptools>=77"]  # the first with PEP 639


def test_the_readme_says_which_files_each_licence_covers():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    licences = readme.split("## Licences", 1)[1]
    assert "[LICENSE-CC-BY-4.0](LICENSE-CC-BY-4.0)" in licences and "[LICENSE](LICENSE)" in licences
    for covered in ("`book/`", "`zh/book/`", "figures", "`src/`", "code cells", "`tests/`"):
        assert covered in licences, covered


# --- citation ---------------------------------------------------------------------------------


def validate_cff(path: Path) -> subprocess.CompletedProcess:
    """check-jsonschema with the Citation File Format 1.2.0 schema it ships (no network)."""
    return subprocess.run(
        [venv_tool("check-jsonschema"), "--builtin-schema", "vendor.citation-file-format", path],
        capture_output=True,
        text=True,
    )


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_citation_cff_is_valid_against_the_cff_1_2_0_schema():
    result = validate_cff(ROOT / "CITATION.cff")
    assert result.returncode == 0, result.stdout + result.stderr
    assert citation()["cff-version"] == "1.2.0"


def test_the_citation_check_rejects_a_file_without_authors(tmp_path):
    broken = {k: v for k, v in citation().items() if k != "authors"}
    path = tmp_path / "CITATION.cff"
    path.write_text(yaml.safe_dump(broken), encoding="utf-8")
    result = validate_cff(path)
    assert result.returncode != 0 and "authors" in result.stdout + result.stderr


def test_citation_cff_names_the_library_version_and_both_licences():
    cff = citation()
    assert cff["version"] == attnbook.__version__
    assert sorted(cff["license"]) == ["CC-BY-4.0", "MIT"]
    assert cff["preferred-citation"]["type"] == "book"


@pytest.mark.parametrize("intro", ["book/intro.md", "zh/book/intro.md"])
def test_the_introduction_cites_the_book_as_citation_cff_does(intro):
    text = (ROOT / intro).read_text(encoding="utf-8")
    heading = "## How to cite" if intro.startswith("book/") else "## 如何引用"
    section = text.split(heading, 1)[1]
    bibtex = re.search(r"```bibtex\n(.*?)```", section, flags=re.S).group(1)
    fields = dict(re.findall(r"^\s+(\w+)\s*=\s*\{(.*)\},?$", bibtex, flags=re.M))
    book = citation()["preferred-citation"]
    assert fields == {
        "title": book["title"],
        "author": "{" + book["authors"][0]["name"] + "}",
        "year": str(book["year"]),
        "note": book["notes"],
    }
    assert "`CITATION.cff`" in section


# --- changelog, README, CONTRIBUTING --------------------------------------------------------


def test_the_changelog_has_unreleased_changes_and_the_current_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", changelog, flags=re.M)
    assert versions[0] == ("Unreleased", "")
    assert versions[1][0] == attnbook.__version__ and versions[1][1], versions
    assert "`attnbook.train.fit_together`" in changelog.split("## [", 2)[1]


def test_the_readme_is_for_readers():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 80, "the README is for readers: keep it short"
    for command in ("make book", "make test", "make lab", "make serve"):
        assert command in readme, command
    for target in ("CONTRIBUTING.md", "CHANGELOG.md", "CITATION.cff", "src/attnbook/README.md"):
        assert f"]({target})" in readme, f"the README does not link {target}"
    # The maintainers' rules live in CONTRIBUTING.md.
    for rule in ("# i18n", "nbval-ignore-output", "make checkpoints"):
        assert rule not in readme, rule


def test_contributing_holds_the_contributor_rules():
    guide = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for rule in (
        "## Change a chapter in both editions",  # both editions, # i18n lines, editions.py check
        "`python scripts/editions.py check`",
        "## Outputs come only from `make notebooks`",
        "## The book never lies on another machine (the second CPU)",
        "`nbval-ignore-output`",
        "`make nbval-zh`",
        "## Every number in the prose comes from a cell",
        "Solutions compute their numbers in hidden cells",
        "## A claim that something cannot work needs its budget",
        "at least 3–8× the steps, or to convergence",
    ):
        assert rule in guide, rule


# --- make serve -------------------------------------------------------------------------------


def test_make_serve_serves_the_built_site_on_localhost_only():
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make on this machine")
    plan = subprocess.run(
        [make, "-n", "serve", "PORT=8123"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "jupyter-book build" in plan, "make serve builds the site first"
    assert "-m http.server 8123 --bind 127.0.0.1 --directory _build/html" in plan
    assert "http://127.0.0.1:8123/" in plan


# --- the GitHub Actions workflow --------------------------------------------------------------


def workflow() -> dict:
    # PyYAML reads the key `on` as True (YAML 1.1); GitHub reads it as "on".
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    data["on"] = data.pop(True)
    return data


def runs(job: dict) -> list[str]:
    return [step["run"].strip() for step in job["steps"] if "run" in step]


def uses(job: dict) -> list[str]:
    return [step["uses"] for step in job["steps"] if "uses" in step]


def test_the_workflow_passes_actionlint():
    result = subprocess.run(
        [venv_tool("actionlint"), "-no-color", str(WORKFLOW)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_make_lint_runs_actionlint_on_every_workflow():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "$(BIN)/actionlint .github/workflows/*.yml" in lint
    assert sorted(p.name for p in WORKFLOW.parent.iterdir()) == ["ci.yml"]


def test_every_push_and_pull_request_runs_what_ci_runs():
    flow = workflow()
    assert {"push", "pull_request"} <= set(flow["on"])
    test = flow["jobs"]["test"]
    assert "if" not in test
    # The same script as the project's CI, on the Debian it installs its packages from.
    assert runs(test)[-1] == "bash .ci/run"
    assert test["container"].startswith("debian:")
    assert any(u.startswith("actions/checkout@") for u in uses(test))


def test_main_is_built_and_published_to_github_pages_after_the_tests():
    jobs = workflow()["jobs"]
    site, deploy = jobs["site"], jobs["deploy"]
    assert site["needs"] == "test" and deploy["needs"] == "site"
    assert site["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert "make book PYTHON=python3.11" in runs(site)
    upload = next(s for s in site["steps"] if s.get("uses", "").startswith("actions/upload-pages"))
    assert upload["with"]["path"] == "_build/html"
    assert "permissions" not in site, "the job that runs the build holds no Pages rights"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert [u.split("@")[0] for u in uses(deploy)] == [
        "actions/configure-pages",
        "actions/deploy-pages",
    ]


def test_every_action_is_pinned_to_a_major_version():
    for name, job in workflow()["jobs"].items():
        for action in uses(job):
            assert re.fullmatch(r"actions/[\w-]+@v\d+", action), (name, action)
