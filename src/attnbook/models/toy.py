"""The smallest model that compares exact attention with its approximations (chapter 10).

:class:`ToyModel`: embeddings, **one** multi-head attention layer whose core is exact, local or
linear attention, a residual connection and a linear readout. Its tasks are in
:mod:`attnbook.tasks.synthetic`.

Shape legend: N batch, L sequence length, E embedding size, H heads, D = E / H, C classes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from torch import Tensor, nn

from attnbook.attention import scaled_dot_product_attention
from attnbook.efficient.chunked import chunked_attention
from attnbook.efficient.linear import linear_attention, linear_attention_weights
from attnbook.efficient.local import local_mask
from attnbook.mha import merge_heads, split_heads
from attnbook.positional import sinusoidal_encoding

__all__ = ["ToyConfig", "ToyModel"]

Kind = Literal["full", "local", "linear", "chunked"]


@dataclass
class ToyConfig:
    """Sizes and attention kind of a :class:`ToyModel`."""

    vocab_size: int = 16  # tokens (or keys) are 0 .. vocab_size - 1
    value_vocab: int = 0  # > 0: a second embedding for values (retrieval), incl. blank
    num_classes: int = 16  # C: size of the readout
    embed_dim: int = 64  # E
    num_heads: int = 2  # H; must divide embed_dim
    max_len: int = 64  # longest sequence (sinusoidal positions)
    positions: bool = True  # add sinusoidal positions to the embeddings
    attention: Kind = "full"  # exact softmax, local window, linear (elu + 1), or chunked (exact)
    window: int = 4  # half-width of the local window
    block: int = 512  # query and key block size of the chunked attention


class ToyModel(nn.Module):
    """Embeddings, one multi-head attention layer (exact, local or linear), residual, readout."""

    def __init__(self, config: ToyConfig) -> None:
        super().__init__()
        if config.attention not in ("full", "local", "linear", "chunked"):
            raise ValueError(
                f"attention must be 'full', 'local', 'linear' or 'chunked'; got {config.attention!r}"
            )
        if config.embed_dim % config.num_heads:
            raise ValueError(
                f"num_heads must divide embed_dim; got {config.num_heads} and {config.embed_dim}"
            )
        self.config = config
        E = config.embed_dim
        self.embedding = nn.Embedding(config.vocab_size, E)
        self.value_embedding = nn.Embedding(config.value_vocab, E) if config.value_vocab else None
        self.register_buffer("position", sinusoidal_encoding(config.max_len, E), persistent=False)
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(E, E) for _ in range(4))
        self.readout = nn.Linear(E, config.num_classes)

    def forward(
        self, tokens: Tensor, values: Tensor | None = None, query_positions: Tensor | None = None
    ) -> Tensor:
        """Logits (N, L, C) for tokens (N, L) and, with ``value_vocab``, values (N, L).

        ``query_positions`` (N, Q), optional: compute the logits only at these positions, (N, Q, C)
        — every position is still a key. The same numbers as the full output's rows, for a
        fraction of the cost on long sequences (not with ``local`` attention, whose window
        depends on the query's position).
        """
        x, q, k, v = self._project(tokens, values)
        c = self.config
        if query_positions is not None:
            x, q = self._select(x, q, query_positions)  # (N, Q, E), (N, H, Q, D)
        if c.attention == "full":
            attended, _ = scaled_dot_product_attention(q, k, v)
        elif c.attention == "local":
            # For sequences this short the mask is cheaper than the band (local_attention);
            # both compute the same function.
            mask = local_mask(q.size(-2), window=c.window, device=q.device)
            attended, _ = scaled_dot_product_attention(q, k, v, mask)
        elif c.attention == "chunked":  # exact, and linear in memory in training too
            attended = chunked_attention(q, k, v, query_block=c.block, key_block=c.block)
        else:
            attended = linear_attention(q, k, v)
        return self.readout(x + self.out_proj(merge_heads(attended)))  # (N, L, C)

    def _select(self, x: Tensor, q: Tensor, positions: Tensor) -> tuple[Tensor, Tensor]:
        if self.config.attention == "local":
            raise ValueError("query_positions cannot be used with local attention")
        if not isinstance(positions, Tensor) or positions.dtype.is_floating_point:
            raise TypeError("query_positions must be an integer tensor")
        N, L = x.shape[:2]
        if positions.dim() != 2 or positions.size(0) != N:
            raise ValueError(
                f"query_positions must have shape (N, Q) with N = {N}; got {tuple(positions.shape)}"
            )
        if positions.numel() and (positions.min() < 0 or positions.max() >= L):
            raise ValueError(f"query_positions must lie in [0, {L})")
        E, (H, D) = x.size(-1), q.shape[1::2]
        x = x.gather(1, positions[..., None].expand(-1, -1, E))  # (N, Q, E)
        q = q.gather(2, positions[:, None, :, None].expand(-1, H, -1, D))  # (N, H, Q, D)
        return x, q

    def attention_weights(self, tokens: Tensor, values: Tensor | None = None) -> Tensor:
        """The (N, H, L, L) weights the attention layer applies (implied ones for linear)."""
        _, q, k, _ = self._project(tokens, values)
        c = self.config
        if c.attention == "linear":
            return linear_attention_weights(q, k)
        mask = (
            local_mask(q.size(-2), window=c.window, device=q.device)
            if c.attention == "local"
            else None
        )
        return scaled_dot_product_attention(q, k, k, mask)[1]

    def _project(
        self, tokens: Tensor, values: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Embeddings x (N, L, E) and per-head q, k, v (N, H, L, D)."""
        c = self.config
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (N, L); got {tuple(tokens.shape)}")
        N, L = tokens.shape
        x = self.embedding(tokens)  # (N, L, E)
        if self.value_embedding is not None:
            if values is None or values.shape != tokens.shape:
                got = None if values is None else tuple(values.shape)
                raise ValueError(
                    f"values must have the shape of tokens {tuple(tokens.shape)}; got {got}"
                )
            x = x + self.value_embedding(values)
        if c.positions:
            x = x + self.position[:L]
        H = c.num_heads
        q, k, v = (split_heads(proj(x), H) for proj in (self.q_proj, self.k_proj, self.v_proj))
        return x, q, k, v  # x (N, L, E); q, k, v (N, H, L, D)
