"""Small fixes to the HTML that Jupyter Book 1's theme stack writes.

With jupyter-book 1.0.4.post1 (Sphinx 7.4, sphinx-thebe 0.3.1, sphinx-togglebutton 0.3.2) the
inline scripts of sphinx-thebe and sphinx-togglebutton are written twice into every page. The
second copy of ``const THEBE_JS_URL = ...`` is a JavaScript error ("has already been declared")
on every page. This extension drops exact duplicates from the page's script list; it changes
nothing else.
"""

from __future__ import annotations

from typing import Any


def _drop_duplicate_scripts(
    app, pagename: str, templatename: str, context: dict[str, Any], doctree
) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    unique = []
    for script in scripts:
        attributes = getattr(script, "attributes", {}) or {}
        key = (
            str(getattr(script, "filename", "") or ""),
            tuple(sorted((k, str(v)) for k, v in attributes.items())),
        )
        if key in seen:
            continue
        seen.add(key)
        unique.append(script)
    context["script_files"] = unique


def setup(app) -> dict[str, Any]:
    # After the theme and extensions have added their scripts.
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
