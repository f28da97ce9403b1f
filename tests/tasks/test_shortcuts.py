"""The coreference task passes a shortcut test: every rule that skips a clue stays near a coin
flip, in both languages and every split, and the rule that reads both clues is perfect."""

import pytest

from attnbook.tasks.coref import CorefTask, Example
from attnbook.tasks.coref_lexicon import gender_of
from attnbook.tasks.shortcuts import (
    BOTH_CLUES,
    SHORTCUTS,
    cue_alone,
    gender_and_repeated_action,
    rule_accuracy,
    shortcut_table,
)

SETS = {
    (language, split): CorefTask(language).examples(2000, split, seed=1)
    for language in ("en", "zh")
    for split in ("test", "pairs", "long")
}


@pytest.mark.parametrize("rule", list(SHORTCUTS))
@pytest.mark.parametrize("key", list(SETS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_no_rule_that_skips_a_clue_beats_a_coin_flip(rule, key):
    # A coin flip between the two candidates a single clue leaves is 0.5; 2,000 sentences give a
    # standard error of about 0.011, so 0.55 is more than four of them.
    assert rule_accuracy(SHORTCUTS[rule], SETS[key]) <= 0.55


def test_held_out_pairs_do_not_give_the_gender_away_in_the_pairs_split():
    """A rule that skips the pronoun: of the two who did the cued action, take the one whose
    gender forms a held-out pair in this sentence. The pairs split holds out both same-gender
    pairs, so the rule is a coin flip there too."""
    for language in ("en", "zh"):
        task = CorefTask(language)

        def heldout_gender(e, task=task):
            people = list(zip(e.candidates, e.names, e.verbs))
            doers = [(c, n) for c, n, v in people if v == e.cue]
            flagged = [
                c
                for c, n in doers
                if any(frozenset((n, m)) in task.heldout_pairs for _, m, _ in people if m != n)
            ]
            return tuple(flagged) or tuple(c for c, _ in doers)

        assert rule_accuracy(heldout_gender, SETS[(language, "pairs")]) <= 0.55
        assert rule_accuracy(heldout_gender, SETS[(language, "test")]) <= 0.55


@pytest.mark.parametrize("key", list(SETS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_the_rule_that_reads_both_clues_is_perfect(key):
    (rule,) = BOTH_CLUES.values()
    assert rule_accuracy(rule, SETS[key]) == 1.0


def test_the_first_editions_shortcut_would_have_solved_a_task_without_a_mirror():
    """The same rule on sentences where the gender rival's action is unique (no mirror person):
    it finds the antecedent every time — the test above has teeth."""
    examples = []
    for e in CorefTask("en").examples(200, "test"):
        mirror = next(
            k for k, (name, verb) in enumerate(zip(e.names, e.verbs))
            if verb != e.cue and k != e.candidates.index(e.antecedent)
            and gender_of("en", name) != e.gender
        )  # fmt: skip
        verbs = list(e.verbs)
        verbs[mirror] = next(v for v in ("ran", "slept", "sang") if v not in e.verbs)
        examples.append(Example(**{**e.__dict__, "verbs": tuple(verbs)}))
    assert rule_accuracy(gender_and_repeated_action, examples) == 1.0
    assert rule_accuracy(cue_alone, examples) == 0.5


def test_rule_accuracy_counts_ties_as_a_uniform_guess():
    e = CorefTask("en").examples(1)[0]
    assert rule_accuracy(lambda x: (x.antecedent,), [e]) == 1.0
    assert rule_accuracy(lambda x: tuple(x.candidates), [e]) == 0.25
    assert rule_accuracy(lambda x: tuple(c for c in x.candidates if c != x.antecedent), [e]) == 0


def test_table_has_every_rule_and_set():
    table = shortcut_table({"en": SETS[("en", "test")][:100]})
    assert set(table) == set(SHORTCUTS) | set(BOTH_CLUES)
    assert all(set(row) == {"en"} for row in table.values())


def test_rules_refuse_examples_without_their_record_and_empty_lists():
    e = CorefTask("en").examples(1)[0]
    bare = Example(e.tokens, e.pronoun, e.antecedent, e.candidates, e.names, "en", e.actions)
    with pytest.raises(ValueError, match="verbs and gender recorded"):
        cue_alone(bare)
    with pytest.raises(ValueError, match="at least one example"):
        rule_accuracy(cue_alone, [])
