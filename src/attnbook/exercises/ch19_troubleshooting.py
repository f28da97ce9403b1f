"""Chapter 19's checkers: how uniform a head is, with padding; dead or redundant from a table.

* ``my_uniformity(weights, key_padding_mask)``: one layer's weights (N, H, L, L) and a
  key_padding_mask (N, L), ``True`` on padding; each head's row entropy divided by the log of
  the number of REAL keys (1 = uniform over the real keys), averaged over the real queries; (H,).
* ``my_verdicts(single, pairs)``: a (layers, H) table of each head's cost alone and a dict
  ``{(a, b): cost together}`` for pairs of heads; a verdict per head, ``"needed"`` (alone it
  costs 0.005 or more), ``"redundant"`` (harmless alone, but some pair of it with another
  harmless head costs 0.02 or more) or ``"dead"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.diagnose.ablation import dead_heads
from attnbook.diagnose.heads import head_entropy
from attnbook.exercises.cases import random_attention
from attnbook.exercises.report import LearnerError, Report, call, changed_inputs, expect_tensor
from attnbook.i18n import tr

__all__ = ["check_uniformity", "check_verdicts"]

ATOL = 1e-4


_NAN = (
    "your answer has nan: a weight of exactly 0 gives 0 * log 0 = 0 * (-inf) = nan; take "
    "the log of weights.clamp_min(1e-12) (the weight in front is still 0, so the term is "
    "0)"
)


def _uniformity_case(seed: int, N: int = 6, H: int = 3, L: int = 8) -> tuple[Tensor, Tensor]:
    """Random weights with padding; the padding query rows get weights too (as models give)."""
    weights, padding, _, _ = random_attention(seed, N, H, L)
    return weights, padding


def _entropy_rows(weights: Tensor) -> Tensor:  # (N, H, L)
    return -(weights * weights.clamp_min(1e-12).log()).sum(-1)


def _mean_over(values: Tensor, rows: Tensor) -> Tensor:  # (N, H, L), (N, L) -> (H,)
    keep = rows[:, None, :].float()
    return (values * keep).sum((0, 2)) / keep.sum((0, 2))


def _uniformity_mistake(weights: Tensor, padding: Tensor, out: Tensor) -> str | None:
    close = lambda other: torch.allclose(out, other, atol=ATOL)  # noqa: E731
    real = ~padding
    L = weights.size(-1)
    entropy = _entropy_rows(weights)
    real_keys = real.sum(-1).clamp_min(2).float()[:, None, None]  # (N, 1, 1)
    if close(_mean_over(entropy / math.log(L), real)):
        return tr(
            "you divided by log(L), the uniform entropy over ALL keys; padding keys get no "
            "weight, so divide by the log of the number of real keys of each sentence"
        )
    if close(_mean_over(entropy, real)):
        return tr(
            "that is the entropy in nats; divide each row's entropy by log(number of real keys)"
        )
    everything = torch.ones_like(real)
    if close(_mean_over(entropy / real_keys.log(), everything)):
        return tr("you averaged over the padding queries too; keep only rows whose query is real")
    padding_keys = padding.sum(-1).clamp_min(2).float()[:, None, None]
    if close(_mean_over(entropy / real_keys.log(), padding)) or close(
        _mean_over(entropy / padding_keys.log(), padding)
    ):
        return tr(
            "you kept the padding rows only: key_padding_mask is True on PADDING (PyTorch's "
            "convention), so the real queries are ~key_padding_mask"
        )
    per_sentence = (entropy / real_keys.log() * real[:, None].float()).sum(-1) / real.sum(-1)[
        :, None
    ].float()  # (N, H)
    if close(per_sentence.mean(0)):
        return tr("you averaged per sentence first; take one mean over all real queries")
    return None


def check_uniformity(my_uniformity: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 19: normalised entropy per head, padding keys and queries left out."""
    report = Report("uniformity with padding")

    def case(seed: int, N: int, H: int, L: int) -> Callable[[], str | None]:
        def run() -> str | None:
            weights, padding = _uniformity_case(seed, N, H, L)
            out = call(my_uniformity, weights, padding)
            problem = expect_tensor(out, (H,), what="my_uniformity")
            if problem is not None:
                return problem
            out = out.float()
            if torch.isnan(out).any():
                return tr(_NAN)
            expected = head_entropy([weights], padding, normalise=True)[0]
            if torch.allclose(out, expected, atol=ATOL):
                return None
            return _uniformity_mistake(weights, padding, out) or (
                tr("expected {value}, got {value2}").format(
                    value=[round(x, 4) for x in expected.tolist()],
                    value2=[round(x, 4) for x in out.tolist()],
                )
            )

        return run

    def exact() -> str | None:
        L, real = 6, 4
        padding = torch.arange(L)[None] >= real  # (1, L)
        weights = torch.zeros(1, 2, L, L)
        weights[0, 0, :, :real] = 1.0 / real  # uniform over the real keys
        weights[0, 1] = torch.eye(L)  # one key each
        out = call(my_uniformity, weights, padding)
        problem = expect_tensor(out, (2,), what="my_uniformity")
        if problem is not None:
            return problem
        if torch.isnan(out.float()).any():
            return tr(_NAN)
        if not torch.allclose(out.float(), torch.tensor([1.0, 0.0]), atol=ATOL):
            return tr(
                "a head uniform over the 4 real keys of 6 must score exactly 1.0 and a one-hot head "
                "0.0; got {value}"
            ).format(value=[round(x, 4) for x in out.float().tolist()])
        return None

    report.run("uniform over the real keys scores 1, one-hot 0", exact)
    report.run("6 padded sentences, 3 heads", case(0, 6, 3, 8))
    report.run("9 padded sentences, 2 heads", case(1, 9, 2, 10))
    weights, padding = _uniformity_case(2)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_uniformity, ("weights", "key_padding_mask"), weights, padding),
    )
    return report


def _table(seed: int, layers: int = 2, H: int = 4):
    """Costs alone and together: some needed heads, a redundant pair, dead heads, and pairs
    of a needed head with a harmless one that cost a lot (because of the needed head)."""
    g = torch.Generator().manual_seed(seed)
    single = torch.rand(layers, H, generator=g) * 0.004  # all harmless ...
    heads = [(l, h) for l in range(layers) for h in range(H)]
    order = torch.randperm(len(heads), generator=g).tolist()
    needed = [heads[i] for i in order[:2]]
    pair = (heads[order[2]], heads[order[3]])
    for head in needed:
        single[head] = 0.05 + 0.1 * float(torch.rand(1, generator=g))  # ... but these two
    pairs = {}
    for i, a in enumerate(heads):
        for b in heads[i + 1 :]:
            together = float(single[a] + single[b]) + 0.002 * float(torch.rand(1, generator=g))
            pairs[a, b] = together
    pairs[tuple(sorted(pair))] = 0.3
    if seed % 2:  # a pair that costs 0.021 together, of which 0.008 alone: redundant by the rule
        quiet = (heads[order[4]], heads[order[5]])
        single[quiet[0]] = single[quiet[1]] = 0.004
        pairs[tuple(sorted(quiet))] = 0.021
    return single, pairs


def _boundary_table() -> tuple[Tensor, dict]:
    """Costs exactly at the thresholds, in float64 so that 0.005 is 0.005: head 0 costs 0.005
    alone (needed: "0.005 or more"); heads 1 and 2 cost 0.02 together (redundant: "0.02 or
    more"); head 3 is dead."""
    single = torch.tensor([[0.005, 0.001, 0.002, 0.003]], dtype=torch.float64)
    heads = [(0, h) for h in range(4)]
    pairs = {
        (a, b): float(single[a] + single[b]) for i, a in enumerate(heads) for b in heads[i + 1 :]
    }
    pairs[(0, 1), (0, 2)] = 0.02
    return single, pairs


_PAIR_ORDER = (
    "each pair is stored once, with the lower (layer, head) first: pairs[(a, b)] with a "
    "< b. Look a pair up in both orders, e.g. pairs.get((x, y), pairs.get((y, x)))"
)


def check_verdicts(my_verdicts: Callable[[Tensor, dict], dict]) -> Report:
    """Chapter 19: needed, redundant or dead, from costs alone and in pairs."""
    report = Report("dead or redundant")

    def case(seed: int) -> Callable[[], str | None]:
        def run() -> str | None:
            single, pairs = _table(seed) if seed >= 0 else _boundary_table()
            try:
                out = call(my_verdicts, single, dict(pairs))
            except LearnerError as exc:
                if isinstance(exc.__cause__, KeyError):
                    return tr("your function raised KeyError {exc___cause}: {PAIR_ORDER}").format(
                        exc___cause=exc.__cause__, PAIR_ORDER=tr(_PAIR_ORDER)
                    )
                raise
            if not isinstance(out, dict):
                return tr(
                    "my_verdicts must return a dict {{(layer, head): verdict}}; got {out_type}"
                ).format(out_type=type(out).__name__)
            expected = dead_heads(single, {k: (v, 0.0) for k, v in pairs.items()})
            if set(out) != set(expected):
                return tr(
                    "expected a verdict for each of the heads {sorted_expected}; got keys {sorted_out}"
                ).format(sorted_expected=sorted(expected), sorted_out=sorted(out))
            wrong = {h: (out[h], v) for h, v in expected.items() if out[h] != v}
            if not wrong:
                return None
            if seed < 0:
                return tr(
                    "the thresholds include their ends: a head that costs exactly 0.005 alone is "
                    '"needed" (0.005 or more) and a pair that costs exactly 0.02 makes its heads '
                    "redundant (0.02 or more); use >= (wrong: {wrong})"
                ).format(wrong=wrong)
            got = set(out.values())
            if "redundant" not in got and any(v == "redundant" for v in expected.values()):
                return tr(
                    "no head is redundant in your answer: a head that costs nothing alone is not dead "
                    "until it also costs nothing with every other harmless head (wrong: {wrong})"
                ).format(wrong=wrong)
            if all(out[h] == "redundant" for h, v in expected.items() if v == "dead"):
                return tr(
                    "you called harmless heads redundant because a pair of them with a NEEDED head costs "
                    "a lot: that cost is the needed head's; only pairs of two harmless heads tell "
                    "redundancy (wrong: {wrong})"
                ).format(wrong=wrong)
            excess = {
                k: (v - float(single[k[0]]) - float(single[k[1]]), 0.0) for k, v in pairs.items()
            }
            if out == dead_heads(single, excess):
                return tr(
                    "you compared the EXCESS (cost together minus the two costs alone) with 0.02; the "
                    "rule compares the cost of the pair together (wrong: {wrong})"
                ).format(wrong=wrong)
            return tr("(your verdict, the right one) per head: {wrong}").format(wrong=wrong)

        return run

    report.run("two needed heads, a redundant pair, the rest dead", case(0))
    report.run("a pair that costs 0.021 together", case(1))
    report.run("a third table", case(2))
    report.run("costs exactly at the thresholds, 0.005 alone and 0.02 together", case(-1))
    single, pairs = _table(3)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_verdicts, ("single", "pairs"), single, pairs),
    )
    return report
