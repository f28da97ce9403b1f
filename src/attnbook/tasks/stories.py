"""Short stories with facts that change, and questions about them (bAbI tasks 1-2 style).

Four people move between six places and take objects, one short sentence at a time, in the
style of tasks 1 and 2 of bAbI (Weston et al., 2016)::

    0 mary went to the kitchen .
    1 john took the apple .
    2 mary journeyed to the garden .
    3 john went to the office .
    where is mary ?          -> garden   (one fact: sentence 2, mary's last move)
    where is the apple ?     -> office   (two facts: 1, who took it; 3, where john went last)

A later move overrides an earlier one: the answer is always the *last* move of the person asked
about (``kind="one"``) or of the person who took the object (``kind="two"``: two facts chained).
Each :class:`Story` records its answer and the indexes of its supporting sentences — for
``"two"``, in the order they chain: the take, then the holder's last move. Unlike bAbI, objects
are never dropped or passed on, so "who has it" is one sentence.

``distractor=True`` appends one more move, by someone the question is not about, to a place
that is not the answer: "the last place mentioned" and "the most recent sentence" are then
wrong on every story, a control for those shortcuts (:func:`last_place_rule`).

:func:`collate` turns stories into a :class:`StoryBatch` of padded tensors.

Shape legend: N stories, S story tokens (all sentences, flattened, padded), Q question tokens.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Literal

import torch
from torch import Tensor

from attnbook.tasks.vocab import Vocabulary

__all__ = [
    "PEOPLE",
    "PLACES",
    "OBJECTS",
    "Story",
    "StoryBatch",
    "stories",
    "vocabulary",
    "collate",
    "batch_maker",
    "last_place_rule",
    "last_taker_rule",
    "supporting_share",
]

Kind = Literal["one", "two"]

#: The people who move and take things.
PEOPLE = ("mary", "john", "sandra", "daniel")
#: The places; every answer is one of them, and a model's classes are their indexes.
PLACES = ("kitchen", "garden", "office", "hallway", "bathroom", "bedroom")
#: The objects that can be taken (each at most once per story).
OBJECTS = ("apple", "football", "milk")
MOVES = ("went", "journeyed", "travelled", "moved")  # "<person> <verb> to the <place> ."
TAKES = ("took", "got", "grabbed")  # "<person> <verb> the <object> ."


@dataclass(frozen=True)
class Story:
    """One story, its question, the answer and the sentences that support it."""

    sentences: tuple[tuple[str, ...], ...]  # each sentence's tokens, in the order told
    question: tuple[str, ...]  # "where is mary ?" or "where is the apple ?"
    answer: str  # a place
    supporting: tuple[int, ...]  # sentence indexes: (last move,) or (take, holder's last move)
    kind: Kind  # "one": one supporting fact; "two": two facts chained

    @property
    def text(self) -> str:
        """The story and its question, one sentence per line."""
        return "\n".join(" ".join(s) for s in (*self.sentences, self.question))


def _where(events: list[tuple[str, ...]], person: str) -> tuple[int, str] | None:
    """(index, place) of ``person``'s last move in ``events``, or None if they never moved."""
    for i in range(len(events) - 1, -1, -1):
        if events[i][0] == person and events[i][1] in MOVES:
            return i, events[i][-2]
    return None


def _one_story(rng: random.Random, n_sentences: int, kind: Kind, distractor: bool) -> Story:
    while True:  # draw until the question of this kind has an answer
        sentences: list[tuple[str, ...]] = []
        place = dict.fromkeys(PEOPLE, "")
        holder: dict[str, tuple[int, str]] = {}  # object -> (take index, person)
        for i in range(n_sentences):
            free = [o for o in OBJECTS if o not in holder]
            person = rng.choice(PEOPLE)
            if free and rng.random() < 0.25:
                thing = rng.choice(free)
                holder[thing] = (i, person)
                sentences.append((person, rng.choice(TAKES), "the", thing, "."))
            else:
                to = rng.choice([p for p in PLACES if p != place[person]])
                place[person] = to
                sentences.append((person, rng.choice(MOVES), "to", "the", to, "."))
        if kind == "one":
            moved = [p for p in PEOPLE if place[p]]
            if not moved:
                continue
            person = rng.choice(moved)
            question: tuple[str, ...] = ("where", "is", person, "?")
            move, answer = _where(sentences, person)  # type: ignore[misc]
            supporting: tuple[int, ...] = (move,)
            about = {person}
        else:
            held = [o for o in OBJECTS if o in holder and place[holder[o][1]]]
            if not held:
                continue
            thing = rng.choice(held)
            take, person = holder[thing]
            question = ("where", "is", "the", thing, "?")
            move, answer = _where(sentences, person)  # type: ignore[misc]
            supporting = (take, move)
            about = {person}
        if distractor:
            other = rng.choice([p for p in PEOPLE if p not in about])
            to = rng.choice([p for p in PLACES if p not in (answer, place[other])])
            sentences.append((other, rng.choice(MOVES), "to", "the", to, "."))
        return Story(tuple(sentences), question, answer, supporting, kind)


def stories(
    n: int,
    seed: int,
    *,
    n_sentences: int | tuple[int, int] = (4, 10),
    kinds: Sequence[Kind] = ("one", "two"),
    distractor: bool = False,
) -> list[Story]:
    """``n`` random stories, the same for the same arguments.

    Args:
        n: how many stories.
        seed: the random seed; different seeds give different (held-out) stories.
        n_sentences: the story length in sentences, or an inclusive range ``(low, high)`` to
            draw it from (before the distractor, if any).
        kinds: question kinds, used in turn: story ``i`` gets ``kinds[i % len(kinds)]``.
        distractor: end every story with a move by someone the question is not about, to a
            place that is not the answer.
    """
    low, high = (n_sentences, n_sentences) if isinstance(n_sentences, int) else n_sentences
    if not 2 <= low <= high:
        raise ValueError(
            f"n_sentences must be >= 2 (or a range 2 <= low <= high); got {n_sentences}"
        )
    if not kinds or any(k not in ("one", "two") for k in kinds):
        raise ValueError(f"kinds must be a non-empty sequence of 'one' and 'two'; got {kinds!r}")
    rng = random.Random(seed)
    return [
        _one_story(rng, rng.randint(low, high), kinds[i % len(kinds)], distractor) for i in range(n)
    ]


def vocabulary() -> Vocabulary:
    """Every token a story or a question can contain (padding at id 0)."""
    words = ["where", "is", "the", "to", ".", "?", *MOVES, *TAKES]
    return Vocabulary([*words, *PEOPLE, *PLACES, *OBJECTS])


@dataclass
class StoryBatch:
    """Stories as padded tensors: every sentence of a story in one flat row."""

    tokens: Tensor  # (N, S) story token ids, 0 = padding
    sentence: Tensor  # (N, S) index of each token's sentence (0 = first), -1 on padding
    recency: Tensor  # (N, S) sentences from the end (0 = the last sentence), -1 on padding
    word: Tensor  # (N, S) position of each token inside its sentence, -1 on padding
    key_padding_mask: Tensor  # (N, S) bool, True on padding
    question: Tensor  # (N, Q) question token ids, 0 = padding
    question_padding_mask: Tensor  # (N, Q) bool, True on padding
    answer: Tensor  # (N,) the answer's index in PLACES
    supporting: Tensor  # (N, 2) supporting sentence indexes, -1 where there is no second one
    two_facts: Tensor  # (N,) bool, True for kind "two"
    n_sentences: Tensor  # (N,) sentences in each story

    def select(self, index: Tensor) -> StoryBatch:
        """The stories at ``index`` (a 1-D tensor of indexes or a bool mask over N)."""
        return StoryBatch(**{f.name: getattr(self, f.name)[index] for f in fields(self)})


def batch_maker(pool: StoryBatch):
    """``make_batch(n, generator)`` for :func:`attnbook.train.fit`: n stories drawn from ``pool``."""

    def make_batch(n: int, generator: torch.Generator) -> StoryBatch:
        return pool.select(torch.randint(0, len(pool.answer), (n,), generator=generator))

    return make_batch


def collate(batch: Sequence[Story], vocab: Vocabulary) -> StoryBatch:
    """Pad ``batch`` into a :class:`StoryBatch` (ids from ``vocab``)."""
    if not batch:
        raise ValueError("collate needs at least one story")
    N = len(batch)
    S = max(sum(len(s) for s in story.sentences) for story in batch)
    Q = max(len(story.question) for story in batch)
    tokens = torch.zeros(N, S, dtype=torch.long)
    sentence = torch.full((N, S), -1, dtype=torch.long)
    word = torch.full((N, S), -1, dtype=torch.long)
    question = torch.zeros(N, Q, dtype=torch.long)
    supporting = torch.full((N, 2), -1, dtype=torch.long)
    for n, story in enumerate(batch):
        ids = [i for s in story.sentences for i in vocab.encode(s)]
        tokens[n, : len(ids)] = torch.tensor(ids)
        sentence[n, : len(ids)] = torch.tensor(
            [k for k, s in enumerate(story.sentences) for _ in s]
        )
        word[n, : len(ids)] = torch.tensor([j for s in story.sentences for j in range(len(s))])
        question[n, : len(story.question)] = torch.tensor(vocab.encode(story.question))
        supporting[n, : len(story.supporting)] = torch.tensor(story.supporting)
    n_sentences = torch.tensor([len(story.sentences) for story in batch])
    padding = sentence < 0
    recency = torch.where(padding, -1, n_sentences[:, None] - 1 - sentence)
    return StoryBatch(
        tokens=tokens,
        sentence=sentence,
        recency=recency,
        word=word,
        key_padding_mask=padding,
        question=question,
        question_padding_mask=question == 0,
        answer=torch.tensor([PLACES.index(story.answer) for story in batch]),
        supporting=supporting,
        two_facts=torch.tensor([story.kind == "two" for story in batch]),
        n_sentences=n_sentences,
    )


def last_place_rule(story: Story) -> str | None:
    """The shortcut "the answer is the last place mentioned in the story" (None if none is)."""
    for sentence in reversed(story.sentences):
        places = [t for t in sentence if t in PLACES]
        if places:
            return places[-1]
    return None


def last_taker_rule(story: Story) -> str | None:
    """A strong shortcut for two-fact questions: the last move by anyone who takes something.

    It skips the chain (which object, who took *it*) and is still often right, because few
    people take anything (None if no such person moves).
    """
    takers = {s[0] for s in story.sentences if s[1] in TAKES}
    for sentence in reversed(story.sentences):
        if sentence[0] in takers and sentence[1] in MOVES:
            return sentence[-2]
    return None


def supporting_share(weights: Tensor, sentence: Tensor, sentences: Tensor) -> Tensor:
    """The share of each story's attention that falls on the given sentences.

    Args:
        weights: (N, S) attention of one query over the story tokens (rows sum to 1).
        sentence: (N, S) each token's sentence index, -1 on padding (``StoryBatch.sentence``).
        sentences: (N, K) the sentence indexes to count, -1 for none (e.g. ``StoryBatch.supporting``).

    Returns:
        (N,) the weight on tokens of those sentences.
    """
    if weights.dim() != 2 or sentence.shape != weights.shape:
        raise ValueError(
            f"weights and sentence must both be (N, S); got {tuple(weights.shape)} and "
            f"{tuple(sentence.shape)}"
        )
    if sentences.dim() != 2 or sentences.size(0) != weights.size(0):
        raise ValueError(
            f"sentences must be (N, K) with N = {weights.size(0)}; got {tuple(sentences.shape)}"
        )
    real = sentences >= 0  # (N, K)
    hit = (sentence[:, :, None] == sentences[:, None, :]) & real[:, None, :]  # (N, S, K)
    return (weights * hit.any(-1).to(weights.dtype)).sum(-1)  # (N,)
