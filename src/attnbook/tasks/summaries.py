"""Extractive summarisation, honestly small: pick the sentence of a paragraph that carries its news.

Each paragraph (4-6 sentences, in random order) is about one **topic**: a council and a project,
such as a bridge. Exactly one sentence reports the decision about the topic ("the council
approved the bridge ."); that sentence is the one-sentence summary, the **key**. The others are

* a **side decision** by the same body about another project, never mentioned elsewhere ("the
  council delayed the museum ."): it has the key's template and kind of words, so a reader of one
  sentence at a time cannot tell the two apart;
* 1-3 **background** sentences and quotes that mention the topic's project ("the bridge will cost
  40 million .");
* **filler**, some of it repeated context that shares many words with other filler ("the meeting
  was held in the town hall .", "the town hall was full for the meeting .").

So the key is "the decision about the project the paragraph talks about": finding it needs the
other sentences. Its position is uniform at random, so the news baseline *lead-1* (take the first
sentence) is near chance by design.

Splits: ``"train"`` and all the others use disjoint (body, project) pairs, for the key and the
side decision alike (:func:`topic_split`); ``"long"`` has 8
sentences (more filler) with the key among the last three positions, which never occur in
training; ``"passive"`` writes both decisions in a template never seen in training ("the bridge was
approved by the council ."); ``"swapped"`` is ``"test"`` (the same paragraphs, for the same seed) with the
background rewritten about the side project, so the *other* decision becomes the key (a
counterfactual: only the context changed).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, fields

import torch
from torch import Tensor

from attnbook.tasks.vocab import Vocabulary

__all__ = [
    "BODIES",
    "PROJECTS",
    "DECISIONS",
    "SPLITS",
    "topic_split",
    "Paragraph",
    "SummaryBatch",
    "paragraphs",
    "vocabulary",
    "collate",
    "sampler",
    "project_positions",
    "lead_baseline",
    "central_sentence",
    "centrality_baseline",
    "decision_on_topic",
    "decision_on_topic_baseline",
]

BODIES = ("council", "board", "committee", "senate", "union", "court")
PROJECTS = (
    "bridge", "park", "library", "stadium", "tunnel", "museum",
    "market", "harbour", "railway", "hospital", "airport", "school",
)  # fmt: skip
DECISIONS = ("approved", "rejected", "delayed", "funded", "cancelled", "blocked")
NAMES = ("ann", "li", "omar", "maria", "tom", "mei")
DAYS = ("monday", "tuesday", "friday", "sunday")
NUMBERS = ("two", "three", "five", "forty", "ninety")
SPLITS = ("train", "test", "long", "passive", "swapped")

_DECISION = ("the {b} {d} the {p} .", "on {day} the {b} {d} the {p} .")
_PASSIVE = ("the {p} was {d} by the {b} .",)
_BACKGROUND = (
    "the {p} was first planned {n} years ago .",
    "the {p} will cost {n} million .",
    "people have argued about the {p} for {n} years .",
    '" we need the {p} , " said {name} .',
    '" the {p} is too expensive , " said {name} .',
)
_FILLER = (
    "the meeting was held in the town hall .",
    "the town hall was full for the meeting .",
    "the meeting lasted {n} hours .",
    "it rained on {day} .",
    "the {b} meets every {day} .",
    '" it was a long day , " said {name} .',
)


@dataclass
class Paragraph:
    """One paragraph: its sentences (token lists), the key's index and each sentence's kind."""

    sentences: list[list[str]]
    key: int  # index of the sentence that reports the decision about the topic
    kinds: list[str]  # "key", "side", "background" or "filler", per sentence
    body: str
    project: str  # the topic's project
    side_project: str  # the project of the side decision


@dataclass
class SummaryBatch:
    """Paragraphs as tensors. Shape legend: N paragraphs, T tokens, M sentences."""

    tokens: Tensor  # (N, T) token ids, 0 = padding
    sentence_ids: Tensor  # (N, T) the sentence each token belongs to, -1 = padding
    positions: Tensor  # (N, T) position of each token inside its sentence
    sentence_mask: Tensor  # (N, M) True = no such sentence (padding)
    key: Tensor  # (N,) index of the key sentence


def topic_split(body: str, project: str) -> str:
    """A fixed split of the 72 (body, project) pairs: 18 test pairs, 3 per body."""
    return "test" if (BODIES.index(body) + PROJECTS.index(project)) % 4 == 0 else "train"


def _fill(template: str, rng: random.Random, **slots: str) -> list[str]:
    words = {"day": rng.choice(DAYS), "n": rng.choice(NUMBERS), "name": rng.choice(NAMES)}
    return template.format(**words, **slots).split()


def _paragraph(rng: random.Random, split: str) -> Paragraph:
    wanted = "train" if split == "train" else "test"
    while True:
        body, project = rng.choice(BODIES), rng.choice(PROJECTS)
        if topic_split(body, project) == wanted:
            break
    # the side topic comes from the same split, so that no (body, project) pair is ever seen as
    # a key in training and only as a side decision in test, or the other way round
    side = rng.choice([p for p in PROJECTS if p != project and topic_split(body, p) == wanted])
    n_sentences = 8 if split == "long" else rng.choice((4, 5, 6))
    n_background = rng.randint(1, min(3, n_sentences - 2))
    templates = _PASSIVE if split == "passive" else _DECISION
    d1, d2 = rng.sample(DECISIONS, 2)
    about = side if split == "swapped" else project  # the project the background talks about
    kinds = ["key", "side"] + ["background"] * n_background
    kinds += ["filler"] * (n_sentences - len(kinds))
    fillers = rng.sample(_FILLER, n_sentences - 2 - n_background)
    sentences = [
        _fill(rng.choice(templates), rng, b=body, d=d1, p=project),
        _fill(rng.choice(templates), rng, b=body, d=d2, p=side),
        *(_fill(rng.choice(_BACKGROUND), rng, p=about) for _ in range(n_background)),
        *(_fill(t, rng, b=body) for t in fillers),
    ]
    order = list(range(n_sentences))
    rng.shuffle(order)
    if split == "long":  # the key among the last three positions, never seen in training
        where = rng.randrange(n_sentences - 3, n_sentences)
        order.remove(0)
        order.insert(where, 0)
    if split == "swapped":  # the side decision is now about the topic the paragraph discusses
        kinds[0], kinds[1] = "side", "key"
        project, side = side, project
    sentences = [sentences[i] for i in order]
    kinds = [kinds[i] for i in order]
    return Paragraph(sentences, kinds.index("key"), kinds, body, project, side)


def paragraphs(n: int, split: str = "train", seed: int = 0) -> list[Paragraph]:
    """``n`` paragraphs of a split (see the module docstring), reproducible from ``seed``."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer; got {n!r}")
    # "swapped" draws the same random numbers as "test": the same paragraphs, another background
    rng = random.Random(f"summaries/{'test' if split == 'swapped' else split}/{seed}")
    return [_paragraph(rng, split) for _ in range(n)]


def vocabulary() -> Vocabulary:
    """Every word any split can produce (the passive template's words included)."""
    words = {"on", "the", "was", "by", *BODIES, *PROJECTS, *DECISIONS, *NAMES, *DAYS, *NUMBERS}
    for template in _BACKGROUND + _FILLER:
        words.update(w for w in template.split() if not w.startswith("{"))
    return Vocabulary(sorted(words))


def collate(batch: list[Paragraph], vocab: Vocabulary) -> SummaryBatch:
    """Concatenate each paragraph's sentences into one padded token sequence."""
    if not batch:
        raise ValueError("batch must hold at least one paragraph")
    T = max(sum(len(s) for s in p.sentences) for p in batch)
    M = max(len(p.sentences) for p in batch)
    tokens = torch.zeros(len(batch), T, dtype=torch.long)
    sentence_ids = torch.full((len(batch), T), -1, dtype=torch.long)
    positions = torch.zeros(len(batch), T, dtype=torch.long)
    sentence_mask = torch.ones(len(batch), M, dtype=torch.bool)
    for n, p in enumerate(batch):
        ids = [(i, j, t) for i, s in enumerate(p.sentences) for j, t in enumerate(vocab.encode(s))]
        tokens[n, : len(ids)] = torch.tensor([t for _, _, t in ids])
        sentence_ids[n, : len(ids)] = torch.tensor([i for i, _, _ in ids])
        positions[n, : len(ids)] = torch.tensor([j for _, j, _ in ids])
        sentence_mask[n, : len(p.sentences)] = False
    key = torch.tensor([p.key for p in batch])
    return SummaryBatch(tokens, sentence_ids, positions, sentence_mask, key)


def project_positions(batch: list[Paragraph]) -> Tensor:
    """(N,) the position, in the collated token sequence, of the project word of each key sentence."""
    out = []
    for p in batch:
        start = sum(len(s) for s in p.sentences[: p.key])
        out.append(start + p.sentences[p.key].index(p.project))
    return torch.tensor(out)


def sampler(pool: SummaryBatch) -> Callable[[int, torch.Generator], SummaryBatch]:
    """``make_batch(batch_size, generator)`` for :func:`attnbook.train.fit`: random rows of a
    collated pool (collating once is faster than collating every step)."""

    def make_batch(batch_size: int, generator: torch.Generator) -> SummaryBatch:
        rows = torch.randint(pool.tokens.size(0), (batch_size,), generator=generator)  # (N,)
        return SummaryBatch(*(getattr(pool, f.name)[rows] for f in fields(SummaryBatch)))

    return make_batch


def lead_baseline(batch: list[Paragraph]) -> float:
    """Accuracy of *lead-1*: always pick the first sentence."""
    return sum(p.key == 0 for p in batch) / len(batch)


STOPWORDS = frozenset({"the", ".", ",", '"', "on", "was", "by", "in", "for", "said"})


def central_sentence(sentences: list[list[str]]) -> int:
    """The sentence that shares the most content words with the others (ties: the earliest).

    The idea behind unsupervised extractive methods such as LexRank: the most central sentence
    summarises the rest. For each sentence, count the distinct words, ``STOPWORDS`` left out, that
    it shares with each other sentence, and add the counts up.
    """
    words = [set(s) - STOPWORDS for s in sentences]
    shared = [
        sum(len(w & other) for j, other in enumerate(words) if j != i) for i, w in enumerate(words)
    ]
    return shared.index(max(shared))


def centrality_baseline(batch: list[Paragraph]) -> float:
    """Accuracy of picking the :func:`central_sentence` of every paragraph."""
    return sum(central_sentence(p.sentences) == p.key for p in batch) / len(batch)


def decision_on_topic(sentences: list[list[str]]) -> int:
    """The strongest cheap rule: the decision whose project another sentence mentions.

    It reads only which words occur in which sentences, with the generator's word lists: keep
    the sentences that contain a decision word (``DECISIONS``), and of those take the first whose
    project (a word of ``PROJECTS``) occurs in some other sentence. Every split writes the topic's
    project into the background and the side project nowhere else, so this rule is right on every
    paragraph of every split, the passive template included: no word order is read.
    """
    decisions = [i for i, s in enumerate(sentences) if set(s) & set(DECISIONS)]
    for i in decisions:
        projects = set(sentences[i]) & set(PROJECTS)
        if any(projects & set(other) for j, other in enumerate(sentences) if j != i):
            return i
    return decisions[0] if decisions else 0


def decision_on_topic_baseline(batch: list[Paragraph]) -> float:
    """Accuracy of :func:`decision_on_topic` on every paragraph."""
    return sum(decision_on_topic(p.sentences) == p.key for p in batch) / len(batch)
