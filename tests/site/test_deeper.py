"""Going-deeper sections on the built site (CONTRIBUTING.md): set apart from the core path and
labelled in the page's language, in the light and the dark theme, on a desktop and at 390 px; a
whole deeper page (section 3.14) carries the label at its top."""

from __future__ import annotations

import pytest

PAGES = {"book/01_detective.html": "Going deeper", "zh/book/01_detective.html": "深入一步"}

LOOK = """() => {
  const deeper = document.querySelector('section.deeper');
  if (!deeper) return null;
  const core = deeper.parentElement.closest('section');
  const cs = getComputedStyle(deeper), cc = getComputedStyle(core);
  const label = getComputedStyle(deeper, '::before');
  return {
    border: [cs.borderLeftWidth, cs.borderLeftStyle, cs.borderLeftColor],
    coreBorder: [cc.borderLeftWidth, cc.borderLeftStyle],
    background: cs.backgroundColor, coreBackground: cc.backgroundColor,
    label: label.content, labelColour: label.color, labelShown: label.display !== 'none',
    deeperCells: deeper.querySelectorAll('.cell.tag_deeper').length,
    coreCells: Array.from(core.querySelectorAll('.cell'))
      .filter(c => !c.closest('section.deeper')).filter(c => c.classList.contains('tag_deeper'))
      .length,
    heading: deeper.querySelector('h1, h2, h3, h4').textContent,
    right: deeper.getBoundingClientRect().right, width: document.documentElement.clientWidth,
  };
}"""


def _rgb(colour: str) -> tuple[float, ...]:
    parts = colour[colour.index("(") + 1 : colour.index(")")].split(",")
    return tuple(float(p) for p in parts[:3])


def _contrast(a: str, b: str) -> float:
    def luminance(rgb: tuple[float, ...]) -> float:
        c = [v / 255 for v in rgb]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    hi, lo = sorted((luminance(_rgb(a)), luminance(_rgb(b))), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def check_look(look: dict | None, label: str) -> None:
    assert look is not None, "no section.deeper on the page"
    width, style, _ = look["border"]
    assert float(width.rstrip("px")) >= 3 and style == "solid", look
    assert look["border"][:2] != look["coreBorder"], look
    assert look["background"] != look["coreBackground"], look
    assert label in look["label"] and look["labelShown"], look
    assert _contrast(look["labelColour"], look["background"]) >= 4.5, look
    assert look["deeperCells"] >= 1 and look["coreCells"] == 0, look
    assert label in look["heading"], look  # after its number, "1.8.2."
    assert look["right"] <= look["width"] + 1, look


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)
def test_a_deeper_section_is_set_apart_and_labelled(offline_page, site_url, name, theme):
    page = offline_page.page
    page.goto(f"{site_url}/{name}", wait_until="load")
    page.evaluate(f"() => document.documentElement.setAttribute('data-theme', '{theme}')")
    check_look(page.evaluate(LOOK), PAGES[name])
    page.set_viewport_size({"width": 390, "height": 844})
    check_look(page.evaluate(LOOK), PAGES[name])
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


@pytest.mark.parametrize(
    ("name", "label"),
    [("book/03b_overfitting.html", "Going deeper"), ("zh/book/03b_overfitting.html", "深入一步")],
)
def test_a_deeper_page_says_so_at_its_top(offline_page, site_url, name, label):
    page = offline_page.page
    page.goto(f"{site_url}/{name}", wait_until="load")
    content = page.evaluate(
        "() => { const s = document.querySelector('article section.deeper-page');"
        " return s ? getComputedStyle(s, '::before').content : null; }"
    )
    assert content is not None and label in content
