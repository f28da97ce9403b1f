"""The tuning losses: known values on hand-built maps, gradients that flow, bad shapes named."""

import math

import pytest
import torch
import torch.nn.functional as F

from attnbook.lab.lab_model import IGNORE, LabConfig, LabModel
from attnbook.lab.tuning import (
    attention_transfer_loss,
    distillation_loss,
    head_diversity_penalty,
    head_output_share,
    head_similarity,
    head_supervision_loss,
    previous_token_map,
)


def one_hot_maps(columns: list[list[int]], S: int) -> torch.Tensor:
    """(1, H, L, S) maps: head h's row i is one-hot on key columns[h][i]."""
    return F.one_hot(torch.tensor(columns), S).float()[None]


# distillation_loss


def test_distillation_with_alpha_zero_is_cross_entropy():
    torch.manual_seed(0)
    s, t = torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    y = torch.randint(4, (2, 5))
    y[0, :2] = IGNORE
    expected = F.cross_entropy(s.flatten(0, 1), y.flatten(), ignore_index=IGNORE)
    torch.testing.assert_close(distillation_loss(s, t, y, temperature=3.0, alpha=0.0), expected)


def test_distillation_soft_term_is_t_squared_kl_from_teacher_to_student():
    s, t = torch.tensor([[0.0, 1.0, 2.0]]), torch.tensor([[2.0, 0.0, 0.0]])
    T = 2.0
    p_t, p_s = torch.softmax(t / T, -1), torch.softmax(s / T, -1)
    kl = float((p_t * (p_t / p_s).log()).sum())
    out = distillation_loss(s, t, torch.tensor([0]), temperature=T, alpha=1.0)
    assert math.isclose(float(out), T * T * kl, rel_tol=1e-5)


def test_distillation_is_zero_soft_loss_when_student_equals_teacher():
    logits = torch.randn(3, 6)
    out = distillation_loss(logits, logits.clone(), torch.zeros(3, dtype=torch.long), alpha=1.0)
    assert abs(float(out)) < 1e-6


def test_distillation_gradient_reaches_the_student_not_the_teacher():
    s = torch.randn(4, 3, requires_grad=True)
    t = torch.randn(4, 3, requires_grad=True)
    distillation_loss(s, t, torch.tensor([0, 1, 2, IGNORE])).backward()
    assert s.grad is not None and s.grad.abs().sum() > 0 and s.grad[3].abs().sum() == 0
    assert t.grad is None


def test_distillation_names_bad_shapes_and_arguments():
    with pytest.raises(ValueError, match="student_logits and teacher_logits"):
        distillation_loss(torch.zeros(2, 3), torch.zeros(2, 4), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="targets must be"):
        distillation_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="temperature"):
        distillation_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2).long(), 0.0)
    with pytest.raises(ValueError, match="no scored"):
        distillation_loss(torch.zeros(1, 3), torch.zeros(1, 3), torch.tensor([IGNORE]))


# attention_transfer_loss


def test_attention_transfer_is_zero_for_equal_heads_and_kl_for_different_ones():
    teacher = [one_hot_maps([[0, 1], [1, 0]], 2)]  # (1, 2, 2, 2)
    student = [torch.full((1, 1, 2, 2), 0.5)]
    pairs = [((0, 0), (0, 1))]
    assert float(attention_transfer_loss([teacher[0][:, 1:]], teacher, pairs)) == 0.0
    # KL(one-hot || uniform over 2) = log 2 on every row
    assert math.isclose(
        float(attention_transfer_loss(student, teacher, pairs)), math.log(2), rel_tol=1e-6
    )
    # MSE: every row is (0.5, 0.5) against (1, 0): squared error 0.25 per weight
    mse = attention_transfer_loss(student, teacher, pairs, kind="mse")
    assert math.isclose(float(mse), 0.25, rel_tol=1e-6)


def test_attention_transfer_leaves_out_empty_teacher_rows_and_detaches_the_teacher():
    teacher = torch.tensor([[[[1.0, 0.0], [0.0, 0.0]]]], requires_grad=True)  # row 1 empty
    student = torch.tensor([[[[1.0, 0.0], [0.5, 0.5]]]], requires_grad=True)
    loss = attention_transfer_loss([student], [teacher], [((0, 0), (0, 0))])
    assert float(loss.detach()) == 0.0
    attention_transfer_loss([student], [teacher], [((0, 0), (0, 0))], kind="mse").backward()
    assert teacher.grad is None and student.grad is not None


def test_attention_transfer_names_bad_pairs_and_shapes():
    w = [torch.full((1, 2, 3, 3), 1 / 3)]
    with pytest.raises(ValueError, match="at least one"):
        attention_transfer_loss(w, w, [])
    with pytest.raises(ValueError, match="names a layer"):
        attention_transfer_loss(w, w, [((1, 0), (0, 0))])
    with pytest.raises(ValueError, match="names a head"):
        attention_transfer_loss(w, w, [((0, 2), (0, 0))])
    with pytest.raises(ValueError, match="share N, L, S"):
        attention_transfer_loss(w, [torch.full((1, 2, 4, 4), 0.25)], [((0, 0), (0, 0))])
    with pytest.raises(ValueError, match="kind"):
        attention_transfer_loss(w, w, [((0, 0), (0, 0))], kind="l1")


# head_similarity and head_diversity_penalty


def test_head_similarity_of_known_maps():
    maps = one_hot_maps([[0, 1, 2], [0, 1, 2], [1, 2, 0]], 3)  # heads 0 and 1 equal, 2 disjoint
    sim = head_similarity(maps)
    torch.testing.assert_close(
        sim, torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    )
    uniform = torch.full((1, 1, 3, 3), 1 / 3)
    torch.testing.assert_close(
        head_similarity(uniform, maps[:, :1]), torch.full((1, 1), 1 / math.sqrt(3))
    )


def test_diversity_penalty_is_one_for_copies_zero_for_disjoint_heads():
    same = one_hot_maps([[0, 1], [0, 1]], 2)
    apart = one_hot_maps([[0, 1], [1, 0]], 2)
    assert math.isclose(float(head_diversity_penalty(same)), 1.0, rel_tol=1e-6)
    assert float(head_diversity_penalty(apart)) == 0.0


def test_diversity_penalty_gradient_flows_to_the_weights():
    scores = torch.randn(2, 3, 4, 4, requires_grad=True)
    head_diversity_penalty(torch.softmax(scores, -1)).backward()
    assert scores.grad is not None and scores.grad.abs().sum() > 0


def test_diversity_penalty_names_bad_input():
    with pytest.raises(ValueError, match="at least 2 heads"):
        head_diversity_penalty(torch.ones(1, 1, 2, 2))
    with pytest.raises(ValueError, match=r"\(N, H, L, S\)"):
        head_diversity_penalty(torch.ones(2, 2, 2))
    with pytest.raises(TypeError, match="must be a tensor"):
        head_similarity([[0.5, 0.5]])


# head_supervision_loss


def test_previous_token_map():
    target = previous_token_map(4)
    assert target[0].sum() == 0
    assert target[1:].argmax(-1).tolist() == [0, 1, 2] and target.sum() == 3


def test_supervision_is_zero_on_the_target_and_log_s_on_uniform_rows():
    L = 4
    target = previous_token_map(L)
    weights = torch.stack([target, torch.full((L, L), 1 / L)])[None]  # (1, 2, L, L)
    weights[0, 0, 0] = 1 / L  # the empty target row is not scored, whatever it holds
    assert abs(float(head_supervision_loss(weights, target, head=0))) < 1e-6
    assert math.isclose(
        float(head_supervision_loss(weights, target, head=1)), math.log(L), rel_tol=1e-6
    )


def test_supervision_gradient_reaches_only_the_supervised_head():
    scores = torch.randn(2, 3, 5, 5, requires_grad=True)
    head_supervision_loss(torch.softmax(scores, -1), previous_token_map(5), head=1).backward()
    assert scores.grad[:, 1].abs().sum() > 0 and scores.grad[:, [0, 2]].abs().sum() == 0


def test_supervision_names_bad_input():
    w = torch.full((2, 2, 3, 3), 1 / 3)
    with pytest.raises(ValueError, match="target_map must be"):
        head_supervision_loss(w, previous_token_map(4), 0)
    with pytest.raises(ValueError, match="head must be"):
        head_supervision_loss(w, previous_token_map(3), 2)
    with pytest.raises(ValueError, match="no row"):
        head_supervision_loss(w, torch.zeros(3, 3), 0)
    with pytest.raises(ValueError, match="length"):
        previous_token_map(1)


# head_output_share


def test_output_share_sums_to_one_and_sees_a_switched_off_head():
    torch.manual_seed(0)
    model = LabModel(LabConfig(10, 3, d_model=16, num_heads=4, num_layers=2))
    tokens = torch.randint(10, (3, 6))
    share = head_output_share(model, tokens)
    assert share.shape == (2, 4)
    torch.testing.assert_close(share.sum(-1), torch.ones(2))
    with torch.no_grad():
        model.blocks[1].attn.out_proj.weight[:, 4:8] = 0  # head 1 of layer 1 writes nothing
    assert float(head_output_share(model, tokens)[1, 1]) == 0.0
    model.train()
    head_output_share(model, tokens)
    assert model.training  # the model's mode is restored
    assert all(not block.attn.out_proj._forward_pre_hooks for block in model.blocks)


def test_output_share_restores_mode_and_hooks_when_the_forward_fails():
    model = LabModel(LabConfig(10, 3, d_model=16, num_heads=4, num_layers=1, max_len=8))
    model.train()
    with pytest.raises(ValueError, match="max_len"):
        head_output_share(model, torch.randint(10, (2, 20)))  # longer than max_len
    assert model.training
    assert not model.blocks[0].attn.out_proj._forward_pre_hooks
