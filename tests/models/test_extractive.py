"""The sentence pointer: its pointer is an attention distribution over real sentences."""

from __future__ import annotations

import pytest
import torch

from attnbook.models.extractive import (
    SentencePointer,
    SentencePointerConfig,
    pointer_loss,
    repeat_share,
    sentence_max,
)
from attnbook.tasks import summaries as S


def _batch(n=4, split="train"):
    vocab = S.vocabulary()
    return vocab, S.paragraphs(n, split, 0), S.collate(S.paragraphs(n, split, 0), vocab)


@pytest.mark.parametrize("num_layers", [0, 1, 2])
def test_weights_are_a_distribution_over_real_sentences(num_layers):
    vocab, paragraphs, batch = _batch()
    model = SentencePointer(SentencePointerConfig(vocab_size=len(vocab), num_layers=num_layers))
    weights, encoder_weights = model(batch)
    assert weights.shape == batch.sentence_mask.shape
    torch.testing.assert_close(weights.sum(-1), torch.ones(4))
    assert (weights[batch.sentence_mask] == 0).all()
    if num_layers:
        assert len(encoder_weights) == num_layers
        assert encoder_weights[0].shape == (4, 4, *batch.tokens.shape[1:] * 2)
    else:
        assert encoder_weights is None


def test_sentence_max_takes_each_feature_maximum_within_a_sentence():
    hidden = torch.tensor([[[1.0, -1.0], [3.0, -5.0], [0.0, 2.0], [9.0, 9.0]]])  # (1, 4, 2)
    ids = torch.tensor([[0, 0, 1, -1]])
    pooled = sentence_max(hidden, ids, 3)
    assert pooled.tolist() == [[[3.0, -1.0], [0.0, 2.0], [0.0, 0.0]]]


def test_without_an_encoder_a_sentence_ignores_the_rest_of_the_paragraph():
    vocab = S.vocabulary()
    model = SentencePointer(SentencePointerConfig(vocab_size=len(vocab), num_layers=0))
    a, b = S.paragraphs(1, "test", 2)[0], S.paragraphs(1, "swapped", 2)[0]
    # the two decisions are the same sentences; only the background changed
    wa, _ = model(S.collate([a], vocab))
    wb, _ = model(S.collate([b], vocab))
    ratio = lambda w: (w[0, a.key] / w[0, b.key]).item()  # noqa: E731
    assert ratio(wa) == pytest.approx(ratio(wb), rel=1e-5)


def test_pointer_loss_is_the_nll_of_the_key():
    weights = torch.tensor([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7]])
    expected = -(torch.tensor(0.5).log() + torch.tensor(0.7).log()) / 2
    torch.testing.assert_close(pointer_loss(weights, torch.tensor([0, 2])), expected)


def test_repeat_share_counts_only_the_same_word_in_other_sentences():
    vocab, paragraphs, batch = _batch(2)
    N, T = batch.tokens.shape
    weights = torch.full((N, 1, T, T), 1.0 / T)
    query = S.project_positions(paragraphs)
    share, uniform = repeat_share(weights, batch, query)
    for n, p in enumerate(paragraphs):
        mentions = sum(s.count(p.project) for i, s in enumerate(p.sentences) if i != p.key)
        length = sum(len(s) for s in p.sentences)
        assert share[n, 0].item() == pytest.approx(mentions / T)
        assert uniform[n].item() == pytest.approx(mentions / length)


def test_bad_inputs_name_their_shapes():
    vocab, _, batch = _batch(2)
    with pytest.raises(ValueError, match="weights must be"):
        pointer_loss(torch.ones(3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="sentence_ids"):
        sentence_max(torch.ones(2, 3, 4), torch.zeros(2, 4, dtype=torch.long), 2)
    model = SentencePointer(SentencePointerConfig(vocab_size=len(vocab), max_sentence_len=4))
    with pytest.raises(ValueError, match="max_sentence_len"):
        model(batch)
