"""The lab model's attention is the core MultiHeadAttention, and computes what the lab's own
attention class computed: the same initial weights from the same seed, bit for bit, and the same
outputs, weights, gradients and scores at the ``logits`` hook point up to rounding (the former
class copied the keys before ``Q K^T`` even with one key/value head per query head, and that
product can round differently in the last bit).

The reference is the frozen copy of the former ``LabAttention``
(``tests/lab/reference_lab_attention.py``). The map, switch by switch: ``num_kv_heads`` ->
``num_kv_heads``; ``positions="rotary"`` -> ``positions="rotary", rotary_interleaved=True``;
``positions="alibi"`` -> ``positions="alibi"`` (the same slopes when H is a power of two);
``windows`` -> ``window``; ``causal`` -> ``forward(..., is_causal=True)``; ``qk_norm=True`` ->
``qk_norm="layer"``; ``init="linear"`` (``nn.Linear``'s own initialisation); the lab always
forms the weights.
"""

from __future__ import annotations

import pytest
import torch

from attnbook import MultiHeadAttention
from attnbook.lab.lab_model import LabBlock, LabConfig
from attnbook.mha import AttentionLogits
from attnbook.positional import alibi_slopes as papers_slopes
from tests.lab.reference_lab_attention import LabAttention, alibi_slopes

EXACT = {"rtol": 0.0, "atol": 0.0}
ROUNDING = {"rtol": 1e-5, "atol": 1e-5}  # float32: the last bits of Q K^T may differ

SWITCHES = {
    "plain": {},
    "grouped-query": {"num_kv_heads": 2},
    "multi-query": {"num_kv_heads": 1},
    "rotary": {"positions": "rotary"},
    "alibi": {"positions": "alibi"},
    "windows": {"windows": (0, 1, None, 3)},
    "causal windows": {"windows": (2, None, 0, 1), "causal": True},
    "causal": {"causal": True},
    "qk_norm": {"qk_norm": True},
    "scale after the product": {"scale": 1.0, "scale_first": False},
    "all at once": {
        "num_kv_heads": 2,
        "positions": "alibi",
        "windows": (1, None, 2, 0),
        "causal": True,
        "qk_norm": True,
        "scale": 0.3,
    },
    "all at once, rotary": {
        "num_kv_heads": 1,
        "positions": "rotary",
        "windows": (None, 3, 1, 2),
        "qk_norm": True,
        "scale_first": False,
    },
}
SIZES = [(16, 7), (32, 9)]  # (E, L); at (32, 9) Q K^T rounds differently in the two classes


def lab_pair(seed: int, E: int, **switches) -> tuple[LabAttention, LabBlock]:
    """The former LabAttention and a LabBlock drawn from the same seed, LayerNorms perturbed."""
    torch.manual_seed(seed)
    lab = LabAttention(E, 4, **{k.removeprefix("attn_"): v for k, v in switches.items()})
    torch.manual_seed(seed)
    block = LabBlock(LabConfig(10, 3, d_model=E, num_heads=4, **switches))
    assert list(block.attn.state_dict()) == list(lab.state_dict())
    for name, value in lab.state_dict().items():  # the same initialisation, bit for bit
        torch.testing.assert_close(block.attn.state_dict()[name], value, **EXACT)
    with torch.no_grad():
        for p in lab.parameters():
            if p.dim() == 1:  # LayerNorm starts at ones and zeros; make every parameter matter
                p.add_(torch.randn_like(p) * 0.5)
    block.attn.load_state_dict(lab.state_dict())
    return lab, block


@pytest.mark.parametrize("E, L", SIZES)
@pytest.mark.parametrize("switches", SWITCHES.values(), ids=SWITCHES.keys())
def test_the_lab_blocks_attention_equals_the_former_lab_attention(switches, E, L):
    lab, block = lab_pair(0, E, **switches)
    assert type(block.attn) is MultiHeadAttention
    x = torch.randn(3, L, E, requires_grad=True)
    pad = torch.zeros(3, L, dtype=torch.bool)
    pad[1, 4:] = True
    pad[2] = True  # no key at all: weights 0, output = out_proj.bias
    head_mask = torch.tensor([1.0, 0.0, 0.5, 1.0])
    seen = {}
    lab.logits.register_forward_hook(lambda m, i, o: seen.__setitem__("lab", o))
    block.attn.logits.register_forward_hook(lambda m, i, o: seen.__setitem__("core", o))

    out, weights = lab(x, pad, need_weights=True, head_mask=head_mask)
    ref, ref_weights = block.attend(x, pad, True, head_mask)
    torch.testing.assert_close(out, ref, **ROUNDING)
    torch.testing.assert_close(weights, ref_weights, **ROUNDING)
    if switches.get("positions") != "alibi":  # the core adds ALiBi with the masks, after the hook
        torch.testing.assert_close(seen["lab"], seen["core"], **ROUNDING)
    grad = torch.randn_like(out)
    ours = torch.autograd.grad(out, [x, *lab.parameters()], grad)
    theirs = torch.autograd.grad(ref, [x, *block.attn.parameters()], grad)
    for name, a, b in zip(["x", *dict(lab.named_parameters())], ours, theirs):
        torch.testing.assert_close(a, b, **ROUNDING, msg=lambda m, name=name: f"d/d {name}: {m}")
    assert block.attend(x, pad, False, head_mask)[1] is None


def test_attention_dropout_drops_the_same_weights_in_training():
    lab, block = lab_pair(1, 16, attn_dropout=0.3, num_kv_heads=2, positions="rotary")
    lab.train(), block.train()
    x = torch.randn(2, 6, 16)
    torch.manual_seed(7)
    out, weights = lab(x, need_weights=True)
    torch.manual_seed(7)
    ref, ref_weights = block.attend(x, None, True, None)
    torch.testing.assert_close(out, ref, **ROUNDING)
    torch.testing.assert_close(weights, ref_weights, **ROUNDING)
    assert (weights == 0).any()


def test_float16_scores_after_the_product_overflow_in_both():
    torch.manual_seed(0)
    lab = LabAttention(64, 1, scale_first=False)
    torch.manual_seed(0)
    core = MultiHeadAttention(64, 1, scale_first=False, init="linear")
    for layer in (lab, core):
        for proj in (layer.q_proj, layer.k_proj):
            torch.nn.init.eye_(proj.weight)
            torch.nn.init.zeros_(proj.bias)
    lab, core = lab.half(), core.half()
    x = torch.full((1, 4, 64), 40.0, dtype=torch.float16)  # q · k = 64 * 1600 > 65504
    out, ref = lab(x)[0], core(x, x, x)[0]
    assert not torch.isfinite(out).all()
    torch.testing.assert_close(out, ref, equal_nan=True, **EXACT)


@pytest.mark.parametrize("num_heads", [1, 2, 4, 8, 16])
def test_the_labs_slopes_are_the_papers_for_a_power_of_two_heads(num_heads):
    # The book's ALiBi lab models all have 4 heads (chapter 19b).
    torch.testing.assert_close(alibi_slopes(num_heads), papers_slopes(num_heads), **EXACT)


def test_for_six_heads_the_former_slopes_are_not_the_papers():
    # The former lab used 2**(-8h/H) for every H; the core, as the paper and BLOOM, interleaves
    # two sequences for H not a power of two.
    assert not torch.equal(alibi_slopes(6), papers_slopes(6))


def test_init_linear_keeps_nn_linears_draws_and_xavier_is_the_default():
    torch.manual_seed(3)
    linears = [torch.nn.Linear(12, 12) for _ in range(4)]
    after = torch.rand(1)
    torch.manual_seed(3)
    core = MultiHeadAttention(12, 3, init="linear")
    assert torch.equal(torch.rand(1), after)  # no further draws
    for lin, proj in zip(linears, (core.q_proj, core.k_proj, core.v_proj, core.out_proj)):
        assert torch.equal(lin.weight, proj.weight) and torch.equal(lin.bias, proj.bias)
    assert "init='linear'" in repr(core)
    xavier = MultiHeadAttention(12, 3)
    assert xavier.init == "xavier" and not xavier.q_proj.bias.any()
    with pytest.raises(ValueError, match="init"):
        MultiHeadAttention(12, 3, init="kaiming")


def test_the_logits_hook_point_sees_the_scaled_scores_before_the_masks():
    torch.manual_seed(0)
    attn = MultiHeadAttention(8, 2)
    assert isinstance(attn.logits, AttentionLogits)
    assert not any("logits" in name for name in attn.state_dict())  # no parameters
    seen = []
    handle = attn.logits.register_forward_hook(lambda m, i, o: seen.append(o))
    x = torch.randn(2, 5, 8)
    attn(x, x, x, is_causal=True)
    q = attn.q_proj(x).view(2, 5, 2, 4).transpose(1, 2)
    k = attn.k_proj(x).view(2, 5, 2, 4).transpose(1, 2)
    torch.testing.assert_close(seen[0], (q * 0.5) @ k.transpose(-2, -1))  # future keys included
    attn(x, x, x, need_weights=False)  # PyTorch's fused kernel forms no scores
    assert len(seen) == 1
    handle.remove()
    # What a hook returns is used: -inf on every key but the first leaves only that key.
    attn.logits.register_forward_hook(
        lambda m, i, o: o.masked_fill(torch.arange(5) > 0, -torch.inf)
    )
    _, weights = attn(x, x, x)
    torch.testing.assert_close(weights[..., 0], torch.ones(2, 5))
