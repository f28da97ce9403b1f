"""A GRU encoder-decoder without attention: the baseline of Part V's translation chapter.

The encoder reads the source left to right and keeps only its final state, the *summary*; the
decoder starts from that state and, as in Cho et al. (2014), reads the summary again at every
step and at the output layer (``context_every_step``; ``False`` gives Sutskever et al.'s (2014)
decoder, which sees it only as its initial state). Nothing else of the source reaches the
decoder: however long the input, it is squeezed into ``num_layers`` vectors of size
``hidden_size``. Attention (:class:`~attnbook.models.seq2seq.Seq2SeqTransformer`) removes that
bottleneck by letting every decoding step look at every source position.

:class:`GRUSeq2Seq` has the interface that :func:`~attnbook.models.seq2seq.seq2seq_loss` and
:func:`~attnbook.models.seq2seq.greedy_decode` use: ``config.pad_id``, ``config.vocab_size``,
``config.max_len``, ``forward(src, tgt)``, ``encode``, ``decode``, ``start_cache`` and
``decode_step``; both functions take it unchanged.

Shape legend: N batch, S source length, T target length, E ``d_model`` (embeddings),
K ``hidden_size``, Ly ``num_layers``, V vocabulary size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence

from attnbook.values import has_values

__all__ = ["GRUConfig", "GRUSeq2Seq", "GRUState"]


@dataclass
class GRUConfig:
    """Sizes of a :class:`GRUSeq2Seq`."""

    vocab_size: int  # V, shared by source and target; id pad_id is padding
    d_model: int = 64  # E, the token embedding size
    hidden_size: int = 128  # K, the GRU state size (the summary's size per layer)
    num_layers: int = 1  # Ly, stacked GRU layers in the encoder and in the decoder
    context_every_step: bool = True  # Cho et al. 2014: the summary enters every decoder step
    dropout: float = 0.0  # between stacked GRU layers (PyTorch's nn.GRU dropout)
    max_len: int = 32  # the longest target greedy_decode may ask for, plus one
    pad_id: int = 0  # the padding token: right padding only, ignored by the loss


@dataclass
class GRUState:
    """What :meth:`GRUSeq2Seq.decode_step` keeps between steps.

    ``hidden`` (Ly, N, K) is the decoder's state; ``context`` (N, K) is the source summary
    (the encoder's last-layer final state), fixed during decoding.
    """

    hidden: Tensor
    context: Tensor


def _check_tokens(tokens: object, name: str, vocab_size: int, dims: int = 2) -> Tensor:
    """Refuse anything but integer ids, (N, length) or (N,), all inside the vocabulary."""
    shape = "(N, length)" if dims == 2 else "(N,)"
    if not isinstance(tokens, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(tokens).__name__}")
    if tokens.dim() != dims or tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
        raise ValueError(
            f"{name} must be integer ids of shape {shape}; got shape {tuple(tokens.shape)} "
            f"and dtype {tokens.dtype}"
        )
    if dims == 2 and tokens.size(1) == 0:
        raise ValueError(f"{name} must have at least one position; got shape {tuple(tokens.shape)}")
    outside = (tokens < 0) | (tokens >= vocab_size)
    if has_values(outside) and outside.any():
        where = [int(i) for i in outside.nonzero()[0]]
        raise ValueError(
            f"{name} ids must be in [0, vocab_size = {vocab_size}); got id "
            f"{int(tokens[tuple(where)])} at {where} of a {tuple(tokens.shape)} tensor"
        )
    return tokens


class GRUSeq2Seq(nn.Module):
    """Embeddings, a GRU encoder, a GRU decoder and an output layer; no attention.

    Args:
        config: the sizes; see :class:`GRUConfig`.

    Attributes:
        src_embed: ``nn.Embedding(V, E)`` for the source (padding row zero).
        tgt_embed: ``nn.Embedding(V, E)`` for the target (padding row zero).
        encoder: ``nn.GRU(E, K, Ly)``, batch first.
        decoder: ``nn.GRU(E + K, K, Ly)`` with ``context_every_step``, else ``nn.GRU(E, K, Ly)``.
        output: ``nn.Linear(2K, V)`` (decoder state and summary) or ``nn.Linear(K, V)``.
    """

    def __init__(self, config: GRUConfig) -> None:
        super().__init__()
        c = config
        if not 0 <= c.pad_id < c.vocab_size:
            raise ValueError(f"pad_id must be in [0, vocab_size = {c.vocab_size}); got {c.pad_id}")
        for name in ("d_model", "hidden_size", "num_layers", "max_len"):
            value = getattr(c, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        self.config = c
        K, extra = c.hidden_size, c.hidden_size if c.context_every_step else 0
        self.src_embed = nn.Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id)
        self.tgt_embed = nn.Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id)
        gru = {"num_layers": c.num_layers, "batch_first": True, "dropout": c.dropout}
        self.encoder = nn.GRU(c.d_model, K, **gru)
        self.decoder = nn.GRU(c.d_model + extra, K, **gru)
        self.output = nn.Linear(K + extra, c.vocab_size)

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """Read the source; keep only the final state of each layer.

        Args:
            src: (N, S) ids, padded on the right with ``pad_id``; every row has a token.

        Returns:
            ``(summary, padding)``: summary (N, Ly, K), each layer's state after the row's
            last real token; padding (N, S), True at padding (unused by the decoder, returned
            for the interface of :func:`~attnbook.models.seq2seq.greedy_decode`).
        """
        _check_tokens(src, "src", self.config.vocab_size)
        padding = src == self.config.pad_id  # (N, S)
        lengths = (~padding).sum(dim=1)  # (N,)
        if (lengths == 0).any():
            row = int((lengths == 0).nonzero()[0, 0])
            raise ValueError(f"src row {row} is all padding; every source needs a token")
        right_padded = torch.arange(src.size(1), device=src.device) < lengths[:, None]  # (N, S)
        if not torch.equal(right_padded, ~padding):
            row = int((right_padded != ~padding).any(dim=1).nonzero()[0, 0])
            raise ValueError(
                f"src must be padded on the right only (pad_id {self.config.pad_id} after the "
                f"tokens); row {row} has padding before a token"
            )
        packed = pack_padded_sequence(
            self.src_embed(src), lengths.cpu(), batch_first=True, enforce_sorted=False
        )  # skips the padding, so the final state is the one after the last real token
        _, final = self.encoder(packed)  # (Ly, N, K)
        return final.transpose(0, 1), padding  # (N, Ly, K), (N, S)

    def _check_summary(self, summary: Tensor) -> None:
        c = self.config
        want = (c.num_layers, c.hidden_size)
        if (
            not isinstance(summary, Tensor)
            or summary.dim() != 3
            or tuple(summary.shape[1:]) != want
        ):
            got = tuple(summary.shape) if isinstance(summary, Tensor) else type(summary).__name__
            raise ValueError(f"summary must be (N, Ly, K) = (N, {want[0]}, {want[1]}); got {got}")

    def _outputs(self, states: Tensor, context: Tensor) -> Tensor:
        """Logits (N, T, V) from decoder states (N, T, K) and the summary (N, K)."""
        if self.config.context_every_step:
            states = torch.cat([states, context[:, None].expand_as(states)], dim=-1)  # (N, T, 2K)
        return self.output(states)

    def _inputs(self, tokens: Tensor, context: Tensor) -> Tensor:
        """Decoder inputs (N, T, E [+ K]) for target tokens (N, T)."""
        x = self.tgt_embed(tokens)  # (N, T, E)
        if self.config.context_every_step:
            x = torch.cat([x, context[:, None].expand(-1, x.size(1), -1)], dim=-1)  # (N, T, E+K)
        return x

    def decode(self, tgt: Tensor, summary: Tensor, memory_padding: Tensor | None = None) -> Tensor:
        """Logits (N, T, V) of the next token after each prefix of ``tgt`` (N, T), all at once.

        ``summary`` (N, Ly, K) comes from :meth:`encode`; ``memory_padding`` is ignored (the
        decoder sees no source position).
        """
        _check_tokens(tgt, "tgt", self.config.vocab_size)
        self._check_summary(summary)
        if summary.size(0) != tgt.size(0):
            raise ValueError(
                f"summary and tgt must have the same batch size; got {summary.size(0)} and "
                f"{tgt.size(0)}"
            )
        context = summary[:, -1]  # (N, K): the last layer's final state
        h0 = summary.transpose(0, 1).contiguous()  # (Ly, N, K)
        states, _ = self.decoder(self._inputs(tgt, context), h0)  # (N, T, K)
        return self._outputs(states, context)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        """Teacher forcing: logits (N, T, V) for source (N, S) and target prefix (N, T)."""
        summary, padding = self.encode(src)
        return self.decode(tgt, summary, padding)

    def start_cache(self, summary: Tensor, memory_padding: Tensor | None = None) -> GRUState:
        """The decoder's state before the first target token: the summary (N, Ly, K)."""
        self._check_summary(summary)
        return GRUState(summary.transpose(0, 1).contiguous(), summary[:, -1])

    def decode_step(self, token: Tensor, state: GRUState) -> tuple[Tensor, GRUState]:
        """The next-token logits (N, V) after one more target token (N,).

        Returns:
            ``(logits, state)``: logits (N, V); the same ``state`` object, updated in place
            and returned for convenience.
        """
        _check_tokens(token, "token", self.config.vocab_size, dims=1)
        if token.size(0) != state.context.size(0):
            raise ValueError(
                f"token must have one id per sequence, (N,) = ({state.context.size(0)},); "
                f"got {tuple(token.shape)}"
            )
        states, state.hidden = self.decoder(
            self._inputs(token[:, None], state.context), state.hidden
        )  # (N, 1, K), (Ly, N, K)
        return self._outputs(states, state.context)[:, 0], state  # (N, V)
