"""attnbook.interp.induction: scores of hand-made attention patterns, and the halves' losses."""

import math

import pytest
import torch

from attnbook.interp.induction import (
    half_losses,
    induction_scores,
    previous_token_scores,
    repeated_tokens,
)


def pattern(length, target):
    """(1, 1, T, T) weights: each query puts all its weight on key target(i) (or on itself)."""
    T = 2 * length
    w = torch.zeros(1, 1, T, T)
    for i in range(T):
        j = target(i)
        w[0, 0, i, j if 0 <= j <= i else i] = 1.0
    return w


def test_repeated_tokens_repeat_their_first_half():
    x = repeated_tokens(4, 6, 20, torch.Generator().manual_seed(0), low=3)
    assert x.shape == (4, 12) and torch.equal(x[:, :6], x[:, 6:])
    assert x.min() >= 3 and x.max() < 20


def test_a_perfect_induction_head_scores_one_and_no_previous_token():
    length = 8
    w = pattern(length, lambda i: i - length + 1)
    assert induction_scores(w, length).item() == 1.0
    assert previous_token_scores(w).item() < 0.2


def test_a_previous_token_head_scores_one_and_no_induction():
    length = 8
    w = pattern(length, lambda i: i - 1)
    assert previous_token_scores(w).item() == 1.0
    assert induction_scores(w, length).item() == 0.0


def test_uniform_causal_attention_scores_the_mean_of_one_over_the_prefix():
    length = 5
    T = 2 * length
    w = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]
    w = w.expand(2, 3, T, T)
    expected = sum(1 / (i + 1) for i in range(length, T)) / length
    torch.testing.assert_close(induction_scores(w, length), torch.full((3,), expected))


def test_half_losses_of_a_copier_and_of_a_uniform_guess():
    length, V = 6, 10
    x = repeated_tokens(3, length, V, torch.Generator().manual_seed(1))
    uniform = torch.zeros(3, 2 * length, V)
    first, second = half_losses(uniform, x, length)
    assert first == pytest.approx(math.log(V)) and second == pytest.approx(math.log(V))
    copier = torch.full((3, 2 * length, V), -30.0)
    for t in range(length, 2 * length - 1):  # in the second half, predict the token length back + 1
        copier[torch.arange(3), t, x[:, t + 1]] = 30.0
    assert half_losses(copier, x, length)[1] < 1e-6


@pytest.mark.parametrize(
    "call",
    [
        lambda: induction_scores(torch.zeros(1, 1, 6, 6), 4),
        lambda: previous_token_scores(torch.zeros(6, 6)),
        lambda: half_losses(torch.zeros(1, 8, 3), torch.zeros(1, 6, dtype=torch.long), 4),
        lambda: repeated_tokens(1, 1, 5, torch.Generator()),
    ],
)
def test_bad_shapes_are_refused(call):
    with pytest.raises(ValueError):
        call()
