"""The live panel's HTML and data (attnbook.viz.live) and the build step that serves its model
(book/_ext/live_models.py). tests/site/test_live.py runs the panel in Chromium."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest

from attnbook.checkpoint import load_checkpoint
from attnbook.tasks.coref import CorefTask
from attnbook.tasks.vocab import Vocabulary, tokenize
from attnbook.viz.attention_view import HEAD_COLORS, ROW_PX
from attnbook.viz.live import (
    EXAMPLES,
    MODEL_FILE,
    OFFSITE,
    detective_vocabulary,
    known_tokens,
    live_panel,
)
from attnbook.viz.web import HTMLView

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "book" / "checkpoints" / MODEL_FILE


def panel_data(view: HTMLView) -> dict:
    found = re.search(
        r'<script type="application/json" class="attnbook-live-data">(.*?)</script>', view.html
    )
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_vocabulary_is_the_committed_checkpoints():
    config = load_checkpoint(CHECKPOINT).config
    assert len(detective_vocabulary()) == config.vocab_size
    assert detective_vocabulary().itos[0] == "<pad>"


def test_the_panel_is_a_closed_details_with_a_labelled_input_and_a_run_button():
    view = live_panel()
    assert isinstance(view, HTMLView) and "runs in the browser" in view.text
    assert '<details class="attnbook-live"><summary>Type your own sentence</summary>' in view.html
    label = re.search(r'<label for="([^"]+)">Your sentence', view.html)
    assert label and f'<input type="text" id="{label.group(1)}"' in view.html
    assert f'value="{EXAMPLES[0]}"' in view.html
    assert '<button type="submit">Run</button>' in view.html
    assert 'class="attnbook-live-message" role="status" aria-live="polite"' in view.html


def test_the_example_sentences_are_buttons_english_and_chinese():
    html = live_panel().html
    assert EXAMPLES[0] == "Anna cried and Tom ran . later she dried the tears ."
    assert any("\u4e00" <= ch <= "\u9fff" for ch in EXAMPLES[1])
    for i, text in enumerate(EXAMPLES):
        assert f'data-example="{i}"' in html and f">{text}</button>" in html


def test_the_data_holds_the_vocabulary_model_file_and_view_settings():
    data = panel_data(live_panel(checkpoint=CHECKPOINT))
    assert data["vocab"] == detective_vocabulary().itos
    assert data["model"] == MODEL_FILE
    assert data["examples"] == list(EXAMPLES)
    assert data["offsite"] == OFFSITE and "live_explorer" in OFFSITE
    assert data["layers"] == ["layer 0", "layer 1"] and data["heads"] == ["head 0", "head 1"]
    assert data["colors"] == list(HEAD_COLORS[:2]) and data["row"] == ROW_PX
    assert [k["language"] for k in data["known"]] == ["English", "Chinese"]


def test_the_page_carries_the_views_script_and_the_detective_script_inline():
    html = live_panel().html
    assert html.startswith('<div class="attnbook-live-panel') and 'data-kind="live"' in html
    classes = " ".join(re.findall(r'class="([^"]*)"', html))
    assert "attnbook-view" not in classes, "not a view: the views' site test would operate it"
    assert "window[NS]" in html and "attnbookDetective" in html and "attnbookViews1" in html
    assert "<script src" not in html
    assert set(re.findall(r"https?://[^\s\"']+", html)) <= {"http://www.w3.org/2000/svg"}


def test_known_tokens_cover_each_language_once():
    for language in ("en", "zh"):
        groups = known_tokens(language)["groups"]
        listed = [t for g in groups for t in g["tokens"]]
        assert sorted(listed) == sorted(CorefTask(language).all_tokens())
        assert len(listed) == len(set(listed))
    assert known_tokens("en")["groups"][1] == {"name": "pronouns", "tokens": ["he", "she"]}


def test_known_tokens_refuses_an_unknown_language():
    with pytest.raises(ValueError, match="language must be one of"):
        known_tokens("fr")


def test_an_example_outside_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match=r"outside the vocabulary: \['Bob'\]"):
        live_panel(examples=["Bob ran . later he was full ."])
    with pytest.raises(ValueError, match="at least one sentence"):
        live_panel(examples=[])


def test_a_checkpoint_of_another_vocabulary_is_refused():
    small = Vocabulary(tokenize(EXAMPLES[0]))
    with pytest.raises(ValueError, match="vocab_size 133; the vocabulary has"):
        live_panel(small, examples=[EXAMPLES[0]], checkpoint=CHECKPOINT)


def test_the_site_build_copies_the_committed_checkpoint(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "book" / "_ext"))
    import live_models

    app = types.SimpleNamespace(builder=types.SimpleNamespace(format="html"), outdir=str(tmp_path))
    live_models._copy_models(app, None)
    served = tmp_path / "_static" / "models" / MODEL_FILE
    assert served.read_bytes() == CHECKPOINT.read_bytes()
    (tmp_path / "other").mkdir()
    app.outdir = str(tmp_path / "other")
    live_models._copy_models(app, RuntimeError("build failed"))
    assert not (tmp_path / "other" / "_static").exists()
    sys.modules.pop("live_models", None)
