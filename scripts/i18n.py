"""The library's translation catalogue: extract the English strings, update the translations.

`make i18n` runs this script. It extracts every string that src/attnbook marks for translation
into the template, src/attnbook/i18n/locale/attnbook.pot, then merges the template into each
language's catalogue (src/attnbook/i18n/locale/zh/LC_MESSAGES/attnbook.po): a new string arrives
there with an empty translation, a changed one as fuzzy (with its previous English), and a
removed one is dropped. Translate the empty and fuzzy entries in the .po with any gettext tool
(Poedit, Lokalize, a text editor) and remove the fuzzy flag; tests/test_i18n_catalogue.py fails
until every entry is translated.

The keywords below are the whole configuration: the same pybabel commands run by hand do the
same thing.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sys
import tempfile
from pathlib import Path

from babel.messages.frontend import CommandLineInterface

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "src/attnbook"
LOCALE = ROOT / SOURCE / "i18n" / "locale"
DOMAIN = "attnbook"
TEMPLATE = LOCALE / f"{DOMAIN}.pot"
#: The languages other than English, each with a catalogue in LOCALE/<lang>/LC_MESSAGES/.
LANGUAGES = ("zh",)

# The calls whose first argument is an English string to translate:
#   tr("...")          translate now (attnbook.i18n.tr);
#   N_("...")          mark now, translate later, after a table, variable or default argument;
#   report.run("...")  a checker's case, which Report.run translates.
# Babel does not see a call inside an f-string, nor one nested two calls deep inside another of
# these (report.run("...", lambda: f(N_("...")))): mark such a string in a statement of its
# own. tests/test_i18n_catalogue.py compares what Babel finds with every call in the source.
KEYWORDS = ("tr", "N_", "run")


def version() -> str:
    """attnbook.__version__, read from the source (importing attnbook would import PyTorch)."""
    text = (ROOT / SOURCE / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"', text, flags=re.M).group(1)


def pybabel(*args: str | Path) -> None:
    """Run a pybabel command (quietly) from the repository root, so references read src/..."""
    with contextlib.chdir(ROOT):
        CommandLineInterface().run(["pybabel", "--quiet", *map(str, args)])


def extract(template: Path = TEMPLATE) -> None:
    """Write the .pot template of every marked string of the library into ``template``."""
    keywords = [arg for keyword in KEYWORDS for arg in ("-k", keyword)]
    pybabel(
        "extract", "--no-default-keywords", *keywords,
        "--add-comments=TRANSLATORS:",
        "--project=attnbook", f"--version={version()}",
        "--copyright-holder=The Attention, Head by Head authors",
        "--output-file", template, SOURCE,
    )  # fmt: skip


def update() -> None:
    """Merge the template into each language's .po (new strings empty, changed ones fuzzy)."""
    for lang in LANGUAGES:
        pybabel(
            "update", "--input-file", TEMPLATE, "--output-dir", LOCALE, "--domain", DOMAIN,
            "--locale", lang, "--ignore-obsolete", "--previous",
        )  # fmt: skip


def without_date(path: Path) -> list[str]:
    """The lines of a .pot or .po but the date of its extraction, which changes on every run."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [line for line in lines if not line.startswith('"POT-Creation-Date:')]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / TEMPLATE.name
        extract(fresh)
        if without_date(fresh) != without_date(TEMPLATE):  # unchanged: leave the files as they are
            shutil.copyfile(fresh, TEMPLATE)
    update()
    print(f"updated {TEMPLATE.relative_to(ROOT)} and its catalogues: {', '.join(LANGUAGES)}")


if __name__ == "__main__":
    sys.exit(main())
