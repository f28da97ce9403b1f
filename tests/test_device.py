"""Every tensor the library creates is created on its inputs' device.

Run on PyTorch's ``meta`` device (shapes without data): a tensor created on the CPU by mistake
meets the meta inputs and raises, so these tests catch the bug on a machine without a GPU.
"""

import pytest
import torch

from attnbook import MultiHeadAttention, scaled_dot_product_attention
from attnbook.attention import fused_attention
from attnbook.efficient import (
    chunked_attention,
    linear_attention,
    linear_attention_recurrent,
    linear_attention_weights,
    local_attention,
    local_mask,
    lowrank_attention,
    pooling_projection,
)
from attnbook.masks import causal_mask
from attnbook.models.detective import Detective, DetectiveConfig
from attnbook.models.toy import ToyConfig, ToyModel

META = torch.device("meta")


def qkv(L=6, S=6, E=4):
    return (torch.randn(2, 2, n, E, device=META) for n in (L, S, S))


ATTENTION = {
    "sdpa": lambda q, k, v: scaled_dot_product_attention(q, k, v, is_causal=True)[0],
    "sdpa with a bool mask": lambda q, k, v: scaled_dot_product_attention(
        q, k, v, torch.ones(6, 6, dtype=torch.bool, device=META)
    )[0],
    "fused": lambda q, k, v: fused_attention(q, k, v, is_causal=True),
    "chunked": lambda q, k, v: chunked_attention(
        q, k, v, is_causal=True, query_block=2, key_block=3, workers=1
    ),
    "local band": lambda q, k, v: local_attention(q, k, v, 2, block_size=4),
    "low-rank": lambda q, k, v: lowrank_attention(
        q, k, v, pooling_projection(6, 3).to(META), log_counts=True
    ),
    "linear": lambda q, k, v: linear_attention(q, k, v, is_causal=True, chunk_size=4),
    "linear recurrent": lambda q, k, v: linear_attention_recurrent(q, k, v)[0],
    "linear weights": lambda q, k, v: linear_attention_weights(q, k, is_causal=True) @ v,
}


@pytest.mark.parametrize("name", ATTENTION)
def test_attention_variants_stay_on_the_inputs_device(name):
    assert ATTENTION[name](*qkv()).device == META


def test_masks_are_made_on_the_requested_device():
    assert causal_mask(3, device=META).device == META
    assert local_mask(5, window=1, device=META).device == META
    # padding_mask checks the lengths' values, which a meta tensor does not have.


def test_multi_head_attention_runs_on_meta_with_masks_and_head_mask():
    mha = MultiHeadAttention(8, 2, device=META)
    x = torch.randn(2, 5, 8, device=META)
    padding = torch.zeros(2, 5, dtype=torch.bool, device=META)
    out, weights = mha(
        x, x, x, key_padding_mask=padding, is_causal=True, head_mask=torch.ones(2, device=META)
    )
    assert out.device == weights.device == META


def test_the_chapter_models_run_on_meta():
    toy = ToyModel(ToyConfig(embed_dim=8, num_heads=2, attention="local")).to(META)
    tokens = torch.zeros(2, 10, dtype=torch.long, device=META)
    assert toy(tokens).device == META
    assert toy.attention_weights(tokens).device == META
    detective = Detective(DetectiveConfig(vocab_size=10, d_model=8)).to(META)
    padding = torch.zeros(2, 7, dtype=torch.bool, device=META)
    logits, weights = detective(
        torch.zeros(2, 7, dtype=torch.long, device=META),
        padding,
        torch.tensor([3, 4], device=META),
        need_weights=True,
    )
    assert logits.device == META and all(w.device == META for w in weights)
