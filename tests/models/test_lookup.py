"""LookupModel: shapes, per-head weights returned from forward, equal size for any head count."""

import pytest
import torch

from attnbook import MultiHeadAttention
from attnbook.models.lookup_model import (
    LookupModel,
    LookupModelConfig,
    build_lookup_model,
    head_roles,
    lookup_model_loss,
)
from attnbook.tasks.lookup import lookup_batch, lookup_loss


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


def test_build_lookup_model_draws_the_same_weights_for_the_same_seed():
    a, b, c = build_lookup_model(2, 0), build_lookup_model(2, 0), build_lookup_model(2, 1)
    assert (a.config.vocab_size, a.config.max_len, a.config.num_heads) == (128, 8, 2)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.token_embedding.weight, c.token_embedding.weight)
    three = build_lookup_model(4, 0, embed_dim=96, num_readouts=3)
    assert (three.config.embed_dim, len(three.readouts)) == (96, 3)


def test_lookup_model_loss_is_lookup_loss_of_the_answers():
    model = build_lookup_model(2, 0)
    batch = lookup_batch(16, torch.Generator().manual_seed(0), seq_len=8, vocab_size=128,
                         lookups=("previous", "first"))  # fmt: skip
    assert torch.equal(lookup_model_loss(model, batch), lookup_loss(model(batch[0])[0], batch[1]))


class _FixedWeights(torch.nn.Module):
    """A stand-in model whose heads attend where we say: head 0 the previous token, head 1 the
    first token, head 2 uniformly over the earlier positions."""

    def forward(self, tokens):
        N, L = tokens.shape
        w = torch.zeros(N, 3, L, L)
        for i in range(L):
            w[:, 0, i, max(i - 1, 0)] = 1.0
            w[:, 1, i, 0] = 1.0
            w[:, 2, i, : i + 1] = 1.0 / (i + 1)
        return None, w


def test_head_roles_average_over_the_positions_from_two():
    on_previous, on_first = head_roles(_FixedWeights(), torch.zeros(4, 8, dtype=torch.long))
    uniform = torch.tensor([1 / (i + 1) for i in range(2, 8)]).mean()
    torch.testing.assert_close(
        on_previous, torch.stack([torch.tensor(1.0), torch.tensor(0.0), uniform])
    )
    torch.testing.assert_close(
        on_first, torch.stack([torch.tensor(0.0), torch.tensor(1.0), uniform])
    )


def test_head_roles_refuses_sequences_too_short_to_tell_the_places_apart():
    with pytest.raises(ValueError, match=r"L >= 3; got \(4, 2\)"):
        head_roles(_FixedWeights(), torch.zeros(4, 2, dtype=torch.long))
