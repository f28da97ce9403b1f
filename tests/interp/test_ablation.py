"""Head ablation, by forward pre-hooks or by the head mask (one API, two strategies): zero and
mean ablation, joint removal, and the verdicts needed / redundant / dead, checked against
head_mask and on hand-made accuracies."""

import random
import re

import pytest
import torch

from attnbook.interp.ablation import (
    ablated,
    accuracy_function,
    accuracy_with_heads_off,
    attention_modules,
    erase_tokens,
    head_mask,
    head_means,
    head_shape,
    metric_function,
    replace_head,
)
from attnbook.interp.redundancy import (
    greedy_removal,
    head_verdicts,
    joint_contributions,
    pair_costs,
    single_head_costs,
)
from attnbook.models.detective import Detective, DetectiveConfig
from attnbook.tasks.coref import CorefTask, Vocabulary, collate

H, D = 4, 4


@pytest.fixture(scope="module")
def detective_and_batch():
    torch.manual_seed(0)
    task = CorefTask("en")
    vocab = Vocabulary.for_tasks(task)
    config = DetectiveConfig(len(vocab), d_model=H * D, nhead=H, num_layers=2)
    model = Detective(config).eval()
    return model, collate(task.examples(32, "test"), vocab)


def out_proj_inputs(model, batch):
    """What each layer's out_proj receives, (N, S, H*D) per layer."""
    seen = []
    handles = [
        m.out_proj.register_forward_pre_hook(lambda _, args: seen.append(args[0]))
        for m in attention_modules(model)
    ]
    with torch.no_grad():
        logits, _ = model.run(batch)
    for handle in handles:
        handle.remove()
    return seen, logits


# -- replace_head ------------------------------------------------------------------------------
def test_replace_head_changes_only_that_heads_contiguous_features_and_not_its_input():
    x = torch.randn(2, 3, H * D)
    before = x.clone()
    out = replace_head(x, 2, H, 0.0)
    assert torch.equal(x, before)
    assert torch.equal(out[..., 2 * D : 3 * D], torch.zeros(2, 3, D))
    keep = torch.ones(H * D, dtype=torch.bool)
    keep[2 * D : 3 * D] = False
    assert torch.equal(out[..., keep], x[..., keep])


def test_replace_head_broadcasts_a_per_feature_value_over_positions():
    value = torch.arange(D, dtype=torch.float32)
    out = replace_head(torch.randn(2, 3, H * D), 1, H, value)
    assert torch.equal(out[..., D : 2 * D], value.expand(2, 3, D))


def test_replace_head_works_on_the_meta_device():
    out = replace_head(torch.empty(2, 3, H * D, device="meta"), 0, H)
    assert out.device.type == "meta" and out.shape == (2, 3, H * D)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((torch.zeros(2, 3, 10), 0, H), "num_heads=4 must divide"),
        ((torch.zeros(2, 3, H * D), H, H), "head must be in [0, 4)"),
        ((torch.zeros(2, 3, H * D), 0, H, torch.zeros(D + 1)), "shape (D,) = (4,)"),
    ],
)
def test_replace_head_names_the_bad_argument(args, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        replace_head(*args)


def test_replace_head_rejects_a_non_tensor():
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        replace_head([[0.0] * 8], 0, 2)


# -- ablated -----------------------------------------------------------------------------------
def test_zero_ablation_is_the_same_as_head_mask_zero(detective_and_batch):
    model, batch = detective_and_batch
    mask = torch.ones(2, H)
    mask[0, 1] = mask[1, 3] = 0
    with torch.no_grad():
        expected, _ = model.run(batch, head_mask=mask)
        with ablated(model, [(0, 1), (1, 3)]):
            got, _ = model.run(batch)
    torch.testing.assert_close(got, expected)


def test_mean_ablation_puts_the_mean_in_that_head_and_leaves_the_others(detective_and_batch):
    model, batch = detective_and_batch
    means = torch.randn(2, H, D)
    intact, _ = out_proj_inputs(model, batch)
    with ablated(model, [(0, 2)], means):
        seen, _ = out_proj_inputs(model, batch)
    assert torch.equal(seen[0][..., 2 * D : 3 * D], means[0, 2].expand_as(seen[0][..., :D]))
    others = torch.ones(H * D, dtype=torch.bool)
    others[2 * D : 3 * D] = False
    assert torch.equal(seen[0][..., others], intact[0][..., others])


def test_hooks_are_removed_on_leaving_the_block_even_after_an_error(detective_and_batch):
    model, batch = detective_and_batch
    with torch.no_grad():
        intact, _ = model.run(batch)
        with pytest.raises(RuntimeError, match="inside"), ablated(model, [(0, 0)]):
            raise RuntimeError("inside")
        after, _ = model.run(batch)
    assert torch.equal(after, intact)
    assert all(not m.out_proj._forward_pre_hooks for m in attention_modules(model))


def test_ablated_rejects_heads_that_do_not_exist_and_means_of_the_wrong_shape(
    detective_and_batch,
):
    model, _ = detective_and_batch
    with pytest.raises(ValueError, match=r"head \(2, 0\) does not exist"), ablated(model, [(2, 0)]):
        pass
    with pytest.raises(ValueError, match=r"means must have shape \(layers, H, D\) = \(2, 4, 4\)"):
        with ablated(model, [(0, 0)], torch.zeros(2, H, D + 1)):
            pass


def test_attention_modules_refuses_a_model_without_attention():
    with pytest.raises(ValueError, match="no attnbook MultiHeadAttention"):
        attention_modules(torch.nn.Linear(2, 2))


# -- head_means and accuracy_function ----------------------------------------------------------
def test_head_means_average_each_heads_output_over_real_positions_only(detective_and_batch):
    model, batch = detective_and_batch
    seen, _ = out_proj_inputs(model, batch)
    real = ~batch.key_padding_mask  # (N, S)
    expected = torch.stack([x[real].mean(0).view(H, D) for x in seen])  # (layers, H, D)
    torch.testing.assert_close(head_means(model, batch), expected)


def test_head_means_refuses_a_model_that_runs_a_layer_twice(detective_and_batch):
    model, batch = detective_and_batch

    class Twice(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def run(self, batch):
            self.inner.run(batch)
            return self.inner.run(batch)

    with pytest.raises(ValueError, match=r"run once per forward pass; got \[2, 2\]"):
        head_means(Twice(), batch)


def test_accuracy_function_matches_a_direct_run_and_caches_by_the_set_of_heads(
    detective_and_batch,
):
    model, batch = detective_and_batch
    calls = []
    handle = model.register_forward_hook(lambda *_: calls.append(1))
    accuracy_of = accuracy_function(model, batch)
    first = accuracy_of([(0, 1), (1, 0)])
    assert accuracy_of([(1, 0), (0, 1)]) == first and len(calls) == 1
    handle.remove()
    mask = torch.ones(2, H)
    mask[0, 1] = mask[1, 0] = 0
    with torch.no_grad():
        logits, _ = model.run(batch, head_mask=mask)
    assert first == (logits.argmax(-1) == batch.target).float().mean().item()


# -- greedy removal, joint contributions, verdicts (hand-made accuracies) ------------------------
def hand_made(losses: dict, pairs: dict | None = None):
    """accuracy_of(heads): 1 minus each head's loss, minus an extra loss for some pairs together
    (two heads that cover for each other)."""

    def accuracy_of(heads):
        heads = set(heads)
        loss = sum(losses[h] for h in heads)
        loss += sum(extra for pair, extra in (pairs or {}).items() if pair <= heads)
        return torch.tensor(1.0 - loss, dtype=torch.float32).item()

    return accuracy_of


def test_single_head_costs_are_each_heads_loss_alone():
    accuracy_of = hand_made({(0, 0): 0.25, (0, 1): 0.0})
    torch.testing.assert_close(single_head_costs(accuracy_of, (1, 2)), torch.tensor([[0.25, 0.0]]))


def test_greedy_removal_skips_a_head_that_would_pass_the_tolerance_and_goes_on():
    a, b, c, d = (0, 0), (0, 1), (0, 2), (0, 3)
    accuracy_of = hand_made({a: 0.004, b: 0.004, c: 0.004, d: 0.0})
    assert greedy_removal([a, b, c, d], accuracy_of, tolerance=0.01) == [a, b, d]


def test_greedy_removal_counts_losing_exactly_the_tolerance_as_within_it():
    a, b = (0, 0), (0, 1)
    accuracy_of = hand_made({a: 3 / 600, b: 3 / 600})  # 6 of 600 sentences: one point
    assert greedy_removal([a, b], accuracy_of, tolerance=0.01) == [a, b]


def test_greedy_removal_depends_on_the_order_it_is_given():
    a, b, c = (0, 0), (0, 1), (0, 2)
    accuracy_of = hand_made({a: 0.0, b: 0.0, c: 0.0}, {frozenset({a, b}): 0.5})
    assert greedy_removal([a, b, c], accuracy_of) == [a, c]
    assert greedy_removal([b, c, a], accuracy_of) == [b, c]


def test_greedy_removal_with_costs_goes_cheapest_first_and_keeps_tied_heads_in_the_given_order():
    a, b, c = (0, 0), (0, 1), (0, 2)
    accuracy_of = hand_made({a: 0.0, b: 0.0, c: 0.0}, {frozenset({b, c}): 0.5})
    costs = {a: 0.004, b: 0.0, c: 0.0}
    assert greedy_removal([a, b, c], accuracy_of, costs=costs) == [b, a]
    assert greedy_removal([a, c, b], accuracy_of, costs=costs) == [c, a]


def test_greedy_removal_with_an_rng_shuffles_only_ties_and_repeats_with_the_same_seed():
    heads = [(0, h) for h in range(6)]
    accuracy_of = hand_made(dict.fromkeys(heads, 0.0))
    costs = {h: (0.001 if h[1] < 3 else 0.0) for h in heads}  # three ties at 0, three at 0.001
    orders = {
        tuple(greedy_removal(heads, accuracy_of, costs=costs, rng=random.Random(seed)))
        for seed in range(20)
    }
    assert len(orders) > 1  # ties broken differently
    for order in orders:
        assert {h[1] for h in order[:3]} == {3, 4, 5}  # the cheaper heads always come first
    same = [greedy_removal(heads, accuracy_of, costs=costs, rng=random.Random(7)) for _ in range(2)]
    assert same[0] == same[1]


def test_greedy_removal_needs_a_cost_for_every_candidate():
    with pytest.raises(ValueError, match=r"costs has no entry for the candidates \[\(0, 1\)\]"):
        greedy_removal([(0, 0), (0, 1)], hand_made({(0, 0): 0.0, (0, 1): 0.0}), costs={(0, 0): 0})


def test_pair_costs_give_each_pairs_loss_and_its_excess_over_the_two_alone():
    a, b, c = (0, 0), (0, 1), (0, 2)
    accuracy_of = hand_made({a: 0.002, b: 0.0, c: 0.001}, {frozenset({a, b}): 0.2})
    out = pair_costs([a, b, c], accuracy_of)
    assert list(out) == [(a, b), (a, c), (b, c)]
    assert out[a, b] == pytest.approx((0.202, 0.2))  # twins: together far more than alone
    assert out[a, c] == pytest.approx((0.003, 0.0), abs=1e-6)  # small effects that add up


def test_joint_contributions_put_back_removed_heads_and_add_the_others():
    a, b, c = (0, 0), (0, 1), (0, 2)
    twins = frozenset({a, b})  # a and b do one job: either alone is enough
    accuracy_of = hand_made({a: 0.0, b: 0.0, c: 0.0}, {twins: 0.2})
    out = joint_contributions([a, b, c], [a, c], accuracy_of)
    assert out[a] == pytest.approx(0.0)  # putting a back with b present regains nothing
    assert out[c] == pytest.approx(0.0)
    assert out[b] == pytest.approx(0.2)  # b is the last of the twins: removing it too costs


def test_verdicts_tell_needed_dead_and_redundant_heads_apart():
    a, b, c, d = (0, 0), (0, 1), (0, 2), (0, 3)
    alone = torch.tensor([[0.3, 0.0, 0.0, 0.002]])  # a needed; b, c, d harmless alone
    removed = [c, d]
    joint = {b: 0.2, c: 0.0, d: 0.01}  # b cannot join; putting d back regains a point
    assert head_verdicts(alone, removed, joint) == {
        a: "needed",
        b: "redundant",
        c: "dead",
        d: "redundant",
    }


def test_verdicts_judge_a_harmless_head_by_its_joint_contribution_only():
    a, b = (0, 0), (0, 1)
    alone = torch.tensor([[0.0, 0.0]])
    # b was left in (the set was full), but removing it as well would cost almost nothing
    assert head_verdicts(alone, [a], {a: 0.0, b: 0.002}) == {a: "dead", b: "dead"}


def test_verdicts_need_a_joint_contribution_for_every_harmless_head():
    with pytest.raises(ValueError, match=r"no contribution for the harmless head \(0, 1\)"):
        head_verdicts(torch.tensor([[0.3, 0.0]]), [], {})


# -- erase_tokens ------------------------------------------------------------------------------
def test_an_erased_token_gets_no_weight_and_cannot_be_the_answer(detective_and_batch):
    model, batch = detective_and_batch
    where = torch.zeros_like(batch.tokens, dtype=torch.bool)
    where[:, 1] = True
    erased = erase_tokens(batch, where)
    with torch.no_grad():
        logits, weights = model.run(erased, need_weights=True)
    assert all(bool((w[..., 1] == 0).all()) for w in weights)  # (N, H, S, S): key 1 unread
    assert bool(torch.isneginf(logits[:, 1]).all())
    assert torch.equal(erased.tokens[~where], batch.tokens[~where])
    assert torch.equal(erased.tokens[where], torch.zeros(len(batch.tokens), dtype=torch.long))


def test_erase_tokens_needs_a_bool_mask_of_the_batch_shape(detective_and_batch):
    _, batch = detective_and_batch
    with pytest.raises(ValueError, match="where must be a bool tensor of the batch's shape"):
        erase_tokens(batch, torch.zeros(2, 2, dtype=torch.bool))


# -- one API, two strategies -------------------------------------------------------------------
def test_zero_ablation_by_hook_and_by_mask_give_the_same_accuracy(detective_and_batch):
    model, batch = detective_and_batch
    by_hook = accuracy_function(model, batch, by="hook")
    by_mask = accuracy_function(model, batch, by="mask")
    for heads in ([], [(0, 1)], [(0, 0), (1, 3)], [(1, h) for h in range(H)]):
        assert by_hook(heads) == pytest.approx(by_mask(heads), abs=1e-6)


def test_the_mask_strategy_hands_evaluate_the_head_mask_and_the_hooks_hand_none(
    detective_and_batch,
):
    model, _ = detective_and_batch
    seen = []
    metric_function(model, lambda m, mask: seen.append(mask) or 0.0, by="mask")([(1, 2)])
    metric_function(model, lambda m, mask: seen.append(mask) or 0.0, by="hook")([(1, 2)])
    expected = torch.ones(2, H)
    expected[1, 2] = 0
    assert torch.equal(seen[0], expected) and seen[1] is None


def test_accuracy_with_heads_off_is_one_measurement_by_the_mask(detective_and_batch):
    model, batch = detective_and_batch
    heads = [(0, 2), (1, 0)]
    assert accuracy_with_heads_off(model, batch, heads) == accuracy_function(
        model, batch, by="mask"
    )(heads)


def test_metric_function_names_a_bad_strategy_and_mean_ablation_by_mask(detective_and_batch):
    model, batch = detective_and_batch
    with pytest.raises(ValueError, match="by must be"):
        metric_function(model, lambda m, mask: 0.0, by="prune")
    with pytest.raises(ValueError, match='needs by="hook"'):
        metric_function(model, lambda m, mask: 0.0, by="mask", means=head_means(model, batch))


def test_head_mask_zeroes_the_listed_heads_and_rejects_a_head_outside_the_shape():
    mask = head_mask((2, 3), [(0, 1), (1, 2)])
    assert mask.tolist() == [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    with pytest.raises(ValueError, match=r"head \(2, 0\) is outside"):
        head_mask((2, 3), [(2, 0)])


def test_head_shape_reads_the_detectives_nhead_and_refuses_a_model_without_a_config(
    detective_and_batch,
):
    model, _ = detective_and_batch
    assert head_shape(model) == (2, H)
    with pytest.raises(TypeError, match="config.num_layers"):
        head_shape(torch.nn.Linear(2, 2))
