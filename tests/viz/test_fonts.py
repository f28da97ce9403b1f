"""Chinese in figures: a CJK font is found and used, or a warning says how to install one."""

import warnings

import matplotlib.pyplot as plt
import pytest

from attnbook.viz import fonts


def test_cjk_font_renders_chinese_without_missing_glyphs():
    family = fonts.use_cjk_font()
    assert family is not None, "no CJK font installed: apt-get install fonts-wqy-microhei"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font" is a UserWarning
        fig, ax = plt.subplots()
        ax.set_title("老张说他很累")
        fig.canvas.draw()
    plt.close(fig)


def test_missing_cjk_font_warns_once_with_the_fix(monkeypatch):
    monkeypatch.setattr(fonts, "find_cjk_font", lambda: None)
    fonts._warn_missing_once.cache_clear()
    with pytest.warns(RuntimeWarning, match="fonts-wqy-microhei"):
        assert fonts.use_cjk_font() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fonts.use_cjk_font() is None  # second time: silent
