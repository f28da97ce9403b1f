"""The summarisation task: one key sentence per paragraph, held-out topics, its controls."""

from __future__ import annotations

import pytest
import torch

from attnbook.tasks import summaries as S


@pytest.mark.parametrize("split", S.SPLITS)
def test_every_paragraph_has_one_key_and_one_side_decision(split):
    for p in S.paragraphs(50, split, seed=3):
        assert p.kinds.count("key") == 1 and p.kinds.count("side") == 1
        assert p.kinds[p.key] == "key" and p.project in p.sentences[p.key]
        assert p.side_project in p.sentences[p.kinds.index("side")]


@pytest.mark.parametrize("split", S.SPLITS)
def test_the_topic_is_mentioned_elsewhere_and_the_side_project_is_not(split):
    for p in S.paragraphs(50, split, seed=3):
        others = [s for i, s in enumerate(p.sentences) if i != p.key]
        assert sum(p.project in s for s in others) >= 1
        side = p.kinds.index("side")
        rest = [s for i, s in enumerate(p.sentences) if i != side]
        assert not any(p.side_project in s for s in rest)


def test_paragraphs_are_reproducible_and_seeds_differ():
    assert S.paragraphs(5, "train", 1) == S.paragraphs(5, "train", 1)
    assert S.paragraphs(5, "train", 1) != S.paragraphs(5, "train", 2)


def test_train_and_test_use_disjoint_topic_pairs():
    def pairs(split):
        out = set()
        for p in S.paragraphs(300, split, 0):
            out |= {(p.body, p.project), (p.body, p.side_project)}
        return out

    assert pairs("train").isdisjoint(pairs("test"))
    assert pairs("test") >= pairs("long") | pairs("passive") | pairs("swapped")
    assert sum(S.topic_split(b, p) == "test" for b in S.BODIES for p in S.PROJECTS) == 18


def test_swapped_is_test_with_the_other_decision_as_key():
    for a, b in zip(S.paragraphs(30, "test", 4), S.paragraphs(30, "swapped", 4)):
        assert a.kinds[b.key] == "side" and b.kinds[a.key] == "side"
        assert a.sentences[a.key] == b.sentences[a.key]
        assert a.sentences[b.key] == b.sentences[b.key]
        assert (a.project, a.side_project) == (b.side_project, b.project)


def test_long_paragraphs_put_the_key_where_training_never_does():
    assert all(len(p.sentences) <= 6 for p in S.paragraphs(200, "train", 0))
    assert {p.key for p in S.paragraphs(200, "long", 0)} == {5, 6, 7}


def test_passive_split_uses_the_unseen_template():
    p = S.paragraphs(1, "passive", 0)[0]
    assert p.sentences[p.key][2:4] == ["was", p.sentences[p.key][3]] and "by" in p.sentences[p.key]


def test_key_position_is_uniform_so_lead_is_near_chance():
    batch = S.paragraphs(2000, "train", 0)
    assert 0.17 < S.lead_baseline(batch) < 0.25


def test_central_sentence_ignores_stopwords_and_breaks_ties_early():
    assert S.central_sentence([["a", "b"], ["b", "c"], ["c", "a"]]) == 0
    assert S.central_sentence([["the", "."], ["x", "y"], ["y", "the", "."], ["x", "y"]]) == 1


def test_collate_marks_sentences_padding_and_positions():
    vocab = S.vocabulary()
    batch = S.paragraphs(3, "train", 0)
    b = S.collate(batch, vocab)
    for n, p in enumerate(batch):
        length = sum(len(s) for s in p.sentences)
        assert vocab.decode(b.tokens[n, :length]) == [t for s in p.sentences for t in s]
        assert (b.sentence_ids[n, length:] == -1).all() and (b.tokens[n, length:] == 0).all()
        assert b.positions[n, len(p.sentences[0])] == 0  # counts restart in each sentence
        assert (~b.sentence_mask[n]).sum() == len(p.sentences)
    assert b.key.tolist() == [p.key for p in batch]


def test_project_positions_point_at_the_key_project_word():
    vocab = S.vocabulary()
    batch = S.paragraphs(5, "swapped", 0)
    b = S.collate(batch, vocab)
    words = vocab.decode(b.tokens[torch.arange(5), S.project_positions(batch)])
    assert words == [p.project for p in batch]


def test_sampler_draws_rows_of_the_pool_reproducibly():
    pool = S.collate(S.paragraphs(10, "train", 0), S.vocabulary())
    make_batch = S.sampler(pool)
    a = make_batch(4, torch.Generator().manual_seed(0))
    b = make_batch(4, torch.Generator().manual_seed(0))
    assert a.tokens.shape == (4, pool.tokens.size(1)) and torch.equal(a.tokens, b.tokens)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="split"):
        S.paragraphs(2, "dev")
    with pytest.raises(ValueError, match="n must"):
        S.paragraphs(-1)
    with pytest.raises(ValueError, match="batch"):
        S.collate([], S.vocabulary())


@pytest.mark.parametrize("split", S.SPLITS)
def test_the_decision_on_topic_rule_is_right_on_every_split(split):
    # The strongest cheap rule reads word occurrence only; the generator makes it exact.
    assert S.decision_on_topic_baseline(S.paragraphs(300, split, seed=4)) == 1.0


def test_decision_on_topic_reads_which_words_occur_where():
    sentences = [
        ["the", "board", "approved", "the", "park", "."],
        ["the", "board", "delayed", "the", "bridge", "."],
        ["the", "bridge", "will", "cost", "two", "million", "."],
    ]
    assert S.decision_on_topic(sentences) == 1
    assert S.decision_on_topic(sentences[:2]) == 0  # no project mentioned elsewhere: the first
