"""Specification of attnbook.positional: the sinusoidal table, learned positions, embeddings."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnbook.positional import (
    LearnedPositionalEmbedding,
    PositionalEncoding,
    SinusoidalPositionalEncoding,
    TransformerEmbedding,
    sinusoidal_encoding,
)


@pytest.mark.parametrize(
    ("pos", "column"), [(0, 0), (0, 1), (1, 0), (1, 1), (3, 4), (7, 5), (50, 14)]
)
def test_sinusoidal_entries_follow_the_papers_formula(pos: int, column: int) -> None:
    E = 16
    i = column // 2  # columns 2i (sine) and 2i+1 (cosine) share the angle pos / 10000**(2i/E)
    angle = pos / 10000 ** (2 * i / E)
    expected = math.sin(angle) if column % 2 == 0 else math.cos(angle)
    table = sinusoidal_encoding(64, E, dtype=torch.float64)
    assert table[pos, column].item() == pytest.approx(expected, abs=1e-12)


def test_sinusoidal_first_row_alternates_zero_and_one() -> None:
    table = sinusoidal_encoding(3, 8)
    assert table[0].tolist() == [0.0, 1.0] * 4


def test_sinusoidal_shape_and_default_dtype() -> None:
    table = sinusoidal_encoding(10, 6)
    assert table.shape == (10, 6) and table.dtype == torch.float32


def test_sinusoidal_rows_have_norm_sqrt_of_half_the_dimension() -> None:
    # Each (sin, cos) pair has norm 1, so every row has squared norm E / 2.
    table = sinusoidal_encoding(100, 32, dtype=torch.float64)
    torch.testing.assert_close(
        table.norm(dim=1) ** 2, torch.full((100,), 16.0, dtype=torch.float64)
    )


@settings(max_examples=30, deadline=None)
@given(
    p=st.integers(0, 200),
    q=st.integers(0, 200),
    shift=st.integers(0, 200),
    half=st.integers(1, 16),
)
def test_sinusoidal_dot_product_depends_only_on_distance(
    p: int, q: int, shift: int, half: int
) -> None:
    # PE(p) . PE(q) = sum_i cos((p - q) w_i): moving both positions by the same shift changes nothing.
    table = sinusoidal_encoding(401, 2 * half, dtype=torch.float64)
    before = table[p] @ table[q]
    after = table[p + shift] @ table[q + shift]
    assert after.item() == pytest.approx(before.item(), abs=1e-9)


def test_sinusoidal_dot_product_equals_sum_of_cosines_of_the_distance() -> None:
    E, base = 8, 10000.0
    table = sinusoidal_encoding(30, E, base, dtype=torch.float64)
    for p, q in [(0, 5), (12, 3), (29, 29)]:
        expected = sum(math.cos((p - q) / base ** (2 * i / E)) for i in range(E // 2))
        assert (table[p] @ table[q]).item() == pytest.approx(expected, abs=1e-12)


def test_sinusoidal_base_changes_the_wavelengths() -> None:
    table = sinusoidal_encoding(5, 4, base=100.0, dtype=torch.float64)
    assert table[3, 2].item() == pytest.approx(math.sin(3 / 100 ** (2 / 4)), abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"length": 4, "embed_dim": 7}, "embed_dim must be even"),
        ({"length": 0, "embed_dim": 8}, "length must be a positive integer"),
        ({"length": -3, "embed_dim": 8}, "length must be a positive integer"),
        ({"length": 4, "embed_dim": 0}, "embed_dim must be a positive integer"),
        ({"length": 2.5, "embed_dim": 8}, "length must be a positive integer"),
        ({"length": 4, "embed_dim": 8, "base": 1.0}, "base must be > 1"),
    ],
)
def test_sinusoidal_bad_arguments_raise_value_error(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        sinusoidal_encoding(**kwargs)


def test_sinusoidal_module_returns_rows_of_the_table_and_has_no_parameters() -> None:
    module = SinusoidalPositionalEncoding(8, max_len=20)
    torch.testing.assert_close(module(5), sinusoidal_encoding(5, 8))
    assert list(module.parameters()) == [] and "table" not in module.state_dict()


def test_learned_positions_are_a_trainable_table() -> None:
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(8, max_len=20)
    assert module.table.shape == (20, 8) and module.table.requires_grad
    torch.testing.assert_close(module(5), module.table[:5])
    assert 0.01 < module.table.std().item() < 0.03  # N(0, 0.02^2) start


@pytest.mark.parametrize(
    "module", [SinusoidalPositionalEncoding(8, 10), LearnedPositionalEmbedding(8, 10)]
)
def test_asking_for_more_positions_than_max_len_raises(module: torch.nn.Module) -> None:
    with pytest.raises(
        ValueError, match=r"length must be an integer in \[1, max_len = 10\]; got 11"
    ):
        module(11)


@pytest.mark.parametrize("kind", ["sinusoidal", "learned"])
def test_positional_encoding_adds_the_same_table_to_every_sequence(kind: str) -> None:
    torch.manual_seed(0)
    module = PositionalEncoding(8, max_len=16, kind=kind)
    x = torch.randn(3, 5, 8)
    expected = x + module.positions(5)[None]
    torch.testing.assert_close(module(x), expected)


def test_positional_encoding_dropout_only_in_training() -> None:
    module = PositionalEncoding(8, max_len=16, dropout=0.5)
    x = torch.zeros(2, 6, 8)
    torch.testing.assert_close(module.eval()(x), x + sinusoidal_encoding(6, 8))
    torch.manual_seed(0)
    assert (module.train()(x) == 0).float().mean() > 0.3


@pytest.mark.parametrize(
    ("x", "words"),
    [
        (
            torch.zeros(2, 5, 6),
            r"x must have shape \(N, L, embed_dim\) = \(N, L, 8\); got \(2, 5, 6\)",
        ),
        (torch.zeros(5, 8), r"x must have shape \(N, L, embed_dim\) = \(N, L, 8\); got \(5, 8\)"),
        (torch.zeros(1, 17, 8), r"x has length L = 17 \(dim 1\), more than max_len = 16"),
    ],
)
def test_positional_encoding_bad_shape_names_x_and_shape(x: torch.Tensor, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        PositionalEncoding(8, max_len=16)(x)


def test_positional_encoding_unknown_kind_raises() -> None:
    with pytest.raises(ValueError, match='kind must be "sinusoidal" or "learned"'):
        PositionalEncoding(8, kind="rotary")  # type: ignore[arg-type]


def test_transformer_embedding_scales_tokens_by_sqrt_d_then_adds_positions() -> None:
    torch.manual_seed(0)
    module = TransformerEmbedding(11, 8, max_len=16)
    tokens = torch.tensor([[1, 2, 3], [4, 5, 10]])
    expected = module.tokens(tokens) * math.sqrt(8) + sinusoidal_encoding(3, 8)
    torch.testing.assert_close(module(tokens), expected)


def test_transformer_embedding_without_scale_adds_plain_embeddings() -> None:
    module = TransformerEmbedding(11, 8, max_len=16, kind="learned", scale=False)
    tokens = torch.tensor([[0, 7]])
    torch.testing.assert_close(
        module(tokens), module.tokens(tokens) + module.positions.positions(2)
    )


def test_transformer_embedding_rejects_float_tokens() -> None:
    with pytest.raises(ValueError, match=r"tokens must be integer ids of shape \(N, L\)"):
        TransformerEmbedding(11, 8)(torch.zeros(2, 3))


@pytest.mark.parametrize("kind", ["sinusoidal", "learned"])
def test_embedding_from_a_start_position_equals_that_slice_of_the_whole(kind):
    module = TransformerEmbedding(11, 8, max_len=16, kind=kind)
    tokens = torch.randint(0, 11, (2, 6))
    whole = module(tokens)  # (2, 6, 8)
    for t in range(6):
        torch.testing.assert_close(module(tokens[:, t : t + 1], start=t), whole[:, t : t + 1])
    torch.testing.assert_close(module(tokens[:, 2:], start=2), whole[:, 2:])


@pytest.mark.parametrize("start", [-1, 1.5, True])
def test_start_must_be_a_non_negative_integer(start):
    with pytest.raises(ValueError, match="start must be a non-negative integer"):
        TransformerEmbedding(11, 8, max_len=16)(torch.zeros(1, 2, dtype=torch.long), start=start)


def test_positions_past_max_len_are_refused_with_the_range():
    with pytest.raises(ValueError, match=r"15 \.\. 16 do not fit max_len = 16"):
        TransformerEmbedding(11, 8, max_len=16)(torch.zeros(1, 2, dtype=torch.long), start=15)
