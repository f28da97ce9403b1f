"""The head explorer: tokenisation, the static version's data, the live version's callbacks."""

import json
import re

import pytest
import torch

from attnbook.models.detective import Detective, DetectiveConfig  # noqa: E402
from attnbook.tasks.coref import CorefTask, Vocabulary  # noqa: E402
from attnbook.tasks.vocab import tokenize
from attnbook.viz.explorer import (  # noqa: E402
    explorer_figure,
    kernel_is_live,
    live_explorer,
    sentence_weights,
    static_explorer,
)
from attnbook.viz.fonts import use_cjk_font  # noqa: E402

use_cjk_font()
VOCAB = Vocabulary.for_tasks(CorefTask("en"), CorefTask("zh"))


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return Detective(DetectiveConfig(len(VOCAB), d_model=16)).eval()


def test_sentence_weights_finds_the_pronoun_and_returns_one_matrix_per_layer(model):
    tokens = tokenize("Tom cried and Mary ran . later she was full .")
    weights, pronoun = sentence_weights(model, VOCAB, tokens)
    assert pronoun == tokens.index("she")
    assert len(weights) == 2 and weights[0].shape == (2, len(tokens), len(tokens))


def test_unknown_words_raise_the_vocabularys_error(model):
    with pytest.raises(ValueError, match="unknown tokens: 'Zhang'"):
        sentence_weights(model, VOCAB, ["Zhang", "cried"])


def test_explorer_figure_rejects_an_unknown_view(model):
    weights, p = sentence_weights(model, VOCAB, ["Tom", "cried", "he"])
    with pytest.raises(ValueError, match="view must be one of"):
        explorer_figure(weights, ["Tom", "cried", "he"], 0, 0, "table", p)


def test_static_explorer_embeds_every_layer_of_every_sentence_with_the_pronoun_first(model):
    sentences = {
        "a": tokenize("Tom cried . he was full ."),
        "b": tokenize("王芳哭了。她饱得不想动。"),
    }
    view = static_explorer(model, VOCAB, sentences)
    data = json.loads(
        re.search(r'class="attnbook-data">(.*?)</script>', view.html, re.S)[1].replace("<\\/", "</")
    )
    assert view.text == "attention view: 2 sentences, 2 layers x 2 heads"
    assert [s["label"] for s in data["sentences"]] == ["a", "b"]
    for entry, tokens in zip(data["sentences"], sentences.values()):
        weights, pronoun = sentence_weights(model, VOCAB, tokens)
        assert entry["queries"] == entry["keys"] == list(tokens) and entry["query"] == pronoun
        assert torch.allclose(torch.tensor(entry["weights"]), torch.stack(weights), atol=5e-5)


def test_live_explorer_recomputes_when_the_sentence_or_a_control_changes(model):
    explorer = live_explorer(model, VOCAB, ["Tom cried . he was full ."])
    text, _, view, query, message, image = explorer.children
    first = bytes(image.value)
    assert query.value == 3 and first.startswith(b"\x89PNG")
    view.value = "lines"
    assert bytes(image.value) != first
    text.value = "Mary ran and Anna ate . she was full ."
    assert [label for label, _ in query.options][-2:] == ["8: full", "9: ."] and query.value == 6
    text.value = "Zhang smiled ."
    assert "unknown tokens" in message.value and query.value == 6  # the old sentence stays


def test_outside_a_kernel_the_explorer_knows_it_is_not_live():
    assert kernel_is_live() is False
