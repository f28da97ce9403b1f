r"""Positions for attention: sinusoidal encodings and learned position embeddings.

Self-attention treats its input as a set: permute the tokens and the outputs are permuted the
same way, nothing else changes. A Transformer therefore adds a vector that depends on the
position to every token embedding before the first block. Two common choices:

* **sinusoidal** (Vaswani et al., 2017), fixed, no parameters:

  .. math::

      PE_{(pos, 2i)} = \sin\!\left(pos / b^{2i/E}\right), \qquad
      PE_{(pos, 2i+1)} = \cos\!\left(pos / b^{2i/E}\right), \qquad b = 10000;

* **learned** (BERT, GPT-2): one trainable vector per position, up to a maximum length.

Two further schemes act inside attention instead, on relative positions, and are the options
``positions="rotary"`` and ``positions="alibi"`` of ``attnbook.mha.MultiHeadAttention``:

* **rotary** (Su et al., 2021; :func:`rotate`): each query and key is turned by an angle
  proportional to its position, so their dot product depends only on the distance;
* **ALiBi** (Press et al., 2022; :func:`alibi_slopes`, :func:`alibi_bias`): each head adds
  ``-slope_h · |i - j|`` to its scores.

Shape legend: N batch, L sequence (query) length, S key length, E embedding size
(``embed_dim``), V vocabulary size, H heads, D head size.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor, nn

__all__ = [
    "sinusoidal_encoding",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding",
    "PositionalEncoding",
    "TransformerEmbedding",
    "rotate",
    "alibi_slopes",
    "alibi_bias",
]


def _check_positive_int(**values: int) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")


def sinusoidal_encoding(
    length: int,
    embed_dim: int,
    base: float = 10000.0,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> Tensor:
    """The sinusoidal position table of Vaswani et al. (2017), section 3.5.

    Column ``2i`` is ``sin(pos / base**(2i / E))`` and column ``2i + 1`` the cosine of the same
    angle: pair ``i`` turns at the frequency ``base**(-2i / E)``, from one radian per position
    (``i = 0``) down to nearly ``1 / base``.

    Args:
        length: L, the number of positions (0 .. L-1).
        embed_dim: E; must be even, since sines and cosines come in pairs.
        base: the wavelength scale (10000 in the paper); must be > 1.
        device, dtype: of the returned table (default float32).

    Returns:
        (L, E) table; row ``pos`` is the encoding of position ``pos``.

    Raises:
        ValueError: ``length`` or ``embed_dim`` not a positive integer, odd ``embed_dim``, or
            ``base <= 1``.
    """
    _check_positive_int(length=length, embed_dim=embed_dim)
    if embed_dim % 2 != 0:
        raise ValueError(
            f"embed_dim must be even (sines and cosines come in pairs); got embed_dim={embed_dim}"
        )
    if not base > 1.0:
        raise ValueError(f"base must be > 1; got {base}")
    dtype = torch.get_default_dtype() if dtype is None else dtype
    # Angles in float64, so that large positions keep their precision; cast at the end.
    position = torch.arange(length, dtype=torch.float64, device=device)[:, None]  # (L, 1)
    two_i = torch.arange(0, embed_dim, 2, dtype=torch.float64, device=device)  # (E/2,)
    frequency = torch.exp(-math.log(base) * two_i / embed_dim)  # (E/2,) base**(-2i/E)
    angle = position * frequency  # (L, E/2)
    table = torch.empty(length, embed_dim, dtype=torch.float64, device=device)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.to(dtype)


def _check_sequence(x: Tensor, embed_dim: int, max_len: int, name: str = "x") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    if x.dim() != 3 or x.size(-1) != embed_dim:
        raise ValueError(
            f"{name} must have shape (N, L, embed_dim) = (N, L, {embed_dim}); got {tuple(x.shape)}"
        )
    if x.size(1) > max_len:
        raise ValueError(
            f"{name} has length L = {x.size(1)} (dim 1), more than max_len = {max_len}; "
            f"got {tuple(x.shape)}"
        )


class SinusoidalPositionalEncoding(nn.Module):
    """The fixed sinusoidal table, kept as a (non-trainable, non-saved) buffer.

    Args:
        embed_dim: E (even).
        max_len: the longest sequence it will be asked for.
        base: see :func:`sinusoidal_encoding`.

    Attributes:
        table: (max_len, E) buffer.
    """

    table: Tensor

    def __init__(self, embed_dim: int, max_len: int = 512, base: float = 10000.0) -> None:
        super().__init__()
        self.embed_dim, self.max_len, self.base = embed_dim, max_len, base
        # Not persistent: the table is recomputed from the formula, never read from a checkpoint.
        self.register_buffer(
            "table", sinusoidal_encoding(max_len, embed_dim, base), persistent=False
        )

    def forward(self, length: int) -> Tensor:
        """The encodings of positions 0 .. length-1, shape (L, E)."""
        _check_length(length, self.max_len)
        return self.table[:length]


class LearnedPositionalEmbedding(nn.Module):
    """One trainable vector per position, as in BERT and GPT-2.

    Initialised from N(0, 0.02^2), as in BERT; it knows nothing about distance until trained,
    and it cannot encode a position beyond ``max_len - 1``.

    Args:
        embed_dim: E.
        max_len: the number of positions that get a vector.

    Attributes:
        table: (max_len, E) parameter.
    """

    def __init__(self, embed_dim: int, max_len: int = 512) -> None:
        super().__init__()
        _check_positive_int(embed_dim=embed_dim, max_len=max_len)
        self.embed_dim, self.max_len = embed_dim, max_len
        self.table = nn.Parameter(torch.empty(max_len, embed_dim))
        nn.init.normal_(self.table, std=0.02)

    def forward(self, length: int) -> Tensor:
        """The embeddings of positions 0 .. length-1, shape (L, E)."""
        _check_length(length, self.max_len)
        return self.table[:length]


def _check_length(length: int, max_len: int) -> None:
    if isinstance(length, bool) or not isinstance(length, int) or not 0 < length <= max_len:
        raise ValueError(f"length must be an integer in [1, max_len = {max_len}]; got {length!r}")


class PositionalEncoding(nn.Module):
    """Add positions to a batch of embeddings, then dropout: ``dropout(x + P[:L])``.

    Args:
        embed_dim: E.
        max_len: the longest sequence accepted.
        kind: ``"sinusoidal"`` (fixed) or ``"learned"`` (trainable).
        dropout: dropout probability on the sum (0.1 in the original Transformer).
        base: the sinusoidal wavelength scale; ignored for ``"learned"``.

    Attributes:
        positions: a :class:`SinusoidalPositionalEncoding` or :class:`LearnedPositionalEmbedding`.
    """

    def __init__(
        self,
        embed_dim: int,
        max_len: int = 512,
        kind: Literal["sinusoidal", "learned"] = "sinusoidal",
        dropout: float = 0.0,
        base: float = 10000.0,
    ) -> None:
        super().__init__()
        if kind not in ("sinusoidal", "learned"):
            raise ValueError(f'kind must be "sinusoidal" or "learned"; got {kind!r}')
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); got {dropout}")
        self.kind = kind
        self.positions: nn.Module
        if kind == "sinusoidal":
            self.positions = SinusoidalPositionalEncoding(embed_dim, max_len, base)
        else:
            self.positions = LearnedPositionalEmbedding(embed_dim, max_len)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """Args: x (N, L, E), the embeddings of positions ``start`` .. ``start + L - 1``
        (``start > 0`` when decoding one position at a time). Returns: (N, L, E)."""
        positions = self.positions
        _check_sequence(x, positions.embed_dim, positions.max_len)
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ValueError(f"start must be a non-negative integer; got {start!r}")
        L = x.size(1)
        if start + L > positions.max_len:
            raise ValueError(
                f"positions start .. start + L - 1 = {start} .. {start + L - 1} do not fit "
                f"max_len = {positions.max_len}"
            )
        table = positions(start + L)[start:].to(x.dtype)  # (L, E)
        return self.dropout(x + table)  # (N, L, E), the table broadcast over the batch


class TransformerEmbedding(nn.Module):
    """Token ids to the input of the first block: ``dropout(embed(tokens) * sqrt(E) + P[:L])``.

    The factor sqrt(E) is the paper's (section 3.4), which does not say why. A common reading:
    its embeddings are shared with the output layer and start with entries of size about
    1/sqrt(E); the factor brings them to the scale of the sinusoidal entries, which lie in
    [-1, 1]. With :class:`torch.nn.Embedding`'s default N(0, 1) start it makes the tokens
    dominate the positions instead; pass ``scale=False`` to add them unscaled, as BERT and
    GPT-2 do.

    Args:
        vocab_size: V.
        embed_dim: E.
        max_len: the longest sequence accepted.
        kind: ``"sinusoidal"`` or ``"learned"`` positions.
        dropout: dropout probability on the sum.
        scale: multiply the token embeddings by sqrt(E).
        padding_idx: a token id whose embedding is zero and receives no gradient.

    Attributes:
        tokens: the :class:`torch.nn.Embedding` (V, E).
        positions: the :class:`PositionalEncoding`.
    """

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        max_len: int = 512,
        kind: Literal["sinusoidal", "learned"] = "sinusoidal",
        dropout: float = 0.0,
        scale: bool = True,
        padding_idx: int | None = None,
    ) -> None:
        super().__init__()
        _check_positive_int(vocab_size=vocab_size, embed_dim=embed_dim)
        self.scale = math.sqrt(embed_dim) if scale else 1.0
        self.tokens = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx)
        self.positions = PositionalEncoding(embed_dim, max_len, kind, dropout)

    def forward(self, tokens: Tensor, start: int = 0) -> Tensor:
        """Args: tokens (N, L) integer ids at positions ``start`` .. ``start + L - 1``.
        Returns: (N, L, E)."""
        if not isinstance(tokens, Tensor):
            raise TypeError(f"tokens must be a torch.Tensor; got {type(tokens).__name__}")
        if tokens.dim() != 2 or tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
            raise ValueError(
                f"tokens must be integer ids of shape (N, L); got shape {tuple(tokens.shape)} "
                f"and dtype {tokens.dtype}"
            )
        return self.positions(self.tokens(tokens) * self.scale, start)  # (N, L, E)


def rotate(x: Tensor, base: float = 10000.0, start: int = 0, *, interleaved: bool = True) -> Tensor:
    """Rotary position embedding: turn feature pair ``i`` of position ``p`` by ``p·θ_i``.

    ``θ_i = base**(-2i/D)``, the frequencies of the sinusoidal table
    (:func:`attnbook.positional.sinusoidal_encoding`). Because a rotation by ``p·θ`` followed by
    the dot product with a key rotated by ``s·θ`` depends only on ``p - s``, the scores of
    rotated queries and keys depend on positions only through their distance.

    Two conventions pair the features differently; they are the same rotation up to a fixed
    permutation of the D features, which a trained projection absorbs:

    * ``interleaved=True`` (the book's, and the paper's): pair ``i`` is features ``(2i, 2i+1)``;
    * ``interleaved=False`` (Llama and Hugging Face ``transformers``, "rotate half"): pair
      ``i`` is features ``(i, i + D/2)``.

    Args:
        x: (..., L, D) queries or keys, D even.
        base: the wavelength scale.
        start: the position of the first row (for decoding one position at a time).
        interleaved: which features form a pair (see above).

    Returns:
        (..., L, D), the rotated features (same dtype).
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor; got {type(x).__name__}")
    if x.dim() < 2 or x.shape[-1] % 2:
        raise ValueError(f"rotary positions need x (..., L, D) with D even; got {tuple(x.shape)}")
    L, D = x.shape[-2], x.shape[-1]
    # Angles in float64, so that large positions keep their precision; cast at the end.
    position = torch.arange(start, start + L, dtype=torch.float64, device=x.device)
    theta = base ** (-torch.arange(0, D, 2, dtype=torch.float64, device=x.device) / D)
    angle = position[:, None] * theta  # (L, D/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    if interleaved:
        even, odd = x[..., 0::2], x[..., 1::2]  # (..., L, D/2) each
        turned = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
        return turned.flatten(-2)  # (..., L, D), pairs interleaved again
    first, second = x[..., : D // 2], x[..., D // 2 :]  # (..., L, D/2) each
    return torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)


def alibi_slopes(
    num_heads: int,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> Tensor:
    """ALiBi's slope per head (Press et al. 2022), as BLOOM and ``transformers`` compute them.

    For H a power of two, the geometric sequence ``2**(-8h/H)``, h = 1..H. Otherwise the slopes
    of the largest power of two P < H, followed by every other slope of 2P (the odd h), until
    there are H: the paper's rule, which keeps the slopes between 2**-8 and 1/2 and distinct.

    Args:
        num_heads: H.
        device, dtype: of the returned slopes (default float32).

    Returns:
        (H,) slopes, steepest first.
    """
    _check_positive_int(num_heads=num_heads)

    def geometric(n: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]

    power = 2 ** (num_heads.bit_length() - 1)  # the largest power of two <= H
    slopes = geometric(power) + geometric(2 * power)[0::2][: num_heads - power]
    return torch.tensor(slopes, device=device, dtype=dtype or torch.float32)


def alibi_bias(length: int, slopes: Tensor, *, key_length: int | None = None) -> Tensor:
    """ALiBi's additive attention bias ``-slope_h · |i - j|`` for each head h.

    Args:
        length: L, the number of queries (and of keys unless ``key_length`` is given).
        slopes: (H,) one non-negative slope per head.
        key_length: S, the number of keys; query i and key j sit at positions i and j.

    Returns:
        (H, L, S) tensor of the slopes' dtype, to be added to the attention scores.
    """
    position = torch.arange(length, device=slopes.device)
    keys = position if key_length is None else torch.arange(key_length, device=slopes.device)
    distance = (keys[None, :] - position[:, None]).abs().to(slopes.dtype)  # (L, S)
    return -slopes[:, None, None] * distance  # (H, L, S)
