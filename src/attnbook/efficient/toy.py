"""Two small tasks and a one-layer model to compare exact attention with its approximations.

* :func:`offset_copy_batch` — at every position, output the token ``offset`` positions back.
  With ``offset=1`` the answer is next door (a local task); with a large offset it is far away
  (a long-range task). Local attention with a window smaller than the offset cannot see it.
* :func:`retrieval_batch` — a set of (key, value) items, then a query key: output the value
  stored under it. Solving it needs one-hot attention: all weight on one matching item among
  many. Softmax attention can sharpen its weights as much as it likes; linear attention's
  weights ``phi(q) . phi(k)`` cannot, once there are more items than feature dimensions.

:class:`ToyModel` is the smallest model for both: embeddings, **one** multi-head attention layer
whose core is exact, local or linear attention, a residual connection and a linear readout.

Shape legend: N batch, L sequence length, E embedding size, H heads, D = E / H, C classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from attnbook.attention import scaled_dot_product_attention
from attnbook.efficient.linear import linear_attention, linear_attention_weights
from attnbook.efficient.local import local_mask
from attnbook.positional import sinusoidal_encoding

__all__ = ["offset_copy_batch", "retrieval_batch", "ToyConfig", "ToyModel", "IGNORE"]

IGNORE = -100  # target of positions without an answer (cross_entropy's ignore_index)
Kind = Literal["full", "local", "linear"]


def offset_copy_batch(
    batch_size: int, generator: torch.Generator, *, length: int = 32, vocab_size: int = 16, offset: int = 1
) -> tuple[Tensor, Tensor]:
    """Random tokens and, at each position ``i >= offset``, the target ``tokens[i - offset]``.

    Returns:
        ``(tokens, targets)``, both (N, L); targets are :data:`IGNORE` for ``i < offset``.
    """
    if not 0 < offset < length:
        raise ValueError(f"offset must be in [1, length); got offset={offset}, length={length}")
    tokens = torch.randint(0, vocab_size, (batch_size, length), generator=generator)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, offset:] = tokens[:, :-offset]
    return tokens, targets


def retrieval_batch(
    batch_size: int, generator: torch.Generator, *, items: int = 32, num_keys: int = 64, num_values: int = 16
) -> tuple[Tensor, Tensor, Tensor]:
    """``items`` distinct keys with random values, then one of the keys again as the query.

    Returns:
        ``(keys, values, target)``: keys (N, items + 1) in ``0 .. num_keys - 1``, the last one
        the query; values (N, items + 1) in ``0 .. num_values - 1``, the query's value being the
        blank ``num_values``; target (N,), the value stored under the query key.
    """
    if not 0 < items <= num_keys:
        raise ValueError(f"items must be in [1, num_keys]; got items={items}, num_keys={num_keys}")
    keys = torch.rand(batch_size, num_keys, generator=generator).argsort(dim=-1)[:, :items]  # (N, P)
    values = torch.randint(0, num_values, (batch_size, items), generator=generator)  # (N, P)
    pick = torch.randint(0, items, (batch_size, 1), generator=generator)  # (N, 1)
    blank = torch.full((batch_size, 1), num_values)
    return (torch.cat([keys, keys.gather(1, pick)], dim=1),
            torch.cat([values, blank], dim=1),
            values.gather(1, pick)[:, 0])


@dataclass
class ToyConfig:
    """Sizes and attention kind of a :class:`ToyModel`."""

    vocab_size: int = 16            # tokens (or keys) are 0 .. vocab_size - 1
    value_vocab: int = 0            # > 0: a second embedding for values (retrieval), incl. blank
    num_classes: int = 16           # C: size of the readout
    embed_dim: int = 64             # E
    num_heads: int = 2              # H; must divide embed_dim
    max_len: int = 64               # longest sequence (sinusoidal positions)
    positions: bool = True          # add sinusoidal positions to the embeddings
    attention: Kind = "full"        # the core: exact softmax, local window, or linear (elu + 1)
    window: int = 4                 # half-width of the local window


class ToyModel(nn.Module):
    """Embeddings, one multi-head attention layer (exact, local or linear), residual, readout."""

    def __init__(self, config: ToyConfig) -> None:
        super().__init__()
        if config.attention not in ("full", "local", "linear"):
            raise ValueError(f"attention must be 'full', 'local' or 'linear'; got {config.attention!r}")
        if config.embed_dim % config.num_heads:
            raise ValueError(f"num_heads must divide embed_dim; got {config.num_heads} and {config.embed_dim}")
        self.config = config
        E = config.embed_dim
        self.embedding = nn.Embedding(config.vocab_size, E)
        self.value_embedding = nn.Embedding(config.value_vocab, E) if config.value_vocab else None
        self.register_buffer("position", sinusoidal_encoding(config.max_len, E), persistent=False)
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(E, E) for _ in range(4))
        self.readout = nn.Linear(E, config.num_classes)

    def forward(self, tokens: Tensor, values: Tensor | None = None) -> Tensor:
        """Logits (N, L, C) for tokens (N, L) and, with ``value_vocab``, values (N, L)."""
        x, q, k, v = self._project(tokens, values)
        c = self.config
        if c.attention == "full":
            attended, _ = scaled_dot_product_attention(q, k, v)
        elif c.attention == "local":
            # For sequences this short the mask is cheaper than the band (local_attention);
            # both compute the same function.
            attended, _ = scaled_dot_product_attention(q, k, v, local_mask(q.size(-2), window=c.window))
        else:
            attended = linear_attention(q, k, v)
        N, L = tokens.shape
        attended = attended.transpose(1, 2).reshape(N, L, c.embed_dim)  # (N, L, E)
        return self.readout(x + self.out_proj(attended))  # (N, L, C)

    def attention_weights(self, tokens: Tensor, values: Tensor | None = None) -> Tensor:
        """The (N, H, L, L) weights the attention layer applies (implied ones for linear)."""
        _, q, k, _ = self._project(tokens, values)
        c = self.config
        if c.attention == "linear":
            return linear_attention_weights(q, k)
        mask = local_mask(q.size(-2), window=c.window, device=q.device) if c.attention == "local" else None
        return scaled_dot_product_attention(q, k, k, mask)[1]

    def _project(self, tokens: Tensor, values: Tensor | None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Embeddings x (N, L, E) and per-head q, k, v (N, H, L, D)."""
        c = self.config
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (N, L); got {tuple(tokens.shape)}")
        N, L = tokens.shape
        x = self.embedding(tokens)  # (N, L, E)
        if self.value_embedding is not None:
            if values is None or values.shape != tokens.shape:
                got = None if values is None else tuple(values.shape)
                raise ValueError(f"values must have the shape of tokens {tuple(tokens.shape)}; got {got}")
            x = x + self.value_embedding(values)
        if c.positions:
            x = x + self.position[:L]
        H, D = c.num_heads, c.embed_dim // c.num_heads
        q = self.q_proj(x).view(N, L, H, D).transpose(1, 2)  # (N, H, L, D)
        k = self.k_proj(x).view(N, L, H, D).transpose(1, 2)  # (N, H, L, D)
        v = self.v_proj(x).view(N, L, H, D).transpose(1, 2)  # (N, H, L, D)
        return x, q, k, v
