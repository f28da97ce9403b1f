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

from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor
from attnbook.i18n import tr
from attnbook.tasks.stories import Story, last_place_rule, stories, supporting_share

__all__ = ["check_last_place", "check_supporting_share"]

ATOL = 1e-5


def _story(text: str) -> Story:
    sentences = tuple(tuple(s.split()) for s in text.strip().splitlines())
    return Story(sentences, ("where", "is", "mary", "?"), "kitchen", (0,), "one")


HAND = {
    "a story that ends with a move": _story(
        "mary went to the kitchen .\njohn went to the garden ."
    ),
    "a story that ends with a take": _story(
        "mary went to the kitchen .\njohn went to the garden .\nmary took the apple ."
    ),
    "a story that mentions no place": _story("mary took the apple .\njohn got the milk ."),
}


def check_last_place(my_last_place: Callable[[Story], str | None]) -> Report:
    """Chapter 13: the last place mentioned in a story, the shortcut the control rules out."""
    report = Report("last place mentioned")

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
    report.run(
        "200 generated stories",
        lambda: next(
            (
                tr("on the story\n{s_text}\nexpected {last_place_rule_s!r}, got {out!r}").format(
                    s_text=s.text, last_place_rule_s=last_place_rule(s), out=out
                )
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


def check_supporting_share(
    my_supporting_share: Callable[[Tensor, Tensor, Tensor], Tensor],
) -> Report:
    """Chapter 13: the share of a question's attention on its supporting sentences."""
    report = Report("supporting share")

    def case(seed: int, N: int) -> Callable[[], str | None]:
        def run() -> str | None:
            weights, sentence, supporting = _share_case(seed, N)
            out = call(my_supporting_share, weights, sentence, supporting)
            problem = expect_tensor(out, (N,), what="my_supporting_share")
            if problem is not None:
                return problem
            expected = supporting_share(weights, sentence, supporting)
            if torch.allclose(out, expected, atol=ATOL):
                return None
            close = lambda other: torch.allclose(out, other, atol=ATOL)  # noqa: E731
            if close(supporting_share(weights, sentence, supporting[:, :1])):
                return tr(
                    "you counted the first supporting sentence only; a two-fact question has two (the "
                    "second column, -1 when there is none)"
                )
            hit = (sentence[:, :, None] == supporting[:, None, :]).any(-1).float()  # (N, S)
            mean = (weights * hit).sum(-1) / hit.sum(-1).clamp_min(1)
            if close(mean):
                return tr(
                    "you averaged the weights of the supporting tokens; the share is their SUM"
                )
            return tr("expected {value}, got {value2}").format(
                value=[round(x, 4) for x in expected.tolist()],
                value2=[round(x, 4) for x in out.tolist()],
            )

        return run

    def hand(
        weights: list[float], supporting: list[int], expected: float, hints: dict[str, float]
    ) -> Callable[[], str | None]:
        """One story of sentences 0, 0, 1, 1, 2 and a padding token; ``hints``: wrong sums."""

        def run() -> str | None:
            sentence = torch.tensor([[0, 0, 1, 1, 2, -1]])
            w = torch.tensor([weights])
            out = call(my_supporting_share, w, sentence, torch.tensor([supporting]))
            problem = expect_tensor(out, (1,), what="my_supporting_share")
            if problem is not None:
                return problem
            if torch.allclose(out, torch.tensor([expected]), atol=ATOL):
                return None
            for hint, wrong in hints.items():
                if abs(out.item() - wrong) < ATOL:
                    return tr(hint)
            return tr("expected {expected}, got {out_tolist}").format(
                expected=expected, out_tolist=out.tolist()
            )

        return run

    report.run(
        "a hand example: 0.6 on sentences 0 and 2",
        hand([0.1, 0.1, 0.2, 0.2, 0.4, 0.0], [0, 2], 0.6, {}),
    )
    report.run(
        "a row with weight on padding and one supporting sentence",
        hand(
            [0.1, 0.1, 0.2, 0.2, 0.2, 0.2],
            [2, -1],
            0.2,
            {
                "you counted the padding token: its sentence index is -1, and so is the "
                "'no second sentence' placeholder. Mask the -1 in `supporting` (it is not a "
                "sentence); a softmax row has no weight there, but this row does": 0.4,
            },
        ),
    )
    report.run(
        "both supporting columns name the same sentence",
        hand(
            [0.1, 0.1, 0.2, 0.2, 0.4, 0.0],
            [2, 2],
            0.4,
            {
                "you counted sentence 2 twice (once per column): a token is on a supporting "
                "sentence or not; combine the columns with `any`, not a sum": 0.8,
            },
        ),
    )
    report.run("8 padded stories", case(0, 8))
    report.run("13 padded stories", case(1, 13))
    args = _share_case(2)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_supporting_share, ("weights", "sentence", "supporting"), *args),
    )
    return report
