"""Lookup tasks: labels are right by construction, batches reproduce, scoring is exact."""

import pytest
import torch

from attnbook.tasks.lookup import (
    IGNORE_INDEX,
    lookup_accuracy,
    lookup_batch,
    lookup_loss,
    lookup_targets,
)

X = IGNORE_INDEX


def test_previous_and_first_targets_by_hand():
    tokens = torch.tensor([[5, 3, 7, 2]])
    targets = lookup_targets(tokens, ["previous", "first"])
    assert targets.tolist() == [[[X, X, 3, 7], [X, X, 5, 5]]]


def test_position_one_is_not_scored_because_previous_is_first():
    tokens = torch.tensor([[4, 4, 4]])
    targets = lookup_targets(tokens, ["previous", "first"])
    assert (targets[:, :, 1] == X).all()


def test_two_back_by_hand():
    tokens = torch.tensor([[9, 8, 7, 6, 5]])
    targets = lookup_targets(tokens, ["two_back"])
    assert targets.tolist() == [[[X, X, 9, 8, 7]]]


def test_two_back_and_first_coincide_at_position_two():
    tokens = torch.tensor([[1, 2, 3, 4]])
    targets = lookup_targets(tokens, ["two_back", "first"])
    assert targets.tolist() == [[[X, X, X, 2], [X, X, X, 1]]]


def test_every_scored_target_is_the_token_at_its_source():
    tokens, targets = lookup_batch(
        32,
        torch.Generator().manual_seed(0),
        seq_len=10,
        vocab_size=50,
        lookups=("previous", "first"),
    )
    for t in range(2, 10):
        assert torch.equal(targets[:, 0, t], tokens[:, t - 1])
        assert torch.equal(targets[:, 1, t], tokens[:, 0])


def test_batch_shapes_and_token_range():
    tokens, targets = lookup_batch(
        4,
        torch.Generator().manual_seed(1),
        seq_len=6,
        vocab_size=3,
        lookups=("previous", "two_back", "first"),
    )
    assert tokens.shape == (4, 6) and targets.shape == (4, 3, 6)
    assert tokens.min() >= 0 and tokens.max() < 3


def test_same_generator_seed_same_batch():
    a = lookup_batch(8, torch.Generator().manual_seed(7))
    b = lookup_batch(8, torch.Generator().manual_seed(7))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


@pytest.mark.parametrize("lookups", [[], "first", ["first", "first"], ["next"]])
def test_bad_lookups_raise(lookups):
    with pytest.raises(ValueError, match="lookups"):
        lookup_targets(torch.zeros(1, 4, dtype=torch.long), lookups)


def test_float_tokens_raise_with_shape():
    with pytest.raises(ValueError, match=r"\(N, L\)"):
        lookup_targets(torch.zeros(1, 4), ["first"])


def one_hot_logits(answers, vocab_size):
    return torch.nn.functional.one_hot(answers.clamp(min=0), vocab_size).float() * 10


def test_accuracy_of_perfect_logits_is_one():
    tokens, targets = lookup_batch(16, torch.Generator().manual_seed(2), vocab_size=5)
    result = lookup_accuracy(one_hot_logits(targets, 5), targets, ["previous", "first"])
    assert result == {"previous": 1.0, "first": 1.0, "all": 1.0}


def test_all_counts_positions_where_every_lookup_is_right():
    tokens = torch.tensor([[0, 1, 2, 3]])
    targets = lookup_targets(tokens, ["previous", "first"])  # scored: positions 2 and 3
    answers = targets.clone()
    answers[0, 0, 2] = 0  # previous wrong at position 2 (should be 1)
    answers[0, 1, 3] = 3  # first wrong at position 3 (should be 0)
    result = lookup_accuracy(one_hot_logits(answers, 4), targets, ["previous", "first"])
    assert result == {"previous": 0.5, "first": 0.5, "all": 0.0}


def test_loss_ignores_unscored_positions():
    tokens, targets = lookup_batch(4, torch.Generator().manual_seed(3), vocab_size=6)
    logits = one_hot_logits(targets, 6)
    logits[:, :, :2] = torch.randn(4, 2, 2, 6)  # unscored positions: anything
    expected = torch.nn.functional.cross_entropy(
        logits[:, :, 2:].flatten(0, 2), targets[:, :, 2:].flatten()
    )
    torch.testing.assert_close(lookup_loss(logits, targets), expected)


def test_mismatched_logits_raise_with_shapes():
    tokens, targets = lookup_batch(2, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match=r"\(N, K, L, V\)"):
        lookup_loss(torch.zeros(2, 8, 8), targets)
