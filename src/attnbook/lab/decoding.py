"""Decoding the lab model one position at a time, with a key/value cache that can forget.

A causal :class:`~attnbook.lab.lab_model.LabModel` can read a sequence one token at a time: each
step computes the newest position's query, key and value in every layer, keeps the keys and
values in a :class:`KVCache`, and attends from the one query to everything cached. The cache is
where the memory of generation goes, and the outlook chapter measures it from the tensors
themselves (:meth:`KVCache.nbytes`):

* with ``num_kv_heads`` K < H (grouped-query attention; K = 1 is multi-query attention) each
  layer caches K heads instead of H — the cache shrinks by H / K;
* with a ``window`` the cache keeps only the keys at most ``window`` positions back, plus the
  first ``sinks`` positions for ever (the attention sinks of StreamingLLM, Xiao et al. 2024):
  its size stops growing with the length.

:func:`streaming_mask` is the same rule as a mask, and :func:`sliding_window` applies it to a
whole sequence at once through forward hooks on each layer's ``logits`` (no change to the
model), so a trained model can be *evaluated* with a window it was not trained with; the tests
check that decoding with the cache gives the same logits as the model under that mask.
:func:`kv_cache_bytes` is the formula, for configurations too large to run.

Cached keys keep the rotation of their original position (rotary positions), so the distances
a query sees are true distances — StreamingLLM instead renumbers the positions inside the cache,
which matters only beyond the training length.

Shape legend: N batch, L length, t cached positions, E embedding, H query heads, K key/value
heads, D head size, C classes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from attnbook.lab.lab_model import LabModel
from attnbook.mha import MultiHeadAttention, merge_heads, split_heads
from attnbook.positional import alibi_slopes, rotate

__all__ = [
    "KVCache",
    "decode",
    "decode_step",
    "kv_cache_bytes",
    "sliding_window",
    "streaming_mask",
]


def kv_cache_bytes(
    num_layers: int,
    num_kv_heads: int,
    head_dim: int,
    length: int,
    batch: int = 1,
    bytes_per_value: int = 2,
) -> int:
    """Bytes a decoder's key/value cache holds: ``2 · layers · K · D · length · batch · bytes``.

    The 2 is keys and values; ``bytes_per_value`` is 2 for float16/bfloat16, 4 for float32.
    """
    sizes = dict(num_layers=num_layers, num_kv_heads=num_kv_heads, head_dim=head_dim)
    sizes.update(batch=batch, bytes_per_value=bytes_per_value)
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise ValueError(f"length must be an integer >= 0; got {length!r}")
    return 2 * num_layers * num_kv_heads * head_dim * length * batch * bytes_per_value


def streaming_mask(length: int, window: int | None, sinks: int = 0, device=None) -> Tensor:
    """(L, L) bool, ``True`` where query i may see key j: ``j <= i`` and
    (``i - j <= window`` or ``j < sinks``). ``window=None`` is full causal attention."""
    if window is not None and window < 0 or sinks < 0:
        raise ValueError(f"window must be >= 0 or None and sinks >= 0; got {window}, {sinks}")
    position = torch.arange(length, device=device)
    distance = position[:, None] - position[None, :]  # (L, L): i - j
    allowed = distance >= 0
    if window is not None:
        allowed &= (distance <= window) | (position[None, :] < sinks)
    return allowed


@contextmanager
def sliding_window(model: LabModel, window: int | None, sinks: int = 0) -> Iterator[LabModel]:
    """Within the ``with`` block, every layer of ``model`` attends by :func:`streaming_mask`.

    Forward hooks on each layer's ``attn.logits`` set the scores of forbidden keys to ``-inf``
    before the softmax; they are removed on exit, whatever happens.
    """

    def hook(module: nn.Module, inputs: tuple[Tensor], scores: Tensor) -> Tensor:
        allowed = streaming_mask(scores.size(-1), window, sinks, scores.device)  # (L, L)
        return scores.masked_fill(~allowed, float("-inf"))

    streaming_mask(1, window, sinks)  # check the arguments before hooking anything
    handles = [block.attn.logits.register_forward_hook(hook) for block in model.blocks]
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()


@dataclass
class KVCache:
    """Per layer, the cached keys and values, (N, K, t, D) each, and their positions (t,).

    Args:
        window: keep keys at most ``window`` positions behind the newest query (``None``: all).
        sinks: keep the first ``sinks`` positions whatever the window.
    """

    window: int | None = None
    sinks: int = 0
    keys: list[Tensor] = field(default_factory=list)  # per layer (N, K, t, D), rotated
    values: list[Tensor] = field(default_factory=list)  # per layer (N, K, t, D)
    positions: Tensor | None = None  # (t,) original positions of the cached entries
    length: int = 0  # positions seen so far (cached or evicted)

    def __post_init__(self) -> None:
        streaming_mask(1, self.window, self.sinks)  # argument check

    def nbytes(self) -> int:
        """Bytes held by the cached key and value tensors, read off the tensors."""
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values))

    def _kept(self) -> tuple[Tensor, Tensor]:
        """The positions cached once the next one is added, and which of them stay: (t+1,) each."""
        new = torch.tensor([self.length])
        position = new if self.positions is None else torch.cat((self.positions, new))
        keep = torch.ones_like(position, dtype=torch.bool)
        if self.window is not None:
            keep = (self.length - position <= self.window) | (position < self.sinks)
        return position, keep

    def _add(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append the next position's (N, K, 1, D) key and value to ``layer``, evict what the
        window drops, and return the (N, K, t, D) keys and values that stay."""
        if layer == len(self.keys):
            self.keys.append(k[:, :, :0])
            self.values.append(v[:, :, :0])
        _, keep = self._kept()
        self.keys[layer] = torch.cat((self.keys[layer], k), dim=2)[:, :, keep]
        self.values[layer] = torch.cat((self.values[layer], v), dim=2)[:, :, keep]
        return self.keys[layer], self.values[layer]

    def _advance(self) -> None:
        position, keep = self._kept()
        self.positions, self.length = position[keep], self.length + 1


@torch.no_grad()
def decode_step(model: LabModel, token: Tensor, cache: KVCache) -> Tensor:
    """Feed one position (the next, ``cache.length``) through every layer, using the cache.

    Re-implements :class:`~attnbook.lab.lab_model.LabBlock`'s order (pre- or post-norm) with the
    block's own submodules, for one query over the cached keys. Only what a causal lab model
    without per-head windows, dropout or padding uses is supported.

    Args:
        model: a causal :class:`~attnbook.lab.lab_model.LabModel` in eval mode.
        token: (N,) integer ids of the newest position.
        cache: updated in place.

    Returns:
        (N, C) logits of the newest position.
    """
    config = model.config
    if not config.causal or config.windows is not None or model.training:
        raise ValueError(
            "decode_step needs a causal model without per-head windows, in eval mode; got "
            f"causal={config.causal}, windows={config.windows}, training={model.training}"
        )
    if token.dim() != 1:
        raise ValueError(f"token must be (N,); got {tuple(token.shape)}")
    p = cache.length
    x = model.embed(token[:, None])  # (N, 1, E)
    if model.position is not None:
        x = x + model.position(p + 1)[p].to(x.dtype)
    for layer, block in enumerate(model.blocks):
        h = block.norm1(x) if block.pre else x
        a = _attend(block.attn, h, layer, cache, p)  # (N, 1, E)
        if block.pre:
            x = x + a
            x = x + block.ff(block.norm2(x))
        else:
            x = block.norm1(x + a)
            x = block.norm2(x + block.ff(x))
    cache._advance()
    return model.head(model.final_norm(x))[:, 0]  # (N, C)


def _attend(attn: MultiHeadAttention, h: Tensor, layer: int, cache: KVCache, p: int) -> Tensor:
    q = split_heads(attn.q_proj(h), attn.num_heads)  # (N, H, 1, D)
    k = split_heads(attn.k_proj(h), attn.num_kv_heads)  # (N, K, 1, D)
    v = split_heads(attn.v_proj(h), attn.num_kv_heads)  # (N, K, 1, D)
    if attn.q_norm is not None:
        q, k = attn.q_norm(q), attn.k_norm(k)
    if attn.positions == "rotary":
        turn = {"base": attn.rotary_base, "start": p, "interleaved": attn.rotary_interleaved}
        q, k = rotate(q, **turn), rotate(k, **turn)
    k, v = cache._add(layer, k, v)  # (N, K, t, D) each, after eviction
    group = attn.num_heads // attn.num_kv_heads
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (N, H, t, D)
    scale = 1.0 / math.sqrt(attn.head_dim) if attn.scale is None else attn.scale
    if attn.scale_first:
        scores = (q * scale) @ k.transpose(-2, -1)  # (N, H, 1, t)
    else:
        scores = (q @ k.transpose(-2, -1)) * scale
    if attn.positions == "alibi":
        position, keep = cache._kept()
        distance = (p - position[keep]).to(scores.device, scores.dtype)  # (t,)
        slopes = alibi_slopes(attn.num_heads, device=scores.device, dtype=scores.dtype)  # (H,)
        scores = scores - slopes[:, None, None] * distance
    weights = torch.softmax(scores, dim=-1)  # (N, H, 1, t)
    return attn.out_proj(merge_heads(weights @ v))  # (N, 1, E)


@torch.no_grad()
def decode(model: LabModel, tokens: Tensor, cache: KVCache | None = None) -> tuple[Tensor, KVCache]:
    """Read ``tokens`` (N, L) one position at a time; return the (N, L, C) logits and the cache."""
    if tokens.dim() != 2:
        raise ValueError(f"tokens must be (N, L); got {tuple(tokens.shape)}")
    cache = KVCache() if cache is None else cache
    logits = [decode_step(model, tokens[:, i], cache) for i in range(tokens.size(1))]
    return torch.stack(logits, dim=1), cache  # (N, L, C)
