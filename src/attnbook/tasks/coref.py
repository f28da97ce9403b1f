"""Synthetic pronoun resolution ("who is *she*?") in English and Chinese, with a pointer target.

A sentence introduces a few people, each doing something; a later clause says what a pronoun's
referent did next::

    yesterday Tom laughed , Mary cried and Anna sang . later she dried the tears .
    昨天张伟笑了，王芳哭了，李娜唱了。后来她擦了擦眼泪。

The target is a *pointer*: the position of the antecedent's name (``Mary`` / ``芳``) among the
names, which look alike. In the default ``"cue"`` task every sentence has four people in a random
order, built so that **no clue is enough on its own**::

    antecedent    pronoun's gender, the cued action      Mary cried
    gender rival  pronoun's gender, a second action      Anna sang
    cue rival     other gender,     the cued action      Tom cried
    mirror        other gender,     the second action    Jack sang

The two people of the pronoun's gender look the same until the cue is read: each shares an
action with someone of the other gender, and which action the cue names is drawn at random. So
every rule that skips the cue (gender alone, gender plus "an action that happens twice", the
nearest name of that gender, ...) is a coin flip between the antecedent and the gender rival, and
every rule that skips the gender is a coin flip between the antecedent and the cue rival
(:mod:`attnbook.tasks.shortcuts` measures such rules). The model must bind each name to its own
action, and the pronoun to both its gender and its cue — relations between tokens, which a bag of
words cannot represent. The ``"agreement"`` task, where gender alone decides, is the easy
control: there, a model with no attention at all succeeds. ``hide`` removes one clue from every
sentence (the cue clause, or the pronoun's gender), for training a model that cannot see it.

Chinese is tokenised by character; a Chinese name is a surname and a given name (张伟), and the
given name carries the gender and is what the pointer points at. Everything is deterministic:
the same ``seed`` gives the same sentences.

Shape legend: N batch, S padded sentence length.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import torch
from torch import Tensor

from attnbook.tasks.coref_lexicon import LEXICON, gender_of
from attnbook.tasks.vocab import Vocabulary, pad_rows, tokenize

__all__ = [
    "Example",
    "CorefTask",
    "Batch",
    "collate",
    "batch_maker",
    "SPLITS",
    "PEOPLE",
    "LEXICON",
]


@functools.cache
def _words(text: str) -> tuple[str, ...]:
    """``tokenize(text)``, remembered: sentences are built from the same few lexicon phrases."""
    return tuple(tokenize(text))


Language = Literal["en", "zh"]
Task = Literal["cue", "agreement"]
Hide = Literal["cue", "gender"]
#: The splits — training sentences, test sentences, held-out name pairs, six-person sentences.
SPLITS = ("train", "test", "pairs", "long")
#: How many people a sentence of each split has (``"long"`` also doubles the fillers).
PEOPLE = {"train": 4, "test": 4, "pairs": 4, "long": 6}


@dataclass(frozen=True)
class Example:
    """One sentence and its answer.

    Attributes:
        tokens: the sentence, one string per token.
        pronoun: position of the pronoun.
        antecedent: position of the antecedent's name token (the target of the pointer).
        candidates: positions of every person's name token, in order (the antecedent among them).
        names: the name token of each person, in the same order as ``candidates``.
        actions: position of each person's action (the first token of the verb), same order.
        language: ``"en"`` or ``"zh"``.
        verbs: each person's action as its key in ``LEXICON[language]["verbs"]``, same order.
        cue: the key of the action the cue clause names (``""`` when the cue is hidden).
        gender: the antecedent's gender, ``"male"`` or ``"female"`` (the pronoun's, unless the
            gender is hidden).
    """

    tokens: tuple[str, ...]
    pronoun: int
    antecedent: int
    candidates: tuple[int, ...]
    names: tuple[str, ...]
    language: str
    actions: tuple[int, ...] = ()
    verbs: tuple[str, ...] = ()
    cue: str = ""
    gender: str = ""

    @property
    def text(self) -> str:
        return (" " if self.language == "en" else "").join(self.tokens)

    def nearest_preceding_name(self, same_gender: bool = False) -> int:
        """The rule "the last name before the pronoun": a baseline that ignores every clue; with
        ``same_gender``, the last name of the pronoun's gender (it ignores what people did)."""
        gender = gender_of(self.language, self.tokens[self.pronoun])
        return max(
            position
            for position, name in zip(self.candidates, self.names)
            if position < self.pronoun
            and (not same_gender or gender_of(self.language, name) == gender)
        )


class CorefTask:
    """Generator of pronoun-resolution sentences in one language.

    Args:
        language: ``"en"`` (word tokens) or ``"zh"`` (character tokens).
        task: ``"cue"`` (gender *and* what the person did decide; the default) or
            ``"agreement"`` (exactly one person has the pronoun's gender).
        hide: ``None`` (the default), ``"cue"`` (the clause after the pronoun is dropped:
            "later she .") or ``"gender"`` (the pronoun is *he* or *she* at random, whatever the
            antecedent's gender). The answer is unchanged, so at most half of such sentences can
            be solved.
        filler_p: probability of each optional filler (an opening phrase; an adverb between a
            name and its verb). The ``"long"`` split doubles it (at most 1).
        heldout_fraction: fraction of same-gender name pairs that never appear together in the
            ``"train"`` split; the ``"pairs"`` split puts such pairs in the antecedent/gender-rival
            and the cue-rival/mirror slots. Chosen once from ``pair_seed``, independently of the sampling seed.
        pair_seed: seed for choosing the held-out pairs.
    """

    def __init__(
        self,
        language: Language = "en",
        task: Task = "cue",
        *,
        hide: Hide | None = None,
        filler_p: float = 0.3,
        heldout_fraction: float = 0.25,
        pair_seed: int = 1234,
    ) -> None:
        if language not in LEXICON:
            raise ValueError(f"language must be 'en' or 'zh'; got {language!r}")
        if task not in ("cue", "agreement"):
            raise ValueError(f"task must be 'cue' or 'agreement'; got {task!r}")
        if hide not in (None, "cue", "gender"):
            raise ValueError(f"hide must be None, 'cue' or 'gender'; got {hide!r}")
        if not 0.0 <= filler_p <= 1.0:
            raise ValueError(f"filler_p must be in [0, 1]; got {filler_p}")
        if not 0.0 < heldout_fraction < 1.0:
            raise ValueError(f"heldout_fraction must be in (0, 1); got {heldout_fraction}")
        self.language, self.task, self.hide, self.filler_p = language, task, hide, filler_p
        self.lex = LEXICON[language]
        rng = random.Random(pair_seed)
        self.heldout_pairs: set[frozenset[str]] = set()
        for gender in ("male", "female"):
            pairs = [frozenset(p) for p in itertools.combinations(self.lex[gender], 2)]
            self.heldout_pairs.update(rng.sample(pairs, round(heldout_fraction * len(pairs))))

    # -- people -------------------------------------------------------------------------------
    def _gender(self, name: str) -> str:
        return gender_of(self.language, name)

    def _people(self, rng: random.Random, n_people: int, split: str) -> tuple[list, str, str]:
        """Choose (name, verb) for each person, the pronoun's gender and the cued verb.

        ``"cue"``: the antecedent (pronoun's gender, cued verb), a gender rival (same gender,
        second verb), a cue rival (other gender, cued verb), a mirror (other gender, second verb),
        then extra people of either gender with other verbs. ``"agreement"``: the antecedent and
        people of the other gender only, with any verbs.
        """
        verbs = list(self.lex["verbs"])
        gender = rng.choice(("male", "female"))
        other = "female" if gender == "male" else "male"
        verb, second = rng.sample(verbs, 2)
        rest = [v for v in verbs if v not in (verb, second)]
        while True:
            antecedent = rng.choice(self.lex[gender])
            if self.task == "agreement":
                rival = None
                names = [antecedent, *rng.sample(self.lex[other], n_people - 1)]
            else:
                rival = rng.choice([n for n in self.lex[gender] if n != antecedent])
                cue_rival, mirror = rng.sample(self.lex[other], 2)
                chosen = (antecedent, rival, cue_rival, mirror)
                pool = [n for n in self.lex[gender] + self.lex[other] if n not in chosen]
                names = [*chosen, *rng.sample(pool, n_people - 4)]
            if split == "pairs":
                # Both same-gender pairs held out, so that "the one whose gender has a held-out
                # pair here" cannot tell the antecedent from the cue rival.
                if (
                    self.task == "cue"
                    and {
                        frozenset((antecedent, rival)),
                        frozenset(names[2:4]),
                    }
                    <= self.heldout_pairs
                ):
                    break
            elif not any(
                frozenset(p) in self.heldout_pairs for p in itertools.combinations(names, 2)
            ):
                break
        if self.task == "agreement":
            people = [(antecedent, verb), *((n, rng.choice(verbs)) for n in names[1:])]
        else:
            people = [(antecedent, verb), (rival, second), (names[2], verb), (names[3], second)]
            people += [(n, rng.choice(rest)) for n in names[4:]]
        rng.shuffle(people)
        return people, gender, verb

    # -- sentences ----------------------------------------------------------------------------
    def sample(
        self,
        rng: random.Random,
        split: str = "train",
        *,
        n_people: int | None = None,
        filler_p: float | None = None,
    ) -> Example:
        """One example of ``split`` (see :data:`SPLITS`), drawing all randomness from ``rng``.

        ``"train"`` and ``"test"`` have 4 people and avoid held-out name pairs; ``"pairs"`` puts
        a held-out pair in the antecedent/gender-rival slots and another in the cue-rival/mirror
        slots; ``"long"`` has 6 people and twice the
        fillers. ``n_people`` and ``filler_p`` override the split's (to vary one at a time).
        """
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
        if split == "pairs" and self.task == "agreement":
            raise ValueError(
                "the 'pairs' split needs task='cue': in 'agreement' sentences "
                "nobody shares the antecedent's gender, so there is no rival pair"
            )
        smallest = 4 if self.task == "cue" else 2
        n_people = PEOPLE[split] if n_people is None else n_people
        if not smallest <= n_people <= 6:
            raise ValueError(
                f"n_people must be between {smallest} and 6 for task={self.task!r}; got {n_people}"
            )
        if filler_p is None:
            filler_p = min(1.0, 2 * self.filler_p) if split == "long" else self.filler_p
        elif not 0.0 <= filler_p <= 1.0:
            raise ValueError(f"filler_p must be in [0, 1]; got {filler_p}")
        people, gender, verb = self._people(rng, n_people, split)
        lex, words = self.lex, _words
        tokens: list[str] = []
        if rng.random() < filler_p:
            tokens += words(rng.choice(lex["openers"]))
        candidates, names, actions = [], [], []
        for i, (name, did) in enumerate(people):
            if i > 0:
                last = i == len(people) - 1
                tokens.append(lex["and"] if last and lex["and"] else lex["comma"])
            if self.language == "zh":
                tokens.append(rng.choice(lex["surnames"]))
            candidates.append(len(tokens))
            names.append(name)
            tokens.append(name)
            if rng.random() < filler_p:
                tokens += words(rng.choice(lex["adverbs"]))
            actions.append(len(tokens))
            tokens += words(did)
        tokens.append(lex["stop"])
        tokens += words(rng.choice(lex["later"]))
        pronoun = len(tokens)
        coin = rng.choice(("male", "female"))  # drawn always: hiding changes no other draw
        said = coin if self.hide == "gender" else gender
        tokens.append(lex["pronoun"][said])
        if self.hide != "cue":
            tokens += words(lex["verbs"][verb])
        tokens.append(lex["stop"])
        antecedent = candidates[
            [p[0] for p in people].index(
                next(n for n, v in people if v == verb and self._gender(n) == gender)
            )
        ]
        return Example(
            tuple(tokens),
            pronoun,
            antecedent,
            tuple(candidates),
            tuple(names),
            self.language,
            tuple(actions),
            verbs=tuple(v for _, v in people),
            cue="" if self.hide == "cue" else verb,
            gender=gender,
        )

    def examples(
        self,
        n: int,
        split: str = "train",
        seed: int = 0,
        *,
        n_people: int | None = None,
        filler_p: float | None = None,
    ) -> list[Example]:
        """``n`` examples of ``split``, the same for the same ``seed`` (and overrides, as in
        :meth:`sample`)."""
        rng = random.Random(f"{self.language}-{self.task}-{split}-{seed}")
        return [self.sample(rng, split, n_people=n_people, filler_p=filler_p) for _ in range(n)]

    def all_tokens(self) -> list[str]:
        """Every token a sentence of this language can contain, in a fixed order."""
        lex, words = self.lex, tokenize
        tokens: list[str] = list(lex.get("surnames", [])) + lex["male"] + lex["female"]
        tokens += list(lex["pronoun"].values())
        for verb, cue in lex["verbs"].items():
            tokens += words(verb) + words(cue)
        for group in ("openers", "adverbs", "later"):
            for text in lex[group]:
                tokens += words(text)
        tokens += [t for t in (lex["comma"], lex["and"], lex["stop"]) if t]
        return list(dict.fromkeys(tokens))


class Batch(NamedTuple):
    """Padded tensors for a list of examples.

    Attributes:
        tokens: (N, S) token ids, padded with ``vocab.pad_id``.
        key_padding_mask: (N, S) bool, ``True`` on padding (the ``nn.MultiheadAttention``
            convention).
        pronoun: (N,) position of each pronoun.
        target: (N,) position of each antecedent.
        candidates: (N, S) bool, ``True`` on the name tokens.
    """

    tokens: Tensor
    key_padding_mask: Tensor
    pronoun: Tensor
    target: Tensor
    candidates: Tensor


def collate(examples: Sequence[Example], vocab: Vocabulary) -> Batch:
    """Encode and pad ``examples`` into one :class:`Batch`."""
    if not examples:
        raise ValueError("collate needs at least one example")
    tokens = pad_rows([vocab.encode(e.tokens) for e in examples], vocab.pad_id)  # (N, S)
    candidates = torch.zeros(tokens.shape, dtype=torch.bool)  # (N, S)
    rows = [n for n, e in enumerate(examples) for _ in e.candidates]
    candidates[rows, [c for e in examples for c in e.candidates]] = True
    return Batch(
        tokens=tokens,
        key_padding_mask=tokens == vocab.pad_id,
        pronoun=torch.tensor([e.pronoun for e in examples]),
        target=torch.tensor([e.antecedent for e in examples]),
        candidates=candidates,
    )


def batch_maker(tasks: Sequence[CorefTask], vocab: Vocabulary, split: str = "train"):
    """A ``make_batch(batch_size, generator) -> Batch`` for :func:`attnbook.train.fit`.

    Example ``i`` of a batch comes from ``tasks[i % len(tasks)]`` (so a batch mixes languages
    evenly); all randomness is drawn from ``generator``, so training runs reproduce.
    """
    if not tasks:
        raise ValueError("batch_maker needs at least one task")

    def make_batch(batch_size: int, generator: torch.Generator) -> Batch:
        rng = random.Random(int(torch.randint(0, 2**62, (1,), generator=generator)))
        return collate([tasks[i % len(tasks)].sample(rng, split) for i in range(batch_size)], vocab)

    return make_batch
