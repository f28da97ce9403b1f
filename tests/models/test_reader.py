import pytest
import torch

from attnbook.models.reader import (
    GRUReader,
    Reader,
    ReaderConfig,
    accuracy_by_kind,
    hop_weights,
    reader_loss,
    sentence_grid,
)
from attnbook.tasks.stories import PLACES, collate, stories, vocabulary

VOCAB = vocabulary()


@pytest.fixture(scope="module")
def batch():
    return collate(stories(6, seed=0), VOCAB)


def reader(**sizes) -> Reader:
    torch.manual_seed(0)
    return Reader(ReaderConfig(len(VOCAB), **sizes)).eval()


def test_reader_returns_logits_over_places_and_one_row_of_weights_per_hop(batch):
    logits, weights = reader(hops=3).run(batch, need_weights=True)
    N, S = batch.tokens.shape
    assert logits.shape == (N, len(PLACES))
    assert len(weights) == 4 and all(w.shape == (N, 2, S) for w in weights[:3])
    assert weights[3].shape == (N, 1, S)  # the pointer
    for w in weights:
        torch.testing.assert_close(w.sum(-1), torch.ones(N, w.size(1)))
        assert (w[batch.key_padding_mask[:, None].expand_as(w)] == 0).all()
    assert reader().run(batch)[1] is None


def test_the_answer_is_the_pointer_weight_on_each_place_word(batch):
    logits, weights = reader().run(batch, need_weights=True)
    pointer = weights[-1][:, 0]  # (N, S)
    is_place = torch.stack([batch.tokens == VOCAB.stoi[p] for p in PLACES], -1)  # (N, S, P)
    assert (pointer[~is_place.any(-1)] == 0).all()  # only place words are pointed at
    on_place = (pointer[:, :, None] * is_place).sum(1)  # (N, P)
    torch.testing.assert_close(logits.exp(), on_place, atol=1e-5, rtol=1e-4)


def test_padding_does_not_change_the_answer(batch):
    model = reader()
    alone = collate(stories(1, seed=0), VOCAB)
    with torch.no_grad():
        torch.testing.assert_close(
            model.run(alone)[0][0], model.run(batch)[0][0], atol=1e-5, rtol=0
        )


def test_encoder_keeps_sentences_apart(batch):
    # changing the first word of sentence 0 changes nothing in the other sentences' encodings
    model = reader()
    tokens = batch.tokens.clone()
    tokens[0, 0] = VOCAB.stoi["daniel" if VOCAB.itos[int(tokens[0, 0])] != "daniel" else "mary"]
    with torch.no_grad():
        before = model.encode(batch.tokens, batch.sentence, batch.recency, batch.word)
        after = model.encode(tokens, batch.sentence, batch.recency, batch.word)
    other = batch.sentence[0] > 0
    first = batch.sentence[0] == 0
    torch.testing.assert_close(before[0, other], after[0, other])
    assert not torch.allclose(before[0, first], after[0, first])
    torch.testing.assert_close(before[1:], after[1:])


def test_encoding_equals_a_block_diagonal_mask_over_the_flat_story(batch):
    model = reader()
    x = model.token(batch.tokens) + model.word(batch.word.clamp_min(0))
    x = x + model.recency(batch.recency.clamp_min(0))
    blocked = batch.sentence[:, :, None] != batch.sentence[:, None, :]  # (N, S, S)
    with torch.no_grad():
        flat, _ = model.encoder(x, mask=blocked.repeat_interleave(2, dim=0))
        encoded = model.encode(batch.tokens, batch.sentence, batch.recency, batch.word)
    real = ~batch.key_padding_mask
    torch.testing.assert_close(encoded[real], flat[real], atol=1e-5, rtol=1e-5)
    assert (encoded[~real] == 0).all()


def test_reader_refuses_stories_longer_than_its_positions(batch):
    long = collate(stories(2, seed=0, n_sentences=12), VOCAB)
    with pytest.raises(ValueError, match="at most 8 sentences"):
        reader(max_sentences=8).run(long)
    with pytest.raises(ValueError, match=r"\(N, S\)"):
        reader()(
            batch.tokens,
            batch.sentence[:, :3],
            batch.recency,
            batch.word,
            batch.question,
            batch.question_padding_mask,
        )


def test_sentence_grid_puts_each_sentence_in_its_row(batch):
    grid = sentence_grid(batch.tokens, batch.sentence, batch.word, 8)
    story = stories(1, seed=0)[0]
    assert grid.shape[1:] == (int(batch.n_sentences.max()), 8)
    for k, sentence in enumerate(story.sentences):
        assert VOCAB.decode(grid[0, k, : len(sentence)]) == list(sentence)
        assert (grid[0, k, len(sentence) :] == 0).all()


def test_gru_reader_answers_and_ignores_padding(batch):
    torch.manual_seed(0)
    model = GRUReader(len(VOCAB)).eval()
    logits, weights = model.run(batch)
    assert logits.shape == (len(batch.answer), len(PLACES)) and weights is None
    alone = collate(stories(1, seed=0), VOCAB)
    with torch.no_grad():
        torch.testing.assert_close(
            model.run(alone)[0][0], model.run(batch)[0][0], atol=1e-5, rtol=0
        )


def test_loss_accuracy_and_hop_weights(batch):
    model = reader().train()
    loss = reader_loss(model, batch)
    assert loss.shape == () and loss.requires_grad
    accuracy = accuracy_by_kind(model, batch)
    assert set(accuracy) == {"one fact", "two facts", "all"} and model.training
    assert hop_weights(model, batch).shape == (3, *batch.tokens.shape) and model.training
