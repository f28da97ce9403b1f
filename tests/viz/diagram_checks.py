"""Checks every architecture diagram must pass, shared by the diagram tests (one copy each).

Each takes a drawn figure: labels that fit, no English word left in a Chinese figure, alt text in
the figure's language, shown as SVG with that alt text in its ``<title>``.
"""

from __future__ import annotations

import itertools
import re

from matplotlib.figure import Figure
from matplotlib.text import Text

from attnbook.viz.style import alt_text, is_vector, render_svg

CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"[A-Za-z]{3,}")


def texts(fig: Figure) -> list[Text]:
    """The figure's visible, non-empty texts."""
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def assert_no_english_left(fig: Figure, kept: tuple[str, ...]) -> None:
    """No English word in the texts or the alt text, apart from the ``kept`` ones (symbols)."""
    kept_words = re.compile("|".join(map(re.escape, kept))) if kept else None

    def left(text: str) -> bool:
        return bool(WORD.search(kept_words.sub("", text) if kept_words else text))

    assert [t.get_text() for t in texts(fig) if left(t.get_text())] == []
    assert not left(alt_text(fig))


def assert_texts_inside_and_apart(fig: Figure) -> None:
    """Every text inside the canvas, and no two overlapping."""
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts(fig)]
    for text, box in boxes:
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, (text, box)
        assert fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1, (text, box)
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), (a, b)


def assert_alt_in_language(fig: Figure, lang: str) -> str:
    """Alt text of a real description's length, Chinese exactly in the Chinese figure; returned."""
    alt = alt_text(fig)
    assert len(alt) > (200 if lang == "en" else 80)
    assert bool(CJK.search(alt)) == (lang == "zh")
    return alt


def assert_svg_with_alt(fig: Figure) -> None:
    """Marked to be shown as SVG, with the alt text as its ``<title>``, and not heavy."""
    assert is_vector(fig)
    image = render_svg(fig)
    assert image.svg.startswith("<svg ") and f"<title>{image.alt}</title>" in image.svg
    assert len(image.svg.encode()) < 100_000
