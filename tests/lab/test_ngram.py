"""attnbook.lab.ngram: unigram and Kneser-Ney n-gram baselines, against hand computations."""

import math

import pytest
import torch

from attnbook.lab.ngram import NGramModel, ngram_loss, ngram_model

# A stream with structure: after 0 comes 1 or 2, and which one depends on the token before 0.
PATTERN = [0, 1, 0, 2, 3] * 40
V = 6  # tokens 4 and 5 never occur


def random_stream(length=3000, vocab=20, seed=0):
    generator = torch.Generator().manual_seed(seed)
    weights = torch.arange(1, vocab + 1, dtype=torch.float) ** -1.2  # Zipf-like, as words are
    return torch.multinomial(weights, length, replacement=True, generator=generator)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("context", [[], [0], [3, 0], [4, 5], [5, 0], [1, 0, 2]])
def test_probabilities_over_the_vocabulary_sum_to_one(n, context):
    model = ngram_model(PATTERN, n, V)
    p = model.distribution(context)
    assert p.shape == (V,) and p.dtype == torch.float64
    assert (p > 0).all() and math.isclose(p.sum().item(), 1.0, abs_tol=1e-12)
    assert p.tolist() == pytest.approx([model.prob(context, w) for w in range(V)], abs=1e-15)


def test_unigram_is_add_k_over_the_counts():
    model = ngram_model([0, 0, 1], 1, 3)  # add-one: (2+1)/6, (1+1)/6, (0+1)/6
    assert model.distribution([]).tolist() == pytest.approx([3 / 6, 2 / 6, 1 / 6])
    assert ngram_model([0, 0, 1], 1, 3, k=0.5).prob([], 2) == pytest.approx(0.5 / 4.5)
    loss, perplexity = ngram_loss(model, [1, 0, 2])  # scores 0 and 2
    assert loss == pytest.approx(-(math.log(3 / 6) + math.log(1 / 6)) / 2)
    assert perplexity == pytest.approx(math.exp(loss))


def test_bigram_is_interpolated_kneser_ney_by_hand():
    model = ngram_model([0, 1, 0, 1, 0, 2], 2, 3)
    # Bigrams: 01 twice, 10 twice, 02 once: D = n1 / (n1 + 2 n2) = 1 / 5. Continuations: each of
    # 0, 1, 2 follows one distinct token, so D = 3 / 3 -> clipped to 0.95 and p(w) = 1/3.
    assert model.discounts == pytest.approx((0.95, 0.2))
    assert model.prob([], 1) == pytest.approx(1 / 3)
    assert model.prob([0], 1) == pytest.approx((2 - 0.2) / 3 + 0.2 * 2 / 3 * (1 / 3))
    assert model.prob([0], 0) == pytest.approx(0.2 * 2 / 3 * (1 / 3))
    assert model.prob([2], 1) == pytest.approx(1 / 3)  # 2 is never followed: fall back


def test_continuation_counts_favour_tokens_that_follow_many_tokens():
    # 9 follows only 8 (often); 7 follows many tokens (rarely each): the unigram level of
    # Kneser-Ney prefers 7, the raw counts prefer 9.
    stream = [8, 9] * 20 + [1, 7, 2, 7, 3, 7, 4, 7]
    model = ngram_model(stream, 2, 10)
    assert model.prob([], 7) > model.prob([], 9)
    assert stream.count(9) > stream.count(7)


def test_unigram_perplexity_is_at_most_the_vocabulary_size():
    stream = random_stream()
    model = ngram_model(stream[:2000], 1, 20)
    assert ngram_loss(model, stream[:2000])[1] <= 20  # on its own training text: always
    assert ngram_loss(model, stream[2000:])[1] <= 20


def test_context_helps_on_text_with_structure():
    train, heldout = PATTERN[:150], PATTERN[150:]
    perplexity = {n: ngram_loss(ngram_model(train, n, V), heldout)[1] for n in (1, 2, 3)}
    assert perplexity[3] < perplexity[2] < perplexity[1]
    assert perplexity[3] < 1.2  # the pattern is fully predictable from two tokens


def test_context_does_not_help_on_tokens_drawn_independently():
    stream = random_stream(length=4000)
    train, heldout = stream[:3000], stream[3000:]
    unigram = ngram_loss(ngram_model(train, 1, 20), heldout)[0]
    trigram = ngram_loss(ngram_model(train, 3, 20), heldout)[0]
    assert trigram > unigram  # nothing to learn from the context, so counting it only overfits


@pytest.mark.parametrize("n", [1, 2, 3])
def test_unseen_tokens_and_contexts_have_a_finite_loss(n):
    model = ngram_model(PATTERN, n, V)
    loss, perplexity = ngram_loss(model, [4, 5, 5, 4, 0, 5, 3, 4])  # 4 and 5 never seen
    assert math.isfinite(loss) and math.isfinite(perplexity) and loss > 0


def test_tensors_and_lists_give_the_same_model():
    stream = random_stream(length=500)
    from_tensor, from_list = ngram_model(stream, 3, 20), ngram_model(stream.tolist(), 3, 20)
    assert from_tensor.rows == from_list.rows
    assert ngram_loss(from_tensor, stream[:50]) == ngram_loss(from_list, stream[:50].tolist())


def test_a_short_context_at_the_start_of_the_stream_is_used_as_it_is():
    model = ngram_model(PATTERN, 3, V)
    assert model.prob([0, 1, 0, 2, 3, 0], 1) == model.prob([3, 0], 1)
    loss = ngram_loss(model, [3, 0, 1])[0]
    expected = -(math.log(model.prob([3], 0)) + math.log(model.prob([3, 0], 1))) / 2
    assert loss == pytest.approx(expected)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="^n must"):
        ngram_model(PATTERN, 0, V)
    with pytest.raises(ValueError, match="^n must"):
        ngram_model(PATTERN, 2.0, V)
    with pytest.raises(ValueError, match="vocab_size"):
        ngram_model(PATTERN, 2, 0)
    with pytest.raises(ValueError, match="k must"):
        ngram_model(PATTERN, 1, V, k=0)
    with pytest.raises(TypeError, match="train_ids"):
        ngram_model("0102", 2, V)
    with pytest.raises(TypeError, match="train_ids"):
        ngram_model(torch.tensor([0.0, 1.0]), 2, V)
    with pytest.raises(ValueError, match="train_ids"):
        ngram_model([0, 1, 6], 2, V)
    with pytest.raises(ValueError, match="train_ids"):
        ngram_model([0], 2, V)
    model = ngram_model(PATTERN, 2, V)
    with pytest.raises(ValueError, match="ids"):
        ngram_loss(model, [0, -1])
    with pytest.raises(ValueError, match="ids"):
        ngram_loss(model, [0])
    with pytest.raises(TypeError, match="model"):
        ngram_loss("a model", [0, 1])
    with pytest.raises(ValueError, match="token"):
        model.prob([0], 9)
    with pytest.raises(ValueError, match="context"):
        model.distribution([9])
    assert isinstance(model, NGramModel) and "rows" not in repr(model)
