"""The probe sentence sets: balanced by construction, seeded, and one word piece per word."""

from collections import Counter

import pytest

from attnbook.tasks.probes import (
    FEMALE_NAMES,
    HELD_OUT_FEMALE,
    HELD_OUT_MALE,
    MALE_NAMES,
    coref_sentences,
    shortcut_rates,
    similarity_pairs,
    words,
)


@pytest.fixture(scope="module")
def tokenizer():
    from attnbook.pretrained import minilm

    return minilm()[1]


def test_every_word_is_one_word_piece(tokenizer):
    split = {w: tokenizer.encode(w).tokens for w in sorted(words())}
    assert {w: t for w, t in split.items() if t != ["[CLS]", w, "[SEP]"]} == {}


@pytest.mark.parametrize("held_out", [False, True])
@pytest.mark.parametrize("ambiguous", [False, True])
def test_recorded_tokens_are_the_tokenizers(tokenizer, ambiguous, held_out):
    for item in coref_sentences(48, seed=3, ambiguous=ambiguous, held_out=held_out):
        assert tuple(tokenizer.encode(item.text).tokens) == item.tokens


@pytest.mark.parametrize("held_out", [False, True])
def test_positions_point_at_the_pronoun_and_the_names(held_out):
    males, females = (HELD_OUT_MALE, HELD_OUT_FEMALE) if held_out else (MALE_NAMES, FEMALE_NAMES)
    for item in coref_sentences(64, seed=1, held_out=held_out):
        assert item.tokens[item.pronoun] in ("he", "she")
        first, second = (item.tokens[p] for p in item.candidates)
        assert item.candidates[0] < item.candidates[1] < item.pronoun
        same = males if item.tokens[item.pronoun] == "he" else females
        assert {first, second} <= set(males) | set(females)
        agreeing = [name in same for name in (first, second)]
        assert agreeing.count(True) == 1 and agreeing.index(True) == item.antecedent


@pytest.mark.parametrize("held_out", [False, True])
def test_every_shortcut_scores_exactly_one_half(held_out):
    items = coref_sentences(200, seed=5, held_out=held_out)
    assert shortcut_rates(items) == {"nearest": 0.5, "first name": 0.5, "subject": 0.5}
    cells = Counter((i.antecedent, i.subject, i.tokens[i.pronoun]) for i in items)
    assert len(cells) == 8 and set(cells.values()) == {25}


def test_held_out_sets_share_no_name_and_no_template_with_the_default_sets():
    assert not set(HELD_OUT_MALE + HELD_OUT_FEMALE) & set(MALE_NAMES + FEMALE_NAMES)
    default = [i.text.split() for i in coref_sentences(400, seed=0)]
    held = [i.text.split() for i in coref_sentences(400, seed=0, held_out=True)]
    names = set(MALE_NAMES + FEMALE_NAMES + HELD_OUT_MALE + HELD_OUT_FEMALE)
    frames = {tuple("N" if w in names else w for w in ws[:-4]) for ws in default}
    held_frames = {tuple("N" if w in names else w for w in ws[:-4]) for ws in held}
    assert len(held_frames) == 4 and not frames & held_frames
    assert not {w for ws in held for w in ws} & set(MALE_NAMES + FEMALE_NAMES)


def test_the_ambiguous_control_has_two_names_of_the_pronouns_gender():
    items = coref_sentences(40, seed=2, ambiguous=True)
    for item in items:
        names = [item.tokens[p] for p in item.candidates]
        pool = MALE_NAMES if item.tokens[item.pronoun] == "he" else FEMALE_NAMES
        assert item.antecedent is None and names[0] != names[1] and set(names) <= set(pool)
    assert sum(i.subject for i in items) == 20
    with pytest.raises(ValueError, match="antecedent"):
        shortcut_rates(items)


def test_generation_is_seeded():
    assert coref_sentences(16, seed=4) == coref_sentences(16, seed=4)
    assert coref_sentences(16, seed=4) != coref_sentences(16, seed=5)
    assert similarity_pairs(8, seed=4) == similarity_pairs(8, seed=4)


@pytest.mark.parametrize("n", [0, 12, -8])
def test_sizes_that_cannot_be_balanced_are_refused(n):
    with pytest.raises(ValueError, match="multiple of 8"):
        coref_sentences(n)


def test_similarity_pairs_are_balanced_minimal_pairs():
    pairs = similarity_pairs(40, seed=0)
    assert Counter(p.kind for p in pairs) == {
        "passive": 10,
        "synonym": 10,
        "role swap": 10,
        "verb": 10,
    }
    assert sum(p.paraphrase for p in pairs) == 20
    for p in pairs:
        a, b = p.first.split(), p.second.split()
        if p.kind == "role swap":
            assert sorted(a) == sorted(b) and a != b
        elif p.kind == "passive":
            assert b[2:4] == ["was", a[2]] and b[1] == a[4] and b[-2] == a[1]
        else:
            assert len(a) == len(b) and [i for i in range(len(a)) if a[i] != b[i]] == [2]
    with pytest.raises(ValueError, match="multiple of 4"):
        similarity_pairs(6)
