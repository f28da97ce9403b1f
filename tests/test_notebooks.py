"""The committed notebooks are as `make notebooks` leaves them: executed in order, normalised,
light, and with no error or stray warning in their outputs."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*(ROOT / "book").glob("*.ipynb"), *(ROOT / "zh" / "book").glob("*.ipynb")])
_spec = importlib.util.spec_from_file_location(
    "execute_notebooks", ROOT / "scripts" / "execute_notebooks.py"
)
execute_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute_notebooks)
_spec = importlib.util.spec_from_file_location("other_cpu", ROOT / "scripts" / "other_cpu.py")
other_cpu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(other_cpu)


def test_there_are_notebooks_to_check():
    assert len(NOTEBOOKS) >= 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_executed_top_to_bottom_in_one_fresh_kernel(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_carries_no_editor_or_execution_metadata(path):
    nb = json.loads(path.read_text())
    assert not set(execute_notebooks.VOLATILE_NOTEBOOK_METADATA) & set(nb["metadata"])
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for n, cell in enumerate(nb["cells"]):
        stray = set(execute_notebooks.VOLATILE_CELL_METADATA) & set(cell.get("metadata", {}))
        assert not stray, f"cell {n} carries {sorted(stray)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_records_the_cpu_kernels_that_computed_it(path):
    meta = json.loads(path.read_text())["metadata"]
    assert meta["attnbook"]["cpu_capability"] in {"AVX512", "AVX2", "DEFAULT"}


def test_the_second_pass_runs_on_kernels_that_did_not_write_the_outputs():
    other = other_cpu.other
    assert other("AVX2", {"AVX512"}) == "avx2"  # an AVX2 machine is another CPU already
    assert other("AVX512", {"AVX512"}) == "avx2"
    assert other("AVX2", {"AVX512", "AVX2"}) == "default"
    assert other("DEFAULT", {"AVX2"}) == "default"
    assert other("DEFAULT", {"DEFAULT"}) == "default"  # nothing else to try on this machine
    assert other("AVX2", {"AVX512", "unknown"}) == "default"  # a notebook without a record
    assert other_cpu.recorded() <= {"AVX512", "AVX2", "DEFAULT"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_outputs_have_no_error_and_no_stderr(path):
    for n, cell in enumerate(json.loads(path.read_text())["cells"]):
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", f"cell {n} stored an error"
            assert output.get("name") != "stderr", f"cell {n} stored stderr: {output.get('text')}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_stays_under_two_mebibytes(path):
    assert path.stat().st_size < 2 * 2**20


def stored_images(nb: dict):
    """(cell number, PNG bytes, width in CSS px or None) for every image a notebook stores:
    figures (image/png) and the images inside HTML views (data URIs)."""
    import base64

    for n, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                width = output.get("metadata", {}).get("image/png", {}).get("width")
                yield n, base64.b64decode("".join(data["image/png"])), width
            html = "".join(data.get("text/html", ""))
            for tag in re.findall(r"<img [^>]*>", html):
                src = re.search(r'src="data:image/png;base64,([^"]+)"', tag)
                if src:
                    width = re.search(r'width="(\d+)"', tag)
                    yield n, base64.b64decode(src.group(1)), width and int(width.group(1))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_figures_are_sharp_described_and_readable(path):
    """Every stored figure went through attnbook.viz.style.render_png: shown at half its pixel
    width (2 image pixels per CSS pixel), alt text in the PNG, no text smaller than the page's
    small print in a column CONTENT_WIDTH wide."""
    import io

    from PIL import Image

    from attnbook.viz.style import ALT_KEY, CONTENT_WIDTH, DENSITY, MIN_TEXT_PX, TEXT_KEY

    for n, png, width in stored_images(json.loads(path.read_text())):
        with Image.open(io.BytesIO(png)) as image:
            text, pixels = dict(image.text), image.width
        where = f"{path.name}, cell {n}"
        assert text.get(ALT_KEY, "").strip(), f"{where}: a figure without alt text"
        assert TEXT_KEY in text, f"{where}: a figure not rendered by attnbook.viz.style"
        assert width is not None and pixels >= DENSITY * width - 1, (
            f"{where}: {pixels} image pixels shown {width} CSS pixels wide (< {DENSITY}x)"
        )
        shown = float(text[TEXT_KEY]) * min(1.0, CONTENT_WIDTH / width)
        assert shown >= MIN_TEXT_PX - 0.05, (
            f"{where}: smallest text {shown:.1f} CSS px as shown (< {MIN_TEXT_PX}); "
            f"alt: {text[ALT_KEY][:80]}"
        )


def stored_svgs(nb: dict):
    """(cell number, SVG markup, width in CSS px or None) for every SVG a notebook stores."""
    for n, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            svg = output.get("data", {}).get("image/svg+xml")
            if svg is not None:
                width = output.get("metadata", {}).get("image/svg+xml", {}).get("width")
                yield n, "".join(svg), width


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_diagrams_are_vectors_described_small_and_readable(path):
    """Every stored SVG went through attnbook.viz.style.render_svg: alt text in its <title>, in
    the edition's language, under 120 kB, and no text smaller than the page's small print."""
    from attnbook.viz.style import CONTENT_WIDTH, MIN_TEXT_PX, svg_info

    for n, svg, width in stored_svgs(json.loads(path.read_text())):
        where = f"{path.name}, cell {n}"
        alt, svg_width, text_px = svg_info(svg)
        assert alt and text_px is not None, f"{where}: an SVG not rendered by attnbook.viz.style"
        assert width == svg_width, f"{where}: shown {width} px wide, drawn {svg_width} px"
        if "zh" in path.relative_to(ROOT).parts:
            assert re.search(r"[\u4e00-\u9fff]", alt), f"{where}: alt text not in Chinese: {alt}"
        assert len(svg.encode()) < 120_000, f"{where}: {len(svg.encode())} bytes of SVG"
        shown = text_px * min(1.0, CONTENT_WIDTH / svg_width)
        assert shown >= MIN_TEXT_PX - 0.05, f"{where}: smallest text {shown:.1f} CSS px as shown"
