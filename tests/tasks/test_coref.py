"""The coreference data: answers right by construction, splits as promised, reproducible, clear errors."""

import dataclasses
import itertools
import random

import pytest
import torch

from attnbook.tasks.coref import (
    LEXICON,
    PEOPLE,
    SPLITS,
    CorefTask,
    Vocabulary,
    batch_maker,
    collate,
)
from attnbook.tasks.vocab import tokenize


def parse(example):
    """Read a sentence back independently of the generator: each person's gender and verb, and
    the pronoun's gender and cue. Returns (people [(position, gender, verb)], gender, verb)."""
    lex = LEXICON[example.language]
    tokens = list(example.tokens)
    sep = "" if example.language == "zh" else " "
    gender_of = {n: g for g in ("male", "female") for n in lex[g]}
    first_tokens = {(v if example.language == "en" else v[0]): v for v in lex["verbs"]}
    people = []
    for i, t in enumerate(tokens[: example.pronoun]):
        if t in gender_of:
            verb = next(first_tokens[u] for u in tokens[i + 1 :] if u in first_tokens)
            people.append((i, gender_of[t], verb))
    pronoun_gender = {v: k for k, v in lex["pronoun"].items()}[tokens[example.pronoun]]
    cue = sep.join(tokens[example.pronoun + 1 : -1])
    cued_verb = {c: v for v, c in lex["verbs"].items()}[cue]
    return people, pronoun_gender, cued_verb


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("split", ["train", "test", "pairs", "long"])
def test_the_antecedent_is_the_only_person_with_the_pronouns_gender_and_the_cued_verb(
    language, split
):
    for e in CorefTask(language).examples(200, split):
        people, gender, verb = parse(e)
        matches = [i for i, g, v in people if g == gender and v == verb]
        assert matches == [e.antecedent], e.text


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("split", ["test", "pairs", "long"])
def test_cue_sentences_pair_every_clue_with_a_rival(language, split):
    """Two people have the pronoun's gender, and each shares an action with one person of the
    other gender: without the cue the two look alike, without the gender so do the two who did
    the cued action."""
    for e in CorefTask(language).examples(200, split):
        people, gender, verb = parse(e)

        def doers(action, people=people):  # the genders of everyone who did this action
            return sorted(g for _, g, v in people if v == action)

        assert doers(verb) == ["female", "male"], e.text  # the antecedent and the cue rival
        rivals = [v for _, g, v in people if g == gender and v != verb and doers(v) == doers(verb)]
        assert rivals, e.text  # a gender rival whose action is shared the same way


@pytest.mark.parametrize("language", ["en", "zh"])
def test_swapping_the_cue_for_the_rivals_makes_the_rival_the_answer(language):
    """The cue alone separates the antecedent from the gender rival: the same sentence with the
    rival's cue is a sentence whose answer is the rival."""
    lex = LEXICON[language]
    for e in CorefTask(language).examples(100, "test"):
        people, gender, verb = parse(e)
        rival, rival_verb = next((i, v) for i, g, v in people if g == gender and v != verb
                                 and sum(u == v for _, _, u in people) == 2)  # fmt: skip
        cue = lambda v: tokenize(lex["verbs"][v])  # noqa: E731
        tokens = (*e.tokens[: e.pronoun + 1], *cue(rival_verb), e.tokens[-1])
        swapped = dataclasses.replace(e, tokens=tokens, cue=rival_verb)
        people2, gender2, verb2 = parse(swapped)
        assert (gender2, verb2) == (gender, rival_verb)
        assert [i for i, g, v in people2 if g == gender2 and v == verb2] == [rival]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_in_agreement_sentences_gender_alone_decides(language):
    for e in CorefTask(language, "agreement").examples(200):
        people, gender, _ = parse(e)
        assert [i for i, g, _ in people if g == gender] == [e.antecedent], e.text


@pytest.mark.parametrize("language", ["en", "zh"])
def test_candidates_are_the_name_tokens_and_the_pronoun_follows_them(language):
    for e in CorefTask(language).examples(100, "long"):
        people, _, _ = parse(e)
        assert list(e.candidates) == [i for i, _, _ in people]
        assert [e.tokens[i] for i in e.candidates] == list(e.names)
        assert e.antecedent in e.candidates and max(e.candidates) < e.pronoun
        first_tokens = {(v if language == "en" else v[0]) for v in LEXICON[language]["verbs"]}
        assert all(e.tokens[a] in first_tokens for a in e.actions)
        assert all(c < a for c, a in zip(e.candidates, e.actions))
        assert len(e.actions) == len(e.candidates)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_training_sentences_never_put_a_heldout_pair_together(language):
    task = CorefTask(language)
    assert task.heldout_pairs
    for split in ("train", "test", "long"):
        for e in task.examples(300, split):
            assert (
                not {frozenset(p) for p in itertools.combinations(e.names, 2)} & task.heldout_pairs
            )


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_pairs_split_puts_a_heldout_pair_in_the_antecedent_and_rival_slots(language):
    task = CorefTask(language)
    for e in task.examples(200, "pairs"):
        people, gender, verb = parse(e)
        rival = next(i for i, g, v in people if g == gender and v != verb)
        assert frozenset((e.tokens[e.antecedent], e.tokens[rival])) in task.heldout_pairs


def test_heldout_pairs_do_not_depend_on_the_sampling_seed_and_cover_a_quarter():
    a, b = CorefTask("en"), CorefTask("en")
    assert a.heldout_pairs == b.heldout_pairs
    assert len(a.heldout_pairs) == 2 * round(0.25 * 28)  # 8 names per gender: 28 pairs each


@pytest.mark.parametrize("language", ["en", "zh"])
def test_long_sentences_have_more_people_and_are_longer(language):
    task = CorefTask(language)
    train, long = task.examples(300), task.examples(300, "long")
    assert {len(e.candidates) for e in train} == {PEOPLE["train"]} == {4}
    assert {len(e.candidates) for e in long} == {PEOPLE["long"]} == {6}
    assert min(len(e.tokens) for e in long) > sum(len(e.tokens) for e in train) / len(train)


def test_same_seed_same_sentences_other_seed_other_sentences():
    task = CorefTask("zh")
    assert task.examples(50, seed=3) == task.examples(50, seed=3)
    assert task.examples(50, seed=3) != task.examples(50, seed=4)
    assert task.examples(50, "test") != task.examples(50, "train")


def test_antecedents_are_spread_over_the_slots():
    """The answer is not always the first (or last) name: position alone cannot decide."""
    slots = [e.candidates.index(e.antecedent) for e in CorefTask("en").examples(800)]
    assert all(abs(slots.count(k) / 800 - 1 / 4) < 0.05 for k in range(4))


def test_nearest_preceding_name_is_the_last_candidate():
    e = CorefTask("en").examples(1)[0]
    assert e.nearest_preceding_name() == e.candidates[-1]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"language": "fr"}, "language must be"),
        ({"task": "position"}, "task must be"),
        ({"filler_p": 1.5}, "filler_p must be"),
        ({"heldout_fraction": 0.0}, "heldout_fraction"),
        ({"hide": "verb"}, "hide must be"),
    ],
)
def test_bad_task_arguments_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CorefTask(**kwargs)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_people_and_fillers_can_be_varied_one_at_a_time(language):
    task = CorefTask(language)
    crowded = task.examples(200, "test", n_people=6)
    padded = task.examples(200, "test", filler_p=1.0)
    assert {len(e.candidates) for e in crowded} == {6}
    assert {len(e.candidates) for e in padded} == {4}
    # With every filler on, each person has an adverb: the name and its action are never adjacent.
    assert all(a - c > 1 for e in padded for c, a in zip(e.candidates, e.actions))
    plain = task.examples(200, "test", filler_p=0.0)
    assert all(a - c == 1 for e in plain for c, a in zip(e.candidates, e.actions))
    for e in crowded + padded:
        people, gender, verb = parse(e)
        assert [i for i, g, v in people if g == gender and v == verb] == [e.antecedent]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_hiding_the_cue_drops_the_clause_and_keeps_the_answer(language):
    full, hidden = CorefTask(language).examples(50), CorefTask(language, hide="cue").examples(50)
    lex = LEXICON[language]
    for e, h in zip(full, hidden):
        assert h.tokens == e.tokens[: e.pronoun + 1] + (lex["stop"],)
        assert (h.antecedent, h.candidates, h.cue) == (e.antecedent, e.candidates, "")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_hiding_the_gender_makes_the_pronoun_independent_of_the_answer(language):
    lex = LEXICON[language]
    full = CorefTask(language).examples(400)
    hidden = CorefTask(language, hide="gender").examples(400)
    agree = 0
    for e, h in zip(full, hidden):
        assert h.tokens[: h.pronoun] == e.tokens[: e.pronoun]
        assert h.tokens[h.pronoun + 1 :] == e.tokens[e.pronoun + 1 :]
        assert h.tokens[h.pronoun] in lex["pronoun"].values()
        agree += h.tokens[h.pronoun] == lex["pronoun"][e.gender]
    assert abs(agree / 400 - 0.5) < 0.08


def test_unknown_split_and_pairs_without_rivals_are_rejected():
    with pytest.raises(ValueError, match="split must be one of"):
        CorefTask("en").sample(random.Random(0), "dev")
    with pytest.raises(ValueError, match="needs task='cue'"):
        CorefTask("en", "agreement").sample(random.Random(0), "pairs")
    assert SPLITS == ("train", "test", "pairs", "long")
    with pytest.raises(ValueError, match="n_people must be between 4 and 6"):
        CorefTask("en").sample(random.Random(0), "test", n_people=3)
    with pytest.raises(ValueError, match="filler_p must be"):
        CorefTask("en").sample(random.Random(0), "test", filler_p=2.0)


# -- vocabulary and batches -------------------------------------------------------------------

VOCAB = Vocabulary.for_tasks(CorefTask("en"), CorefTask("zh"))


def test_every_generated_token_is_in_the_vocabulary_and_round_trips():
    for language in ("en", "zh"):
        for split in SPLITS:
            for e in CorefTask(language).examples(50, split):
                assert VOCAB.decode(VOCAB.encode(e.tokens)) == list(e.tokens)


def test_padding_is_id_zero_and_ids_are_unique():
    assert VOCAB.itos[0] == "<pad>" and VOCAB.pad_id == 0
    assert len(set(VOCAB.itos)) == len(VOCAB) and "他" in VOCAB and "she" in VOCAB


def test_unknown_tokens_are_named_with_their_positions():
    with pytest.raises(
        ValueError, match=r"unknown tokens: 'Zhang' at position 0, 'smiled' at position 1"
    ):
        VOCAB.encode(["Zhang", "smiled", "."])


def test_encoding_a_plain_string_is_a_type_error():
    with pytest.raises(TypeError, match="sequence of tokens, not a string"):
        VOCAB.encode("Tom cried")


def test_decoding_an_id_outside_the_vocabulary_is_rejected():
    with pytest.raises(ValueError, match=r"ids \[999\] are outside"):
        VOCAB.decode([1, 999])


def test_collate_pads_and_masks_exactly_the_padding():
    examples = CorefTask("en").examples(3) + CorefTask("zh").examples(2)
    batch = collate(examples, VOCAB)
    S = max(len(e.tokens) for e in examples)
    assert batch.tokens.shape == batch.key_padding_mask.shape == batch.candidates.shape == (5, S)
    for n, e in enumerate(examples):
        assert batch.key_padding_mask[n].tolist() == [s >= len(e.tokens) for s in range(S)]
        assert VOCAB.decode(batch.tokens[n, : len(e.tokens)]) == list(e.tokens)
        assert batch.candidates[n].nonzero().flatten().tolist() == list(e.candidates)
    assert (batch.tokens[batch.key_padding_mask] == 0).all()
    assert batch.target.tolist() == [e.antecedent for e in examples]
    assert batch.pronoun.tolist() == [e.pronoun for e in examples]


def test_batch_maker_alternates_languages_and_reproduces_with_the_generator():
    make = batch_maker([CorefTask("en"), CorefTask("zh")], VOCAB)
    a = make(4, torch.Generator().manual_seed(0))
    b = make(4, torch.Generator().manual_seed(0))
    assert torch.equal(a.tokens, b.tokens)
    en_tokens = {VOCAB.stoi[t] for t in CorefTask("en").all_tokens()}
    assert int(a.tokens[0, 0]) in en_tokens and int(a.tokens[1, 0]) not in en_tokens


def test_gender_of_reads_names_and_pronouns_and_refuses_other_tokens():
    from attnbook.tasks.coref_lexicon import gender_of

    assert [gender_of("en", t) for t in ("Tom", "Mary", "he", "she")] == [
        "male",
        "female",
        "male",
        "female",
    ]
    assert [gender_of("zh", t) for t in ("伟", "芳", "他", "她")] == [
        "male",
        "female",
        "male",
        "female",
    ]
    with pytest.raises(ValueError, match="neither a name nor a pronoun"):
        gender_of("en", "cried")
