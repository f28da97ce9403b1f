"""Decoding with a key/value cache gives the model's own logits; the cache holds what it says."""

import pytest
import torch

from attnbook.lab.decoding import (
    KVCache,
    decode,
    decode_step,
    kv_cache_bytes,
    sliding_window,
    streaming_mask,
)
from attnbook.lab.lab_model import LabConfig, LabModel

CONFIG = LabConfig(
    vocab_size=11,
    num_classes=5,
    d_model=16,
    num_heads=4,
    num_layers=2,
    dim_feedforward=32,
    causal=True,
    max_len=40,
)


def model_with(**changes) -> LabModel:
    torch.manual_seed(0)
    return LabModel(CONFIG.replace(**changes)).eval()


def tokens(n=3, length=20, seed=1):
    return torch.randint(11, (n, length), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"positions": "sinusoidal"},
        {"positions": "rotary", "num_kv_heads": 2},
        {"positions": "alibi", "num_kv_heads": 1},
        {"positions": "none", "norm": "post", "qk_norm": True},
        {"positions": "rotary", "scale_first": False, "scale": 0.3},
    ],
)
def test_decoding_with_the_cache_equals_the_full_forward(changes):
    model, x = model_with(**changes), tokens()
    logits, cache = decode(model, x)
    torch.testing.assert_close(logits, model(x)[0], atol=1e-5, rtol=1e-5)
    assert cache.length == x.size(1) and cache.positions.tolist() == list(range(x.size(1)))


@pytest.mark.parametrize("positions", ["learned", "rotary", "alibi"])
@pytest.mark.parametrize("window,sinks", [(3, 0), (3, 2), (0, 1), (2, 6), (None, 0)])
def test_a_window_cache_equals_the_model_under_the_streaming_mask(positions, window, sinks):
    model, x = model_with(positions=positions, num_kv_heads=2), tokens()
    logits, cache = decode(model, x, KVCache(window=window, sinks=sinks))
    with sliding_window(model, window, sinks):
        masked = model(x)[0]
    torch.testing.assert_close(logits, masked, atol=1e-5, rtol=1e-5)
    assert len(model.blocks[0].attn.logits._forward_hooks) == 0  # hooks removed
    if window is not None:
        expected = sorted(set(range(sinks)) | set(range(x.size(1) - 1 - window, x.size(1))))
        assert cache.positions.tolist() == expected


@pytest.mark.parametrize("window,sinks", [(None, 0), (3, 2)])
def test_decoding_continues_from_a_filled_cache(window, sinks):
    model, x = model_with(positions="rotary", num_kv_heads=2), tokens()
    whole, _ = decode(model, x, KVCache(window=window, sinks=sinks))
    first, cache = decode(model, x[:, :12], KVCache(window=window, sinks=sinks))
    rest, cache = decode(model, x[:, 12:], cache)  # the same cache, filled by the first 12 tokens
    torch.testing.assert_close(torch.cat([first, rest], dim=1), whole, atol=1e-6, rtol=1e-6)
    assert cache.length == x.size(1)


def test_the_window_changes_the_output_when_keys_are_dropped():
    model, x = model_with(positions="rotary"), tokens()
    with sliding_window(model, 2, 0):
        masked = model(x)[0]
    assert not torch.allclose(masked[:, 5:], model(x)[0][:, 5:], atol=1e-4)
    torch.testing.assert_close(masked[:, :3], model(x)[0][:, :3])  # nothing dropped yet


def test_cache_bytes_are_read_off_the_tensors_and_match_the_formula():
    for kv in (4, 2, 1):
        model, x = model_with(num_kv_heads=kv), tokens(n=2, length=9)
        _, cache = decode(model, x)
        assert cache.keys[0].shape == (2, kv, 9, 4)
        assert cache.nbytes() == kv_cache_bytes(2, kv, 4, 9, batch=2, bytes_per_value=4)
        per_layer = [(b.attn.num_kv_heads, b.attn.head_dim) for b in model.blocks]
        assert cache.nbytes() == sum(kv_cache_bytes(1, K, D, 9, 2, 4) for K, D in per_layer)


def test_a_window_with_sinks_stops_the_cache_growing():
    model = model_with(positions="rotary")
    _, short = decode(model, tokens(n=1, length=12), KVCache(window=4, sinks=1))
    _, long = decode(model, tokens(n=1, length=36), KVCache(window=4, sinks=1))
    assert short.nbytes() == long.nbytes() == kv_cache_bytes(2, 4, 4, 6, bytes_per_value=4)


def test_streaming_mask_rule():
    allowed = streaming_mask(6, 1, sinks=1)
    assert allowed[5].tolist() == [True, False, False, False, True, True]
    assert allowed[0].tolist() == [True] + [False] * 5
    assert torch.equal(streaming_mask(5, None), torch.ones(5, 5, dtype=torch.bool).tril())


def test_kv_cache_bytes_formula():
    # Mistral 7B: 32 layers, 8 key/value heads of 128, float16: 128 KiB per token
    assert kv_cache_bytes(32, 8, 128, 1) == 128 * 1024
    assert kv_cache_bytes(32, 8, 128, 0) == 0


@pytest.mark.parametrize(
    "call",
    [
        lambda: kv_cache_bytes(0, 8, 128, 1),
        lambda: kv_cache_bytes(2, 8, 128, -1),
        lambda: kv_cache_bytes(2, 8.0, 128, 1),
        lambda: streaming_mask(4, -1),
        lambda: KVCache(window=2, sinks=-1),
    ],
)
def test_bad_sizes_are_refused(call):
    with pytest.raises(ValueError):
        call()


def test_decode_step_refuses_models_it_cannot_decode():
    with pytest.raises(ValueError, match="causal"):
        decode_step(model_with(causal=False), torch.tensor([1]), KVCache())
    with pytest.raises(ValueError, match="causal"):
        decode_step(model_with().train(), torch.tensor([1]), KVCache())
    with pytest.raises(ValueError, match=r"\(N,\)"):
        decode_step(model_with(), torch.tensor([[1]]), KVCache())
