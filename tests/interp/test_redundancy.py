"""Dead and redundant heads by ablation, on models built to have each symptom."""

import pytest
import torch

from attnbook.interp.ablation import head_shape, masked_accuracy, metric_function
from attnbook.interp.head_stats import head_entropy
from attnbook.interp.redundancy import (
    dead_heads,
    joint_ablation,
    pair_effects,
    reinitialise_heads,
    single_head_effects,
)
from attnbook.lab.lab_model import IGNORE, LabConfig, LabModel

E, H, D = 16, 4, 4


def _built(seed=0):
    """One layer, four heads: 0 and 1 identical with half the output each (a redundant pair),
    2 with its out_proj columns zeroed (dead), 3 with its output made large (needed)."""
    torch.manual_seed(seed)
    model = LabModel(LabConfig(12, 5, d_model=E, num_heads=H, num_layers=1, positions="none"))
    attn = model.blocks[0].attn
    with torch.no_grad():
        for proj in (attn.q_proj, attn.k_proj, attn.v_proj):
            proj.weight[D : 2 * D] = proj.weight[:D]
            proj.bias[D : 2 * D] = proj.bias[:D]
        attn.out_proj.weight[:, :D] *= 0.5
        attn.out_proj.weight[:, D : 2 * D] = attn.out_proj.weight[:, :D]
        attn.out_proj.weight[:, 2 * D : 3 * D] = 0.0
        attn.out_proj.weight[:, 3 * D :] *= 100.0
        attn.out_proj.bias.zero_()
    return model


def _pair_threshold_metric(model):
    """Share of positions whose attention output moved less than 3/4 of the pair's output."""
    tokens = torch.randint(12, (8, 6), generator=torch.Generator().manual_seed(1))
    block = model.blocks[0]
    x = model.embed(tokens)
    full, _ = block.attend(x, None, False, None)
    pair_only = torch.tensor([1.0, 1.0, 0.0, 0.0])
    pair = (full - block.attend(x, None, False, 1 - pair_only)[0]).norm(dim=-1)  # (N, L)

    def evaluate(m, mask):
        moved = (m.blocks[0].attend(x, None, False, mask[0])[0] - full).norm(dim=-1)
        return float((moved < 0.75 * pair).float().mean())

    return evaluate


def _distance_metric(model):
    tokens = torch.randint(12, (8, 6), generator=torch.Generator().manual_seed(1))
    reference, _ = model(tokens)

    def evaluate(m, mask):
        logits, _ = m(tokens, head_mask=mask)
        return -float((logits - reference).abs().mean())

    return evaluate


def test_dead_head_costs_exactly_nothing_and_the_others_cost_something():
    model = _built()
    single = single_head_effects(model, _distance_metric(model))
    assert single.shape == (1, H)
    assert single[0, 2] == 0.0
    assert (single[0, [0, 1, 3]] > 0).all()


def test_redundant_pair_costs_nothing_alone_and_everything_together():
    model = _built()
    evaluate = _pair_threshold_metric(model)
    single = single_head_effects(model, evaluate)
    torch.testing.assert_close(single, torch.tensor([[0.0, 0.0, 0.0, 1.0]]))
    assert joint_ablation(model, evaluate, [(0, 0), (0, 1)]) == 1.0
    assert joint_ablation(model, evaluate, [(0, 0), (0, 2)]) == 0.0
    pairs = pair_effects(model, evaluate)
    assert len(pairs) == 6
    assert pairs[(0, 0), (0, 1)] == (1.0, 1.0)
    verdicts = dead_heads(single, pairs)
    assert verdicts == {(0, 0): "redundant", (0, 1): "redundant", (0, 2): "dead", (0, 3): "needed"}


def test_dead_heads_from_a_hand_made_table():
    single = torch.tensor([[0.0, 0.001, 0.2], [0.003, 0.0, 0.0]])
    quiet = [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    pairs = {(a, b): (0.0, 0.0) for i, a in enumerate(quiet) for b in quiet[i + 1 :]}
    pairs[(1, 1), (1, 2)] = (0.3, 0.3)
    verdicts = dead_heads(single, pairs)
    assert verdicts[(0, 2)] == "needed"
    assert [verdicts[h] for h in quiet] == ["dead", "dead", "dead", "redundant", "redundant"]
    assert dead_heads(single, pairs, covers=0.5)[(1, 1)] == "dead"
    del pairs[(1, 1), (1, 2)]
    with pytest.raises(ValueError, match="no entry"):
        dead_heads(single, pairs)
    with pytest.raises(ValueError, match="harmless"):
        dead_heads(single, pairs, harmless=0.1, covers=0.01)
    with pytest.raises(ValueError, match="layers, H"):
        dead_heads(single[0], pairs)


def test_tiny_scale_gives_uniform_weights():
    torch.manual_seed(0)
    model = LabModel(LabConfig(12, 5, d_model=E, num_heads=H, num_layers=1, scale=1e-4))
    _, weights = model(torch.randint(12, (4, 7)), need_weights=True)
    assert head_entropy(weights, normalise=True).min() > 0.999


def test_masked_accuracy_scores_only_targets_and_metric_restores_mode():
    model = _built()
    tokens = torch.randint(12, (5, 6))
    targets = torch.full_like(tokens, IGNORE)
    logits, _ = model(tokens)
    targets[:, 2] = logits.argmax(-1)[:, 2]
    evaluate = masked_accuracy((tokens, targets))
    model.train()
    metric = metric_function(model, evaluate)
    assert metric([]) == 1.0
    assert model.training
    with pytest.raises(ValueError, match="outside"):
        metric([(1, 0)])
    with pytest.raises(ValueError, match="one shape"):
        masked_accuracy((tokens, targets[:, :3]))


def test_head_shape_needs_a_config():
    assert head_shape(_built()) == (1, H)
    with pytest.raises(TypeError, match="config"):
        head_shape(torch.nn.Linear(2, 2))


def test_reinitialise_changes_only_the_heads_rows_and_columns():
    model = _built()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    reinitialise_heads(model, [(0, 2)], torch.Generator().manual_seed(0))
    after = model.state_dict()
    rows = slice(2 * D, 3 * D)
    for name in ("q_proj", "k_proj", "v_proj"):
        w0, w1 = before[f"blocks.0.attn.{name}.weight"], after[f"blocks.0.attn.{name}.weight"]
        assert not torch.equal(w0[rows], w1[rows])
        keep = torch.ones(E, dtype=torch.bool)
        keep[rows] = False
        assert torch.equal(w0[keep], w1[keep])
    out0, out1 = before["blocks.0.attn.out_proj.weight"], after["blocks.0.attn.out_proj.weight"]
    assert out1[:, rows].abs().max() > 0  # the dead head's zero columns are alive again
    assert torch.equal(out0[:, : 2 * D], out1[:, : 2 * D])
    assert out1[:, rows].abs().max() <= 1 / E**0.5
    with pytest.raises(ValueError, match="outside"):
        reinitialise_heads(model, [(0, 4)])
    gqa = LabModel(LabConfig(12, 5, d_model=E, num_heads=H, num_kv_heads=2, num_layers=1))
    with pytest.raises(ValueError, match="num_kv_heads"):
        reinitialise_heads(gqa, [(0, 0)])
