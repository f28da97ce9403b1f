"""A pretrained encoder's view of sentences: attention per sentence, vocabulary coverage."""

from __future__ import annotations

import pytest
import torch

from attnbook.pretrained import MiniLM, minilm
from attnbook.pretrained.sentences import (
    character_coverage,
    cjk_vocabulary,
    is_cjk,
    segments,
    sentence_attention,
)
from attnbook.viz.attention_view import attention_views

SENTENCES = ["He lit a cigarette.", "Zhang told Mary that he was very tired.", "she"]


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return minilm()[0]


@pytest.fixture(scope="module")
def views(model):
    return sentence_attention(model, SENTENCES, query=["he", "she"])


def test_one_entry_per_sentence_in_order(views):
    assert list(views) == SENTENCES


def test_tokens_are_the_tokenizers_with_special_tokens_named(model, views):
    for sentence, view in views.items():
        assert view["tokens"] == model.tokenizer.encode(sentence).tokens
        assert view["tokens"][0] == "[CLS]" and view["tokens"][-1] == "[SEP]"


def test_weights_are_cut_to_the_sentence_and_equal_it_run_alone(model, views):
    for sentence, view in views.items():
        L = len(view["tokens"])
        _, alone = model(*model.tokenize(sentence), need_weights=True)
        assert len(view["weights"]) == 6
        for w, a in zip(view["weights"], alone):
            assert w.shape == (12, L, L)
            torch.testing.assert_close(w, a[0], atol=1e-5, rtol=0)
            torch.testing.assert_close(w.sum(-1), torch.ones(12, L))


def test_the_default_query_is_the_first_matching_token(views):
    assert [v["query"] for v in views.values()] == [1, 5, 1]


def test_without_a_match_the_query_is_cls(model):
    view = sentence_attention(model, "A cold night.", query="he")["A cold night."]
    assert view["query"] == 0
    assert sentence_attention(model, "He ran.")["He ran."]["query"] == 0


def test_the_result_feeds_attention_views(views):
    html = attention_views(views, head_names=[f"H{h}" for h in range(12)])._repr_mimebundle_()[
        "text/html"
    ]
    assert "cigarette" in html


@pytest.mark.parametrize("bad", [3, [1, 2], None])
def test_sentences_must_be_text(model, bad):
    with pytest.raises(TypeError, match="sentences"):
        sentence_attention(model, bad)


def test_query_must_be_text(model):
    with pytest.raises(TypeError, match="query"):
        sentence_attention(model, "He ran.", query=[1])


def test_is_cjk():
    assert is_cjk("他") and is_cjk("張") and not is_cjk("a") and not is_cjk("。")
    with pytest.raises(ValueError, match="one character"):
        is_cjk("老张")


def test_cjk_vocabulary_holds_single_ideographs_that_encode_as_themselves(model):
    characters = cjk_vocabulary(model.tokenizer)
    assert characters == sorted(set(characters)) and len(characters) > 100
    for c in characters[:20]:
        assert model.tokenizer.encode(c).tokens == ["[CLS]", c, "[SEP]"]


def test_character_coverage(model):
    coverage = character_coverage(model.tokenizer, "小 他a.小")
    assert coverage == {"小": True, "他": False, "a": True, ".": True}
    assert character_coverage(model.tokenizer, "  ") == {}
    with pytest.raises(TypeError, match="text"):
        character_coverage(model.tokenizer, None)


def test_segments_are_consecutive_windows_of_the_text_with_special_tokens(model):
    tokenizer = model.tokenizer
    texts = ["He lit a cigarette.", "Zhang told Mary that he was very tired, and she nodded."]
    stream = [i for t in texts for i in tokenizer.encode(t, add_special_tokens=False).ids]
    ids, mask = segments(tokenizer, texts, length=6, count=3)
    assert ids.shape == mask.shape == (3, 6) and bool(mask.all())
    assert (ids[:, 0] == tokenizer.token_to_id("[CLS]")).all()
    assert (ids[:, -1] == tokenizer.token_to_id("[SEP]")).all()
    assert ids[:, 1:-1].flatten().tolist() == stream[:12]  # no piece skipped, none repeated
    with pytest.raises(ValueError, match="hold 4 windows of length 6"):
        segments(tokenizer, texts, length=6, count=5)
    with pytest.raises(ValueError, match="length"):
        segments(tokenizer, texts, length=2, count=1)


def test_pairs_have_both_sentences_segment_ids_and_padding(model):
    pairs = [("He lit a cigarette.", "She left."), ("Hi.", "Bye.")]
    ids, mask, types = model.tokenize_pairs(pairs)
    first = model.tokenizer.encode(*pairs[0])
    assert ids[0].tolist() == first.ids and types[0].tolist() == first.type_ids
    assert first.tokens.count("[SEP]") == 2 and 1 in first.type_ids
    second = model.tokenizer.encode(*pairs[1])
    assert int(mask[1].sum()) == len(second.ids) and not bool(mask[1, len(second.ids) :].any())
    assert bool((ids[1, len(second.ids) :] == model.config.pad_token_id).all())
    with pytest.raises(TypeError, match="pairs"):
        model.tokenize_pairs(["not a pair"])
