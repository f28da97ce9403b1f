"""Chapter 1's detective: hand-built word features, a rule-based resolver, and attention.

Every word gets a small vector of features a reader can interpret ("is a person", "is male",
...). Keys are the features themselves; a query matrix turns a word's features into *what that
word looks for* (a pronoun looks for a person of its own gender, and not for another pronoun).
With these hand-made vectors, attention resolves 他 / "he" by construction — no training — so
every number in the chapter can be checked by hand.

:func:`detective_sentences` builds every small sentence of the chapter's kind from this lexicon
(老张对小丽说她很累, ...), each with its pronoun and antecedent: the data on which chapter 1 shows
that the same lookup can be *learned* (:mod:`attnbook.models.projections`), and
:func:`split_sentences` holds some out so that no held-out sentence has the features of a
training one.

Chinese is tokenised by character (老张 is two tokens, 老 "old" and 张 "Zhang"), English by
whitespace.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import torch
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.tasks.vocab import tokenize

#: The six interpretable features of every word, in column order.
FEATURES: tuple[str, ...] = ("person", "male", "female", "pronoun", "verb", "modifier")
#: Feature name -> its column in :data:`FEATURES`.
FEATURE_INDEX = {name: i for i, name in enumerate(FEATURES)}


def _vec(**features: float) -> tuple[float, ...]:
    unknown = set(features) - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown features {sorted(unknown)}; expected some of {FEATURES}")
    return tuple(float(features.get(name, 0.0)) for name in FEATURES)


#: One entry per token. Prefixes such as 老 ("old") and 小 ("little") are half a person — they
#: only ever appear as part of a name here.
WORD_FEATURES: dict[str, tuple[float, ...]] = {
    # Chinese, one character per token
    "老": _vec(person=0.5, male=0.5),
    "小": _vec(person=0.5),
    "张": _vec(person=1, male=1),
    "李": _vec(person=1, male=1),
    "丽": _vec(person=1, female=1),
    "他": _vec(person=1, male=1, pronoun=1),
    "她": _vec(person=1, female=1, pronoun=1),
    "说": _vec(verb=1),
    "对": _vec(modifier=0.5),
    "和": _vec(modifier=0.5),
    "很": _vec(modifier=1),
    "累": _vec(modifier=1, verb=0.5),
    # English, one word per token
    "Zhang": _vec(person=1, male=1),
    "Li": _vec(person=1, male=1),
    "Mary": _vec(person=1, female=1),
    "he": _vec(person=1, male=1, pronoun=1),
    "she": _vec(person=1, female=1, pronoun=1),
    "He": _vec(person=1, male=1, pronoun=1),
    "told": _vec(verb=1),
    "said": _vec(verb=1),
    "and": _vec(modifier=0.5),
    "was": _vec(verb=0.5),
    "tired": _vec(modifier=1, verb=0.5),
}


def _query_matrix() -> Tensor:
    """W_q, (features, features): row i says how much a word's features *seek* feature i."""
    w = torch.zeros(len(FEATURES), len(FEATURES))
    person, male, female, pronoun, verb, modifier = (FEATURE_INDEX[f] for f in FEATURES)
    w[person, pronoun] = 2.0  # a pronoun looks for a person ...
    w[male, male] = 2.0  # ... of its own gender ...
    w[female, female] = 2.0
    w[pronoun, pronoun] = -3.0  # ... that is not itself a pronoun.
    w[person, verb] = 1.5  # a verb looks for who does it
    w[verb, modifier] = 1.5  # a modifier looks for what it modifies
    return w


#: W_q, what each word looks for given its features (row = feature sought, column = feature had).
QUERY_MATRIX: Tensor = _query_matrix()


def features(
    tokens: Sequence[str], lexicon: Mapping[str, Sequence[float]] = WORD_FEATURES
) -> Tensor:
    """The (len(tokens), len(FEATURES)) matrix of hand-built features, one row per token."""
    unknown = [t for t in tokens if t not in lexicon]
    if unknown:
        raise ValueError(
            f"tokens {unknown} are not in the lexicon; add them with features {FEATURES}"
        )
    return torch.tensor([list(lexicon[t]) for t in tokens], dtype=torch.float32)


def queries_keys_values(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Q = x W_qᵀ (what each word looks for), K = x (what it offers), V = x (what it carries)."""
    return x @ QUERY_MATRIX.T, x, x


def attend(
    tokens: Sequence[str], lexicon: Mapping[str, Sequence[float]] = WORD_FEATURES
) -> tuple[Tensor, Tensor, Tensor]:
    """Scores (L, L), weights (L, L) and outputs (L, features) for every token of a sentence.

    No 1/sqrt(d) scaling here (``scale=1``): the hand-built scores are already on a sensible
    scale. Chapter 2 explains when and why the scaling matters.
    """
    q, k, v = queries_keys_values(features(tokens, lexicon))
    scores = q @ k.T
    output, weights = scaled_dot_product_attention(q, k, v, scale=1.0)
    return scores, weights, output


def rule_based_antecedent(
    tokens: Sequence[str],
    pronoun_index: int,
    lexicon: Mapping[str, Sequence[float]] = WORD_FEATURES,
) -> int | None:
    """The procedure of a classical program: scan, list candidates, apply rules, pick one.

    1. scan the words before the pronoun; 2. keep the whole persons (person feature = 1) that are
    not pronouns; 3. keep those whose gender agrees; 4. pick the nearest. Returns its index, or
    None when no candidate survives the rules. It never says "I am not sure".
    """
    x = features(tokens, lexicon)
    pronoun = x[pronoun_index]
    if pronoun[FEATURE_INDEX["pronoun"]] != 1:
        raise ValueError(f"token {pronoun_index} ({tokens[pronoun_index]!r}) is not a pronoun")
    candidates = [
        i
        for i in range(pronoun_index)
        if x[i, FEATURE_INDEX["person"]] == 1 and x[i, FEATURE_INDEX["pronoun"]] == 0
    ]
    gender = "male" if pronoun[FEATURE_INDEX["male"]] == 1 else "female"
    agreeing = [i for i in candidates if x[i, FEATURE_INDEX[gender]] == 1]
    return agreeing[-1] if agreeing else None


class PronounSentence(NamedTuple):
    """A sentence with one pronoun whose antecedent is the only person of its gender."""

    tokens: list[str]
    pronoun: int  # position of 他 / 她
    antecedent: int  # position of the given name it refers to (张, 李 or 丽)
    people: int  # how many people the sentence names (1 to 3)


#: Given name -> (its gender, the prefixes it takes). 张 and 李 are men, 丽 a woman.
_NAMES = {"张": ("male", ("老", "小")), "李": ("male", ("老", "小")), "丽": ("female", ("小",))}
_PRONOUNS = {"male": "他", "female": "她"}


def detective_sentences() -> list[PronounSentence]:
    """Every sentence "A 说 P 很累", "A 对/和 B 说 P 很累" or "A 对/和 B 和 C 说 P 很累".

    A, B, C are distinct people among 老张, 小张, 老李, 小李 and 小丽; P is 他 or 她, chosen so that
    exactly one person agrees with it in gender (so the answer is never ambiguous); the sentence
    ends in 很累 or 累. There are 170 of them, in a fixed order: 10 with one person, 64 with
    two, 96 with three.
    """
    sentences = []
    for people in (1, 2, 3):
        for given in itertools.permutations(_NAMES, people):
            for prefixes in itertools.product(*(_NAMES[g][1] for g in given)):
                names = [p + g for p, g in zip(prefixes, given)]
                for gender, pronoun in _PRONOUNS.items():
                    agreeing = [g for g in given if _NAMES[g][0] == gender]
                    if len(agreeing) != 1:
                        continue
                    for link in ("对", "和") if people > 1 else ("",):
                        for ending in ("很累", "累"):
                            text = names[0] + link + "和".join(names[1:]) + "说" + pronoun + ending
                            tokens = tokenize(text)  # one token per character
                            sentences.append(
                                PronounSentence(
                                    tokens, tokens.index(pronoun), tokens.index(agreeing[0]), people
                                )
                            )
    return sentences


def nearest_preceding_name(
    tokens: Sequence[str],
    pronoun_index: int,
    lexicon: Mapping[str, Sequence[float]] = WORD_FEATURES,
) -> int | None:
    """A gender-blind baseline: the nearest whole person (person = 1, not a pronoun) before the
    pronoun, or None if there is none."""
    x = features(tokens, lexicon)
    names = [
        i
        for i in range(pronoun_index)
        if x[i, FEATURE_INDEX["person"]] == 1 and x[i, FEATURE_INDEX["pronoun"]] == 0
    ]
    return names[-1] if names else None


def split_sentences(
    sentences: Sequence[PronounSentence],
    held_out: float = 1 / 3,
    seed: int = 0,
    lexicon: Mapping[str, Sequence[float]] = WORD_FEATURES,
) -> tuple[list[PronounSentence], list[PronounSentence]]:
    """Split sentences into ``(train, held_out)`` so that no held-out sentence has the features
    of a training sentence.

    Many sentences look the same to a model that reads only features: 张 and 李 have equal
    features, and so have 对 and 和. Sentences with the same feature sequence form one *pattern*.
    Within each kind of pattern (its pronoun and its number of people), a share ``held_out`` of
    the patterns (rounded, at least one left for training), drawn by a generator seeded with
    ``seed``, goes to the held-out set with all of its sentences. Both lists keep the input order.
    """
    if not 0.0 < held_out < 1.0:
        raise ValueError(f"held_out must be a fraction between 0 and 1; got {held_out}")
    patterns: dict[tuple, list[int]] = {}  # feature sequence -> indices of its sentences
    for i, s in enumerate(sentences):
        key = tuple(map(tuple, features(s.tokens, lexicon).tolist()))  # (L, features) as a key
        patterns.setdefault(key, []).append(i)
    kinds: dict[tuple[str, int], list[tuple]] = {}  # (pronoun, people) -> its patterns
    for key, members in patterns.items():
        s = sentences[members[0]]
        kinds.setdefault((s.tokens[s.pronoun], s.people), []).append(key)
    generator = torch.Generator().manual_seed(seed)
    test: set[int] = set()
    for keys in kinds.values():
        count = min(len(keys) - 1, round(len(keys) * held_out))
        for j in torch.randperm(len(keys), generator=generator)[:count].tolist():
            test.update(patterns[keys[j]])
    train = [s for i, s in enumerate(sentences) if i not in test]
    return train, [s for i, s in enumerate(sentences) if i in test]
