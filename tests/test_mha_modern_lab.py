"""LabAttention with each of its switches computes what the core MultiHeadAttention computes with
the equivalent options and the same weights (its state_dict loads as it is): the step that lets
the lab model become a configuration of the core.

The map, switch by switch: ``num_kv_heads`` -> ``num_kv_heads``; ``positions="rotary"`` ->
``positions="rotary", rotary_interleaved=True`` (the lab pairs features (2i, 2i+1));
``positions="alibi"`` -> ``positions="alibi"`` (the same slopes when H is a power of two);
``windows`` -> ``window``; ``causal`` -> ``forward(..., is_causal=True)``; ``qk_norm=True`` ->
``qk_norm="layer"``; ``scale``, ``scale_first`` and ``dropout`` keep their names. The outputs,
weights and gradients are equal to the last bit: both run the same operations in the same order.
"""

from __future__ import annotations

import pytest
import torch

from attnbook import MultiHeadAttention
from attnbook.lab.lab_attention import LabAttention, alibi_slopes
from attnbook.positional import alibi_slopes as papers_slopes

EXACT = {"rtol": 0.0, "atol": 0.0}


def core_twin(lab: LabAttention) -> MultiHeadAttention:
    """The core MultiHeadAttention configured as ``lab``, with its weights."""
    global_only = all(w is None for w in lab.windows)
    twin = MultiHeadAttention(
        lab.embed_dim,
        lab.num_heads,
        lab.dropout,
        num_kv_heads=lab.num_kv_heads,
        positions=lab.positions,
        rotary_base=lab.rotary_base,
        rotary_interleaved=True,
        window=None if global_only else lab.windows,
        qk_norm="layer" if lab.q_norm is not None else None,
        scale=lab.scale,
        scale_first=lab.scale_first,
        dtype=lab.q_proj.weight.dtype,
    )
    twin.load_state_dict(lab.state_dict())  # strict: the same parameter names and shapes
    return twin.train(lab.training)


SWITCHES = {
    "plain": {},
    "grouped-query": {"num_kv_heads": 2},
    "multi-query": {"num_kv_heads": 1},
    "rotary": {"positions": "rotary", "rotary_base": 500.0},
    "alibi": {"positions": "alibi"},
    "windows": {"windows": [0, 1, None, 3]},
    "causal windows": {"windows": [2, None, 0, 1], "causal": True},
    "causal": {"causal": True},
    "qk_norm": {"qk_norm": True},
    "scale after the product": {"scale": 1.0, "scale_first": False},
    "all at once": {
        "num_kv_heads": 2,
        "positions": "alibi",
        "windows": [1, None, 2, 0],
        "causal": True,
        "qk_norm": True,
        "scale": 0.3,
    },
    "all at once, rotary": {
        "num_kv_heads": 1,
        "positions": "rotary",
        "windows": [None, 3, 1, 2],
        "qk_norm": True,
        "scale_first": False,
    },
}


def random_lab(seed: int, **switches) -> LabAttention:
    torch.manual_seed(seed)
    lab = LabAttention(16, 4, **switches)
    with torch.no_grad():
        for p in lab.parameters():
            if p.dim() == 1:  # LayerNorm starts at ones and zeros; make every parameter matter
                p.add_(torch.randn_like(p) * 0.5)
    return lab


@pytest.mark.parametrize("switches", SWITCHES.values(), ids=SWITCHES.keys())
def test_lab_attention_equals_the_core_with_the_equivalent_options(switches):
    lab = random_lab(0, **switches)
    core = core_twin(lab)
    x = torch.randn(3, 7, 16, requires_grad=True)
    pad = torch.zeros(3, 7, dtype=torch.bool)
    pad[1, 4:] = True
    pad[2] = True  # no key at all: weights 0, output = out_proj.bias
    head_mask = torch.tensor([1.0, 0.0, 0.5, 1.0])

    out, weights = lab(x, pad, need_weights=True, head_mask=head_mask)
    ref, ref_weights = core(
        x, x, x, key_padding_mask=pad, average_attn_weights=False, is_causal=lab.causal,
        head_mask=head_mask,
    )  # fmt: skip
    torch.testing.assert_close(out, ref, **EXACT)
    torch.testing.assert_close(weights, ref_weights, **EXACT)
    grad = torch.randn_like(out)
    ours = torch.autograd.grad(out, [x, *lab.parameters()], grad)
    theirs = torch.autograd.grad(ref, [x, *core.parameters()], grad)
    for name, a, b in zip(["x", *dict(lab.named_parameters())], ours, theirs):
        torch.testing.assert_close(a, b, **EXACT, msg=lambda m, name=name: f"d/d {name}: {m}")
    fused, _ = core(x, x, x, key_padding_mask=pad, need_weights=False, is_causal=lab.causal,
                    head_mask=head_mask)  # fmt: skip
    torch.testing.assert_close(fused, ref, rtol=1e-5, atol=1e-5)  # PyTorch's kernel: rounding


def test_attention_dropout_drops_the_same_weights_in_training():
    lab = random_lab(1, dropout=0.3, num_kv_heads=2, positions="rotary").train()
    core = core_twin(lab)
    x = torch.randn(2, 6, 16)
    torch.manual_seed(7)
    out, weights = lab(x, need_weights=True)
    torch.manual_seed(7)
    ref, ref_weights = core(x, x, x, average_attn_weights=False)
    torch.testing.assert_close(out, ref, **EXACT)
    torch.testing.assert_close(weights, ref_weights, **EXACT)
    assert (weights == 0).any()


def test_float16_scores_after_the_product_overflow_in_both():
    torch.manual_seed(0)
    lab = LabAttention(64, 1, scale_first=False)
    for proj in (lab.q_proj, lab.k_proj):
        torch.nn.init.eye_(proj.weight)
        torch.nn.init.zeros_(proj.bias)
    lab = lab.half()
    core = core_twin(lab)
    x = torch.full((1, 4, 64), 40.0, dtype=torch.float16)  # q · k = 64 * 1600 > 65504
    out, ref = lab(x)[0], core(x, x, x)[0]
    assert not torch.isfinite(out).all()
    torch.testing.assert_close(out, ref, equal_nan=True, **EXACT)


@pytest.mark.parametrize("num_heads", [1, 2, 4, 8, 16])
def test_the_labs_slopes_are_the_papers_for_a_power_of_two_heads(num_heads):
    torch.testing.assert_close(alibi_slopes(num_heads), papers_slopes(num_heads), **EXACT)


def test_for_six_heads_the_labs_slopes_are_not_the_papers():
    # The lab's 2**(-8h/H) for every H; the paper (and BLOOM) interleave two sequences for H not
    # a power of two. The core follows the paper, so a six-head ALiBi lab model is not yet a
    # configuration of the core.
    assert not torch.equal(alibi_slopes(6), papers_slopes(6))
