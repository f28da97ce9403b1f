"""Chapter 13's checkers: the "last place mentioned" shortcut and the supporting-fact share.

* ``my_last_place(story)``: a :class:`~attnbook.tasks.stories.Story`; the last place any of its
  sentences mentions, or ``None`` if none does.
* ``my_supporting_share(weights, sentence, supporting)``: one query's attention (N, S) over the
  story tokens, each token's sentence index (N, S) (-1 on padding) and the supporting sentence
  indexes (N, 2) (-1 where there is no second one); the weight on supporting sentences, (N,).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.report import (
    LearnerError,
    Report,
    call,
    changed_inputs,
    expect_tensor,
    library,
)
from attnbook.i18n import N_, tr
from attnbook.tasks.stories import Story, last_place_rule, stories, supporting_share

__all__ = ["check_last_place", "check_supporting_share"]

ATOL = 1e-5


def _story(text: str) -> Story:
    sentences = tuple(tuple(s.split()) for s in text.strip().splitlines())
    return Story(sentences, ("where", "is", "mary", "?"), "kitchen", (0,), "one")


HAND = {
    N_("a story that ends with a move"): _story(
        "mary went to the kitchen .\njohn went to the garden ."
    ),
    N_("a story that ends with a take"): _story(
        "mary went to the kitchen .\njohn went to the garden .\nmary took the apple ."
    ),
    N_("a story that mentions no place"): _story("mary took the apple .\njohn got the milk ."),
}


def check_last_place(my_last_place: Callable[[Story], str | None]) -> Report:
    """Chapter 13: the last place mentioned in a story, the shortcut the control rules out."""
    report = Report(N_("last place mentioned"), refused=library(last_place_rule))

    def case(story: Story) -> Callable[[], str | None]:
        def run() -> str | None:
            out = call(my_last_place, story)
            expected = last_place_rule(story)
            if out == expected:
                return None
            if expected is None:
                return tr("no sentence names a place, so the answer is None; got {out!r}").format(
                    out=out
                )
            last = story.sentences[-1]
            if out in (last[-1], last[-2]):
                return tr(
                    "you returned {out!r}, a word of the last sentence; a take sentence names an object, "
                    "not a place: go back to the last sentence that names a place"
                ).format(out=out)
            return tr("expected {expected!r}, got {out!r}").format(expected=expected, out=out)

        return run

    for name, story in HAND.items():
        report.run(name, case(story))
    # Extraction does not see a tr() this deep inside report.run(): the template is marked here.
    wrong = N_("on the story\n{s_text}\nexpected {last_place_rule_s!r}, got {out!r}")
    report.run(
        "200 generated stories",
        lambda: next(
            (
                tr(wrong).format(s_text=s.text, last_place_rule_s=last_place_rule(s), out=out)
                for s in stories(200, seed=13)
                if (out := call(my_last_place, s)) != last_place_rule(s)
            ),
            None,
        ),
    )
    return report


def _share_case(seed: int, N: int = 8, S: int = 30) -> tuple[Tensor, Tensor, Tensor]:
    """Random attention over padded stories, with one or two supporting sentences each."""
    g = torch.Generator().manual_seed(seed)
    n_sentences = torch.randint(3, 7, (N,), generator=g)
    sentence = torch.full((N, S), -1)
    for n in range(N):
        ids = torch.arange(int(n_sentences[n])).repeat_interleave(5)[:S]
        sentence[n, : len(ids)] = ids
    scores = torch.randn(N, S, generator=g).masked_fill(sentence < 0, float("-inf"))
    weights = scores.softmax(-1)
    supporting = torch.stack(
        [torch.randint(0, 3, (N,), generator=g), torch.full((N,), -1)], dim=1
    )  # (N, 2)
    two = torch.arange(N) % 2 == 1
    supporting[two, 1] = n_sentences[two] - 1
    return weights, sentence, supporting


def _hits(sentence: Tensor, supporting: Tensor, *, drop: bool = True) -> Tensor:
    """(N, S, K) whether each token belongs to each supporting sentence (``drop``: -1 is none)."""
    hit = sentence[:, :, None] == supporting[:, None, :]
    return hit & (supporting >= 0)[:, None, :] if drop else hit


# Slips of the supporting share, each a function (weights, sentence, supporting) -> (N,), with
# what it gets wrong. One is named only when it gives the learner's answer in every case.
_SHARE_SLIPS: dict[str, Callable[[Tensor, Tensor, Tensor], Tensor]] = {
    N_(
        "you counted the first supporting sentence only; a two-fact question has two (the second "
        "column, -1 when there is none)"
    ): lambda w, s, sup: supporting_share(w, s, sup[:, :1]),
    N_(
        "you averaged the weights of the supporting tokens; the share is their SUM"
    ): lambda w, s, sup: (
        (w * _hits(s, sup).any(-1)).sum(-1) / _hits(s, sup).any(-1).sum(-1).clamp_min(1)
    ),
    N_(
        "you averaged the weights of the supporting tokens (the share is their SUM), and counted "
        "the padding token, whose sentence index -1 matches the 'no second sentence' placeholder "
        "(mask the -1 in `supporting`)"
    ): lambda w, s, sup: (
        (w * _hits(s, sup, drop=False).any(-1)).sum(-1)
        / _hits(s, sup, drop=False).any(-1).sum(-1).clamp_min(1)
    ),
    N_(
        "you counted the padding token: its sentence index is -1, and so is the 'no second "
        "sentence' placeholder. Mask the -1 in `supporting` (it is not a sentence); a softmax row "
        "has no weight there, but this row does"
    ): lambda w, s, sup: (w * _hits(s, sup, drop=False).any(-1)).sum(-1),
    N_(
        "you counted sentence 2 twice (once per column): a token is on a supporting sentence or "
        "not; combine the columns with `any`, not a sum"
    ): lambda w, s, sup: (w[:, :, None] * _hits(s, sup)).sum((1, 2)),
    N_(
        "you counted the sentence AFTER each supporting one: `sentence` and `supporting` both count "
        "sentences from 0, so compare them as they are"
    ): lambda w, s, sup: supporting_share(w, s, torch.where(sup >= 0, sup + 1, sup)),
    N_(
        "you counted the sentence BEFORE each supporting one: `sentence` and `supporting` both count "
        "sentences from 0, so compare them as they are"
    ): lambda w, s, sup: supporting_share(w, s, torch.where(sup >= 0, sup - 1, sup)),
}


def check_supporting_share(
    my_supporting_share: Callable[[Tensor, Tensor, Tensor], Tensor],
) -> Report:
    """Chapter 13: the share of a question's attention on its supporting sentences.

    Every case runs first; a slip is named only when it gives the learner's answer in every
    case (one where it happens to give the same number is not evidence).
    """
    report = Report(N_("supporting share"), refused=library(supporting_share))
    hand_sentence = torch.tensor([[0, 0, 1, 1, 2, -1]])  # sentences 0, 0, 1, 1, 2 and padding
    cases = {
        N_("a hand example: 0.6 on sentences 0 and 2"): (
            torch.tensor([[0.1, 0.1, 0.2, 0.2, 0.4, 0.0]]),
            hand_sentence,
            torch.tensor([[0, 2]]),
        ),
        N_("a row with weight on padding and one supporting sentence"): (
            torch.tensor([[0.1, 0.1, 0.2, 0.2, 0.2, 0.2]]),
            hand_sentence,
            torch.tensor([[2, -1]]),
        ),
        N_("both supporting columns name the same sentence"): (
            torch.tensor([[0.1, 0.1, 0.2, 0.2, 0.4, 0.0]]),
            hand_sentence,
            torch.tensor([[2, 2]]),
        ),
        N_("8 padded stories"): _share_case(0, 8),
        N_("13 padded stories"): _share_case(1, 13),
    }
    outs: dict[str, object] = {}
    with report.refusing():
        for description, args in cases.items():
            try:
                outs[description] = call(my_supporting_share, *args)
            except LearnerError as exc:
                outs[description] = exc

    def close(out: object, other: Tensor) -> bool:
        return (
            isinstance(out, Tensor)
            and out.shape == other.shape
            and torch.allclose(out.float(), other, atol=ATOL)
        )

    named = [
        why
        for why, slip in _SHARE_SLIPS.items()
        if all(close(outs[d], slip(*args)) for d, args in cases.items())
        and any(not close(slip(*args), supporting_share(*args)) for args in cases.values())
    ]

    def judge(description: str) -> Callable[[], str | None]:
        def run() -> str | None:
            out, args = outs[description], cases[description]
            if isinstance(out, LearnerError):
                raise out
            expected = supporting_share(*args)
            problem = expect_tensor(out, tuple(expected.shape), what="my_supporting_share")
            if problem is not None:
                return problem
            if torch.allclose(out, expected, atol=ATOL):
                return None
            if len(named) == 1:
                return tr(named[0])
            return tr("expected {value}, got {value2}").format(
                value=[round(x, 4) for x in expected.tolist()],
                value2=[round(x, 4) for x in out.tolist()],
            )

        return run

    for description in cases:
        report.run(description, judge(description))
    args = _share_case(2)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_supporting_share, ("weights", "sentence", "supporting"), *args),
    )
    return report
