"""Chapter 1's hand-built detective resolves pronouns by construction, and says so in numbers."""

import math

import pytest
import torch

from attnbook.models.handbuilt import FEATURES, attend, features, rule_based_antecedent
from attnbook.tasks.vocab import tokenize


def pronoun_weights(sentence: str, pronoun: str):
    tokens = tokenize(sentence)
    p = tokens.index(pronoun)
    _, weights, _ = attend(tokens)
    return tokens, weights[p]


def test_chinese_is_tokenised_by_character_and_english_by_word():
    assert tokenize("老张说他很累") == ["老", "张", "说", "他", "很", "累"]
    assert tokenize("Zhang said he was tired") == ["Zhang", "said", "he", "was", "tired"]


@pytest.mark.parametrize(
    "sentence, pronoun, antecedent",
    [
        ("老张说他很累", "他", "张"),
        ("老张对小丽说他很累", "他", "张"),
        ("老张对小丽说她很累", "她", "丽"),
        ("Zhang told Mary he was tired", "he", "Zhang"),
        ("Zhang told Mary she was tired", "she", "Mary"),
    ],
)
def test_pronoun_query_lands_on_its_antecedent(sentence, pronoun, antecedent):
    tokens, w = pronoun_weights(sentence, pronoun)
    assert tokens[int(w.argmax())] == antecedent
    assert float(w.max()) > 0.5


def test_two_agreeing_candidates_share_the_weight():
    tokens, w = pronoun_weights("老张和老李说他很累", "他")
    assert torch.isclose(w[tokens.index("张")], w[tokens.index("李")])


def test_weights_match_a_hand_computation_from_the_feature_table():
    # q(他) = x(他) W_qᵀ: person 2 (it is a pronoun), male 2, pronoun -3.
    # Scores q · k with k = the features: 张 = 2 + 2 = 4; 他 itself = 2 + 2 - 3 = 1.
    scores, weights, output = attend(["张", "他"])
    torch.testing.assert_close(scores[1], torch.tensor([4.0, 1.0]))
    by_hand = 1 / (1 + math.exp(-3))  # softmax([4, 1])[0]
    assert weights[1, 0].item() == pytest.approx(by_hand, abs=1e-6)
    # V = the features: 他's output is the weighted mix of the two rows.
    x = features(["张", "他"])
    torch.testing.assert_close(output[1], by_hand * x[0] + (1 - by_hand) * x[1])


def test_rule_based_resolver_picks_the_nearest_agreeing_person_or_none():
    tokens = tokenize("老张和老李说他很累")
    assert tokens[rule_based_antecedent(tokens, tokens.index("他"))] == "李"
    assert rule_based_antecedent(tokenize("他很累"), 0) is None
    tokens = tokenize("老张对小丽说她很累")
    assert tokens[rule_based_antecedent(tokens, tokens.index("她"))] == "丽"


def test_rule_based_resolver_rejects_a_non_pronoun():
    with pytest.raises(ValueError, match="not a pronoun"):
        rule_based_antecedent(tokenize("老张说他很累"), 2)


def test_unknown_token_is_named():
    with pytest.raises(ValueError, match="王"):
        features(tokenize("老王说他很累"))


def test_features_have_one_column_per_feature_name():
    assert features(["他"]).shape == (1, len(FEATURES))
