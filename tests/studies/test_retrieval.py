"""The retrieval sweep of chapter 10: what it trains, what it measures, and the inputs it refuses."""

import pytest
import torch

from attnbook.models.toy import ToyConfig, ToyModel
from attnbook.studies.retrieval import (
    RetrievalConfig,
    retrieval_sweep,
    retrieval_test_set,
    train_retrieval,
    train_retrieval_seeds,
    weight_on_answer,
    weight_profile,
)

TINY = RetrievalConfig(
    items=4, num_keys=8, num_values=4, embed_dim=16, steps=4, eval_every=2, test_size=64
)


def blind_model(attention: str) -> ToyModel:
    """A retrieval ToyModel whose queries and keys are all zero: it weighs every position alike."""
    model = ToyModel(
        ToyConfig(
            vocab_size=8,
            value_vocab=5,
            num_classes=4,
            embed_dim=16,
            positions=False,
            attention=attention,
        )
    )
    for proj in (model.q_proj, model.k_proj):
        torch.nn.init.zeros_(proj.weight)
        torch.nn.init.zeros_(proj.bias)
    return model.eval()


@pytest.mark.parametrize("attention", ["full", "linear"])
def test_uniform_weights_put_one_over_length_on_the_answer(attention):
    keys, values, _ = retrieval_test_set(TINY)  # (N, 5): 4 items and the query
    weight = weight_on_answer(blind_model(attention), keys, values)
    torch.testing.assert_close(weight, torch.full((2,), 1 / 5))


def test_weight_on_answer_counts_only_the_matching_item():
    model = blind_model("full")
    torch.nn.init.eye_(model.q_proj.weight)
    torch.nn.init.eye_(model.k_proj.weight)
    model.q_proj.weight.data *= 50.0  # a sharp softmax: the query's own key dominates
    keys, values, _ = retrieval_test_set(TINY)
    weights = model.attention_weights(keys, values)[:, :, -1, :-1]  # (N, H, P)
    match = keys[:, :-1] == keys[:, -1:]
    expected = (weights * match[:, None]).sum(-1).mean(0)
    torch.testing.assert_close(weight_on_answer(model, keys, values), expected)


@pytest.mark.parametrize("attention", ["full", "linear"])
def test_uniform_weights_profile_as_a_blur_over_every_position(attention):
    keys, values, _ = retrieval_test_set(TINY)  # L = 5
    profile = weight_profile(blind_model(attention), keys, values)
    for weight in (
        profile.answer,
        profile.largest_other,
        profile.second_other,
        profile.median_other,
        profile.own,
    ):
        assert weight == pytest.approx(1 / 5)
    assert profile.effective_positions == pytest.approx(5)


def test_the_profile_head_and_answer_agree_with_weight_on_answer():
    model = blind_model("full")
    torch.nn.init.eye_(model.q_proj.weight)
    torch.nn.init.eye_(model.k_proj.weight)
    model.q_proj.weight.data *= 50.0
    keys, values, _ = retrieval_test_set(TINY)
    profile = weight_profile(model, keys, values)
    assert profile.head == int(weight_on_answer(model, keys, values).argmax())
    assert profile.answer == pytest.approx(weight_on_answer(model, keys, values).max().item())
    assert profile.largest_other >= profile.second_other >= profile.median_other
    assert 1 <= profile.effective_positions <= 5


def test_weight_profile_sorts_the_other_items_of_each_example():
    """Two other items with fixed weights: the largest and second largest are theirs."""

    class Fixed(torch.nn.Module):
        def attention_weights(self, keys, values):  # the query: answer 0.5, item 1 0.3, item 2 0.2
            w = torch.zeros(keys.size(0), 1, keys.size(1), keys.size(1))
            answer = (keys[:, :-1] == keys[:, -1:]).float().argmax(-1)
            others = [[j for j in range(keys.size(1) - 1) if j != a] for a in answer.tolist()]
            for n, a in enumerate(answer.tolist()):
                w[n, 0, -1, a], w[n, 0, -1, others[n][0]], w[n, 0, -1, others[n][1]] = 0.5, 0.3, 0.2
            return w

    keys, values, _ = retrieval_test_set(TINY)
    profile = weight_profile(Fixed(), keys, values)
    assert (profile.answer, profile.largest_other, profile.second_other) == pytest.approx(
        (0.5, 0.3, 0.2)
    )
    assert profile.median_other == pytest.approx(0.2)  # of 0.3, 0.2 and 0 on the other three
    assert profile.own == 0.0
    assert profile.effective_positions == pytest.approx(1 / (0.25 + 0.09 + 0.04))


def test_weight_profile_needs_three_items():
    keys, values, _ = retrieval_test_set(RetrievalConfig(items=2, num_keys=8, num_values=4))
    with pytest.raises(ValueError, match="at least 3 items"):
        weight_profile(blind_model("full"), keys, values)


def test_weight_on_answer_rejects_a_query_key_that_is_not_among_the_items():
    keys, values, _ = retrieval_test_set(TINY)
    keys = keys.clone()
    keys[0, -1] = (set(range(8)) - set(keys[0, :-1].tolist())).pop()
    with pytest.raises(ValueError, match="exactly once"):
        weight_on_answer(blind_model("full"), keys, values)


def test_weight_on_answer_rejects_mismatched_shapes():
    keys, values, _ = retrieval_test_set(TINY)
    with pytest.raises(ValueError, match=r"\(N, L\).*\(64, 5\).*\(64, 4\)"):
        weight_on_answer(blind_model("full"), keys, values[:, :-1])


def test_a_run_records_its_learning_curve_and_returns_its_model_in_eval_mode():
    run = train_retrieval("linear", TINY, seed=3)
    assert (run.attention, run.items, run.seed) == ("linear", 4, 3)
    assert run.curve_steps == [2, 4]
    assert run.accuracy == run.curve[-1]
    assert 0.0 < run.weight_on_answer < 1.0
    assert run.model is not None and not run.model.training


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    a, b, c = (train_retrieval("full", TINY, seed=s) for s in (0, 0, 1))
    assert (a.curve, a.weight_on_answer) == (b.curve, b.weight_on_answer)
    assert not torch.equal(a.model.q_proj.weight, c.model.q_proj.weight)


def test_softmax_learns_a_small_retrieval_task():
    config = RetrievalConfig(
        items=4, num_keys=8, num_values=4, embed_dim=16, steps=150, eval_every=150, test_size=128
    )
    run = train_retrieval("full", config)
    assert run.accuracy >= 0.9  # chance is 1 / 4
    assert run.weight_on_answer >= 0.5  # uniform would be 1 / 5


def test_a_sweep_runs_the_whole_grid_in_order_and_drops_the_models():
    runs = retrieval_sweep(("full", "linear"), (2, 3), (0, 1), TINY, progress=False)
    assert [(r.attention, r.items, r.seed) for r in runs] == [
        (a, p, s) for a in ("full", "linear") for p in (2, 3) for s in (0, 1)
    ]
    assert all(r.model is None for r in runs)
    kept = retrieval_sweep(("full",), (2,), (0,), TINY, keep_models=True, progress=False)
    assert kept[0].model is not None


def test_a_sweep_item_count_is_the_runs_number_of_items():
    (run,) = retrieval_sweep(("full",), (3,), (0,), TINY, keep_models=True, progress=False)
    assert run.items == 3
    assert run.model.config.max_len == 4  # three items and the query


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(attentions=(), items=(2,), seeds=(0,)), "non-empty"),
        (dict(attentions=("full",), items=(9,), seeds=(0,)), r"items must be in \[1, num_keys=8\]"),
        (dict(attentions=("full",), items=(0,), seeds=(0,)), "items must be"),
    ],
)
def test_a_sweep_refuses_an_empty_grid_or_impossible_item_counts(kwargs, message):
    with pytest.raises(ValueError, match=message):
        retrieval_sweep(config=TINY, progress=False, **kwargs)


def test_only_softmax_and_linear_attention_are_compared():
    with pytest.raises(ValueError, match="attention must be 'full' or 'linear'"):
        train_retrieval("local", TINY)


@pytest.mark.parametrize("attention", ["full", "linear"])
def test_seeds_trained_side_by_side_match_their_solo_runs(attention):
    together = train_retrieval_seeds(attention, TINY, (0, 3))
    assert [run.seed for run in together] == [0, 3]
    for run in together:
        alone = train_retrieval(attention, TINY, seed=run.seed)
        assert run.curve_steps == alone.curve_steps
        assert run.weight_on_answer == pytest.approx(alone.weight_on_answer, abs=1e-4)
        for p, q in zip(run.model.parameters(), alone.model.parameters()):
            torch.testing.assert_close(p, q, atol=1e-4, rtol=1e-4)


def test_training_seeds_needs_at_least_one():
    with pytest.raises(ValueError, match="seeds must be non-empty"):
        train_retrieval_seeds("full", TINY, ())
