"""Checkpointed: same outputs and gradients as the bare module, and far less saved for backward."""

import pytest
import torch

from attnbook import MultiHeadAttention
from attnbook.efficient import Checkpointed
from attnbook.measure.memory import autograd_saved_bytes


def attention(dropout=0.0):
    torch.manual_seed(0)
    return MultiHeadAttention(16, 4, dropout=dropout)


def run(module, x):
    torch.manual_seed(1)  # the dropout masks
    out, _ = module(x, x, x, need_weights=True)
    out.square().sum().backward()
    return out, [p.grad.clone() for p in module.parameters()]


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_outputs_and_gradients_equal_the_bare_module(dropout):
    x = torch.randn(2, 10, 16, generator=torch.Generator().manual_seed(2))
    bare = attention(dropout).train()
    wrapped = Checkpointed(attention(dropout)).train()
    out_a, grads_a = run(bare, x)
    out_b, grads_b = run(wrapped, x)
    torch.testing.assert_close(out_a, out_b)
    for a, b in zip(grads_a, grads_b):
        torch.testing.assert_close(a, b)


def test_saves_far_less_for_backward():
    x = torch.randn(4, 128, 16, generator=torch.Generator().manual_seed(3), requires_grad=True)
    bare, wrapped = attention().train(), Checkpointed(attention()).train()
    saved_bare = autograd_saved_bytes(lambda: bare(x, x, x)[0])
    saved_wrapped = autograd_saved_bytes(lambda: wrapped(x, x, x)[0])
    weights_bytes = 4 * 4 * 128 * 128 * 4  # N * H * L * S float32 weights, kept by the bare module
    assert saved_bare > weights_bytes
    assert saved_wrapped < weights_bytes / 10


def test_without_grad_it_simply_calls_the_module():
    x = torch.randn(2, 5, 16)
    bare, wrapped = attention(), Checkpointed(attention())
    with torch.no_grad():
        torch.testing.assert_close(wrapped(x, x, x)[0], bare(x, x, x)[0])


def test_keyword_arguments_pass_through():
    x = torch.randn(2, 5, 16)
    wrapped = Checkpointed(attention()).train()
    out, weights = wrapped(x, x, x, need_weights=False)
    assert out.shape == (2, 5, 16) and weights is None


def test_rejects_what_is_not_a_module():
    with pytest.raises(TypeError, match="module must be a torch.nn.Module; got function"):
        Checkpointed(lambda x: x)
