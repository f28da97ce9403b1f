"""Chapter 17's checkers: a previous-token score and a coreference hit rate, with padding.

* ``my_previous_weight(weights, attention_mask)``: one layer's weights (N, H, L, L) and the
  model's mask (N, L), 1 on real tokens; each head's mean weight from a token to the token
  just before it, over the real queries that have a previous token; (H,).
* ``my_candidate_hits(weights, pronoun, candidates, antecedent)``: one layer's weights
  (N, H, L, L), the pronoun's position (N,), the two names' positions (N, 2) and which of them
  is the antecedent, 0 or 1 (N,); for each head the share of sentences in which the pronoun's
  row gives the antecedent more weight than the other name; (H,).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.cases import random_attention
from attnbook.exercises.report import Report, call, changed_inputs, expect_tensor, library
from attnbook.i18n import N_, tr
from attnbook.interp.roles import candidate_choice, hit_rate, offset_weight

__all__ = ["check_previous_weight", "check_candidate_hits"]

ATOL = 1e-4


def _case(seed: int, N: int = 6, H: int = 3, L: int = 8) -> tuple[Tensor, Tensor]:
    """Random weights whose padding query rows are not zero, and the model's 1 = real mask."""
    weights, padding, _, _ = random_attention(seed, N, H, L)
    return weights, (~padding).long()


def _previous_mean(weights: Tensor, queries: Tensor, per_sentence: bool = False) -> Tensor:
    """Mean of weights[n, h, i, i-1] over the chosen queries (N, L) bool; (H,)."""
    diagonal = torch.zeros(weights.shape[:-1])  # (N, H, L)
    diagonal[..., 1:] = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)
    q = queries.float()[:, None, :]
    if per_sentence:
        return ((diagonal * q).sum(-1) / q.sum(-1).clamp_min(1)).mean(0)
    return (diagonal * q).sum((0, 2)) / q.sum((0, 2))


def _previous_mistake(weights: Tensor, mask: Tensor, out: Tensor) -> str | None:
    real = mask.bool()
    close = lambda other: torch.allclose(out, other, atol=ATOL)  # noqa: E731
    if close(offset_weight([weights], mask, 1)[0]):
        return tr(
            "you measured the NEXT token (key i + 1); the previous token of query i is key i - 1"
        )
    if close(_previous_mean(weights, real)):
        return tr(
            "you count [CLS] as a query too: it has no previous token, so it cannot score; "
            "average over the real queries 1, 2, ... only"
        )
    everything = torch.ones_like(real)
    everything[:, 0] = False
    if close(_previous_mean(weights, everything)) or close(
        _previous_mean(weights, everything, True)
    ):
        return tr(
            "you average over padding queries too; their rows are not the model's: keep only "
            "queries where attention_mask is 1 (and whose previous token is real)"
        )
    inverted = ~real
    inverted[:, 0] = False
    both_padding = inverted.clone()
    both_padding[:, 1:] &= ~real[:, :-1]  # a padding query whose previous token is padding too
    if close(_previous_mean(weights, inverted)) or close(_previous_mean(weights, both_padding)):
        return tr(
            "you read the mask the wrong way round and kept the padding queries only: "
            "attention_mask is 1 on REAL tokens (Hugging Face's convention), not True on padding "
            "like PyTorch's key_padding_mask"
        )
    queries = real.clone()
    queries[:, 0] = False
    if close(_previous_mean(weights, queries, per_sentence=True)):
        return tr(
            "you average per sentence first; this exercise takes one mean over all queries of "
            "all sentences (each query counts once)"
        )
    return None


def check_previous_weight(my_previous_weight: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 17: each head's mean weight on the previous token, padding and [CLS] excluded."""
    report = Report(N_("previous-token weight"), refused=library(offset_weight))

    def case(seed: int, N: int, H: int, L: int) -> Callable[[], str | None]:
        def run() -> str | None:
            weights, mask = _case(seed, N, H, L)
            out = call(my_previous_weight, weights, mask)
            problem = expect_tensor(out, (H,), what="my_previous_weight")
            if problem is not None:
                return problem
            expected = offset_weight([weights], mask, -1)[0]
            if torch.allclose(out, expected, atol=ATOL):
                return None
            mistake = _previous_mistake(weights, mask, out)
            return mistake or (
                tr("expected {value}, got {value2}").format(
                    value=[round(x, 4) for x in expected.tolist()],
                    value2=[round(x, 4) for x in out.tolist()],
                )
            )

        return run

    def fn_out(weights: Tensor, mask: Tensor):
        return call(my_previous_weight, weights, mask)

    def exact() -> str | None:
        L = 5
        weights = torch.eye(L).roll(-1, dims=1)[None, None]  # row i has its 1 at i - 1 (mod L)
        out = call(my_previous_weight, weights, torch.ones(1, L, dtype=torch.long))
        problem = expect_tensor(out, (1,), what="my_previous_weight")
        if problem is not None:
            return problem
        if torch.allclose(out.float(), torch.ones(1), atol=ATOL):
            return None
        try:  # the same head with the mask inverted: all 0, which a True = padding reading keeps
            flipped = fn_out(weights, torch.zeros(1, L, dtype=torch.long))
        except Exception:  # noqa: BLE001 - only a hint; the learner's function may fail here
            flipped = None
        if isinstance(flipped, Tensor) and torch.allclose(
            flipped.float(), torch.ones(1), atol=ATOL
        ):
            return tr(
                "with no padding at all your function got {value}, and 1.0 when every token is "
                "marked 0: the mask is read the wrong way round; attention_mask is 1 on REAL tokens, "
                "not True on padding like PyTorch's key_padding_mask"
            ).format(value=[round(x, 4) for x in out.tolist()])
        return tr(
            "a head whose every row (but [CLS]'s) is one-hot on the previous token must score "
            "exactly 1.0; got {value}"
        ).format(value=[round(x, 4) for x in out.tolist()])

    report.run("a pure previous-token head scores 1.0", exact)
    report.run("6 padded sentences, 3 heads", case(0, 6, 3, 8))
    report.run("9 padded sentences, 2 heads", case(1, 9, 2, 10))
    weights, mask = _case(2)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_previous_weight, ("weights", "attention_mask"), weights, mask),
    )
    return report


def _hits_case(seed: int, N: int = 40, H: int = 3, L: int = 9):
    """Pronoun rows that put their largest weight elsewhere (often [CLS]) in many sentences."""
    g = torch.Generator().manual_seed(seed)
    weights, mask = _case(seed, N, H, L)
    lengths = mask.sum(1)
    pronoun = lengths - 2  # before the final token
    candidates = torch.stack([torch.ones(N, dtype=torch.long), 1 + lengths // 3], dim=1)  # (N, 2)
    antecedent = torch.randint(0, 2, (N,), generator=g)
    n = torch.arange(N)
    sink = torch.rand(N, H, generator=g) < 0.5  # half the rows: [CLS] takes most of the weight
    row = weights[n, :, pronoun]  # (N, H, L)
    row = torch.where(sink[..., None], 0.2 * row, row)
    row[..., 0] += torch.where(sink, 0.8, 0.0)
    weights[n, :, pronoun] = row
    return weights, pronoun, candidates, antecedent


def check_candidate_hits(my_candidate_hits: Callable[..., Tensor]) -> Report:
    """Chapter 17: how often each head's pronoun row prefers the antecedent of two names."""
    report = Report(N_("candidate hits"), refused=library(candidate_choice, hit_rate))

    def case(seed: int, H: int) -> Callable[[], str | None]:
        def run() -> str | None:
            weights, pronoun, candidates, antecedent = _hits_case(seed, H=H)
            out = call(my_candidate_hits, weights, pronoun, candidates, antecedent)
            problem = expect_tensor(out, (H,), what="my_candidate_hits")
            if problem is not None:
                return problem
            out = out.float()
            choice = candidate_choice(weights[None], pronoun, candidates)  # (1, N, H)
            expected = hit_rate(choice, antecedent)[0]
            if torch.allclose(out, expected, atol=ATOL):
                return None
            close = lambda other: torch.allclose(out, other.float(), atol=ATOL)  # noqa: E731
            n = torch.arange(len(pronoun))
            columns = weights.transpose(-1, -2)  # what the names give the pronoun
            if close(hit_rate(candidate_choice(columns[None], pronoun, candidates), antecedent)[0]):
                return tr(
                    "you read the pronoun's COLUMN (how much the names attend to the pronoun); the "
                    "pronoun's row is weights[n, :, pronoun[n], :], the query's row"
                )
            target = candidates[n, antecedent]  # (N,) the antecedent's position
            anywhere = weights[n, :, pronoun].argmax(-1) == target[:, None]  # (N, H)
            if close(anywhere.float().mean(0)):
                return tr(
                    "you took the argmax over the whole row: [CLS] or another token often wins; compare "
                    "only the two names' weights"
                )
            on_antecedent = weights[n, :, pronoun, target]  # (N, H)
            if close((on_antecedent > 0.5).float().mean(0)):
                return tr(
                    "you counted the sentences in which the antecedent gets more than half of the row; "
                    "compare it with the OTHER name's weight, not with 0.5 ([CLS] often takes most of "
                    "the row)"
                )
            if close(on_antecedent.mean(0)):
                return tr(
                    "that is the mean weight on the antecedent; the exercise asks for the share of "
                    "sentences in which the antecedent gets more weight than the other name"
                )
            if close((choice[0] == 0).float().mean(0)):
                return tr(
                    "you counted how often the FIRST name wins; count how often the antecedent wins"
                )
            if close(1 - expected):
                return tr(
                    "you counted the other name's wins: antecedent 0 means candidates[:, 0], 1 means "
                    "candidates[:, 1]"
                )
            return tr("expected {value}, got {value2}").format(
                value=[round(x, 4) for x in expected.tolist()],
                value2=[round(x, 4) for x in out.tolist()],
            )

        return run

    report.run("40 padded sentences, 3 heads", case(0, 3))
    report.run("40 padded sentences, 2 heads", case(1, 2))
    args = _hits_case(2)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(
            my_candidate_hits, ("weights", "pronoun", "candidates", "antecedent"), *args
        ),
    )
    return report
