"""Chinese text in matplotlib figures: find an installed CJK font and use it.

The book labels its figures in English and Chinese (老张说他很累). Matplotlib's default font,
DejaVu Sans, has no CJK glyphs, so without help every Chinese character is drawn as a box and
matplotlib emits "Glyph ... missing from font" — which the book build treats as an error.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import matplotlib
from matplotlib import font_manager

# Families tried in order. WenQuanYi Micro Hei is what CI installs (Debian fonts-wqy-microhei);
# the others are what macOS, Windows and most Linux desktops already have.
CJK_FONT_FAMILIES: tuple[str, ...] = (
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "PingFang SC",
    "Hiragino Sans GB",
    "Microsoft YaHei",
    "SimHei",
)

INSTALL_HINT = (
    "no CJK font found, so Chinese labels will render as boxes. Install one and restart the "
    "kernel: `sudo apt-get install fonts-wqy-microhei` (Debian/Ubuntu), "
    "`brew install --cask font-noto-sans-cjk-sc` (macOS), or any of: "
    + ", ".join(CJK_FONT_FAMILIES)
)


@lru_cache(maxsize=1)
def find_cjk_font() -> str | None:
    """Return the first family in ``CJK_FONT_FAMILIES`` that matplotlib can find, else None."""
    installed = {f.name for f in font_manager.fontManager.ttflist}
    for family in CJK_FONT_FAMILIES:
        if family in installed:
            return family
    return None


@lru_cache(maxsize=1)
def _warn_missing_once() -> None:
    warnings.warn(INSTALL_HINT, RuntimeWarning, stacklevel=3)


def use_cjk_font() -> str | None:
    """Put a CJK font first in matplotlib's sans-serif list and return its name.

    Latin text keeps DejaVu Sans as the fallback. On a machine without a CJK font this warns once,
    with the command that fixes it, and returns None.
    """
    family = find_cjk_font()
    if family is None:
        _warn_missing_once()
        return None
    matplotlib.rcParams["font.family"] = "sans-serif"
    sans = [f for f in matplotlib.rcParams["font.sans-serif"] if f != family]
    matplotlib.rcParams["font.sans-serif"] = [family, *sans]
    # The CJK fonts above draw U+2212 MINUS SIGN poorly or not at all; use a hyphen-minus.
    matplotlib.rcParams["axes.unicode_minus"] = False
    return family
