"""Counterfactual sentences change one clue and move the answer to the rival the clue names."""

import pytest

from attnbook.tasks.coref import CorefTask
from attnbook.tasks.counterfactuals import swap_cue, swap_gender
from attnbook.tasks.shortcuts import both_clues
from tests.tasks.test_coref import parse


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("split", ["test", "pairs", "long"])
@pytest.mark.parametrize("swap", [swap_cue, swap_gender])
def test_a_swap_changes_one_clue_and_the_answer_follows(language, split, swap):
    for e in CorefTask(language).examples(100, split):
        s = swap(e)
        assert s.antecedent != e.antecedent and s.antecedent in e.candidates
        # Everything before the pronoun is untouched.
        assert s.tokens[: s.pronoun] == e.tokens[: e.pronoun]
        # Read back independently: exactly one person has the new gender and the new cue.
        people, gender, verb = parse(s)
        assert [i for i, g, v in people if g == gender and v == verb] == [s.antecedent], s.text
        assert both_clues(s) == (s.antecedent,)
        if swap is swap_gender:
            assert gender != e.gender and s.tokens[s.pronoun + 1 :] == e.tokens[e.pronoun + 1 :]
        else:
            assert gender == e.gender and verb != e.cue


@pytest.mark.parametrize("swap", [swap_cue, swap_gender])
def test_swaps_refuse_sentences_with_a_hidden_clue(swap):
    with pytest.raises(ValueError, match="hidden"):
        swap(CorefTask("en", hide="cue").examples(1)[0])
    # With the gender hidden, half the pronouns disagree with the antecedent: those are refused.
    hidden = CorefTask("en", hide="gender").examples(40)
    refused = 0
    for e in hidden:
        try:
            swap(e)
        except ValueError as error:
            assert "hidden" in str(error)
            refused += 1
    assert 5 < refused < 35
