"""Transformer stacks: N encoder or decoder blocks, then an optional final layer norm.

:class:`~attnbook.transformer.Encoder` and :class:`Decoder` are counterparts of :class:`torch.nn.TransformerEncoder`
and :class:`torch.nn.TransformerDecoder` (batch first), built from :mod:`attnbook.blocks`; like
the blocks, ``forward`` returns ``(output, weights_or_None)``, here with one entry per layer.

Shape legend: N batch, L target length, S source (memory) length, E ``d_model``, H ``nhead``.
"""

from __future__ import annotations

from torch import Tensor, nn

from attnbook.blocks import DecoderBlock, DecoderWeights, EncoderBlock

__all__ = ["Encoder", "Decoder"]


class _Stack(nn.Module):
    """N blocks of one kind, each freshly initialised, and an optional final layer norm."""

    block_class: type[EncoderBlock] | type[DecoderBlock]

    def __init__(self, num_layers: int, final_norm: bool | None, **block_args) -> None:
        super().__init__()
        if isinstance(num_layers, bool) or not (isinstance(num_layers, int) and num_layers > 0):
            raise ValueError(f"num_layers must be a positive integer; got {num_layers!r}")
        # Unlike torch.nn.TransformerEncoder, which deep-copies one layer (so every layer starts
        # with the same weights), each block here gets its own random initialisation.
        self.layers = nn.ModuleList(self.block_class(**block_args) for _ in range(num_layers))
        if final_norm is None:
            final_norm = block_args.get("norm_first", False)
        self.norm: nn.LayerNorm | None = None
        if final_norm:
            factory = {"device": block_args.get("device"), "dtype": block_args.get("dtype")}
            self.norm = nn.LayerNorm(
                block_args["d_model"],
                block_args.get("layer_norm_eps", 1e-5),
                bias=block_args.get("bias", True),
                **factory,
            )


class Encoder(_Stack):
    """A stack of ``num_layers`` :class:`~attnbook.blocks.EncoderBlock`, then an optional final layer norm.

    Args:
        num_layers: the number of blocks.
        final_norm: add a layer norm after the last block; ``None`` (default) means "if
            ``norm_first``": a pre-LN stack needs it, since its residual stream is never
            normalised otherwise.
        **block_args: the arguments of :class:`~attnbook.blocks.EncoderBlock` (``d_model``, ``nhead``, ...).
    """

    block_class = EncoderBlock

    def __init__(self, num_layers: int, *, final_norm: bool | None = None, **block_args) -> None:
        super().__init__(num_layers, final_norm, **block_args)

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
        need_weights: bool = False,
        head_mask: Tensor | None = None,
    ) -> tuple[Tensor, list[Tensor] | None]:
        """Run every block; arguments as :meth:`attnbook.blocks.EncoderBlock.forward` (``mask`` = ``src_mask``).

        ``head_mask`` is (num_layers, H) or (num_layers, N, H): row ``i`` goes to block ``i``.

        Returns:
            ``(output, weights)``: output (N, L, E); weights a list with one (N, H, L, L)
            tensor per layer (``weights[layer][n, head]``), or ``None`` if not ``need_weights``.
        """
        if head_mask is not None and (
            not isinstance(head_mask, Tensor)
            or head_mask.dim() not in (2, 3)
            or head_mask.size(0) != len(self.layers)
        ):
            shape = (
                tuple(head_mask.shape)
                if isinstance(head_mask, Tensor)
                else type(head_mask).__name__
            )
            raise ValueError(
                f"head_mask must have shape (num_layers, H) or (num_layers, N, H) with "
                f"num_layers = {len(self.layers)}; got {shape}"
            )
        all_weights: list[Tensor] = []
        x = src
        for i, layer in enumerate(self.layers):
            layer_mask = None if head_mask is None else head_mask[i]  # (H,) or (N, H)
            x, weights = layer(x, mask, src_key_padding_mask, is_causal, need_weights, layer_mask)
            if need_weights:
                all_weights.append(weights)
        if self.norm is not None:
            x = self.norm(x)
        return x, (all_weights if need_weights else None)


class Decoder(_Stack):
    """A stack of ``num_layers`` :class:`~attnbook.blocks.DecoderBlock`, then an optional final layer norm.

    Args: as :class:`~attnbook.transformer.Encoder`, with the arguments of :class:`~attnbook.blocks.DecoderBlock`.
    """

    block_class = DecoderBlock

    def __init__(self, num_layers: int, *, final_norm: bool | None = None, **block_args) -> None:
        super().__init__(num_layers, final_norm, **block_args)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
        need_weights: bool = False,
    ) -> tuple[Tensor, list[DecoderWeights] | None]:
        """Run every block; arguments as :meth:`attnbook.blocks.DecoderBlock.forward`.

        Returns:
            ``(output, weights)``: output (N, L, E); weights a list with one
            :class:`~attnbook.blocks.DecoderWeights` per layer, or ``None`` if not ``need_weights``.
        """
        all_weights: list[DecoderWeights] = []
        x = tgt
        for layer in self.layers:
            x, weights = layer(
                x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                memory_key_padding_mask, tgt_is_causal, memory_is_causal, need_weights,
            )  # fmt: skip
            if need_weights:
                all_weights.append(weights)
        if self.norm is not None:
            x = self.norm(x)
        return x, (all_weights if need_weights else None)
