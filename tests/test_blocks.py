"""Specification of attnbook.transformer against torch.nn.TransformerEncoderLayer / DecoderLayer.

About PyTorch's inference fast path (PyTorch 2.13, read from torch/nn/modules/transformer.py and
checked here): ``nn.TransformerEncoderLayer`` in eval mode calls the fused
``torch._transformer_encoder_layer_fwd`` unless grad is enabled and an input or parameter
requires grad (and a few other conditions: odd nhead, hooks, autocast, ...). For a single layer
the fast path still computes every position, padded ones included, and agrees with the slow path
to ~4e-7. ``nn.TransformerEncoder`` (the stack, ``enable_nested_tensor=True`` by default) goes
further: under ``torch.no_grad()`` in eval mode with a ``src_key_padding_mask`` it packs the batch
into a nested tensor and returns **zeros at padded positions**. So the stack is compared only at
non-padded positions when the fast path is on; everywhere else the tests run with grad enabled
(parameters require grad), which keeps PyTorch on its plain, documented path.
``nn.TransformerDecoderLayer`` has no fast path.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import Tensor, nn

from attnbook import Decoder, DecoderBlock, Encoder, EncoderBlock
from attnbook.interop import from_torch, to_torch
from attnbook.masks import causal_mask

TOL = {"rtol": 1e-5, "atol": 1e-5}
GRAD_TOL = {"rtol": 1e-4, "atol": 1e-5}
E, H, FF = 16, 4, 24

# PyTorch warns when attn_mask and key_padding_mask have different dtypes; we test that case.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Support for mismatched", "ignore:The PyTorch API of nested tensors"
)


def randomise(module: nn.Module) -> None:
    """Make biases and layer-norm weights matter (PyTorch starts them at 0 and 1)."""
    with torch.no_grad():
        for p in module.parameters():
            if p.dim() == 1:
                p.normal_(std=0.5)
                if p.numel() == E and torch.all(p != 0):
                    p.add_(1.0)


def encoder_pair(norm_first: bool, activation: str = "relu", seed: int = 0, **kwargs):
    torch.manual_seed(seed)
    theirs = nn.TransformerEncoderLayer(
        E, H, FF, dropout=0.1, activation=activation, batch_first=True,
        norm_first=norm_first, **kwargs,
    ).eval()  # fmt: skip
    randomise(theirs)
    return from_torch(theirs), theirs


def decoder_pair(norm_first: bool, activation: str = "relu", seed: int = 0):
    torch.manual_seed(seed)
    theirs = nn.TransformerDecoderLayer(
        E, H, FF, dropout=0.1, activation=activation, batch_first=True, norm_first=norm_first
    ).eval()
    randomise(theirs)
    return from_torch(theirs), theirs


def torch_causal(L: int) -> Tensor:
    """PyTorch's convention: bool True = NOT allowed."""
    return ~causal_mask(L)


def padding(N: int, S: int, seed: int) -> Tensor:
    """A bool key padding mask (True = padding); position 0 is never padding."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, S + 1, (N,), generator=g)
    return torch.arange(S)[None, :] >= lengths[:, None]  # (N, S)


# Mask cases for self-attention over length L with batch N: (our kwargs, PyTorch's kwargs).
def encoder_mask_cases(N: int, L: int) -> dict[str, tuple[dict, dict]]:
    g = torch.Generator().manual_seed(1)
    float_mask = torch.randn(L, L, generator=g)
    per_head = torch.rand(N * H, L, L, generator=g) < 0.3
    per_head[..., 0] = False
    pad = padding(N, L, seed=2)
    causal = torch_causal(L)
    return {
        "none": ({}, {}),
        "is_causal alone (PyTorch needs the mask)": (
            {"is_causal": True},
            {"src_mask": causal, "is_causal": True},
        ),
        "causal bool mask": ({"src_mask": causal}, {"src_mask": causal}),
        "float mask": ({"src_mask": float_mask}, {"src_mask": float_mask}),
        "per-head bool mask": ({"src_mask": per_head}, {"src_mask": per_head}),
        "key padding": ({"src_key_padding_mask": pad}, {"src_key_padding_mask": pad}),
        "causal and key padding": (
            {"src_mask": causal, "src_key_padding_mask": pad, "is_causal": True},
            {"src_mask": causal, "src_key_padding_mask": pad, "is_causal": True},
        ),
    }


ENCODER_CASES = list(encoder_mask_cases(3, 6))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("case", ENCODER_CASES)
@pytest.mark.parametrize("need_weights", [False, True])
def test_encoder_block_matches_torch(norm_first: bool, case: str, need_weights: bool) -> None:
    ours, theirs = encoder_pair(norm_first)
    x = torch.randn(3, 6, E)
    our_kwargs, their_kwargs = encoder_mask_cases(3, 6)[case]
    output, _ = ours(x, **our_kwargs, need_weights=need_weights)
    torch.testing.assert_close(output, theirs(x, **their_kwargs), **TOL)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_block_matches_torch_with_gelu_and_without_bias(norm_first: bool) -> None:
    for activation, bias in [("gelu", True), ("relu", False)]:
        ours, theirs = encoder_pair(norm_first, activation, bias=bias)
        x = torch.randn(2, 5, E)
        torch.testing.assert_close(ours(x)[0], theirs(x), **TOL)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_block_matches_torch_fast_path_at_every_position(norm_first: bool) -> None:
    ours, theirs = encoder_pair(norm_first)
    x = torch.randn(3, 6, E)
    pad = padding(3, 6, seed=3)
    with torch.no_grad():  # eval + no grad: PyTorch takes its fused fast path
        expected = theirs(x, src_key_padding_mask=pad)
        output, _ = ours(x, src_key_padding_mask=pad)
    torch.testing.assert_close(output, expected, **TOL)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_block_gradients_match_torch(norm_first: bool) -> None:
    ours, theirs = encoder_pair(norm_first)
    x = torch.randn(2, 5, E)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    pad = padding(2, 5, seed=4)
    target = torch.randn(2, 5, E)
    ((ours(x1, src_key_padding_mask=pad, is_causal=True)[0] - target) ** 2).sum().backward()
    out = theirs(x2, src_mask=torch_causal(5), src_key_padding_mask=pad, is_causal=True)
    ((out - target) ** 2).sum().backward()
    torch.testing.assert_close(x1.grad, x2.grad, **GRAD_TOL)
    torch.testing.assert_close(ours.ff.linear1.weight.grad, theirs.linear1.weight.grad, **GRAD_TOL)
    torch.testing.assert_close(ours.norm1.weight.grad, theirs.norm1.weight.grad, **GRAD_TOL)
    our_in_proj = torch.cat([ours.self_attn.q_proj.weight.grad, ours.self_attn.k_proj.weight.grad,
                             ours.self_attn.v_proj.weight.grad])  # fmt: skip
    torch.testing.assert_close(our_in_proj, theirs.self_attn.in_proj_weight.grad, **GRAD_TOL)


def test_encoder_block_matches_torch_in_training_mode_without_dropout() -> None:
    torch.manual_seed(0)
    theirs = nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, batch_first=True)
    randomise(theirs)
    ours = from_torch(theirs)
    assert ours.training
    x = torch.randn(2, 4, E)
    torch.testing.assert_close(ours(x)[0], theirs(x), **TOL)


def decoder_mask_cases(N: int, L: int, S: int) -> dict[str, tuple[dict, dict]]:
    g = torch.Generator().manual_seed(5)
    causal = torch_causal(L)
    memory_float = torch.randn(L, S, generator=g)
    tgt_pad, memory_pad = padding(N, L, seed=6), padding(N, S, seed=7)
    return {
        "none": ({}, {}),
        "tgt_is_causal alone": (
            {"tgt_is_causal": True},
            {"tgt_mask": causal, "tgt_is_causal": True},
        ),
        "causal tgt_mask": ({"tgt_mask": causal}, {"tgt_mask": causal}),
        "float memory_mask": ({"memory_mask": memory_float}, {"memory_mask": memory_float}),
        "both paddings and causal": (
            {
                "tgt_is_causal": True,
                "tgt_key_padding_mask": tgt_pad,
                "memory_key_padding_mask": memory_pad,
            },
            {
                "tgt_mask": causal,
                "tgt_is_causal": True,
                "tgt_key_padding_mask": tgt_pad,
                "memory_key_padding_mask": memory_pad,
            },
        ),  # fmt: skip
    }


DECODER_CASES = list(decoder_mask_cases(2, 5, 7))


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("case", DECODER_CASES)
@pytest.mark.parametrize("need_weights", [False, True])
def test_decoder_block_matches_torch(norm_first: bool, case: str, need_weights: bool) -> None:
    ours, theirs = decoder_pair(norm_first)
    tgt, memory = torch.randn(2, 5, E), torch.randn(2, 7, E)
    our_kwargs, their_kwargs = decoder_mask_cases(2, 5, 7)[case]
    output, _ = ours(tgt, memory, **our_kwargs, need_weights=need_weights)
    torch.testing.assert_close(output, theirs(tgt, memory, **their_kwargs), **TOL)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_decoder_block_gradients_match_torch(norm_first: bool) -> None:
    ours, theirs = decoder_pair(norm_first, activation="gelu")
    tgt, memory = torch.randn(2, 5, E), torch.randn(2, 7, E)
    grads = []
    for module, kwargs in [
        (ours, {"tgt_is_causal": True}),
        (theirs, {"tgt_mask": torch_causal(5)}),
    ]:
        t, m = tgt.clone().requires_grad_(), memory.clone().requires_grad_()
        out = module(t, m, **kwargs)
        out = out[0] if isinstance(out, tuple) else out
        (out.sin().sum()).backward()
        grads.append((t.grad, m.grad))
    torch.testing.assert_close(grads[0][0], grads[1][0], **GRAD_TOL)
    torch.testing.assert_close(grads[0][1], grads[1][1], **GRAD_TOL)
    torch.testing.assert_close(ours.ff.linear2.weight.grad, theirs.linear2.weight.grad, **GRAD_TOL)
    torch.testing.assert_close(
        ours.cross_attn.out_proj.weight.grad, theirs.multihead_attn.out_proj.weight.grad, **GRAD_TOL
    )


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_parameter_counts_equal_torch(norm_first: bool) -> None:
    def count(m: nn.Module) -> int:
        return sum(p.numel() for p in m.parameters())

    kwargs = {"norm_first": norm_first, "batch_first": True}
    assert count(EncoderBlock(512, 8, **kwargs)) == count(
        nn.TransformerEncoderLayer(512, 8, **kwargs)
    )
    assert count(DecoderBlock(64, 4, 256, **kwargs)) == count(
        nn.TransformerDecoderLayer(64, 4, 256, **kwargs)
    )


def test_to_torch_round_trips_both_blocks() -> None:
    for ours, theirs in [encoder_pair(True), decoder_pair(False)]:
        back = to_torch(ours)
        assert isinstance(back, type(theirs)) and back.norm_first == theirs.norm_first
        for (name, a), (_, b) in zip(back.state_dict().items(), theirs.state_dict().items()):
            assert torch.equal(a, b), name


def test_encoder_block_returns_per_head_weights_only_when_asked() -> None:
    block = EncoderBlock(E, H, FF).eval()
    x = torch.randn(2, 5, E)
    output, weights = block(x)
    assert output.shape == (2, 5, E) and weights is None
    output_w, weights = block(x, is_causal=True, need_weights=True)
    assert weights.shape == (2, H, 5, 5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, H, 5))
    assert torch.all(weights.triu(diagonal=1) == 0)


def test_decoder_block_returns_self_and_cross_weights() -> None:
    block = DecoderBlock(E, H, FF).eval()
    output, weights = block(torch.randn(2, 5, E), torch.randn(2, 7, E), need_weights=True)
    assert output.shape == (2, 5, E)
    assert weights.self_attn.shape == (2, H, 5, 5) and weights.cross_attn.shape == (2, H, 5, 7)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_encoder_stack_matches_torch_and_returns_weights_per_layer(norm_first: bool) -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(E, H, FF, batch_first=True, norm_first=norm_first)
    theirs = nn.TransformerEncoder(
        layer, 3, norm=nn.LayerNorm(E) if norm_first else None, enable_nested_tensor=False
    ).eval()
    randomise(theirs)
    ours = from_torch(theirs)
    assert (ours.norm is not None) == norm_first
    x, pad = torch.randn(2, 6, E), padding(2, 6, seed=8)
    output, weights = ours(x, src_key_padding_mask=pad, need_weights=True)
    torch.testing.assert_close(output, theirs(x, src_key_padding_mask=pad), **TOL)
    assert len(weights) == 3 and all(w.shape == (2, H, 6, 6) for w in weights)
    # Layer 2's weights are those of block 2 run on block 1's output.
    hidden = ours.layers[1](
        ours.layers[0](x, src_key_padding_mask=pad)[0], src_key_padding_mask=pad
    )[0]
    _, expected = ours.layers[2](hidden, src_key_padding_mask=pad, need_weights=True)
    torch.testing.assert_close(weights[2], expected)


def test_encoder_stack_matches_torch_nested_tensor_fast_path_at_real_tokens() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(E, H, FF, batch_first=True)
    theirs = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True).eval()
    randomise(theirs)
    ours = from_torch(theirs)
    x, pad = torch.randn(3, 6, E), padding(3, 6, seed=9)
    with torch.no_grad():  # fast path: PyTorch returns zeros at padded positions
        expected = theirs(x, src_key_padding_mask=pad)
        output, _ = ours(x, src_key_padding_mask=pad)
    torch.testing.assert_close(output[~pad], expected[~pad], **TOL)


def test_decoder_stack_matches_torch() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(E, H, FF, batch_first=True, norm_first=True)
    theirs = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(E)).eval()
    randomise(theirs)
    ours = from_torch(theirs)
    tgt, memory = torch.randn(2, 5, E), torch.randn(2, 7, E)
    output, weights = ours(tgt, memory, tgt_is_causal=True, need_weights=True)
    expected = theirs(tgt, memory, tgt_mask=torch_causal(5), tgt_is_causal=True)
    torch.testing.assert_close(output, expected, **TOL)
    assert len(weights) == 2 and weights[1].cross_attn.shape == (2, H, 5, 7)


def test_stack_layers_start_with_different_weights() -> None:
    torch.manual_seed(0)
    encoder = Encoder(3, d_model=E, nhead=H, dim_feedforward=FF)
    w = [layer.ff.linear1.weight for layer in encoder.layers]
    assert not torch.equal(w[0], w[1]) and not torch.equal(w[1], w[2])


def test_final_norm_defaults_to_norm_first_and_can_be_forced() -> None:
    assert Encoder(1, d_model=E, nhead=H).norm is None
    assert isinstance(Encoder(1, d_model=E, nhead=H, norm_first=True).norm, nn.LayerNorm)
    assert Decoder(1, d_model=E, nhead=H, final_norm=True).norm is not None
    assert Decoder(1, d_model=E, nhead=H, norm_first=True, final_norm=False).norm is None


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), norm_first=st.booleans())
def test_encoder_block_without_positions_is_permutation_equivariant(
    seed: int, norm_first: bool
) -> None:
    # No positions, no mask: permuting the tokens permutes the outputs, nothing else.
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    block = EncoderBlock(E, H, FF, norm_first=norm_first).eval()
    x = torch.randn(2, 7, E, generator=g)
    perm = torch.randperm(7, generator=g)
    torch.testing.assert_close(block(x[:, perm])[0], block(x)[0][:, perm], **TOL)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_causal_decoder_output_at_t_ignores_later_tokens(norm_first: bool) -> None:
    torch.manual_seed(0)
    block = DecoderBlock(E, H, FF, norm_first=norm_first).eval()
    tgt, memory = torch.randn(1, 6, E), torch.randn(1, 4, E)
    changed = tgt.clone()
    changed[:, 4:] = torch.randn(1, 2, E)  # change tokens 4 and 5 only
    before, _ = block(tgt, memory, tgt_is_causal=True)
    after, _ = block(changed, memory, tgt_is_causal=True)
    torch.testing.assert_close(after[:, :4], before[:, :4])
    assert not torch.allclose(after[:, 4:], before[:, 4:])


def test_dropout_acts_only_in_training_mode() -> None:
    torch.manual_seed(0)
    block = EncoderBlock(E, H, FF, dropout=0.5)
    x = torch.randn(2, 5, E)
    assert not torch.allclose(block(x)[0], block(x)[0])
    block.eval()
    torch.testing.assert_close(block(x)[0], block(x)[0])


BAD_ENCODER_INPUTS = [
    ({"src": torch.zeros(5, E)}, ValueError, r"src must have shape \(N, L, d_model\) = \(N, L, 16\)"
     r", batch first; got \(5, 16\)"),
    ({"src": torch.zeros(2, 5, 8)}, ValueError, r"src must have shape .* got \(2, 5, 8\)"),
    ({"src": [[0.0]]}, TypeError, "src must be a torch.Tensor; got list"),
    ({"src_mask": torch.zeros(5, 4, dtype=torch.bool)}, ValueError,
     r"src_mask must have shape \(L, S\) = \(5, 5\) or \(N\*nhead, L, S\) = \(8, 5, 5\); got \(5, 4\)"),
    ({"src_mask": torch.zeros(5, 5, dtype=torch.long)}, TypeError,
     "src_mask must be a bool or floating-point tensor; got dtype torch.int64"),
    ({"src_key_padding_mask": torch.zeros(5, 2, dtype=torch.bool)}, ValueError,
     r"src_key_padding_mask must have shape \(N, S\) = \(2, 5\); got \(5, 2\)"),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "error", "words"), BAD_ENCODER_INPUTS)
def test_encoder_block_bad_input_names_argument_and_shapes(
    kwargs: dict, error: type, words: str
) -> None:
    block = EncoderBlock(E, H, FF)
    call = {"src": torch.zeros(2, 5, E), **kwargs}
    with pytest.raises(error, match=words):
        block(**call)


BAD_DECODER_INPUTS = [
    ({"memory": torch.zeros(3, 7, E)}, r"tgt and memory must have the same batch size N \(dim 0\); "
     r"got tgt \(2, 5, 16\) and memory \(3, 7, 16\)"),
    ({"memory": torch.zeros(2, 7, 4)}, r"memory must have shape \(N, S, d_model\) = \(N, S, 16\)"),
    ({"memory_mask": torch.zeros(5, 5)}, r"memory_mask must have shape \(L, S\) = \(5, 7\)"),
    ({"tgt_mask": torch.zeros(5, 7)}, r"tgt_mask must have shape \(L, S\) = \(5, 5\)"),
    ({"memory_key_padding_mask": torch.zeros(2, 5, dtype=torch.bool)},
     r"memory_key_padding_mask must have shape \(N, S\) = \(2, 7\); got \(2, 5\)"),
    ({"tgt_key_padding_mask": torch.zeros(2, 7, dtype=torch.bool)},
     r"tgt_key_padding_mask must have shape \(N, S\) = \(2, 5\); got \(2, 7\)"),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "words"), BAD_DECODER_INPUTS)
def test_decoder_block_bad_input_names_argument_and_shapes(kwargs: dict, words: str) -> None:
    block = DecoderBlock(E, H, FF)
    call = {"tgt": torch.zeros(2, 5, E), "memory": torch.zeros(2, 7, E), **kwargs}
    with pytest.raises(ValueError, match=words):
        block(**call)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"activation": "tanh"}, 'activation must be "relu" or "gelu"'),
        ({"batch_first": False}, "batch first only"),
        ({"dim_feedforward": 0}, "dim_feedforward must be a positive integer; got 0"),
        ({"dropout": 1.0}, r"dropout must be in \[0, 1\); got 1.0"),
        ({"nhead": 3}, "embed_dim must be a positive multiple of num_heads"),
    ],
)
def test_bad_block_arguments_raise_value_error(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        EncoderBlock(**{"d_model": E, "nhead": H, **kwargs})


def test_bad_stack_arguments_raise_value_error() -> None:
    with pytest.raises(ValueError, match="num_layers must be a positive integer; got 0"):
        Encoder(0, d_model=E, nhead=H)


def test_from_torch_rejects_sequence_first_layers() -> None:
    with pytest.raises(ValueError, match="batch_first=True"):
        from_torch(nn.TransformerEncoderLayer(E, H, FF))
    with pytest.raises(ValueError, match="batch_first=True"):
        from_torch(nn.TransformerDecoderLayer(E, H, FF))
