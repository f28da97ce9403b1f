"""Layout helpers: the palette is the style file's, sizes are CSS pixels, labels never overlap."""

import re

import matplotlib.pyplot as plt
import pytest
from cycler import cycler

from attnbook.viz import layout
from attnbook.viz.style import CONTENT_WIDTH, STYLE_FILE

# Every test in this module runs in the book's style (tests/viz/conftest.py).
pytestmark = pytest.mark.usefixtures("book_style")


def test_the_palette_is_the_style_files_colour_cycle():
    cycle = [c["color"].upper().lstrip("#") for c in plt.rcParams["axes.prop_cycle"]]
    assert cycle == [hex_.lstrip("#") for hex_ in layout.OKABE_ITO.values()]
    assert "axes.prop_cycle" in open(STYLE_FILE).read()
    assert plt.rcParams["axes.prop_cycle"] != cycler(color=["C0"])


def test_tab_names_are_drawn_in_the_nearest_okabe_ito_colour_and_others_pass_through():
    assert layout.palette("tab:red") == layout.OKABE_ITO["vermilion"]
    assert layout.palette("bluish green") == "#009E73"
    assert layout.palette("grey") == "grey"


def test_sizes_are_css_pixels_and_wide_glyphs_count_one_em():
    assert layout.font_px("font.size") == pytest.approx(10.5 * 100 / 72)
    em = layout.font_px()
    assert layout.text_px("老张") == pytest.approx(2 * em)
    assert layout.text_px("ab\nabcd") == pytest.approx(4 * 0.6 * em)  # the longest line
    assert layout.MAX_WIDTH + 0.2 <= CONTENT_WIDTH / 100


def test_wrap_breaks_long_titles_only():
    assert layout.wrap("short", 300) == "short"
    wrapped = layout.wrap("word " * 40, 300)
    assert "\n" in wrapped and all(
        layout.text_px(line, "axes.titlesize") <= 300 for line in wrapped.split("\n")
    )


def test_tick_labels_stay_level_when_they_fit_and_turn_when_not():
    fig, ax = plt.subplots(figsize=(6, 3))
    assert layout.fit_tick_labels(ax, "x", list("abcdef")) == list(range(6))
    assert ax.xaxis.get_ticklabels()[0].get_rotation() == 0
    layout.fit_tick_labels(ax, "x", ["afterwards"] * 12)
    assert ax.xaxis.get_ticklabels()[0].get_rotation() == 90


def test_crowded_labels_are_thinned_but_the_kept_one_stays():
    fig, ax = plt.subplots(figsize=(6, 3))
    shown = layout.fit_tick_labels(ax, "y", [f"t{i}" for i in range(60)], keep=[37])
    assert 37 in shown and 5 < len(shown) < 60
    step = shown[1] - shown[0]
    assert step * layout.axes_px(ax)[1] / 60 >= 1.25 * layout.font_px()
    texts = [t.get_text() for t in ax.get_yticklabels()]
    assert texts[37] == "t37" and texts[36] == "" and texts[38] == ""


def test_cells_fit_a_number_only_when_wide_and_tall_enough():
    fig, ax = plt.subplots(figsize=(6, 6))
    assert layout.cells_fit(ax, 5, 5, "0.00")
    assert not layout.cells_fit(ax, 5, 40, "0.00")  # too narrow
    assert not layout.cells_fit(ax, 60, 5, "0.00")  # too short


def test_describe_puts_alt_text_on_the_figure_or_on_the_panel():
    fig, ax = plt.subplots()
    layout.describe(ax, True, "whole")
    assert fig._attnbook_alt == "whole"
    layout.describe(ax, False, "panel")
    assert ax._attnbook_alt == "panel"


def test_alt_text_is_cut_at_the_limit():
    fig, ax = plt.subplots()
    layout.describe(ax, True, "x " * 1000)
    assert len(fig._attnbook_alt) <= layout.MAX_ALT and fig._attnbook_alt.endswith(" …")


def test_alt_text_is_cut_after_a_complete_item():
    fig, ax = plt.subplots()
    layout.describe(ax, True, ", ".join(f"token{i}=0.{i:02d}" for i in range(100)))
    alt = fig._attnbook_alt
    assert len(alt) <= layout.MAX_ALT and alt.endswith(" …")
    assert re.search(r"token\d+=0\.\d\d …$", alt), alt  # no item cut mid-word
