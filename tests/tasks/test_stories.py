import pytest
import torch

from attnbook.tasks.stories import (
    PLACES,
    Story,
    collate,
    last_place_rule,
    last_taker_rule,
    stories,
    supporting_share,
    vocabulary,
)


def hand_story(text: str, question: str, answer: str, supporting: tuple[int, ...]) -> Story:
    sentences = tuple(tuple(s.split()) for s in text.strip().splitlines())
    kind = "one" if len(supporting) == 1 else "two"
    return Story(sentences, tuple(question.split()), answer, supporting, kind)


MARY = hand_story(
    """mary went to the kitchen .
    john took the apple .
    mary journeyed to the garden .
    john went to the office .""",
    "where is mary ?",
    "garden",
    (2,),
)


def replay(story: Story) -> tuple[str, tuple[int, ...]]:
    """Answer a story's question by reading it, independently of the generator."""
    where: dict[str, tuple[int, str]] = {}
    taker: dict[str, tuple[int, str]] = {}
    for i, s in enumerate(story.sentences):
        if s[2] == "to":
            where[s[0]] = (i, s[4])
        else:
            taker[s[3]] = (i, s[0])
    if story.kind == "one":
        move, place = where[story.question[2]]
        return place, (move,)
    take, person = taker[story.question[3]]
    move, place = where[person]
    return place, (take, move)


def test_answer_and_supporting_facts_follow_the_last_move():
    for story in stories(300, seed=0):
        assert replay(story) == (story.answer, story.supporting)


def test_two_fact_questions_chain_the_take_and_the_holders_last_move():
    for story in stories(50, seed=3, kinds=("two",)):
        take, move = story.supporting
        holder = story.sentences[take][0]
        assert story.sentences[take][3] == story.question[3]
        assert story.sentences[move][0] == holder and story.sentences[move][4] == story.answer


def test_same_seed_same_stories_other_seed_other_stories():
    assert stories(20, seed=5) == stories(20, seed=5)
    held_out = {s.text for s in stories(500, seed=1)}
    assert len(held_out & {s.text for s in stories(500, seed=0)}) < 5


def test_story_length_is_a_knob():
    assert {len(s.sentences) for s in stories(50, seed=0, n_sentences=7)} == {7}
    lengths = {len(s.sentences) for s in stories(200, seed=0, n_sentences=(3, 5))}
    assert lengths == {3, 4, 5}


def test_kinds_alternate():
    assert [s.kind for s in stories(4, seed=0)] == ["one", "two", "one", "two"]


def test_distractor_defeats_the_last_place_shortcut():
    for story in stories(200, seed=2, distractor=True):
        last = story.sentences[-1]
        assert last_place_rule(story) == last[4] != story.answer
        assert len(story.sentences) - 1 not in story.supporting
        assert replay(story) == (story.answer, story.supporting)


def test_last_place_rule_on_a_hand_story():
    assert last_place_rule(MARY) == "office"
    assert last_place_rule(hand_story("mary took the milk .", "where is mary ?", "", (0,))) is None


def test_last_taker_rule_takes_the_last_move_of_anyone_who_took_something():
    # john took the apple and moved last of the takers; sandra never took anything
    story = hand_story(
        """john took the apple .
        john went to the office .
        mary went to the kitchen .
        sandra went to the garden .""",
        "where is the apple ?",
        "office",
        (0, 1),
    )
    assert last_taker_rule(story) == "office"
    assert last_taker_rule(MARY) == "office"
    assert (
        last_taker_rule(hand_story("mary went to the hallway .", "where is mary ?", "", (0,)))
        is None
    )


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="n_sentences"):
        stories(1, seed=0, n_sentences=1)
    with pytest.raises(ValueError, match="kinds"):
        stories(1, seed=0, kinds=("three",))


def test_collate_a_hand_story():
    vocab = vocabulary()
    batch = collate(
        [MARY, hand_story("mary went to the hallway .", "where is mary ?", "hallway", (0,))], vocab
    )
    assert batch.tokens.shape == (2, 23)
    assert vocab.decode(batch.tokens[0, 6:11]) == ["john", "took", "the", "apple", "."]
    assert batch.sentence[0, :12].tolist() == [0] * 6 + [1] * 5 + [2]
    assert batch.recency[0, 0].item() == 3 and batch.recency[0, -1].item() == 0
    assert batch.word[0, 6:11].tolist() == [0, 1, 2, 3, 4]
    assert batch.key_padding_mask[1].sum().item() == 17
    assert (batch.sentence[1, 6:] == -1).all() and (batch.recency[1, 6:] == -1).all()
    assert batch.answer.tolist() == [PLACES.index("garden"), PLACES.index("hallway")]
    assert batch.supporting.tolist() == [[2, -1], [0, -1]]
    assert vocab.decode(batch.question[0]) == ["where", "is", "mary", "?"]
    assert batch.n_sentences.tolist() == [4, 1] and not batch.two_facts.any()


def test_supporting_share_sums_the_weight_on_the_given_sentences():
    sentence = torch.tensor([[0, 0, 1, 1, 2, -1]])
    weights = torch.tensor([[0.1, 0.1, 0.2, 0.2, 0.4, 0.0]])
    assert supporting_share(weights, sentence, torch.tensor([[2, -1]])).item() == pytest.approx(0.4)
    assert supporting_share(weights, sentence, torch.tensor([[0, 1]])).item() == pytest.approx(0.6)
    assert supporting_share(weights, sentence, torch.tensor([[-1, -1]])).item() == 0.0


def test_supporting_share_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="sentence"):
        supporting_share(torch.ones(2, 3), torch.ones(2, 4), torch.zeros(2, 1))
    with pytest.raises(ValueError, match="sentences"):
        supporting_share(torch.ones(2, 3), torch.ones(2, 3), torch.zeros(3, 1))
