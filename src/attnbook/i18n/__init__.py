"""The book's two languages: which one the figures, views and checkers speak.

The English and Chinese editions run the same code; a Chinese chapter calls
``set_language("zh")`` once, in its first cell, and every plotting function, view and checker
of the library then labels in Chinese. A function that draws takes ``lang=`` as well, which
overrides the setting for that call.

:func:`tr` looks an English string up in ``ZH_STRINGS``, the library's strings in Chinese, read
at import from the gettext catalogue ``locale/zh/LC_MESSAGES/attnbook.po`` beside this module
(any translation tool edits it; ``make i18n`` extracts the strings into ``locale/attnbook.pot``
and merges them in). A string it does not know comes back unchanged, and the tests check that
no figure the library draws in Chinese keeps an English word. :func:`N_` marks a string for
translation where it is written, when :func:`tr` translates it later.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files

from babel.messages.pofile import read_po

__all__ = [
    "LANGUAGES",
    "N_",
    "load_catalogue",
    "ZH_STRINGS",
    "set_language",
    "get_language",
    "resolve",
    "tr",
    "language",
]

#: The languages of the two editions, English and (simplified) Chinese.
LANGUAGES = ("en", "zh")

_state = {"lang": "en"}


def load_catalogue(lang: str) -> dict[str, str]:
    """The translations of ``lang``'s gettext catalogue: English string → its translation.

    Entries that are untranslated or marked fuzzy are left out, as ``msgfmt`` leaves them out.
    """
    path = files(__name__) / "locale" / lang / "LC_MESSAGES" / "attnbook.po"
    with path.open("rb") as f:
        catalog = read_po(f, locale=lang)
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}


#: Every Chinese string of the library (figures, views, checkers), keyed by its English.
ZH_STRINGS: dict[str, str] = load_catalogue("zh")


def resolve(lang: str | None = None) -> str:
    """``lang`` checked against :data:`LANGUAGES`, or the current language if it is None."""
    if lang is None:
        return _state["lang"]
    if not isinstance(lang, str):
        raise TypeError(f"lang must be a str, one of {LANGUAGES}; got {type(lang).__name__}")
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}; got {lang!r}")
    return lang


def set_language(lang: str) -> None:
    """Make ``lang`` ("en" or "zh") the language of every figure, view and checker from now on."""
    _state["lang"] = resolve(lang)


def get_language() -> str:
    """The current language, "en" unless :func:`set_language` changed it."""
    return _state["lang"]


@contextmanager
def language(lang: str) -> Iterator[str]:
    """Speak ``lang`` inside a ``with`` block, then return to the language before it."""
    before = _state["lang"]
    set_language(lang)
    try:
        yield _state["lang"]
    finally:
        _state["lang"] = before


def tr(text: str, lang: str | None = None) -> str:
    """``text`` (an English string of the library) in ``lang``, or in the current language.

    A ``str.format`` template is looked up before it is filled:
    ``tr("head {h}").format(h=2)``.
    """
    if resolve(lang) == "en":
        return text
    return ZH_STRINGS.get(text, text)


def N_(text: str) -> str:
    """``text`` unchanged: marks an English string for translation where it is written.

    The gettext convention for a string that is translated later, by :func:`tr`, after it has
    travelled through a variable, a table of labels or a default argument:
    ``LABELS = {"sum": N_("summed over positions")}`` ... ``tr(LABELS[kind])``. Extraction
    (``make i18n``) finds it here, so the catalogue holds it.
    """
    return text
