"""LookupModel: shapes, per-head weights returned from forward, equal size for any head count."""

import pytest
import torch

from attnbook import MultiHeadAttention
from attnbook.models.lookup_model import LookupModel, LookupModelConfig


def model(**overrides):
    torch.manual_seed(0)
    return LookupModel(
        LookupModelConfig(
            **{
                "vocab_size": 11,
                "max_len": 6,
                "embed_dim": 16,
                "num_heads": 2,
                "num_readouts": 3,
                **overrides,
            }
        )
    )


def tokens(n=4, length=6):
    return torch.randint(11, (n, length), generator=torch.Generator().manual_seed(1))


def test_logits_have_one_distribution_per_readout_and_position():
    logits, _ = model()(tokens())
    assert logits.shape == (4, 3, 6, 11)


def test_forward_returns_each_heads_weights():
    _, weights = model(num_heads=4)(tokens())
    assert weights.shape == (4, 4, 6, 6)
    torch.testing.assert_close(weights.sum(-1), torch.ones(4, 4, 6))


def test_weights_are_those_of_its_attention_layer():
    m = model()
    x = tokens()
    _, weights = m(x)
    embedded = m.token_embedding(x) + m.position_embedding(torch.arange(6))
    _, expected = m.attention(
        embedded, embedded, embedded, is_causal=True, average_attn_weights=False
    )
    torch.testing.assert_close(weights, expected)


def test_causal_model_never_looks_ahead():
    _, weights = model()(tokens())
    assert (weights.triu(diagonal=1) == 0).all()


def test_non_causal_model_may_look_ahead():
    _, weights = model(is_causal=False)(tokens())
    assert (weights.triu(diagonal=1) > 0).any()


def test_nothing_is_stashed_on_the_module():
    m = model()
    before = set(vars(m))
    m(tokens())
    assert set(vars(m)) == before


def test_parameter_count_does_not_depend_on_the_number_of_heads():
    counts = {h: sum(p.numel() for p in model(num_heads=h).parameters()) for h in (1, 2, 4, 8)}
    assert len(set(counts.values())) == 1


def test_attention_layer_is_the_librarys():
    assert isinstance(model().attention, MultiHeadAttention)


def test_too_long_input_raises_with_lengths():
    with pytest.raises(ValueError, match="max_len = 6"):
        model()(tokens(length=7))


def test_float_input_raises():
    with pytest.raises(ValueError, match=r"\(N, L\)"):
        model()(torch.zeros(2, 6))
