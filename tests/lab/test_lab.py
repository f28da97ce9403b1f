"""The lab model's switches each do what they claim, and bad input gets a clear error."""

import math

import pytest
import torch

from attnbook.lab import lab_tasks as tasks
from attnbook.lab.lab_model import IGNORE, LabBlock, LabConfig, LabModel, lab_accuracy, lab_loss
from attnbook.masks import window_mask
from attnbook.positional import alibi_slopes, rotate


def lab_attention(embed_dim: int, num_heads: int, **switches) -> LabBlock:
    """A lab block with these :class:`LabConfig` switches; ``.attend`` is its self-attention."""
    return LabBlock(LabConfig(10, 3, d_model=embed_dim, num_heads=num_heads, **switches))


def test_rotary_scores_depend_only_on_distance():
    torch.manual_seed(0)
    q, k = torch.randn(8), torch.randn(8)
    rows = torch.stack([q] * 12)[None]  # (1, 12, 8): the same vector at every position
    rq, rk = rotate(rows), rotate(torch.stack([k] * 12)[None])
    scores = rq[0] @ rk[0].T  # (12, 12)
    for d in range(-3, 4):
        diag = torch.diagonal(scores, offset=d)
        torch.testing.assert_close(diag, diag[:1].expand_as(diag), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rotate(rows).norm(dim=-1), rows.norm(dim=-1))  # a rotation
    assert not torch.allclose(rotate(rows)[0, 1], rows[0, 1])


def test_grouped_query_attention_equals_mha_with_copied_key_value_heads():
    torch.manual_seed(0)
    gqa, full = lab_attention(16, 4, num_kv_heads=2).attn, lab_attention(16, 4).attn
    D = 4
    for name in ("k_proj", "v_proj"):  # head h of the full model = kv head h // 2
        w, b = getattr(gqa, name).weight.view(2, D, 16), getattr(gqa, name).bias.view(2, D)
        getattr(full, name).weight.data = w.repeat_interleave(2, 0).reshape(16, 16)
        getattr(full, name).bias.data = b.repeat_interleave(2, 0).reshape(16)
    for name in ("q_proj", "out_proj"):
        getattr(full, name).load_state_dict(getattr(gqa, name).state_dict())
    x = torch.randn(2, 5, 16)
    torch.testing.assert_close(gqa(x, x, x)[0], full(x, x, x)[0], atol=1e-5, rtol=1e-5)
    assert gqa.k_proj.out_features * 2 == full.k_proj.out_features  # half the key/value cache


def test_windows_alibi_causal_and_head_mask():
    mask = window_mask(5, [0, 1, None], causal=True)
    assert mask[0].equal(torch.eye(5, dtype=torch.bool))
    assert mask[1].sum() == 5 + 4 and mask[2].sum() == 15
    attn = lab_attention(12, 3, windows=(0, 1, None), causal=True, positions="alibi")
    _, w = attn.attend(torch.randn(2, 5, 12), None, True, None)
    assert (w[:, 0] - torch.eye(5)).abs().max() < 1e-6
    assert (w.masked_select(~mask[None].expand_as(w)) == 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5))
    assert alibi_slopes(8)[0] == 0.5 and math.isclose(float(alibi_slopes(8)[-1]), 2**-8)
    out_off, _ = attn.attend(torch.ones(1, 5, 12), None, False, torch.zeros(3))
    torch.testing.assert_close(out_off, attn.attn.out_proj.bias.expand(1, 5, 12))


def test_fully_padded_rows_give_zero_weights_not_nan():
    attn = lab_attention(8, 2)
    pad = torch.ones(1, 4, dtype=torch.bool)
    out, w = attn.attend(torch.randn(1, 4, 8), pad, True, None)
    assert torch.isfinite(out).all() and (w == 0).all()


def test_scaling_the_scores_after_the_product_overflows_in_float16():
    torch.manual_seed(0)
    x = torch.full((1, 4, 64), 30.0, dtype=torch.float16)
    first = lab_attention(64, 1).half()
    after = lab_attention(64, 1, scale_first=False).half()
    after.load_state_dict(first.state_dict())
    for block in (first, after):
        torch.nn.init.eye_(block.attn.q_proj.weight)
        torch.nn.init.eye_(block.attn.k_proj.weight)
    # q . k = 64 * 30 * 30 = 57600 fits, but with 1.5x larger inputs it exceeds 65504:
    x = x * 1.5
    assert torch.isfinite(first.attend(x, None, False, None)[0]).all()
    assert torch.isnan(after.attend(x, None, False, None)[0]).any()


def test_qk_norm_bounds_the_scores():
    block = lab_attention(16, 2, qk_norm=True)
    seen = []
    block.attn.logits.register_forward_hook(lambda m, i, o: seen.append(o))
    block.attend(1000 * torch.randn(2, 6, 16), None, False, None)
    # Layer-normalised q and k have norm sqrt(D) (before the affine part), so |score| <= sqrt(D).
    assert seen[0].abs().max() <= math.sqrt(8) + 1e-3


@pytest.mark.parametrize("positions", ["learned", "sinusoidal", "rotary", "alibi", "none"])
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_lab_model_shapes_and_loss(positions, norm):
    config = LabConfig(20, 7, d_model=16, num_heads=2, positions=positions, norm=norm, max_len=32)
    model = LabModel(config)
    tokens = torch.randint(20, (3, 9))
    logits, weights = model(tokens, need_weights=True, head_mask=torch.ones(2, 2))
    assert logits.shape == (3, 9, 7) and len(weights) == 2 and weights[0].shape == (3, 2, 9, 9)
    targets = torch.full((3, 9), IGNORE)
    targets[:, -1] = 1
    assert lab_loss(model, (tokens, targets)).isfinite()
    assert 0.0 <= lab_accuracy(model, (tokens, targets)) <= 1.0


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="num_kv_heads"):
        lab_attention(16, 4, num_kv_heads=3)
    with pytest.raises(ValueError, match="window"):
        lab_attention(16, 4, windows=(1, 2))
    with pytest.raises(ValueError, match="positions"):
        LabModel(LabConfig(10, 3, d_model=16, num_heads=4, positions="absolute"))
    model = LabModel(LabConfig(10, 3, d_model=8, num_heads=2, max_len=8))
    with pytest.raises(ValueError, match="tokens"):
        model(torch.randint(10, (2, 4)).float())
    with pytest.raises(ValueError, match="tokens must be in"):
        model(torch.full((2, 4), 10))
    with pytest.raises(ValueError, match="head_mask"):
        model(torch.zeros(2, 4, dtype=torch.long), head_mask=torch.ones(3))
    with pytest.raises(ValueError, match="key_padding_mask"):
        model(torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="max_len"):
        model(torch.zeros(1, 9, dtype=torch.long))


def test_tasks_targets_follow_their_rules():
    g = torch.Generator().manual_seed(0)
    tokens, targets = tasks.recall(50, g, num_pairs=6, num_queries=3)
    assert tokens.shape == (50, 9) and (targets[:, :6] == IGNORE).all()
    for row, target in zip(tokens, targets, strict=True):
        stored = {int(t) // 16: int(t) % 16 for t in row[:6]}
        assert len(stored) == 6
        for q, v in zip(row[6:], target[6:], strict=True):
            assert stored[int(q) - 256] == int(v)
    tokens, targets = tasks.shift(20, g, length=10, offset=3)
    assert (targets[:, :3] == IGNORE).all() and targets[:, 3:].equal(tokens[:, :-3])
    tokens, targets = tasks.local_global(200, g, length=20, vocab=6)
    counts = torch.nn.functional.one_hot(tokens, 6).sum(1)  # (N, V)
    top2 = counts.topk(2, dim=-1).values
    assert (top2[:, 0] > top2[:, 1]).all() and (counts.max(-1).values == 8).all()
    majority = counts.argmax(-1)
    assert targets[:, 1:].equal((tokens[:, :-1] + majority[:, None]) % 6)
    pool = tasks.FixedPool(*tasks.shift(5, g, length=4, offset=1))
    drawn, _ = pool.sample(40, g)
    assert {tuple(r.tolist()) for r in drawn} <= {tuple(r.tolist()) for r in pool.tokens}
    with pytest.raises(ValueError, match="num_pairs"):
        tasks.recall(2, g, num_pairs=20)
    with pytest.raises(ValueError, match="same"):
        tasks.FixedPool(torch.zeros(3, 4), torch.zeros(3, 5))


def test_alibi_adds_minus_slope_times_distance_and_rotate_pins_the_angles():
    torch.manual_seed(0)
    attn = lab_attention(8, 2, positions="alibi")
    plain = lab_attention(8, 2)
    plain.load_state_dict(attn.state_dict())
    seen = []
    plain.attn.logits.register_forward_hook(lambda m, i, o: seen.append(o))
    x = torch.randn(1, 5, 8)
    _, weights = attn.attend(x, None, True, None)
    plain.attend(x, None, False, None)
    distance = (torch.arange(5)[:, None] - torch.arange(5)[None, :]).abs().float()
    expected = seen[0] - torch.tensor([2.0**-4, 2.0**-8])[None, :, None, None] * distance
    torch.testing.assert_close(weights, expected.softmax(-1))  # slopes 2^-4, 2^-8, two heads
    # Position 3, pair 1 of a head of size 4 turns by 3 * 10000^(-2/4) = 0.03 radians.
    x = torch.zeros(4, 4)
    x[:, 2] = 1.0  # the first feature of pair 1 at every position
    turned = rotate(x)
    angle = 3 * 10000.0 ** (-2 / 4)
    torch.testing.assert_close(turned[3, 2:], torch.tensor([math.cos(angle), math.sin(angle)]))
    torch.testing.assert_close(turned[3, :2], torch.zeros(2))
