"""The cost formulas agree with a count of the matrix products attention actually performs."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnbook import MultiHeadAttention, scaled_dot_product_attention
from attnbook.measure.cost import (
    attention_flops,
    attention_weights_bytes,
    counted_flops,
    counted_rows,
    crossover_length,
    projection_flops,
)


def matmul_flops(*shapes: tuple[int, int, int]) -> int:
    """2 * m * k * n for each (m, k, n) product."""
    return sum(2 * m * k * n for m, k, n in shapes)


def test_counted_flops_count_a_matrix_product_as_2mkn_and_nothing_else():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    assert counted_flops(lambda: a @ b) == 2 * 3 * 4 * 5
    assert counted_flops(lambda: (a.exp() + 1).softmax(-1)) == 0


def test_attention_flops_equal_the_two_products_of_every_head():
    L, S, E, H = 7, 11, 24, 3
    D = E // H
    by_shape = H * matmul_flops((L, D, S), (L, S, D))
    assert attention_flops(L, S, E, H) == by_shape


def test_attention_flops_match_pytorchs_flop_counter():
    L, S, E, H = 5, 9, 32, 4
    q, k, v = (
        torch.randn(1, H, L, E // H),
        torch.randn(1, H, S, E // H),
        torch.randn(1, H, S, E // H),
    )
    counted = counted_flops(lambda: scaled_dot_product_attention(q, k, v))
    assert counted == attention_flops(L, S, E, H)


def test_projection_flops_equal_the_four_linear_layers():
    L, S, E, kdim, vdim = 6, 10, 16, 12, 20
    by_shape = matmul_flops((L, E, E), (S, kdim, E), (S, vdim, E), (L, E, E))
    assert projection_flops(L, S, E, kdim, vdim) == by_shape


def test_self_attention_projections_cost_8_n_d_squared():
    assert projection_flops(100, 100, 64) == 8 * 100 * 64**2


def test_multi_head_attention_costs_projections_plus_core():
    N, L, S, E, H = 2, 6, 9, 32, 4
    mha = MultiHeadAttention(E, H)
    query, memory = torch.randn(N, L, E), torch.randn(N, S, E)
    counted = counted_flops(lambda: mha(query, memory, memory))
    assert counted == N * (projection_flops(L, S, E) + attention_flops(L, S, E, H))


@given(st.integers(1, 300), st.sampled_from([1, 2, 4, 8]))
def test_core_flops_do_not_depend_on_the_number_of_heads(n, heads):
    assert attention_flops(n, n, 64, heads) == attention_flops(n, n, 64, 1)


@pytest.mark.parametrize("embed_dim", [1, 8, 64, 512, 768])
def test_crossover_is_at_twice_the_model_size(embed_dim):
    assert crossover_length(embed_dim) == 2 * embed_dim


def test_crossover_is_the_first_length_where_the_core_costs_at_least_the_projections():
    n = crossover_length(512, 8)
    assert attention_flops(n, n, 512, 8) >= projection_flops(n, n, 512)
    assert attention_flops(n - 1, n - 1, 512, 8) < projection_flops(n - 1, n - 1, 512)


def test_weights_bytes_count_one_matrix_per_head_and_sequence():
    assert attention_weights_bytes(4096, 4096, num_heads=8) == 8 * 4096 * 4096 * 4
    assert attention_weights_bytes(10, 20, num_heads=2, batch_size=3, dtype=torch.float16) == 2400


def test_weights_bytes_equal_the_weights_tensor_attention_returns():
    q, k = torch.randn(3, 2, 10, 8), torch.randn(3, 2, 20, 8)
    _, weights = scaled_dot_product_attention(q, k, k)
    expected = weights.numel() * weights.element_size()
    assert attention_weights_bytes(10, 20, num_heads=2, batch_size=3) == expected


def test_heads_that_do_not_divide_the_model_size_are_rejected():
    with pytest.raises(ValueError, match="multiple of num_heads"):
        attention_flops(10, 10, 30, 4)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_lengths_must_be_positive_integers(bad):
    with pytest.raises(ValueError, match="n_query must be a positive integer"):
        attention_flops(bad, 10, 32)


def test_counted_rows_adds_the_vectors_each_group_receives():
    a, b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)

    def work():
        a(torch.zeros(3, 5, 4))  # 15 rows
        a(torch.zeros(2, 4))  # 2 rows
        b(torch.zeros(7, 4))  # 7 rows

    assert counted_rows({"a": [a], "both": [a, b]}, work) == {"a": 17, "both": 24}


def test_counted_rows_removes_its_hooks_even_when_the_work_fails():
    a = torch.nn.Linear(4, 4)

    def fail():
        a(torch.zeros(1, 4))
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        counted_rows({"a": [a]}, fail)
    assert not a._forward_hooks
