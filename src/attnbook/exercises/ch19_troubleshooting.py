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

from attnbook.exercises.cases import random_attention
from attnbook.exercises.report import (
    LearnerError,
    RefusedCall,
    Report,
    call,
    changed_inputs,
    expect_tensor,
    library,
)
from attnbook.i18n import N_, tr
from attnbook.interp.head_stats import head_entropy
from attnbook.interp.redundancy import dead_heads

__all__ = ["check_uniformity", "check_verdicts"]

ATOL = 1e-4


_NAN = N_(
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
    nonzero = (weights > 0).sum(-1).clamp_min(2).float()  # (N, H, L) keys with weight
    if (nonzero != real_keys).any() and close(_mean_over(entropy / nonzero.log(), real)):
        return tr(
            "you divided by the log of the number of keys with non-zero weight; the yardstick is "
            "the number of REAL keys of the sentence, whatever weight they get (here the keys "
            "after each query get 0, yet they are real)"
        )
    per_sentence = (entropy / real_keys.log() * real[:, None].float()).sum(-1) / real.sum(-1)[
        :, None
    ].float()  # (N, H)
    if close(per_sentence.mean(0)):
        return tr("you averaged per sentence first; take one mean over all real queries")
    return None


def _nan_cause(my_uniformity: Callable[[Tensor, Tensor], Tensor]) -> str:
    """Why the learner's answer gives nan, found by two small probes: rows with exact zeros but
    two keys of weight (0 · log 0), then one-hot rows (a division by log 1 = 0)."""
    no_padding = torch.zeros(1, 4, dtype=torch.bool)
    for weights, cause in (
        (torch.tensor([0.5, 0.5, 0.0, 0.0]).expand(1, 1, 4, 4), _NAN),
        (
            torch.eye(4)[None, None],
            N_(
                "a one-hot row has one key with weight, log 1 = 0, and 0 / 0 is nan: you divided by "
                "the log of the number of keys with non-zero weight; divide by the log of the "
                "number of REAL keys of the sentence, whatever weight they get"
            ),
        ),
    ):
        try:
            out = call(my_uniformity, weights, no_padding)
        except LearnerError:
            continue
        if isinstance(out, Tensor) and torch.isnan(out.float()).any():
            return tr(cause)
    return tr(
        "a sentence with one real key has one-hot rows that must score 0 (one key), but log 1 = "
        "0 and 0 / 0 is nan: guard the division (the log of at least 2 keys, as the library "
        "does)"
    )


def _causal_case() -> tuple[Tensor, Tensor]:
    """Causal weights: every key after the query gets exactly 0, though it is a real key."""
    weights, padding = _uniformity_case(3, 4, 2, 7)
    causal = torch.ones(7, 7, dtype=torch.bool).tril()
    weights = (weights * causal).clamp_min(0)
    weights = weights / weights.sum(-1, keepdim=True).clamp_min(1e-12)
    return weights, padding


def check_uniformity(my_uniformity: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 19: normalised entropy per head, padding keys and queries left out."""
    report = Report(N_("uniformity with padding"), refused=library(head_entropy))

    def judge(weights: Tensor, padding: Tensor, H: int) -> str | None:
        out = call(my_uniformity, weights, padding)
        problem = expect_tensor(out, (H,), what="my_uniformity")
        if problem is not None:
            return problem
        out = out.float()
        if torch.isnan(out).any():
            return _nan_cause(my_uniformity)
        expected = head_entropy([weights], padding, normalise=True)[0]
        if torch.allclose(out, expected, atol=ATOL):
            return None
        return _uniformity_mistake(weights, padding, out) or (
            tr("expected {value}, got {value2}").format(
                value=[round(x, 4) for x in expected.tolist()],
                value2=[round(x, 4) for x in out.tolist()],
            )
        )

    def case(seed: int, N: int, H: int, L: int) -> Callable[[], str | None]:
        return lambda: judge(*_uniformity_case(seed, N, H, L), H)

    def single_key() -> str | None:
        weights, padding = _uniformity_case(4, 5, 2, 6)
        padding[2] = torch.arange(6) >= 1  # sentence 2 is one real token
        weights[2] = torch.where(padding[2], 0.0, 1.0).expand(2, 6, 6)
        return judge(weights, padding, 2)

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
            return _nan_cause(my_uniformity)
        if not torch.allclose(out.float(), torch.tensor([1.0, 0.0]), atol=ATOL):
            return tr(
                "a head uniform over the 4 real keys of 6 must score exactly 1.0 and a one-hot head "
                "0.0; got {value}"
            ).format(value=[round(x, 4) for x in out.float().tolist()])
        return None

    report.run("uniform over the real keys scores 1, one-hot 0", exact)
    report.run("6 padded sentences, 3 heads", case(0, 6, 3, 8))
    report.run("9 padded sentences, 2 heads", case(1, 9, 2, 10))
    report.run(
        "causal rows: the keys after the query get 0 but are real keys",
        lambda: judge(*_causal_case(), 2),
    )
    report.run("a sentence with a single real token scores 0 there", single_key)
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
    if seed == 2:  # and a head that costs 0.007 alone: needed (0.005 or more), below 0.01
        single[heads[order[4]]] = 0.007
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


def _helpful_table() -> tuple[Tensor, dict]:
    """Head 1 costs -0.01 alone (accuracy rises without it): harmless by the rule, and
    redundant with head 2 (0.03 together); head 0 is needed, head 3 dead. ``abs(cost)`` would
    call head 1 needed."""
    single = torch.tensor([[0.10, -0.01, 0.0, 0.001]], dtype=torch.float64)
    heads = [(0, h) for h in range(4)]
    pairs = {
        (a, b): float(single[a] + single[b]) for i, a in enumerate(heads) for b in heads[i + 1 :]
    }
    pairs[(0, 1), (0, 2)] = 0.03
    return single, pairs


_PAIR_ORDER = N_(
    "each pair is stored once, with the lower (layer, head) first: pairs[(a, b)] with a "
    "< b. Look a pair up in both orders, e.g. pairs.get((x, y), pairs.get((y, x)))"
)


def _verdict_slips(single: Tensor, pairs: dict) -> dict[str, dict]:
    """The verdicts that the usual slips give on this table, each with what went wrong."""
    layers, H = single.shape
    heads = [(layer, h) for layer in range(layers) for h in range(H)]

    def rule(
        partners: str = "harmless",
        cost: str = "together",
        harmless: float = 0.005,
        covers: float = 0.02,
    ) -> dict:
        quiet = [x for x in heads if float(single[x]) < harmless - 1e-6]
        verdicts = {}
        for x in heads:
            if x not in quiet:
                verdicts[x] = "needed"
                continue
            costs = []
            for y in quiet if partners == "harmless" else heads:
                if y != x:
                    both = pairs.get((x, y), pairs.get((y, x)))
                    excess = both - float(single[x]) - float(single[y])
                    costs.append(excess if cost == "excess" else both)
            if cost == "none":
                costs = []
            verdicts[x] = "redundant" if any(c >= covers - 1e-6 for c in costs) else "dead"
        return verdicts

    return {
        N_(
            "the thresholds include their ends: a head that costs exactly 0.005 alone is needed "
            "(0.005 or more); use >=, not > (wrong: {wrong})"
        ): rule(harmless=0.005 + 2e-6),
        N_(
            "the thresholds include their ends: a pair that costs exactly 0.02 makes its heads "
            "redundant (0.02 or more); use >=, not > (wrong: {wrong})"
        ): rule(covers=0.02 + 2e-6),
        N_(
            "the thresholds include their ends: a head that costs exactly 0.005 alone is needed "
            "and a pair that costs exactly 0.02 makes its heads redundant; use >=, not > (wrong: "
            "{wrong})"
        ): rule(harmless=0.005 + 2e-6, covers=0.02 + 2e-6),
        N_(
            "no head is redundant in your answer where it should be: a head that costs nothing "
            "alone is dead only if it also costs nothing with every other harmless head (wrong: "
            "{wrong})"
        ): rule(cost="none"),
        N_(
            "you called harmless heads redundant because a pair of them with a NEEDED head costs "
            "a lot: that cost is the needed head's; only pairs of two harmless heads tell "
            "redundancy (wrong: {wrong})"
        ): rule(partners=N_("all")),
        N_(
            "you compared the EXCESS (cost together minus the two costs alone) with 0.02; the "
            "rule compares the cost of the pair together (wrong: {wrong})"
        ): rule(cost="excess"),
    }


_VERDICTS = ("needed", "redundant", "dead")


def check_verdicts(my_verdicts: Callable[[Tensor, dict], dict]) -> Report:
    """Chapter 19: needed, redundant or dead, from costs alone and in pairs.

    The learner's function runs on every table first; a slip is named only when it gives all
    of the learner's verdicts, on every table (the tables differ in where the slips show).
    """
    report = Report(N_("dead or redundant"), refused=library(dead_heads))
    tables = {
        N_("two needed heads, a redundant pair, the rest dead"): _table(0),
        N_("a pair that costs 0.021 together"): _table(1),
        N_("a third table"): _table(2),
        N_("costs exactly at the thresholds, 0.005 alone and 0.02 together"): _boundary_table(),
        N_("a head whose removal helps (cost -0.01 alone): harmless, not needed"): _helpful_table(),
    }
    outs: dict[str, object] = {}
    with report.refusing():
        for description, (single, pairs) in tables.items():
            try:
                outs[description] = call(my_verdicts, single, dict(pairs))
            except LearnerError as exc:
                outs[description] = exc
    expected = {
        d: dead_heads(single, {k: (v, 0.0) for k, v in pairs.items()})
        for d, (single, pairs) in tables.items()
    }
    slips = {d: _verdict_slips(*table) for d, table in tables.items()}
    named = [
        why
        for why in slips[next(iter(tables))]
        if all(outs[d] == slips[d][why] for d in tables)
        and any(slips[d][why] != expected[d] for d in tables)
    ]

    def case(description: str) -> Callable[[], str | None]:
        def run() -> str | None:
            out = outs[description]
            if isinstance(out, LearnerError):
                if isinstance(out.__cause__, KeyError) and not isinstance(out, RefusedCall):
                    return tr("your function raised KeyError {exc___cause}: {PAIR_ORDER}").format(
                        exc___cause=out.__cause__, PAIR_ORDER=tr(_PAIR_ORDER)
                    )
                raise out
            if not isinstance(out, dict):
                return tr(
                    "my_verdicts must return a dict {{(layer, head): verdict}}; got {out_type}"
                ).format(out_type=type(out).__name__)
            right = expected[description]
            if set(out) != set(right):
                return tr(
                    "expected a verdict for each of the heads {sorted_expected}; got keys {sorted_out}"
                ).format(sorted_expected=sorted(right), sorted_out=sorted(out))
            unknown = sorted({repr(v) for v in out.values() if v not in _VERDICTS})
            if unknown:
                return tr(
                    'a verdict is one of the strings "needed", "redundant" or "dead", in lower '
                    "case; got {unknown}"
                ).format(unknown=", ".join(unknown))
            wrong = {h: (out[h], v) for h, v in right.items() if out[h] != v}
            if not wrong:
                return None
            if len(named) == 1:
                return tr(named[0]).format(wrong=wrong)
            return tr("(your verdict, the right one) per head: {wrong}").format(wrong=wrong)

        return run

    for description in tables:
        report.run(description, case(description))
    single, pairs = _table(3)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_verdicts, ("single", "pairs"), single, pairs),
    )
    return report
