"""A BERT encoder (post-LN, GELU) built from the book's own blocks.

BERT (Devlin et al., 2019) is the original Transformer's encoder with three changes: learned
absolute positions, a "segment" (token type) embedding, and a layer norm right after the
embeddings. Each of its layers is exactly :class:`attnbook.blocks.EncoderBlock` with
``norm_first=False`` and ``activation="gelu"``::

    x = norm1(x + self_attn(x))      # BERT: attention.output.LayerNorm
    x = norm2(x + ff(x))             # BERT: output.LayerNorm

so :class:`BertEncoder` is :class:`attnbook.transformer.Encoder` with an embedding layer in
front, and :func:`load_bert_state` copies a checkpoint written in Hugging Face's ``BertModel``
names into it, one tensor at a time and checking every shape.

Shape legend: N batch, L sequence length, E ``hidden_size``, H ``num_heads``, V ``vocab_size``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnbook.transformer import Encoder

__all__ = ["BertConfig", "BertEmbeddings", "BertEncoder", "load_bert_state"]


@dataclass(frozen=True)
class BertConfig:
    """The hyper-parameters of a BERT encoder (names as in Hugging Face's ``config.json``)."""

    vocab_size: int = 30522  # V, word pieces
    hidden_size: int = 384  # E, the width of the residual stream
    num_layers: int = 6  # encoder blocks
    num_heads: int = 12  # H heads per block, each D = E // H wide
    intermediate_size: int = 1536  # F, the feed-forward hidden size
    max_positions: int = 512  # learned absolute positions, so the longest input
    type_vocab_size: int = 2  # segments ("sentence A" / "sentence B")
    layer_norm_eps: float = 1e-12  # BERT's epsilon, not PyTorch's default 1e-5
    dropout: float = 0.1  # only in training mode; the loaded model is put in eval mode
    pad_token_id: int = 0

    @classmethod
    def from_hf(cls, config: dict) -> BertConfig:
        """Read a Hugging Face BERT ``config.json`` (already parsed); refuse what this encoder lacks."""
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"hidden_act must be 'gelu'; got {config['hidden_act']!r}")
        position = config.get("position_embedding_type", "absolute")
        if position != "absolute":
            raise ValueError(f"position_embedding_type must be 'absolute'; got {position!r}")
        return cls(
            vocab_size=config["vocab_size"],
            hidden_size=config["hidden_size"],
            num_layers=config["num_hidden_layers"],
            num_heads=config["num_attention_heads"],
            intermediate_size=config["intermediate_size"],
            max_positions=config["max_position_embeddings"],
            type_vocab_size=config["type_vocab_size"],
            layer_norm_eps=config["layer_norm_eps"],
            dropout=config.get("hidden_dropout_prob", 0.1),
            pad_token_id=config.get("pad_token_id", 0),
        )


class BertEmbeddings(nn.Module):
    """Word piece + learned position + segment embeddings, then a layer norm and dropout."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        E = config.hidden_size
        self.word = nn.Embedding(config.vocab_size, E, padding_idx=config.pad_token_id)
        self.position = nn.Embedding(config.max_positions, E)
        self.token_type = nn.Embedding(config.type_vocab_size, E)
        self.norm = nn.LayerNorm(E, config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, input_ids: Tensor, token_type_ids: Tensor) -> Tensor:
        """Args: input_ids, token_type_ids (N, L). Returns: (N, L, E)."""
        positions = torch.arange(input_ids.size(1), device=input_ids.device)  # (L,)
        x = self.word(input_ids) + self.position(positions) + self.token_type(token_type_ids)
        return self.dropout(self.norm(x))  # (N, L, E)


class BertEncoder(nn.Module):
    """BERT without its task heads: embeddings, then a post-LN :class:`~attnbook.transformer.Encoder`.

    Args:
        config: the sizes; :meth:`BertConfig.from_hf` reads them from a ``config.json``.

    Attributes:
        embeddings: :class:`BertEmbeddings`.
        encoder: ``config.num_layers`` :class:`~attnbook.blocks.EncoderBlock` (post-LN, GELU).
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = Encoder(
            config.num_layers,
            d_model=config.hidden_size,
            nhead=config.num_heads,
            dim_feedforward=config.intermediate_size,
            dropout=config.dropout,
            activation="gelu",
            layer_norm_eps=config.layer_norm_eps,
            norm_first=False,
        )

    def forward(
        self,
        input_ids: Tensor,
        attention_mask: Tensor | None = None,
        need_weights: bool = False,
        token_type_ids: Tensor | None = None,
        head_mask: Tensor | None = None,
    ) -> tuple[Tensor, list[Tensor] | None]:
        """Encode a batch of token ids.

        Args:
            input_ids: (N, L) integer word-piece ids, ``[CLS] ... [SEP]`` then padding.
            attention_mask: (N, L), Hugging Face's convention (the opposite of PyTorch's
                ``key_padding_mask``): 1 or ``True`` marks a real token, 0 or ``False`` padding.
                ``None`` means no padding.
            need_weights: also return every layer's attention weights.
            token_type_ids: (N, L) segment ids; ``None`` means all zeros (one sentence).
            head_mask: (num_layers, H) or (num_layers, N, H); multiplies each head's output,
                0 switches it off (see :meth:`attnbook.transformer.Encoder.forward`).

        Returns:
            ``(hidden, weights)``: hidden (N, L, E), the last layer's output at every position
            (padding positions included, as in ``BertModel``); weights a list with one
            (N, H, L, L) tensor per layer, or ``None`` if not ``need_weights``.
        """
        self._check_ids(input_ids, "input_ids")
        N, L = input_ids.shape
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        else:
            self._check_ids(token_type_ids, "token_type_ids", (N, L), self.config.type_vocab_size)
        padding = None
        if attention_mask is not None:
            if not isinstance(attention_mask, Tensor) or attention_mask.shape != (N, L):
                shape = getattr(attention_mask, "shape", type(attention_mask).__name__)
                raise ValueError(
                    f"attention_mask must have the shape of input_ids, (N, L) = {(N, L)}; "
                    f"got {tuple(shape) if isinstance(shape, torch.Size) else shape}"
                )
            padding = attention_mask == 0  # (N, L), True = padding, not attended
        x = self.embeddings(input_ids, token_type_ids)  # (N, L, E)
        return self.encoder(
            x, src_key_padding_mask=padding, need_weights=need_weights, head_mask=head_mask
        )

    def _check_ids(self, ids: Tensor, name: str, shape=None, limit: int | None = None) -> None:
        if not isinstance(ids, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(ids).__name__}")
        if ids.dtype.is_floating_point or ids.dtype.is_complex or ids.dtype == torch.bool:
            raise TypeError(f"{name} must hold integer ids; got dtype {ids.dtype}")
        if ids.dim() != 2 or (shape is not None and tuple(ids.shape) != shape):
            want = "(N, L)" if shape is None else f"(N, L) = {shape}"
            raise ValueError(f"{name} must have shape {want}; got {tuple(ids.shape)}")
        if ids.size(1) > self.config.max_positions:
            raise ValueError(
                f"{name} has length {ids.size(1)}; this model knows positions up to "
                f"{self.config.max_positions}"
            )
        limit = self.config.vocab_size if limit is None else limit
        if ids.numel() and (ids.min() < 0 or ids.max() >= limit):
            raise ValueError(
                f"{name} must lie in [0, {limit}); got values from {int(ids.min())} to "
                f"{int(ids.max())}"
            )


def _layer_names(i: int) -> dict[str, str]:
    """attnbook name -> Hugging Face BertModel name, for block ``i``."""
    hf, ours = f"encoder.layer.{i}.", f"encoder.layers.{i}."
    pairs = {
        "self_attn.q_proj": "attention.self.query",
        "self_attn.k_proj": "attention.self.key",
        "self_attn.v_proj": "attention.self.value",
        "self_attn.out_proj": "attention.output.dense",
        "norm1": "attention.output.LayerNorm",
        "ff.linear1": "intermediate.dense",
        "ff.linear2": "output.dense",
        "norm2": "output.LayerNorm",
    }
    return {f"{ours}{a}.{p}": f"{hf}{b}.{p}" for a, b in pairs.items() for p in ("weight", "bias")}


def load_bert_state(model: BertEncoder, state: dict[str, Tensor]) -> None:
    """Copy a Hugging Face ``BertModel`` state dict into ``model``, in place.

    Every parameter of ``model`` must be found with the same shape; the checkpoint's extras
    (the pooler, ``position_ids``) are ignored.

    Args:
        model: the encoder to fill.
        state: tensors named as in ``BertModel`` (an optional ``"bert."`` prefix is removed).

    Raises:
        ValueError: naming the first missing tensor or the first shape that differs.
    """
    state = {k.removeprefix("bert."): v for k, v in state.items()}
    names = {
        "embeddings.word.weight": "embeddings.word_embeddings.weight",
        "embeddings.position.weight": "embeddings.position_embeddings.weight",
        "embeddings.token_type.weight": "embeddings.token_type_embeddings.weight",
        "embeddings.norm.weight": "embeddings.LayerNorm.weight",
        "embeddings.norm.bias": "embeddings.LayerNorm.bias",
    }
    for i in range(len(model.encoder.layers)):
        names.update(_layer_names(i))
    params = dict(model.named_parameters())
    if set(params) != set(names):
        raise ValueError(f"unexpected parameters in model: {sorted(set(params) ^ set(names))}")
    with torch.no_grad():
        for ours, theirs in names.items():
            if theirs not in state:
                raise ValueError(f"the checkpoint has no tensor {theirs!r} (for {ours})")
            source, target = state[theirs], params[ours]
            if source.shape != target.shape:
                raise ValueError(
                    f"{theirs} has shape {tuple(source.shape)}; {ours} needs {tuple(target.shape)}"
                )
            target.copy_(source)
