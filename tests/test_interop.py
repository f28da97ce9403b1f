"""Weights move both ways between attnbook and PyTorch, for every module that has a twin."""

import pytest
import torch
from torch import nn

from attnbook import Decoder, DecoderBlock, Encoder, EncoderBlock, MultiHeadAttention
from attnbook.interop import from_torch, to_torch

E, H, FF = 8, 2, 16


def twins():
    torch.manual_seed(0)
    enc_layer = nn.TransformerEncoderLayer(E, H, FF, batch_first=True, dropout=0.0)
    dec_layer = nn.TransformerDecoderLayer(E, H, FF, batch_first=True, dropout=0.0)
    return [
        (nn.MultiheadAttention(E, H, batch_first=True), MultiHeadAttention),
        (enc_layer, EncoderBlock),
        (dec_layer, DecoderBlock),
        (
            nn.TransformerEncoder(enc_layer, 2, norm=nn.LayerNorm(E), enable_nested_tensor=False),
            Encoder,
        ),
        (nn.TransformerDecoder(dec_layer, 2), Decoder),
    ]


def run(module, x, memory):
    if isinstance(module, (nn.MultiheadAttention, MultiHeadAttention)):
        return module(x, memory, memory)[0]
    if isinstance(
        module, (nn.TransformerDecoderLayer, nn.TransformerDecoder, DecoderBlock, Decoder)
    ):
        out = module(x, memory)
    else:
        out = module(x)
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize(("theirs", "kind"), twins(), ids=lambda t: type(t).__name__)
def test_from_torch_gives_the_twin_and_the_same_function(theirs, kind):
    theirs = theirs.eval()
    ours = from_torch(theirs)
    assert type(ours) is kind and not ours.training
    x, memory = torch.randn(2, 5, E), torch.randn(2, 7, E)
    torch.testing.assert_close(run(ours, x, memory), run(theirs, x, memory), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("theirs", "kind"), twins(), ids=lambda t: type(t).__name__)
def test_to_torch_then_from_torch_keeps_every_weight(theirs, kind):
    ours = from_torch(theirs.eval())
    back = from_torch(to_torch(ours))
    for (name, a), (_, b) in zip(ours.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), name


def test_modules_without_a_twin_are_refused_by_name():
    with pytest.raises(TypeError, match="got Linear"):
        from_torch(nn.Linear(2, 2))
    with pytest.raises(TypeError, match="got Linear"):
        to_torch(nn.Linear(2, 2))
