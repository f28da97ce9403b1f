"""Mean ablation of one position's residual stream (attnbook.interp.stream_ablation)."""

import pytest
import torch

from attnbook.interp.stream_ablation import mean_ablated_positions, position_states
from attnbook.transformer import Encoder


def encoder() -> Encoder:
    torch.manual_seed(0)
    return Encoder(2, d_model=8, nhead=2, dim_feedforward=16, dropout=0.0).eval()


def test_every_depth_holds_the_batch_mean_at_the_chosen_positions():
    model, x = encoder(), torch.randn(5, 4, 8)
    positions, n = torch.tensor([0, 1, 3, 2, 0]), torch.arange(5)
    with torch.no_grad():
        clean, _ = model(x)
    inputs = []
    with mean_ablated_positions(model.layers, positions):
        # Registered after the ablation's hooks, these see what each block receives.
        handles = [
            layer.register_forward_pre_hook(lambda m, a: inputs.append(a[0].clone()))
            for layer in model.layers
        ]
        with torch.no_grad():
            out, _ = model(x)
        for h in handles:
            h.remove()
    assert len(inputs) == len(model.layers)
    for stream in [*inputs, out]:  # every block's input, and the last block's output
        chosen = stream[n, positions]  # (5, E)
        torch.testing.assert_close(chosen, chosen.mean(0).expand_as(chosen))
    torch.testing.assert_close(inputs[0][n, positions][0], x[n, positions].mean(0))
    assert not torch.allclose(out, clean)  # the other positions read the ablated state
    first_only = x.clone()
    first_only[n, positions] = x[n, positions].mean(0)
    with torch.no_grad():
        input_only, _ = model(first_only)
    assert not torch.allclose(input_only, out)  # later depths are ablated too, not just the input


def test_identical_sentences_are_left_unchanged_and_hooks_are_removed():
    model = encoder()
    x = torch.randn(1, 4, 8).expand(3, 4, 8).clone()
    with torch.no_grad():
        clean, _ = model(x)
    with mean_ablated_positions(model.layers, torch.tensor([1, 1, 1])):
        with torch.no_grad():
            ablated, _ = model(x)
    torch.testing.assert_close(ablated, clean)
    assert all(not layer._forward_hooks and not layer._forward_pre_hooks for layer in model.layers)


def test_bad_positions_are_named():
    model, x = encoder(), torch.randn(2, 4, 8)
    with pytest.raises(TypeError, match="positions"):
        with mean_ablated_positions(model.layers, torch.tensor([0.0, 1.0])):
            pass
    with pytest.raises(ValueError, match="positions must be"):
        with mean_ablated_positions(model.layers, torch.zeros(2, 1, dtype=torch.long)):
            pass
    with pytest.raises(ValueError, match=r"positions must lie in \[0, 4\)"):
        with mean_ablated_positions(model.layers, torch.tensor([0, 4])):
            model(x)
    with pytest.raises(ValueError, match="N = 3 sentences"):
        with mean_ablated_positions(model.layers, torch.tensor([0, 1, 2])):
            model(x)
    assert not model.layers[0]._forward_pre_hooks  # removed after the error


def test_position_states_reads_the_stream_after_every_layer():
    model, x = encoder(), torch.randn(3, 4, 8)
    positions, n = torch.tensor([0, 2, 3]), torch.arange(3)
    states = position_states(model.layers, positions, lambda: model(x))
    assert states.shape == (2, 3, 8)
    with torch.no_grad():
        first, _ = model.layers[0](x)
        second, _ = model.layers[1](first)
    torch.testing.assert_close(states[0], first[n, positions])
    torch.testing.assert_close(states[1], second[n, positions])
    assert all(not layer._forward_hooks for layer in model.layers)
    with pytest.raises(TypeError, match="positions"):
        position_states(model.layers, torch.tensor([0.5]), lambda: model(x))
