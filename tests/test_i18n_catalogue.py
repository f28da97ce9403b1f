"""The translation catalogue is complete and current: the committed template holds every string
the library marks, and the Chinese catalogue translates each of them, fields and all.

The template (src/attnbook/i18n/locale/attnbook.pot) is what `make i18n` extracts; the Chinese
catalogue (locale/zh/LC_MESSAGES/attnbook.po) is what attnbook.i18n reads at import. That the
figures and checkers then speak Chinese is tested in tests/viz/test_i18n.py and
tests/exercises/test_chinese.py.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, unescape

from attnbook.i18n import ZH_STRINGS, load_catalogue

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("i18n_script", ROOT / "scripts" / "i18n.py")
i18n_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(i18n_script)

TEMPLATE = i18n_script.TEMPLATE
CATALOGUE = i18n_script.LOCALE / "zh" / "LC_MESSAGES" / "attnbook.po"


def read(path: Path):
    with path.open("rb") as f:
        return read_po(f)


def msgids(catalog) -> set[str]:
    return {m.id for m in catalog if m.id}


def fields(text: str) -> set[tuple[str, str, str]]:
    """The ``{name!conversion:spec}`` fields of a ``str.format`` template."""
    return {
        (name, conversion or "", spec or "")
        for _, name, spec, conversion in string.Formatter().parse(text)
        if name is not None
    }


def marked_in_the_source() -> set[str]:
    """Every constant first argument of tr(), N_(), report.run() and Report() in the library,
    as Python parses it (a Report named after a function, "soft_lookup", is code, not text)."""
    found = set()
    for path in sorted((ROOT / "src" / "attnbook").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            name, arg = ast.unparse(node.func), node.args[0]
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                continue
            if name in ("tr", "N_") or name.endswith(".run"):
                found.add(arg.value)
            elif name == "Report" and not re.fullmatch(r"[\w.]+", arg.value):
                found.add(arg.value)
    return found


@pytest.fixture(scope="module")
def extracted(tmp_path_factory) -> set[str]:
    """The msgids that `make i18n` would write into the template now."""
    template = tmp_path_factory.mktemp("i18n") / "attnbook.pot"
    i18n_script.extract(template)
    return msgids(read(template))


def test_the_committed_template_is_up_to_date(extracted):
    committed = msgids(read(TEMPLATE))
    assert len(committed) > 900
    assert extracted - committed == set(), "new strings: run `make i18n` and translate them"
    assert committed - extracted == set(), "strings no longer in the library: run `make i18n`"


def test_extraction_finds_every_string_the_source_marks(extracted):
    """Babel reads tokens, not the syntax tree: a marker inside an f-string, or nested deep in
    another call, is invisible to it. Such a string must be marked where Babel sees it."""
    unseen = marked_in_the_source() - extracted
    assert unseen == set(), (
        f"extraction misses {sorted(unseen)}: mark each in a statement of its own"
    )


def test_every_string_of_the_template_has_a_chinese_translation():
    template, catalogue = read(TEMPLATE), read(CATALOGUE)
    assert msgids(catalogue) == msgids(template), "run `make i18n`"
    untranslated = [m.id for m in catalogue if m.id and not m.string]
    fuzzy = [m.id for m in catalogue if m.id and m.fuzzy]
    assert untranslated == [], f"translate in {CATALOGUE.name}: {untranslated}"
    assert fuzzy == [], f"check these translations and remove their fuzzy flag: {fuzzy}"
    assert dict(catalogue.obsolete) == {}, "obsolete entries: run `make i18n`"


def test_every_translation_keeps_the_fields_of_its_english():
    for message in read(CATALOGUE):
        if message.id:
            assert fields(message.string) == fields(message.id), message.id


def written_flags(path: Path) -> dict[str, set[str]]:
    """msgid -> the flags written in the file (read_po adds the format flags it infers itself)."""
    flags = {}
    for entry in path.read_text(encoding="utf-8").split("\n\n"):
        lines = entry.splitlines()
        written = {f.strip() for x in lines if x.startswith("#,") for f in x[2:].split(",")}
        quoted, inside = [], False
        for line in lines:
            inside = line.startswith("msgid ") or (inside and line.startswith('"'))
            if inside:
                quoted.append(unescape(line.removeprefix("msgid ")))
        flags["".join(quoted)] = written
    return flags


@pytest.mark.parametrize("path", [TEMPLATE, CATALOGUE], ids=["template", "zh"])
def test_the_files_flag_every_template_for_translation_tools(path):
    flags = written_flags(path)
    assert len(flags) > 900
    for msgid, written in flags.items():
        if msgid:
            assert ("python-brace-format" in written) == bool(fields(msgid)), msgid
            assert "python-format" not in written, msgid  # no %-template in the library


def test_the_library_reads_the_chinese_catalogue():
    assert ZH_STRINGS == load_catalogue("zh")
    assert ZH_STRINGS == {m.id: m.string for m in read(CATALOGUE) if m.id}
    assert ZH_STRINGS["key (attended to)"] == "键（被关注的位置）"
    assert type(ZH_STRINGS) is dict


def test_a_fuzzy_or_empty_translation_is_not_used(tmp_path, monkeypatch):
    """As gettext's msgfmt does: a fuzzy entry is a guess awaiting review."""
    po = tmp_path / "locale" / "fr" / "LC_MESSAGES" / "attnbook.po"
    po.parent.mkdir(parents=True)
    po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "weight"\nmsgstr "权重"\n\n'
        '#, fuzzy\nmsgid "value"\nmsgstr "价值"\n\n'
        'msgid "score"\nmsgstr ""\n',
        encoding="utf-8",
    )
    monkeypatch.setattr("attnbook.i18n.files", lambda _: tmp_path)
    assert load_catalogue("fr") == {"weight": "权重"}


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt is not installed")
def test_gettext_itself_accepts_the_catalogue():
    """msgfmt --check compiles the .po as gettext would and checks every python-brace-format
    translation's fields against its English."""
    result = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", "/dev/null", CATALOGUE],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert f"{len(ZH_STRINGS)} translated messages." in result.stderr
