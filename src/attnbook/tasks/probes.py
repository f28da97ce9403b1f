"""Generated English sentence sets that probe the heads of a pretrained word-piece model.

Chapter 17 measures what the heads of all-MiniLM-L6-v2 (:func:`~attnbook.pretrained.minilm_l6.minilm`)
do, always over sets of sentences generated here, never over one example:

* :func:`coref_sentences` — two names of different gender and a later pronoun that agrees with
  exactly one of them (*john told mary that he was tired .*). Where the antecedent stands is
  balanced: it is the first name in half the sentences and the second in the other half, and
  independently the grammatical subject in half of them (two templates put the subject first
  or second). So the rules "nearest name", "first name" and "subject" each score exactly 50%;
  only the gender decides. With ``ambiguous=True`` both names share the pronoun's gender: the
  control, in which no rule can be right. With ``held_out=True`` the sentences use other names
  and other templates (:data:`HELD_OUT_MALE`, :data:`HELD_OUT_FEMALE`), none of which the
  default sets use: a check that a head chosen on the default sets is not tied to their words.
* :func:`similarity_pairs` — labelled sentence pairs for the model's own task, sentence
  similarity, in four kinds of minimal pairs: paraphrases (*passive*, a verb *synonym*) and
  non-paraphrases (a *role swap*, another *verb*), each the same sentence with one change.

Every word is one word piece of the model's (lower-case) vocabulary, so a word's position in
the sentence, plus one for ``[CLS]``, is its token position; a unit test checks this against
the tokenizer. Generation is seeded and needs no model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = [
    "MALE_NAMES",
    "FEMALE_NAMES",
    "HELD_OUT_MALE",
    "HELD_OUT_FEMALE",
    "PUNCTUATION",
    "VERB_SYNONYMS",
    "CorefItem",
    "SimilarityPair",
    "coref_sentences",
    "similarity_pairs",
    "shortcut_rates",
    "words",
]

MALE_NAMES = (
    "john", "paul", "chris", "david", "peter", "kevin", "tom", "mike", "george", "andrew",
    "jack", "steve", "bob", "joe", "sam", "adam", "ryan", "eric", "harry", "henry",
)  # fmt: skip
FEMALE_NAMES = (
    "mary", "anna", "sarah", "emma", "lisa", "kate", "jane", "susan", "amy", "laura",
    "rachel", "linda", "helen", "alice", "julia", "emily", "maria", "nancy", "karen", "lucy",
)  # fmt: skip
#: Men's names that no default set uses, for the held-out check (none is a common English word)
HELD_OUT_MALE = (
    "oliver", "ethan", "noah", "luke", "brian", "carl", "greg", "walter", "arthur", "ralph",
    "alan", "simon", "daniel", "tim",
)  # fmt: skip
#: Women's names that no default set uses, for the held-out check
HELD_OUT_FEMALE = (
    "chloe", "olivia", "sophie", "megan", "jessica", "nicole", "hannah", "claire", "agnes", "diana",
    "irene", "stella", "sophia", "molly",
)  # fmt: skip
PRONOUNS = {"male": "he", "female": "she"}
# "X told Y that ...": the subject is the first name
TELL_VERBS = ("told", "warned", "reminded", "assured", "convinced", "informed", "persuaded")
# "after meeting X , Y said that ...": the subject is the second name
ING_VERBS = ("meeting", "visiting", "calling", "helping", "seeing", "watching")
SAY_VERBS = ("said", "thought", "felt", "knew")
ADJECTIVES = ("tired", "hungry", "late", "happy", "angry", "sick", "busy", "sad", "ready", "wrong")
PUNCTUATION = (",", ".")
# held-out templates by the position of the main clause's subject (0: first name, 1: second);
# X and Y are the names in order, P the pronoun, A an adjective
HELD_OUT_TEMPLATES = (
    ("X thanked Y because P was A .", "X called Y when P was A ."),
    ("when X arrived , Y knew P was A .", "before X left , Y felt P was A ."),
)

NOUNS = (
    "dog", "cat", "bird", "horse", "man", "woman", "boy", "girl", "teacher", "doctor",
    "farmer", "child", "lawyer", "nurse", "king", "queen",
)  # fmt: skip
# verb (past tense = past participle, as "was chased by" needs), a synonym
VERB_SYNONYMS = (
    ("chased", "pursued"), ("helped", "assisted"), ("watched", "observed"), ("hit", "struck"),
    ("pushed", "shoved"), ("grabbed", "seized"), ("noticed", "spotted"), ("blamed", "accused"),
)  # fmt: skip
PAIR_KINDS = ("passive", "synonym", "role swap", "verb")  # the first two are paraphrases


def words() -> set[str]:
    """Every word the generators can use (each must be one word piece of the model)."""
    lists = (MALE_NAMES, FEMALE_NAMES, HELD_OUT_MALE, HELD_OUT_FEMALE, TELL_VERBS, ING_VERBS)
    lists += (SAY_VERBS, ADJECTIVES, NOUNS)
    fixed = {"he", "she", "that", "after", "was", "by", "the", *PUNCTUATION}
    held = {w for ts in HELD_OUT_TEMPLATES for t in ts for w in t.split() if w not in "XYPA"}
    return fixed | held | {w for ws in lists for w in ws} | {w for p in VERB_SYNONYMS for w in p}


@dataclass(frozen=True)
class CorefItem:
    """One coreference probe sentence; positions count ``[CLS]`` as 0.

    Attributes:
        text: the sentence, lower case, tokens separated by spaces.
        tokens: its word pieces, ``("[CLS]", ..., "[SEP]")``.
        pronoun: position of the pronoun.
        candidates: positions of the first and the second name.
        antecedent: 0 or 1, the candidate the pronoun agrees with; ``None`` when both agree
            (the ambiguous control).
        subject: 0 or 1, the candidate that is the grammatical subject of the main clause.
    """

    text: str
    tokens: tuple[str, ...]
    pronoun: int
    candidates: tuple[int, int]
    antecedent: int | None
    subject: int


@dataclass(frozen=True)
class SimilarityPair:
    """Two sentences and whether they mean the same.

    Attributes:
        first: the first sentence.
        second: the second sentence.
        paraphrase: ``True`` for the same meaning (kinds ``"passive"``, ``"synonym"``).
        kind: one of ``"passive"``, ``"synonym"``, ``"role swap"``, ``"verb"``.
    """

    first: str
    second: str
    paraphrase: bool
    kind: str


def _check_size(n: int, multiple: int, name: str = "n") -> None:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name} must be an int; got {type(n).__name__}")
    if n <= 0 or n % multiple:
        raise ValueError(f"{name} must be a positive multiple of {multiple} (for balance); got {n}")


def _item(sentence: list[str], first: int, second: int, pronoun: int, antecedent, subject):
    return CorefItem(
        text=" ".join(sentence),
        tokens=("[CLS]", *sentence, "[SEP]"),
        pronoun=pronoun + 1,
        candidates=(first + 1, second + 1),
        antecedent=antecedent,
        subject=subject,
    )


def coref_sentences(
    n: int, seed: int = 0, ambiguous: bool = False, held_out: bool = False
) -> list[CorefItem]:
    """``n`` pronoun sentences with two names, balanced so that only the gender decides.

    The sentence is either *X told Y that P was ADJ .* (subject first) or *after meeting X ,
    Y said that P was ADJ .* (subject second). The ``n`` sentences are split exactly evenly
    over antecedent first / second × subject first / second × the pronoun *he* / *she*, then
    shuffled; names, verbs and adjectives are drawn at random.

    Args:
        n: number of sentences, a multiple of 8.
        seed: seed of the random draws; the same seed gives the same sentences.
        ambiguous: both names of the pronoun's gender (``antecedent`` is then ``None``); the
            cells are subject first / second × *he* / *she*.
        held_out: use the held-out names and the four held-out templates instead (*X thanked
            Y because P was A .*, *X called Y when P was A .*, *when X arrived , Y knew P was
            A .*, *before X left , Y felt P was A .*), with the same balance.

    Returns:
        A list of :class:`CorefItem`.
    """
    _check_size(n, 8)
    rng = random.Random(seed)
    items = []
    for i in range(n):
        antecedent, subject, gender = i % 2, (i // 2) % 2, ("male", "female")[(i // 4) % 2]
        males, females = (
            (HELD_OUT_MALE, HELD_OUT_FEMALE) if held_out else (MALE_NAMES, FEMALE_NAMES)
        )
        same, other = (males, females) if gender == "male" else (females, males)
        if ambiguous:
            names = rng.sample(same, 2)
        else:
            names = [rng.choice(same), rng.choice(other)]
            if antecedent == 1:
                names.reverse()
        x, y = names
        tail = [PRONOUNS[gender], "was", rng.choice(ADJECTIVES), "."]
        if held_out:
            fill = {"X": x, "Y": y, "P": tail[0], "A": tail[2]}
            sentence = [fill.get(w, w) for w in rng.choice(HELD_OUT_TEMPLATES[subject]).split()]
            first, second = sentence.index(x), sentence.index(y)
        elif subject == 0:
            sentence = [x, rng.choice(TELL_VERBS), y, "that", *tail]
            first, second = 0, 2
        else:
            sentence = ["after", rng.choice(ING_VERBS), x, ",", y, rng.choice(SAY_VERBS), "that"]
            sentence += tail
            first, second = 2, 4
        pronoun = sentence.index(PRONOUNS[gender])
        agree = None if ambiguous else antecedent
        items.append(_item(sentence, first, second, pronoun, agree, subject))
    rng.shuffle(items)
    return items


def shortcut_rates(items: list[CorefItem]) -> dict[str, float]:
    """How often each rule that ignores the gender picks the antecedent.

    ``"nearest"`` (the name closest before the pronoun: always the second), ``"first name"``
    and ``"subject"``. On :func:`coref_sentences` each is exactly 0.5 by construction.

    Raises:
        ValueError: if an item has no antecedent (the ambiguous control).
    """
    if not items or any(item.antecedent is None for item in items):
        raise ValueError("items must be a non-empty list of items with an antecedent")
    n = len(items)
    return {
        "nearest": sum(item.antecedent == 1 for item in items) / n,
        "first name": sum(item.antecedent == 0 for item in items) / n,
        "subject": sum(item.antecedent == item.subject for item in items) / n,
    }


def similarity_pairs(n: int, seed: int = 0) -> list[SimilarityPair]:
    """``n`` labelled pairs, a quarter of each kind, shuffled.

    From *the A VERB the B .* the second sentence is

    * ``"passive"``: *the B was VERB by the A .* (a paraphrase);
    * ``"synonym"``: *the A SYNONYM the B .* (a paraphrase);
    * ``"role swap"``: *the B VERB the A .* (the same words, not a paraphrase);
    * ``"verb"``: *the A OTHER the B .*, another verb of the list (not a paraphrase).

    Args:
        n: number of pairs, a multiple of 4.
        seed: seed of the random draws.

    Returns:
        A list of :class:`SimilarityPair`; half are paraphrases.
    """
    _check_size(n, 4)
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        kind = PAIR_KINDS[i % 4]
        a, b = rng.sample(NOUNS, 2)
        k = rng.randrange(len(VERB_SYNONYMS))
        verb, synonym = VERB_SYNONYMS[k]
        first = f"the {a} {verb} the {b} ."
        if kind == "passive":
            second = f"the {b} was {verb} by the {a} ."
        elif kind == "synonym":
            second = f"the {a} {synonym} the {b} ."
        elif kind == "role swap":
            second = f"the {b} {verb} the {a} ."
        else:
            other = VERB_SYNONYMS[rng.choice([j for j in range(len(VERB_SYNONYMS)) if j != k])]
            second = f"the {a} {rng.choice(other)} the {b} ."
        pairs.append(SimilarityPair(first, second, kind in PAIR_KINDS[:2], kind))
    rng.shuffle(pairs)
    return pairs
