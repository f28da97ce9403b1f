"""The toy tasks produce correct targets; ToyModel runs every attention kind."""

import pytest
import torch

from attnbook.models.toy import ToyConfig, ToyModel
from attnbook.tasks.synthetic import offset_copy_batch


@pytest.mark.parametrize("kind", ["full", "local", "linear"])
def test_model_returns_logits_for_every_position(kind):
    model = ToyModel(ToyConfig(attention=kind, num_classes=7))
    tokens, _ = offset_copy_batch(3, torch.Generator().manual_seed(2), length=12)
    assert model(tokens).shape == (3, 12, 7)


def test_local_model_cannot_see_beyond_its_window():
    torch.manual_seed(0)
    model = ToyModel(ToyConfig(attention="local", window=2))
    tokens, _ = offset_copy_batch(1, torch.Generator().manual_seed(3), length=12)
    changed = tokens.clone()
    changed[0, 0] = (tokens[0, 0] + 1) % 16
    same = model(tokens)[0, 3:] - model(changed)[0, 3:]  # position 3+ sees nothing of position 0
    assert same.abs().max() == 0


def test_rejects_an_unknown_attention_kind():
    with pytest.raises(
        ValueError, match="attention must be 'full', 'local', 'linear' or 'chunked'"
    ):
        ToyModel(ToyConfig(attention="sparse"))


@pytest.mark.parametrize("kind", ["full", "local", "linear"])
def test_attention_weights_reproduce_the_attention_output(kind):
    torch.manual_seed(0)
    model = ToyModel(ToyConfig(attention=kind, window=2))
    tokens, _ = offset_copy_batch(2, torch.Generator().manual_seed(4), length=10)
    _, q, k, v = model._project(tokens, None)
    weights = model.attention_weights(tokens)
    assert weights.shape == (2, 2, 10, 10)
    x = model.embedding(tokens) + model.position[:10]
    attended = (weights @ v).transpose(1, 2).reshape(2, 10, 64)
    torch.testing.assert_close(
        model.readout(x + model.out_proj(attended)), model(tokens), atol=1e-5, rtol=1e-5
    )


def test_values_are_required_when_the_model_has_a_value_embedding():
    model = ToyModel(ToyConfig(value_vocab=5))
    with pytest.raises(
        ValueError, match=r"values must have the shape of tokens \(2, 4\); got None"
    ):
        model(torch.zeros(2, 4, dtype=torch.long))


def test_chunked_attention_model_equals_the_full_one_and_its_gradients():
    torch.manual_seed(0)
    full = ToyModel(ToyConfig(embed_dim=16, num_heads=2, attention="full"))
    chunked = ToyModel(ToyConfig(embed_dim=16, num_heads=2, attention="chunked", block=5))
    chunked.load_state_dict(full.state_dict())
    tokens = torch.randint(0, 16, (3, 23))
    out_full, out_chunked = full(tokens), chunked(tokens)
    torch.testing.assert_close(out_chunked, out_full, atol=1e-5, rtol=1e-5)
    out_full.square().sum().backward()
    out_chunked.square().sum().backward()
    for (name, a), b in zip(full.named_parameters(), chunked.parameters()):
        torch.testing.assert_close(b.grad, a.grad, atol=1e-4, rtol=1e-4, msg=name)


@pytest.mark.parametrize("attention", ["full", "chunked", "linear"])
def test_query_positions_give_the_full_outputs_rows(attention):
    torch.manual_seed(0)
    model = ToyModel(ToyConfig(embed_dim=16, num_heads=2, value_vocab=4, attention=attention))
    tokens, values = torch.randint(0, 16, (3, 23)), torch.randint(0, 4, (3, 23))
    positions = torch.tensor([[0, 22, 5], [7, 7, 1], [3, 9, 12]])
    rows = model(tokens, values)[torch.arange(3)[:, None], positions]  # (3, 3, C)
    picked = model(tokens, values, query_positions=positions)
    assert picked.shape == rows.shape
    torch.testing.assert_close(picked, rows, atol=1e-5, rtol=1e-5)


def test_query_positions_are_checked():
    model, tokens = ToyModel(ToyConfig()), torch.randint(0, 16, (2, 6))
    with pytest.raises(ValueError, match=r"shape \(N, Q\) with N = 2; got \(3, 1\)"):
        model(tokens, query_positions=torch.zeros(3, 1, dtype=torch.long))
    with pytest.raises(ValueError, match=r"lie in \[0, 6\)"):
        model(tokens, query_positions=torch.full((2, 1), 6))
    with pytest.raises(TypeError, match="integer"):
        model(tokens, query_positions=torch.zeros(2, 1))
    with pytest.raises(ValueError, match="local"):
        ToyModel(ToyConfig(attention="local"))(tokens, query_positions=torch.zeros(2, 1).long())
