"""Synthetic pronoun resolution ("who is *she*?") in English and Chinese, with a pointer target.

A sentence introduces a few people, each doing something; a later clause says what a pronoun's
referent did next::

    yesterday Tom laughed , Mary cried and Anna sang . later she dried the tears .
    昨天张伟笑了，王芳哭了，李娜唱了。后来她擦了擦眼泪。

The target is a *pointer*: the position of the antecedent's name (``Mary`` / ``芳``) among the
names, which look alike. In the default ``"cue"`` task neither clue is enough on its own: one
rival has the pronoun's gender but did something else (``Anna sang``), another did the cued thing
but has the other gender (``Tom`` would have, had he cried). The model must bind each name to its
own verb, and the pronoun to both its gender and its cue — relations between tokens, which a bag
of words cannot represent. The ``"agreement"`` task, where gender alone decides, is the easy
control: there, a model with no attention at all succeeds.

Chinese is tokenised by character; a Chinese name is a surname and a given name (张伟), and the
given name carries the gender and is what the pointer points at. Everything is deterministic:
the same ``seed`` gives the same sentences.

Shape legend: N batch, S padded sentence length.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import torch
from torch import Tensor

from attnbook.tasks.vocab import Vocabulary, tokenize

__all__ = ["Example", "CorefTask", "Batch", "collate", "batch_maker", "SPLITS", "LEXICON"]

Language = Literal["en", "zh"]
Task = Literal["cue", "agreement"]
#: The splits — training sentences, test sentences, held-out name pairs, five-person sentences.
SPLITS = ("train", "test", "pairs", "long")

#: Per language — names by gender, verbs with the clause that cues each one, fillers, function words.
LEXICON: dict[str, dict] = {
    "en": {
        "male": ["Tom", "John", "Jack", "Sam", "Paul", "Mark", "Ben", "Luke"],
        "female": ["Mary", "Anna", "Lucy", "Emma", "Kate", "Jane", "Rose", "Lily"],
        "pronoun": {"male": "he", "female": "she"},
        # verb -> what its doer did later (the cue that follows the pronoun)
        "verbs": {
            "cried": "dried the tears",
            "laughed": "told the joke again",
            "ran": "was out of breath",
            "ate": "was full",
            "sang": "had a sore throat",
            "slept": "woke up late",
        },
        "openers": ["yesterday", "this morning", "at the party", "after work"],
        "adverbs": ["suddenly", "quietly", "also"],  # between a name and its verb
        "later": ["later", "then", "afterwards"],
        "comma": ",",
        "and": "and",
        "stop": ".",
    },
    "zh": {
        "surnames": list("张王李刘陈杨赵黄"),
        "male": list("伟强军勇杰磊斌刚"),
        "female": list("芳丽娜敏静燕霞玲"),
        "pronoun": {"male": "他", "female": "她"},
        "verbs": {
            "哭了": "擦了擦眼泪",
            "笑了": "又讲了个段子",
            "跑了": "喘不过气来",
            "吃了": "饱得不想动",
            "唱了": "嗓子哑了",
            "睡了": "醒得很晚",
        },
        "openers": ["昨天", "今天早上", "在聚会上", "下班后"],
        "adverbs": ["突然", "也", "在家"],
        "later": ["后来", "然后", "接着"],
        "comma": "，",
        "and": None,
        "stop": "。",
    },
}


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
    """

    tokens: tuple[str, ...]
    pronoun: int
    antecedent: int
    candidates: tuple[int, ...]
    names: tuple[str, ...]
    language: str
    actions: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        return (" " if self.language == "en" else "").join(self.tokens)

    def nearest_preceding_name(self, same_gender: bool = False) -> int:
        """The rule "the last name before the pronoun": a baseline that ignores every clue; with
        ``same_gender``, the last name of the pronoun's gender (it ignores what people did)."""
        lex = LEXICON[self.language]
        gender = "male" if self.tokens[self.pronoun] == lex["pronoun"]["male"] else "female"
        return max(
            position
            for position, name in zip(self.candidates, self.names)
            if position < self.pronoun and (not same_gender or name in lex[gender])
        )


class CorefTask:
    """Generator of pronoun-resolution sentences in one language.

    Args:
        language: ``"en"`` (word tokens) or ``"zh"`` (character tokens).
        task: ``"cue"`` (gender *and* what the person did decide; the default) or
            ``"agreement"`` (exactly one person has the pronoun's gender).
        filler_p: probability of each optional filler (an opening phrase; an adverb between a
            name and its verb). The ``"long"`` split doubles it (at most 1).
        heldout_fraction: fraction of same-gender name pairs that never appear together in the
            ``"train"`` split; the ``"pairs"`` split puts such a pair in the antecedent/rival
            slots. Chosen once from ``pair_seed``, independently of the sampling seed.
        pair_seed: seed for choosing the held-out pairs.
    """

    def __init__(
        self,
        language: Language = "en",
        task: Task = "cue",
        *,
        filler_p: float = 0.3,
        heldout_fraction: float = 0.25,
        pair_seed: int = 1234,
    ) -> None:
        if language not in LEXICON:
            raise ValueError(f"language must be 'en' or 'zh'; got {language!r}")
        if task not in ("cue", "agreement"):
            raise ValueError(f"task must be 'cue' or 'agreement'; got {task!r}")
        if not 0.0 <= filler_p <= 1.0:
            raise ValueError(f"filler_p must be in [0, 1]; got {filler_p}")
        if not 0.0 < heldout_fraction < 1.0:
            raise ValueError(f"heldout_fraction must be in (0, 1); got {heldout_fraction}")
        self.language, self.task, self.filler_p = language, task, filler_p
        self.lex = LEXICON[language]
        rng = random.Random(pair_seed)
        self.heldout_pairs: set[frozenset[str]] = set()
        for gender in ("male", "female"):
            pairs = [frozenset(p) for p in itertools.combinations(self.lex[gender], 2)]
            self.heldout_pairs.update(rng.sample(pairs, round(heldout_fraction * len(pairs))))

    # -- people -------------------------------------------------------------------------------
    def _gender(self, name: str) -> str:
        return "male" if name in self.lex["male"] else "female"

    def _people(self, rng: random.Random, n_people: int, split: str) -> tuple[list, str, str]:
        """Choose (name, verb) for each person, the pronoun's gender and the cued verb.

        ``"cue"``: the antecedent (pronoun's gender, cued verb), a gender rival (same gender,
        another verb), a verb rival (other gender, cued verb), then extra people who never have
        both the gender and the verb. ``"agreement"``: the antecedent and people of the other
        gender only.
        """
        verbs = list(self.lex["verbs"])
        gender = rng.choice(("male", "female"))
        other = "female" if gender == "male" else "male"
        verb = rng.choice(verbs)
        others = [v for v in verbs if v != verb]
        while True:
            antecedent = rng.choice(self.lex[gender])
            if self.task == "agreement":
                rival = None
                names = [antecedent, *rng.sample(self.lex[other], n_people - 1)]
            else:
                rival = rng.choice([n for n in self.lex[gender] if n != antecedent])
                verb_rival = rng.choice(self.lex[other])
                pool = [
                    n
                    for n in self.lex[gender] + self.lex[other]
                    if n not in (antecedent, rival, verb_rival)
                ]
                names = [antecedent, rival, verb_rival, *rng.sample(pool, n_people - 3)]
            pairs = {frozenset(p) for p in itertools.combinations(names, 2)}
            if split == "pairs":
                if frozenset((antecedent, rival)) in self.heldout_pairs:
                    break
            elif not pairs & self.heldout_pairs:
                break
        people = [(antecedent, verb)]
        for i, name in enumerate(names[1:]):
            if self.task == "cue" and i == 1:
                people.append((name, verb))  # the verb rival
            elif self._gender(name) == gender:
                people.append((name, rng.choice(others)))  # never both gender and verb
            else:
                people.append((name, rng.choice(verbs)))
        rng.shuffle(people)
        return people, gender, verb

    # -- sentences ----------------------------------------------------------------------------
    def sample(self, rng: random.Random, split: str = "train") -> Example:
        """One example of ``split`` (see :data:`SPLITS`), drawing all randomness from ``rng``.

        ``"train"`` and ``"test"`` have 3 people and avoid held-out name pairs; ``"pairs"`` puts
        a held-out pair in the antecedent/rival slots; ``"long"`` has 5 people and more fillers.
        """
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
        if split == "pairs" and self.task == "agreement":
            raise ValueError(
                "the 'pairs' split needs task='cue': in 'agreement' sentences "
                "nobody shares the antecedent's gender, so there is no rival pair"
            )
        n_people = 5 if split == "long" else 3
        filler_p = min(1.0, 2 * self.filler_p) if split == "long" else self.filler_p
        people, gender, verb = self._people(rng, n_people, split)
        lex, words = self.lex, tokenize
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
        tokens.append(lex["pronoun"][gender])
        tokens += words(lex["verbs"][verb]) + [lex["stop"]]
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
        )

    def examples(self, n: int, split: str = "train", seed: int = 0) -> list[Example]:
        """``n`` examples of ``split``, the same for the same ``seed``."""
        rng = random.Random(f"{self.language}-{self.task}-{split}-{seed}")
        return [self.sample(rng, split) for _ in range(n)]

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
    S = max(len(e.tokens) for e in examples)
    tokens = torch.full((len(examples), S), vocab.pad_id, dtype=torch.long)  # (N, S)
    candidates = torch.zeros(len(examples), S, dtype=torch.bool)  # (N, S)
    for n, e in enumerate(examples):
        tokens[n, : len(e.tokens)] = torch.tensor(vocab.encode(e.tokens))
        candidates[n, list(e.candidates)] = True
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
