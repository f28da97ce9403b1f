"""A complete small encoder-decoder Transformer, and greedy decoding with a key/value cache.

:class:`Seq2SeqTransformer` puts together what chapters 4-5 built: token + position embeddings
(:class:`~attnbook.positional.TransformerEmbedding`), an :class:`~attnbook.transformer.Encoder`,
a :class:`~attnbook.transformer.Decoder` and a linear output layer to the vocabulary. Trained
with teacher forcing (:func:`seq2seq_loss`: the decoder reads the true target shifted right and
predicts every next token at once), it answers with :func:`greedy_decode`, one token at a time.

Decoding one token at a time, the decoder would recompute every earlier position at every step.
With a :class:`KVCache` it does not: each layer's self-attention keys and values of the past
positions are projected once and kept, and the cross-attention keys and values of the encoder
output (the *memory*) are projected once before the first step. :meth:`Seq2SeqTransformer.decode_step`
runs the decoder blocks' own submodules (layer norms, projections, feed-forward network) on the
newest position only; its logits equal the full recomputation's (tested to 1e-5).

Shape legend: N batch, S source length, T target length, E ``d_model``, H ``nhead``,
D = E / H head size, V vocabulary size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnbook.attention import scaled_dot_product_attention
from attnbook.blocks import DecoderBlock
from attnbook.mha import MultiHeadAttention, merge_heads, split_heads
from attnbook.positional import TransformerEmbedding
from attnbook.transformer import Decoder, Encoder
from attnbook.values import has_values

__all__ = ["Seq2SeqConfig", "Seq2SeqTransformer", "KVCache", "seq2seq_loss", "greedy_decode"]


@dataclass
class Seq2SeqConfig:
    """Sizes of a :class:`Seq2SeqTransformer`."""

    vocab_size: int  # V, shared by source and target; id pad_id is padding
    d_model: int = 64  # E
    nhead: int = 4  # H; must divide d_model
    num_layers: int = 2  # blocks in the encoder and (as many) in the decoder
    dim_feedforward: int = 128  # F, the feed-forward hidden size
    dropout: float = 0.0  # everywhere the blocks have dropout
    norm_first: bool = True  # pre-LN (True) or post-LN (False), in both stacks
    max_len: int = 16  # longest source or target sequence
    positions: Literal["learned", "sinusoidal"] = "learned"  # position embeddings
    pad_id: int = 0  # the padding token, masked in attention and ignored by the loss


@dataclass
class KVCache:
    """What :meth:`Seq2SeqTransformer.decode_step` keeps between steps, one entry per layer.

    ``self_keys[i]`` and ``self_values[i]`` (N, H, t, D) are layer ``i``'s self-attention keys
    and values of the t positions decoded so far; ``cross_keys[i]`` and ``cross_values[i]``
    (N, H, S, D) are its cross-attention keys and values of the memory, computed once.
    ``memory_mask`` (N, 1, 1, S) is True where a memory position may be attended.
    """

    cross_keys: list[Tensor]
    cross_values: list[Tensor]
    memory_mask: Tensor
    self_keys: list[Tensor] = field(default_factory=list)
    self_values: list[Tensor] = field(default_factory=list)

    @property
    def length(self) -> int:
        """The number of target positions cached so far."""
        return self.self_keys[0].size(-2) if self.self_keys else 0


def _project(mha: MultiHeadAttention, x: Tensor) -> tuple[Tensor, Tensor]:
    """Keys and values of ``x`` (N, L, E) for attention module ``mha``: two (N, H, L, D)."""
    return split_heads(mha.k_proj(x), mha.num_heads), split_heads(mha.v_proj(x), mha.num_heads)


def _attend(
    mha: MultiHeadAttention, x: Tensor, k: Tensor, v: Tensor, mask: Tensor | None
) -> Tensor:
    """``mha``'s output for queries ``x`` (N, 1, E) over projected keys/values (N, H, S, D)."""
    q = split_heads(mha.q_proj(x), mha.num_heads)  # (N, H, 1, D)
    output, _ = scaled_dot_product_attention(q, k, v, mask)  # (N, H, 1, D)
    return mha.out_proj(merge_heads(output))  # (N, 1, E)


class Seq2SeqTransformer(nn.Module):
    """Embeddings, an encoder, a decoder and an output layer: tokens in, next-token logits out.

    Args:
        config: the sizes; see :class:`Seq2SeqConfig`.

    Attributes:
        src_embed: the source's :class:`~attnbook.positional.TransformerEmbedding` (unscaled
            token embeddings plus positions).
        tgt_embed: the target's, of the same kind.
        encoder: an :class:`~attnbook.transformer.Encoder`.
        decoder: a :class:`~attnbook.transformer.Decoder`.
        output: ``nn.Linear(E, V)``, the logits of the next token.
    """

    def __init__(self, config: Seq2SeqConfig) -> None:
        super().__init__()
        c = config
        if not 0 <= c.pad_id < c.vocab_size:
            raise ValueError(f"pad_id must be in [0, vocab_size = {c.vocab_size}); got {c.pad_id}")
        self.config = c
        embed = {"max_len": c.max_len, "kind": c.positions, "dropout": c.dropout, "scale": False}
        self.src_embed = TransformerEmbedding(
            c.vocab_size, c.d_model, padding_idx=c.pad_id, **embed
        )
        self.tgt_embed = TransformerEmbedding(
            c.vocab_size, c.d_model, padding_idx=c.pad_id, **embed
        )
        blocks = dict(
            d_model=c.d_model, nhead=c.nhead, dim_feedforward=c.dim_feedforward,
            dropout=c.dropout, norm_first=c.norm_first,
        )  # fmt: skip
        self.encoder = Encoder(c.num_layers, **blocks)
        self.decoder = Decoder(c.num_layers, **blocks)
        self.output = nn.Linear(c.d_model, c.vocab_size)

    def _check_tokens(self, tokens: Tensor, name: str, dims: int = 2) -> None:
        """Refuse anything but integer ids, (N, length) or (N,), all inside the vocabulary."""
        shape = "(N, length)" if dims == 2 else "(N,)"
        if not isinstance(tokens, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(tokens).__name__}")
        if tokens.dim() != dims or tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
            raise ValueError(
                f"{name} must be integer ids of shape {shape}; got shape "
                f"{tuple(tokens.shape)} and dtype {tokens.dtype}"
            )
        V = self.config.vocab_size
        outside = (tokens < 0) | (tokens >= V)
        if has_values(outside) and outside.any():
            where = tuple(int(i) for i in outside.nonzero()[0])
            raise ValueError(
                f"{name} ids must be in [0, vocab_size = {V}); got id {int(tokens[where])} "
                f"at {list(where)} of a {tuple(tokens.shape)} tensor"
            )

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """Args: src (N, S) ids. Returns: memory (N, S, E) and its padding mask (N, S), True = pad."""
        self._check_tokens(src, "src")
        padding = src == self.config.pad_id  # (N, S)
        memory, _ = self.encoder(self.src_embed(src), src_key_padding_mask=padding)
        return memory, padding

    def decode(self, tgt: Tensor, memory: Tensor, memory_padding: Tensor) -> Tensor:
        """Logits (N, T, V) of the next token after each prefix of ``tgt`` (N, T), all at once."""
        self._check_tokens(tgt, "tgt")
        hidden, _ = self.decoder(
            self.tgt_embed(tgt), memory, tgt_is_causal=True,
            memory_key_padding_mask=memory_padding,
        )  # fmt: skip
        return self.output(hidden)  # (N, T, V)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        """Teacher forcing: logits (N, T, V) for source (N, S) and target prefix (N, T)."""
        memory, padding = self.encode(src)
        return self.decode(tgt, memory, padding)

    def start_cache(self, memory: Tensor, memory_padding: Tensor) -> KVCache:
        """Project the memory (N, S, E) once for every layer's cross-attention; no target yet."""
        keys, values = zip(*(_project(layer.cross_attn, memory) for layer in self.decoder.layers))
        mask = ~memory_padding[:, None, None, :]  # (N, 1, 1, S), True = may attend
        return KVCache(list(keys), list(values), mask)

    def decode_step(self, token: Tensor, cache: KVCache) -> tuple[Tensor, KVCache]:
        """The next-token logits (N, V) after one more target token (N,), using the cache.

        Position ``cache.length`` gets its embedding; in every layer only its query, key and
        value are projected, its key and value are appended to the cache, and it attends to
        all cached positions (which are all in its past, so no causal mask is needed).

        Inference only: the model must be in eval mode. The step does not apply the attention
        modules' dropout on the weights (see ``_layer_step``), so in training mode it would
        silently differ from :meth:`decode`; it refuses instead.

        Returns:
            ``(logits, cache)``: logits (N, V); the same ``cache`` object, updated in place
            (one position longer) and returned for convenience. The state before the step is
            not kept.
        """
        if self.training:
            raise ValueError(
                "decode_step is for inference: the model is in training mode (it would skip "
                "attention dropout); call model.eval() first"
            )
        self._check_tokens(token, "token", dims=1)
        N = cache.memory_mask.size(0)
        if token.size(0) != N:
            raise ValueError(
                f"token must have one id per cached sequence, (N,) = ({N},); "
                f"got {tuple(token.shape)}"
            )
        t = cache.length
        if t >= self.config.max_len:
            raise ValueError(f"the cache holds {t} positions; max_len = {self.config.max_len}")
        x = self.tgt_embed(token[:, None], start=t)  # (N, 1, E): the token at position t
        first_step = t == 0
        for i, layer in enumerate(self.decoder.layers):
            x = self._layer_step(layer, i, x, cache, first_step)
        if self.decoder.norm is not None:
            x = self.decoder.norm(x)
        return self.output(x[:, 0]), cache  # (N, V)

    def _layer_step(
        self, layer: DecoderBlock, i: int, x: Tensor, cache: KVCache, first_step: bool
    ) -> Tensor:
        """One decoder block on the newest position x (N, 1, E), as DecoderBlock.forward does.

        This re-implements the order of ``DecoderBlock.forward`` (pre-LN or post-LN) with the
        block's own submodules, and it bypasses ``MultiHeadAttention.forward``: it calls the
        projections and ``scaled_dot_product_attention`` itself. Features of that forward are
        therefore not supported here: dropout on the attention weights (which is why
        ``decode_step`` refuses training mode), ``head_mask``, and any mask other than the
        memory's padding.
        """

        def self_attention(h: Tensor) -> Tensor:
            k, v = _project(layer.self_attn, h)  # (N, H, 1, D): this position only
            if first_step:
                cache.self_keys.append(k)
                cache.self_values.append(v)
            else:
                cache.self_keys[i] = torch.cat([cache.self_keys[i], k], dim=-2)  # (N, H, t+1, D)
                cache.self_values[i] = torch.cat([cache.self_values[i], v], dim=-2)
            out = _attend(layer.self_attn, h, cache.self_keys[i], cache.self_values[i], None)
            return layer.dropout1(out)

        def cross_attention(h: Tensor) -> Tensor:
            k, v = cache.cross_keys[i], cache.cross_values[i]  # (N, H, S, D)
            return layer.dropout2(_attend(layer.cross_attn, h, k, v, cache.memory_mask))

        if layer.norm_first:
            x = x + self_attention(layer.norm1(x))
            x = x + cross_attention(layer.norm2(x))
            return x + layer.dropout3(layer.ff(layer.norm3(x)))
        x = layer.norm1(x + self_attention(x))
        x = layer.norm2(x + cross_attention(x))
        return layer.norm3(x + layer.dropout3(layer.ff(x)))


def seq2seq_loss(model: Seq2SeqTransformer, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Teacher-forced cross-entropy: read ``tgt[:, :-1]``, predict ``tgt[:, 1:]``, skip padding.

    Args:
        model: the model.
        batch: ``(src, tgt)``, (N, S) and (N, T) ids; ``tgt`` starts with the start token.
    """
    src, tgt = batch
    logits = model(src, tgt[:, :-1])  # (N, T-1, V)
    targets = tgt[:, 1:]  # (N, T-1)
    return F.cross_entropy(
        logits.flatten(0, 1), targets.flatten(), ignore_index=model.config.pad_id
    )


@torch.no_grad()
def greedy_decode(
    model: Seq2SeqTransformer,
    src: Tensor,
    bos_id: int,
    eos_id: int,
    max_len: int,
    use_cache: bool = True,
) -> tuple[Tensor, Tensor]:
    """Answer ``src`` one token at a time, always taking the most likely next token.

    A row that has produced ``eos_id`` is finished: it gets ``pad_id`` from then on, and decoding
    stops early once every row is finished.

    Args:
        model: in eval mode (dropout would make the answer random).
        src: (N, S) source ids.
        bos_id: the start token every answer begins with.
        eos_id: the end token.
        max_len: the most tokens to generate after ``bos_id``.
        use_cache: decode with a :class:`KVCache`; ``False`` recomputes the whole decoder on
            the whole prefix at every step (the same answer, much more work).

    Returns:
        ``(tokens, logits)``: tokens (N, 1 + T) starting with ``bos_id``; logits (N, T, V),
        the scores of every step. T <= ``max_len``. A finished row's logits after its
        ``eos_id`` are still computed (from its padding) but not used: its tokens are
        ``pad_id``.
    """
    if model.training:
        raise ValueError("model is in training mode; call model.eval() before decoding")
    V, pad = model.config.vocab_size, model.config.pad_id
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < V:
            raise ValueError(f"{name} must be an id in [0, vocab_size = {V}); got {value!r}")
    limit = model.config.max_len - 1
    if isinstance(max_len, bool) or not isinstance(max_len, int) or not 0 < max_len <= limit:
        raise ValueError(
            f"max_len must be an integer in [1, config.max_len - 1 = {limit}]; got {max_len!r}"
        )
    memory, padding = model.encode(src)
    N = src.size(0)
    tokens = torch.full((N, 1), bos_id, dtype=torch.long, device=src.device)  # (N, 1)
    finished = torch.zeros(N, dtype=torch.bool, device=src.device)  # (N,)
    cache = model.start_cache(memory, padding) if use_cache else None
    all_logits = []
    for _ in range(max_len):
        if cache is not None:
            logits, cache = model.decode_step(tokens[:, -1], cache)  # (N, V)
        else:
            logits = model.decode(tokens, memory, padding)[:, -1]  # (N, V)
        next_token = logits.argmax(dim=-1).masked_fill(finished, pad)  # (N,)
        all_logits.append(logits)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)  # (N, t + 1)
        finished |= next_token == eos_id
        if finished.all():
            break
    return tokens, torch.stack(all_logits, dim=1)  # (N, 1 + T), (N, T, V)
