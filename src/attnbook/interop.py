"""Weights both ways between attnbook's modules and their PyTorch twins.

=========================================  =========================================
attnbook                                   PyTorch (``batch_first=True``)
=========================================  =========================================
:class:`~attnbook.mha.MultiHeadAttention`  :class:`torch.nn.MultiheadAttention`
:class:`~attnbook.blocks.EncoderBlock`     :class:`torch.nn.TransformerEncoderLayer`
:class:`~attnbook.blocks.DecoderBlock`     :class:`torch.nn.TransformerDecoderLayer`
:class:`~attnbook.transformer.Encoder`     :class:`torch.nn.TransformerEncoder`
:class:`~attnbook.transformer.Decoder`     :class:`torch.nn.TransformerDecoder`
=========================================  =========================================

:func:`from_torch` and :func:`to_torch` copy the weights, the sizes, the dtype, the device and
the train/eval mode, so that the two modules compute the same function; the tests check this
against PyTorch for every pair.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attnbook.blocks import DecoderBlock, EncoderBlock
from attnbook.mha import MultiHeadAttention
from attnbook.transformer import Decoder, Encoder

__all__ = ["from_torch", "to_torch"]


def from_torch(module: nn.Module) -> nn.Module:
    """The attnbook twin of a PyTorch module (see the table above), with its weights.

    Raises:
        TypeError: if ``module`` has no attnbook twin.
        ValueError: if it is not batch first, or uses an option attnbook does not have
            (``add_bias_kv``, ``add_zero_attn``, an activation other than relu or gelu).
    """
    if isinstance(module, nn.MultiheadAttention):
        return _mha_from_torch(module)
    if isinstance(module, (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)):
        return _block_from_torch(module)
    if isinstance(module, (nn.TransformerEncoder, nn.TransformerDecoder)):
        return _stack_from_torch(module)
    raise TypeError(
        f"from_torch converts nn.MultiheadAttention and the nn.Transformer* layers and "
        f"stacks; got {type(module).__name__}"
    )


def to_torch(module: nn.Module) -> nn.Module:
    """The PyTorch twin of an attnbook module (see the table above), with its weights.

    Raises:
        TypeError: if ``module`` has no PyTorch twin.
    """
    if isinstance(module, MultiHeadAttention):
        return _mha_to_torch(module)
    if isinstance(module, (EncoderBlock, DecoderBlock)):
        return _block_to_torch(module)
    if isinstance(module, (Encoder, Decoder)):
        return _stack_to_torch(module)
    raise TypeError(
        f"to_torch converts MultiHeadAttention and the attnbook blocks and stacks; "
        f"got {type(module).__name__}"
    )


def _mha_from_torch(module: nn.MultiheadAttention) -> MultiHeadAttention:
    if not module.batch_first:
        raise ValueError(
            "from_torch needs a module built with batch_first=True; got batch_first=False"
        )
    if module.bias_k is not None or module.bias_v is not None:
        raise ValueError("from_torch does not support add_bias_kv=True")
    if module.add_zero_attn:
        raise ValueError("from_torch does not support add_zero_attn=True")
    reference = module.out_proj.weight
    ours = MultiHeadAttention(
        module.embed_dim,
        module.num_heads,
        dropout=module.dropout,
        bias=module.in_proj_bias is not None,
        kdim=module.kdim,
        vdim=module.vdim,
        device=reference.device,
        dtype=reference.dtype,
    )
    projections = (ours.q_proj, ours.k_proj, ours.v_proj)
    with torch.no_grad():
        if module._qkv_same_embed_dim:
            weights = module.in_proj_weight.chunk(3)
        else:
            weights = (module.q_proj_weight, module.k_proj_weight, module.v_proj_weight)
        for proj, weight in zip(projections, weights):
            proj.weight.copy_(weight)
        if module.in_proj_bias is not None:
            for proj, bias in zip(projections, module.in_proj_bias.chunk(3)):
                proj.bias.copy_(bias)
        ours.out_proj.weight.copy_(module.out_proj.weight)
        if module.out_proj.bias is not None:
            ours.out_proj.bias.copy_(module.out_proj.bias)
    return ours.train(module.training)


def _mha_to_torch(ours: MultiHeadAttention) -> nn.MultiheadAttention:
    options = {
        "num_kv_heads": ours.num_kv_heads != ours.num_heads,
        "positions": ours.positions != "none",
        "window": ours.window is not None,
        "qk_norm": ours.q_norm is not None,
        "scale": ours.scale is not None,
        "scale_first": not ours.scale_first,
    }
    used = [name for name, on in options.items() if on]
    if used:
        raise ValueError(
            f"to_torch converts plain multi-head attention; this one sets {used}, which "
            "torch.nn.MultiheadAttention does not have"
        )
    reference = ours.out_proj.weight
    bias = ours.out_proj.bias is not None
    module = nn.MultiheadAttention(
        ours.embed_dim,
        ours.num_heads,
        dropout=ours.dropout,
        bias=bias,
        kdim=ours.kdim,
        vdim=ours.vdim,
        batch_first=True,
        device=reference.device,
        dtype=reference.dtype,
    )
    projections = (ours.q_proj, ours.k_proj, ours.v_proj)
    with torch.no_grad():
        if module._qkv_same_embed_dim:
            module.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))
        else:
            module.q_proj_weight.copy_(ours.q_proj.weight)
            module.k_proj_weight.copy_(ours.k_proj.weight)
            module.v_proj_weight.copy_(ours.v_proj.weight)
        if bias:
            module.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))
            module.out_proj.bias.copy_(ours.out_proj.bias)
        module.out_proj.weight.copy_(ours.out_proj.weight)
    return module.train(ours.training)


def _block_config(layer: nn.Module) -> dict:
    """The constructor arguments of an attnbook block for a PyTorch Transformer layer."""
    if not layer.self_attn.batch_first:
        raise ValueError(
            "from_torch needs a layer built with batch_first=True; got batch_first=False"
        )
    act = layer.activation
    if act is F.relu or isinstance(act, nn.ReLU):
        activation = "relu"
    elif (act is F.gelu) or (isinstance(act, nn.GELU) and act.approximate == "none"):
        activation = "gelu"
    else:
        raise ValueError(f"from_torch supports the activations relu and gelu; got {act!r}")
    return {
        "d_model": layer.self_attn.embed_dim,
        "nhead": layer.self_attn.num_heads,
        "dim_feedforward": layer.linear1.out_features,
        "dropout": layer.dropout.p,
        "activation": activation,
        "layer_norm_eps": layer.norm1.eps,
        "norm_first": layer.norm_first,
        "bias": layer.linear1.bias is not None,
        "device": layer.linear1.weight.device,
        "dtype": layer.linear1.weight.dtype,
    }


def _norms(block: EncoderBlock | DecoderBlock) -> list[str]:
    # norm{i} belongs to sublayer i, with the same names as in PyTorch.
    return [name for name, _ in block.named_children() if name.startswith("norm")]


def _block_from_torch(
    layer: nn.TransformerEncoderLayer | nn.TransformerDecoderLayer,
) -> EncoderBlock | DecoderBlock:
    decoder = isinstance(layer, nn.TransformerDecoderLayer)
    ours = (DecoderBlock if decoder else EncoderBlock)(**_block_config(layer))
    ours.self_attn = _mha_from_torch(layer.self_attn)
    if decoder:
        ours.cross_attn = _mha_from_torch(layer.multihead_attn)
    ours.ff.linear1.load_state_dict(layer.linear1.state_dict())
    ours.ff.linear2.load_state_dict(layer.linear2.state_dict())
    for name in _norms(ours):
        getattr(ours, name).load_state_dict(getattr(layer, name).state_dict())
    return ours.train(layer.training)


def _block_to_torch(
    ours: EncoderBlock | DecoderBlock,
) -> nn.TransformerEncoderLayer | nn.TransformerDecoderLayer:
    decoder = isinstance(ours, DecoderBlock)
    weight = ours.norm1.weight
    config = {
        "d_model": ours.d_model,
        "nhead": ours.nhead,
        "dim_feedforward": ours.ff.linear1.out_features,
        "dropout": ours.ff.dropout.p,
        "activation": ours.ff.activation,
        "layer_norm_eps": ours.norm1.eps,
        "norm_first": ours.norm_first,
        "bias": ours.ff.linear1.bias is not None,
    }
    kind = nn.TransformerDecoderLayer if decoder else nn.TransformerEncoderLayer
    layer = kind(**config, batch_first=True, device=weight.device, dtype=weight.dtype)
    layer.self_attn.load_state_dict(_mha_to_torch(ours.self_attn).state_dict())
    if decoder:
        layer.multihead_attn.load_state_dict(_mha_to_torch(ours.cross_attn).state_dict())
    layer.linear1.load_state_dict(ours.ff.linear1.state_dict())
    layer.linear2.load_state_dict(ours.ff.linear2.state_dict())
    for name in _norms(ours):
        getattr(layer, name).load_state_dict(getattr(ours, name).state_dict())
    return layer.train(ours.training)


def _stack_from_torch(module: nn.TransformerEncoder | nn.TransformerDecoder) -> Encoder | Decoder:
    kind = Decoder if isinstance(module, nn.TransformerDecoder) else Encoder
    ours = kind(
        len(module.layers), final_norm=module.norm is not None, **_block_config(module.layers[0])
    )
    ours.layers = nn.ModuleList(_block_from_torch(layer) for layer in module.layers)
    if module.norm is not None:
        ours.norm.load_state_dict(module.norm.state_dict())
    return ours.train(module.training)


def _stack_to_torch(ours: Encoder | Decoder) -> nn.TransformerEncoder | nn.TransformerDecoder:
    layers = [_block_to_torch(block) for block in ours.layers]
    norm = None
    if ours.norm is not None:
        weight = ours.norm.weight
        norm = nn.LayerNorm(
            ours.norm.normalized_shape,
            ours.norm.eps,
            bias=ours.norm.bias is not None,
            device=weight.device,
            dtype=weight.dtype,
        )
        norm.load_state_dict(ours.norm.state_dict())
    if isinstance(ours, Decoder):
        stack = nn.TransformerDecoder(layers[0], num_layers=len(layers), norm=norm)
    else:
        stack = nn.TransformerEncoder(
            layers[0], num_layers=len(layers), norm=norm, enable_nested_tensor=False
        )
    stack.layers = nn.ModuleList(layers)  # each layer its own weights, as in ours
    return stack.train(ours.training)
