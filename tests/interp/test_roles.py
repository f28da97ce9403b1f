"""Head statistics on hand-made attention patterns, with padding; ablation against head_mask."""

import math

import pytest
import torch

from attnbook.interp.roles import (
    bootstrap_interval,
    candidate_choice,
    head_statistics,
    hit_rate,
    offset_weight,
    pair_batch,
    pair_cosines,
    pruning_cosines,
    row_entropy,
    sentence_embeddings,
    separation,
    single_head_cosines,
    spearman,
    weight_on,
)
from attnbook.tasks.probes import similarity_pairs

L = 6
LENGTHS = (6, 4)  # the second sentence has 2 padding positions


def mask() -> torch.Tensor:
    return (torch.arange(L)[None, :] < torch.tensor(LENGTHS)[:, None]).long()  # (N, L)


def layer(kind: str) -> torch.Tensor:
    """(N, 1, L, L): one head of the named kind, restricted to each sentence's real keys."""
    rows = []
    for n in LENGTHS:
        w = torch.zeros(L, L)
        for i in range(n):
            j = {"previous": max(i - 1, 0), "next": min(i + 1, n - 1), "cls": 0, "sep": n - 1}[kind]
            w[i, j] = 1.0
        w[n:, :n] = 1.0 / n  # padding query rows: whatever they hold must not count
        rows.append(w)
    return torch.stack(rows)[:, None]


def uniform() -> torch.Tensor:
    w = mask()[:, None, None, :].float().expand(2, 1, L, L)
    return w / w.sum(-1, keepdim=True)


def test_a_previous_token_head_scores_exactly_one():
    w = [layer("previous")]
    assert offset_weight(w, mask(), -1).item() == 1.0
    assert offset_weight(w, mask(), 1).item() == 0.0


def test_a_next_token_head_scores_one_and_padding_is_never_a_next_token():
    w = [layer("next")]
    assert offset_weight(w, mask(), 1).item() == 1.0


def test_cls_and_sep_heads_find_the_sep_before_padding():
    w = [layer("cls"), layer("sep")]
    stats = head_statistics(w, mask(), torch.zeros(2, L, dtype=torch.bool))
    assert stats["[CLS]"].flatten().tolist() == [1.0, 0.0]
    assert stats["[SEP]"].flatten().tolist() == [0.0, 1.0]
    assert stats["entropy"].flatten().tolist() == [0.0, 0.0]


def test_uniform_rows_over_real_keys():
    stats = head_statistics([uniform()], mask(), torch.zeros(2, L, dtype=torch.bool))
    queries = sum(LENGTHS)  # every real query counts once
    expected_cls = (6 * (1 / 6) + 4 * (1 / 4)) / queries
    assert stats["[CLS]"].item() == pytest.approx(expected_cls)
    assert stats["entropy"].item() == pytest.approx((6 * math.log(6) + 4 * math.log(4)) / queries)
    # previous: queries 1..n-1 of each sentence, each 1/n
    assert stats["previous"].item() == pytest.approx((5 / 6 + 3 / 4) / 8)


def test_padding_keys_are_not_counted_as_targets():
    keys = torch.ones(2, L, dtype=torch.bool)  # padding marked as a key too
    w = [uniform()]
    assert weight_on(w, mask(), keys).item() == pytest.approx(1.0)


def test_entropy_ignores_padding_query_rows():
    w = layer("previous").clone()
    w[1, 0, 4:] = 0.25  # noisy padding rows
    assert row_entropy([w], mask()).item() == 0.0


def test_candidate_choice_and_hit_rate():
    w = torch.zeros(1, 2, 1, L, L)  # (Y, N, H, L, L)
    w[0, 0, 0, 3, 1], w[0, 0, 0, 3, 2] = 0.7, 0.3  # sentence 0: pronoun 3 prefers position 1
    w[0, 1, 0, 3, 1], w[0, 1, 0, 3, 2] = 0.2, 0.8  # sentence 1: prefers position 2
    choice = candidate_choice(w, torch.tensor([3, 3]), torch.tensor([[1, 2], [1, 2]]))
    assert choice.tolist() == [[[0], [1]]]
    assert hit_rate(choice, torch.tensor([0, 0])).item() == 0.5
    with pytest.raises(ValueError, match="candidates"):
        candidate_choice(w, torch.tensor([3, 3]), torch.tensor([1, 2]))


def test_bad_mask_shape_is_named():
    with pytest.raises(ValueError, match=r"attention_mask must have shape \(N, L\) = \(2, 6\)"):
        weight_on([uniform()], torch.ones(2, 5), torch.ones(2, 5, dtype=torch.bool))


def test_bootstrap_interval_brackets_the_mean_and_is_seeded():
    values = torch.tensor([0.0, 1.0] * 50)
    low, high = bootstrap_interval(values, n=500, seed=1)
    assert low < 0.5 < high and high - low < 0.3
    assert bootstrap_interval(values, n=500, seed=1) == (low, high)


def test_separation_and_pair_cosines():
    e = torch.nn.functional.normalize(torch.tensor([[1.0, 0], [1, 0], [1, 0], [0, 1]]), dim=-1)
    cos = pair_cosines(e)  # rows 0-1 against rows 2-3
    assert cos.tolist() == [1.0, 0.0]
    assert separation(cos, torch.tensor([True, False])).item() == 1.0
    with pytest.raises(ValueError, match="both labels"):
        separation(cos, torch.tensor([True, True]))


def test_spearman_on_hand_ranks():
    assert spearman(
        torch.tensor([1.0, 2, 3, 4]), torch.tensor([10.0, 20, 30, 40])
    ) == pytest.approx(1)
    assert spearman(torch.tensor([1.0, 2, 3]), torch.tensor([3.0, 2, 1])) == pytest.approx(-1)
    # ties share their average rank: ranks (1.5, 1.5, 3) against (1, 2, 3)
    assert spearman(torch.tensor([0.0, 0, 1]), torch.tensor([1.0, 2, 3])) == pytest.approx(
        math.sqrt(3) / 2
    )


@pytest.fixture(scope="module")
def small():
    from attnbook.pretrained import minilm

    model = minilm()[0]
    ids, attention_mask, paraphrase = pair_batch(model, similarity_pairs(4, seed=0))
    return model, ids, attention_mask, paraphrase


def test_single_head_ablation_equals_head_mask(small):
    model, ids, attention_mask, _ = small
    cos = single_head_cosines(model, ids, attention_mask)
    assert cos.shape == (6, 12, 4)
    for l, h in [(0, 2), (3, 7), (5, 11)]:
        head_mask = torch.ones(6, 12)
        head_mask[l, h] = 0
        expected = pair_cosines(sentence_embeddings(model, ids, attention_mask, head_mask))
        torch.testing.assert_close(cos[l, h], expected, atol=1e-5, rtol=0)


def test_sentence_embeddings_equal_embed_and_pruning_starts_intact(small):
    model, ids, attention_mask, _ = small
    pairs = similarity_pairs(4, seed=0)
    torch.testing.assert_close(
        sentence_embeddings(model, ids, attention_mask),
        model.embed([p.first for p in pairs] + [p.second for p in pairs]),
    )
    curve = pruning_cosines(model, ids, attention_mask, [(0, 0), (1, 1)], [0, 2])
    intact = pair_cosines(sentence_embeddings(model, ids, attention_mask))
    torch.testing.assert_close(curve[0], intact)
    with pytest.raises(ValueError, match="distinct"):
        pruning_cosines(model, ids, attention_mask, [(0, 0), (0, 0)], [1])
