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
    cpu_cache_sizes,
    crossover_length,
    naive_attention_traffic,
    projection_flops,
    tiled_attention_traffic,
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


# ---- memory traffic: the IO model of Dao et al. (2022) ----------------------------------------


class SlowMemory:
    """Tensors in slow memory; every load and store counts the numbers it moves.

    ``initialised`` counts the numbers written to set up the tensors that Algorithm 1 creates in
    slow memory (its line 2), apart from ``moved``, the traffic of the loops.
    """

    def __init__(self, **tensors: torch.Tensor) -> None:
        self.tensors, self.moved, self.initialised = dict(tensors), 0, 0

    def initialise(self, name: str, tensor: torch.Tensor) -> None:
        self.tensors[name] = tensor
        self.initialised += tensor.numel()

    def load(self, name: str, rows: slice) -> torch.Tensor:
        block = self.tensors[name][rows].clone()
        self.moved += block.numel()
        return block

    def store(self, name: str, rows: slice, block: torch.Tensor) -> None:
        self.tensors[name][rows] = block
        self.moved += block.numel()


def flash_attention_forward(q, k, v, fast_numbers: int) -> tuple[torch.Tensor, SlowMemory]:
    """Algorithm 1 of Dao et al. (2022), run on a counting slow memory: (output, the memory)."""
    n, d = q.shape
    key_block = fast_numbers // (4 * d)
    query_block = min(key_block, d)
    hbm = SlowMemory(q=q * d**-0.5, k=k, v=v)  # the inputs are in slow memory already
    hbm.initialise("o", q.new_zeros(n, d))  # line 2: O, l and m are set up in slow memory
    hbm.initialise("l", q.new_zeros(n, 1))
    hbm.initialise("m", q.new_full((n, 1), float("-inf")))
    for k0 in range(0, n, key_block):
        cols = slice(k0, k0 + key_block)
        k_j, v_j = hbm.load("k", cols), hbm.load("v", cols)
        for q0 in range(0, n, query_block):
            rows = slice(q0, q0 + query_block)
            q_i, o_i, l_i, m_i = (hbm.load(name, rows) for name in ("q", "o", "l", "m"))
            s = q_i @ k_j.T
            m_new = torch.maximum(m_i, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            l_new = torch.exp(m_i - m_new) * l_i + p.sum(-1, keepdim=True)
            o_new = (l_i * torch.exp(m_i - m_new) * o_i + p @ v_j) / l_new
            for name, block in (("o", o_new), ("l", l_new), ("m", m_new)):
                hbm.store(name, rows, block)
    return hbm.tensors["o"], hbm


@pytest.mark.parametrize(
    ("n", "d", "fast_numbers"),
    [(64, 8, 32 * 8), (100, 8, 4 * 8 * 7), (50, 4, 4 * 4 * 64), (37, 2, 8)],
)
def test_tiled_traffic_counts_what_algorithm_1_moves(n, d, fast_numbers):
    g = torch.Generator().manual_seed(n)
    q, k, v = (torch.randn(n, d, generator=g, dtype=torch.float64) for _ in range(3))
    output, hbm = flash_attention_forward(q, k, v, fast_numbers)
    expected, _ = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(output, expected)
    assert tiled_attention_traffic(n, d, fast_numbers * 8, dtype=torch.float64) == hbm.moved * 8


def test_tiled_traffic_leaves_out_the_n_d_plus_2_n_numbers_that_initialise_o_l_and_m():
    n, d = 64, 8
    q, k, v = (torch.randn(n, d, dtype=torch.float64) for _ in range(3))
    _, hbm = flash_attention_forward(q, k, v, 32 * d)
    assert hbm.initialised == n * d + 2 * n
    assert tiled_attention_traffic(n, d, 32 * d * 8, dtype=torch.float64) == hbm.moved * 8


def test_naive_traffic_is_four_passes_over_the_scores_plus_q_k_v_and_o():
    n, d = 300, 16
    numbers = (2 * n * d + n * n) + (n * n + n * n) + (n * n + n * d + n * d)
    assert naive_attention_traffic(n, d) == 4 * numbers
    assert naive_attention_traffic(n, d, dtype=torch.float16) == 2 * numbers


def test_tiled_traffic_is_linear_when_the_keys_fit_in_fast_memory():
    n, d = 1000, 64
    everything = 4 * n * d * 4  # four (n, d) float32 tensors
    assert tiled_attention_traffic(n, d, everything) == 4 * (5 * n * d + 4 * n)
    assert tiled_attention_traffic(2 * n, d, 2 * everything) == 2 * tiled_attention_traffic(
        n, d, everything
    )


@pytest.mark.parametrize("d", [32, 64, 128])
@pytest.mark.parametrize("fast_numbers", [2**16, 2**18, 2**20])
def test_tiled_traffic_grows_as_n_squared_d_squared_over_m(d, fast_numbers):
    for passes in (8, 64):  # n / Bc passes over Q and O, with Bc = M / (4 d)
        n = passes * fast_numbers // (4 * d)
        moved = tiled_attention_traffic(n, d, 4 * fast_numbers) / 4
        assert 12 <= moved / (n**2 * d**2 / fast_numbers) <= 14


@given(st.integers(2, 2**17), st.sampled_from([8, 16, 32, 64, 128, 256]), st.integers(0, 2**24))
def test_tiled_moves_no_more_than_naive_with_4_d_squared_numbers_and_n_from_d_plus_2(
    n_minus_d, d, extra
):
    # With M >= 4 d**2 numbers, Bc >= d. For n = (k - 1) d + r (1 <= r <= d) the tiled count is
    # at most 2 n d + k (3 n d + 4 n) and the standard one 4 n d + 4 n**2: it suffices that
    # (k - 2) d + 4 r >= 4 k, true for k = 2 when r >= 2 and for every k >= 3 when d >= 8.
    n = d + n_minus_d
    fast_memory = 4 * (4 * d * d + extra)
    assert tiled_attention_traffic(n, d, fast_memory) <= naive_attention_traffic(n, d)


@pytest.mark.parametrize("d", [16, 64, 128])
def test_tiled_moves_more_than_naive_at_n_equal_d_plus_1_with_exactly_4_d_squared_numbers(d):
    """The boundary: two passes over Q and O for a single extra key cost more than the scores."""
    n, fast_memory = d + 1, 4 * (4 * d * d)
    assert tiled_attention_traffic(n, d, fast_memory) > naive_attention_traffic(n, d)
    assert tiled_attention_traffic(n + 1, d, fast_memory) <= naive_attention_traffic(n + 1, d)


def test_fast_memory_too_small_for_one_block_is_rejected():
    with pytest.raises(ValueError, match="fast_memory must hold four rows of head_dim=64"):
        tiled_attention_traffic(1024, 64, 4 * 64 * 4 - 1)


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_traffic_arguments_must_be_positive_integers(bad):
    with pytest.raises(ValueError, match="fast_memory must be a positive integer"):
        tiled_attention_traffic(1024, 64, bad)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        naive_attention_traffic(bad, 64)


def fake_cache(root, *caches: tuple[str, str, str]) -> None:
    for number, (level, kind, size) in enumerate(caches):
        index = root / f"index{number}"
        index.mkdir()
        for name, text in (("level", level), ("type", kind), ("size", size)):
            (index / name).write_text(text + "\n")


def test_cpu_cache_sizes_reads_every_level_in_bytes(tmp_path):
    fake_cache(
        tmp_path,
        ("1", "Data", "48K"),
        ("1", "Instruction", "32K"),
        ("2", "Unified", "2048K"),
        ("3", "Unified", "32M"),
    )
    assert cpu_cache_sizes(tmp_path) == {
        "L1d": 48 * 2**10,
        "L1i": 32 * 2**10,
        "L2": 2 * 2**20,
        "L3": 32 * 2**20,
    }


def test_cpu_cache_sizes_skips_what_it_cannot_read(tmp_path):
    fake_cache(tmp_path, ("2", "Unified", "1024K"), ("3", "Unified", "unknown"))
    (tmp_path / "index9").mkdir()  # no files in it
    assert cpu_cache_sizes(tmp_path) == {"L2": 2**20}
    assert cpu_cache_sizes(tmp_path / "missing") == {}
