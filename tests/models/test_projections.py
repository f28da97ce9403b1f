"""Chapter 1's learned lookup: its data, its model, and what a tied W_Q = W_K cannot do."""

import pytest
import torch

from attnbook.models.handbuilt import (
    FEATURES,
    QUERY_MATRIX,
    attend,
    detective_sentences,
    features,
    nearest_preceding_name,
    rule_based_antecedent,
    split_sentences,
)
from attnbook.models.projections import (
    ProjectedAttention,
    encode,
    lookup_accuracy,
    lookup_loss,
    train_lookup,
)

SENTENCES = detective_sentences()
TRAIN, HELD_OUT = split_sentences(SENTENCES)


def pattern(sentence):
    return str(features(sentence.tokens).tolist())


def of_pronoun(sentences, pronoun):
    return [s for s in sentences if s.tokens[s.pronoun] == pronoun]


def test_there_are_170_sentences_with_one_to_three_people():
    assert len(SENTENCES) == 170
    assert [sum(s.people == k for s in SENTENCES) for k in (1, 2, 3)] == [10, 64, 96]
    assert len({"".join(s.tokens) for s in SENTENCES}) == 170


def test_exactly_one_person_agrees_with_the_pronoun_and_it_is_the_antecedent():
    gender = {"他": "male", "她": "female"}
    for s in SENTENCES:
        x = features(s.tokens)
        g = FEATURES.index(gender[s.tokens[s.pronoun]])
        agreeing = [i for i in range(s.pronoun) if x[i, 0] == 1 and x[i, 3] == 0 and x[i, g] == 1]
        assert agreeing == [s.antecedent], "".join(s.tokens)
        assert rule_based_antecedent(s.tokens, s.pronoun) == s.antecedent


def test_the_nearest_name_is_right_in_a_third_of_the_three_person_sentences():
    three = [s for s in SENTENCES if s.people == 3]
    right = sum(nearest_preceding_name(s.tokens, s.pronoun) == s.antecedent for s in three)
    assert right * 3 == len(three)
    assert nearest_preceding_name(["他", "很", "累"], 0) is None


def test_the_170_sentences_have_46_patterns_of_features():
    assert len({pattern(s) for s in SENTENCES}) == 46


def test_the_split_keeps_every_sentence_once_and_no_pattern_on_both_sides():
    assert sorted(map(pattern, TRAIN + HELD_OUT)) == sorted(map(pattern, SENTENCES))
    assert len(TRAIN) + len(HELD_OUT) == len(SENTENCES)
    assert not {pattern(s) for s in TRAIN} & {pattern(s) for s in HELD_OUT}


def test_the_split_holds_out_a_third_of_each_kind_of_pattern():
    # (pronoun, people) -> patterns: 他 4 and 8, 她 2, 8 and 24; a third of each, rounded.
    held = {}
    for s in HELD_OUT:
        held.setdefault((s.tokens[s.pronoun], s.people), set()).add(pattern(s))
    assert {k: len(v) for k, v in held.items()} == {
        ("他", 1): 1,
        ("他", 2): 3,
        ("她", 1): 1,
        ("她", 2): 3,
        ("她", 3): 8,
    }
    assert len(of_pronoun(HELD_OUT, "他")) == 14 and len(of_pronoun(HELD_OUT, "她")) == 45


def test_the_split_is_deterministic_given_the_seed_and_changes_with_it():
    assert split_sentences(SENTENCES) == (TRAIN, HELD_OUT)
    assert split_sentences(SENTENCES, seed=1) != (TRAIN, HELD_OUT)
    with pytest.raises(ValueError, match="held_out must be a fraction"):
        split_sentences(SENTENCES, held_out=1.0)


def test_hand_set_projections_reproduce_the_hand_built_attention():
    model = ProjectedAttention(len(FEATURES), len(FEATURES))
    with torch.no_grad():
        model.query.weight.copy_(QUERY_MATRIX)
        model.key.weight.copy_(torch.eye(len(FEATURES)))
        model.value.weight.copy_(torch.eye(len(FEATURES)))
    tokens = list("老张对小丽说他很累")
    output, weights = model(features(tokens)[None])
    scores, expected_weights, expected_output = attend(tokens)
    torch.testing.assert_close(model.scores(features(tokens)[None])[0], scores)
    torch.testing.assert_close(weights[0], expected_weights)
    torch.testing.assert_close(output[0], expected_output)


def test_padding_gets_no_weight_and_rows_sum_to_one():
    batch = encode(SENTENCES[:20])
    _, weights = ProjectedAttention(6, 4)(batch.x, batch.keep)
    assert torch.all(weights.masked_select(~batch.keep[:, None, :]) == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:2]))


@pytest.mark.parametrize("seed", range(5))
def test_tied_scores_are_symmetric(seed):
    torch.manual_seed(seed)
    model = ProjectedAttention(6, 3, tie_query_key=True)
    assert model.tie_query_key and model.key is model.query
    scores = model.scores(encode(SENTENCES).x)
    torch.testing.assert_close(scores, scores.transpose(-2, -1))


@pytest.mark.parametrize("seed", range(5))
def test_tied_model_never_gives_both_partners_more_than_half(seed):
    # Cauchy–Schwarz: s(i,j)² <= s(i,i) s(j,j), so i and j cannot both prefer the other to
    # themselves, and whichever does not gives its partner at most half of its weight.
    torch.manual_seed(seed)
    model = ProjectedAttention(6, 6, tie_query_key=True)
    with torch.no_grad():
        model.query.weight.mul_(5.0)
    batch = encode(SENTENCES)
    _, weights = model(batch.x, batch.keep)
    n = torch.arange(len(SENTENCES))
    there = weights[n, batch.pronoun, batch.antecedent]
    back = weights[n, batch.antecedent, batch.pronoun]
    assert torch.all(torch.minimum(there, back) <= 0.5 + 1e-5)


def test_the_loss_trains_queries_and_keys_but_not_values():
    model = ProjectedAttention(6, 6)
    lookup_loss(model, encode(TRAIN), two_way=True).backward()
    assert model.query.weight.grad.abs().sum() > 0 and model.key.weight.grad.abs().sum() > 0
    assert model.value.weight.grad is None or model.value.weight.grad.abs().sum() == 0


def test_training_is_deterministic_given_the_seed():
    a = train_lookup(TRAIN, seed=3, steps=20)
    b = train_lookup(TRAIN, seed=3, steps=20)
    for x, y in zip(a.state_dict().values(), b.state_dict().values()):
        assert torch.equal(x, y)


@pytest.mark.parametrize("pronoun", ["他", "她"])
def test_a_trained_head_finds_the_antecedent_in_held_out_sentences(pronoun):
    model = train_lookup(TRAIN, seed=0)
    result = lookup_accuracy(model, encode(of_pronoun(HELD_OUT, pronoun)))
    assert result["found"] == 1.0
    assert result["pronoun → antecedent"] > 0.95


@pytest.mark.parametrize("pronoun", ["他", "她"])
def test_only_an_untied_head_learns_the_two_way_lookup(pronoun):
    held_out = encode(of_pronoun(HELD_OUT, pronoun))
    untied = lookup_accuracy(train_lookup(TRAIN, two_way=True, seed=0), held_out)
    tied = lookup_accuracy(train_lookup(TRAIN, two_way=True, tie_query_key=True), held_out)
    assert untied["weaker of the two"] > 0.95
    assert tied["weaker of the two"] <= 0.5 + 1e-5


def test_bad_inputs_are_named():
    model = ProjectedAttention(6, 4)
    with pytest.raises(ValueError, match=r"\(N, L, E=6\); got \(2, 5, 3\)"):
        model(torch.zeros(2, 5, 3))
    with pytest.raises(TypeError, match="floating-point"):
        model(torch.zeros(2, 5, 6, dtype=torch.long))
    with pytest.raises(ValueError, match=r"keep must be a bool tensor of shape \(N, L\)"):
        model(torch.zeros(2, 5, 6), torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="positive"):
        ProjectedAttention(0, 4)
    with pytest.raises(ValueError, match="at least one sentence"):
        encode([])
