"""Does cross-attention align words like a translator? Reference alignments for dates, and a score.

A date's two texts correspond token by token, so which source token each target token comes from
is known: the year's digits to the same digits, a month's number to its name, a day's digits to
its ordinal (``"2"`` and ``"1"`` of ``21`` to ``"twenty"`` and ``"first"``). :func:`date_alignment`
gives that reference; ``年``, ``月``, ``日``, ``"the"``, ``"of"`` and ``","`` have none.
:func:`cross_attention` gives a :class:`~attnbook.models.seq2seq.Seq2SeqTransformer`'s
cross-attention weights under teacher forcing, and :func:`alignment_accuracy` counts how often
a target token's most attended source token is one of its reference tokens.

Two controls say what position alone would score: :func:`monotone_weights` (target token ``j``
looks the same fraction of the way along the source) and :func:`length_template_weights` (the
reference position most often seen, in dates of the same source and target lengths, for target
position ``j``: a rule that reads no token). On dates the second scores almost perfectly, so
matching the reference shows that the weights follow the date's structure, not that the model
looks up content there.

Row ``j`` of the weights is the decoder position that reads ``<s>`` or target token ``j - 1`` and
*writes* target token ``j``: the reference is indexed by the token written.

Shape legend: N batch, Ly decoder layers, H heads, T target length (with ``<s>``), S source
length.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import torch
from torch import Tensor

from attnbook.models.seq2seq import Seq2SeqTransformer
from attnbook.tasks.translation import Pair

__all__ = [
    "FIELDS",
    "cross_attention",
    "date_alignment",
    "date_fields",
    "alignment_accuracy",
    "monotone_weights",
    "length_template_weights",
]

FIELDS: tuple[str, ...] = ("year", "month", "day")  # the parts of a date


def cross_attention(model: Seq2SeqTransformer, src: Tensor, tgt: Tensor) -> Tensor:
    """Cross-attention weights (Ly, N, H, T, S) of ``model`` reading ``tgt`` (N, T) for ``src`` (N, S).

    ``tgt`` starts with ``<s>``; row ``j`` is the position that writes ``tgt[:, j + 1]`` (or
    ``</s>``). Padding in ``src`` gets weight 0. Runs under ``torch.no_grad``.
    """
    with torch.no_grad():
        memory, padding = model.encode(src)
        _, weights = model.decoder(
            model.tgt_embed(tgt), memory, tgt_is_causal=True,
            memory_key_padding_mask=padding, need_weights=True,
        )  # fmt: skip
    return torch.stack([w.cross_attn for w in weights])  # (Ly, N, H, T, S)


def _date_links(pair: Pair) -> list[tuple[int, int]]:
    """(Chinese position, English position) of every corresponding token pair of a date."""
    en, zh = pair.source("en-zh"), pair.source("zh-en")
    day_words = en.index("of") - 1  # "the", day words, "of", month, ",", four digits
    month_en, year_en = day_words + 2, len(en) - 4
    month_digits = zh.index("月") - 5  # four digits, 年, month digits, 月, day digits, 日
    day_start = zh.index("月") + 1
    day_digits = len(zh) - 1 - day_start
    links = [(i, year_en + i) for i in range(4)]
    links += [(5 + i, month_en) for i in range(month_digits)]
    for i in range(day_digits):
        word = 1 + (i if day_words == 2 else 0)  # 21 -> "twenty" "first"; 15 -> "fifteenth"
        links.append((day_start + i, word))
    return links


def date_alignment(pair: Pair, direction: str) -> dict[int, set[int]]:
    """For each target token of a date with a counterpart, the source positions it comes from.

    Args:
        pair: a date (``pair.kind == "date"``).
        direction: ``"en-zh"`` or ``"zh-en"``.

    Returns:
        ``{target position: {source positions}}``, positions counted in ``pair.target`` and
        ``pair.source`` (without ``<s>``).
    """
    if not isinstance(pair, Pair) or pair.kind != "date":
        raise ValueError(f"date_alignment needs a date Pair; got {pair!r}")
    pair.source(direction)  # checks the direction
    alignment: dict[int, set[int]] = {}
    for zh, en in _date_links(pair):
        target, source = (zh, en) if direction == "en-zh" else (en, zh)
        alignment.setdefault(target, set()).add(source)
    return alignment


def date_fields(pair: Pair, direction: str) -> dict[int, str]:
    """Which part of the date (``"year"``, ``"month"``, ``"day"``) each aligned target token writes.

    Keys are the target positions of :func:`date_alignment` (``"the"``, ``"of"``, ``","``,
    ``年``, ``月`` and ``日`` have none).
    """
    alignment = date_alignment(pair, direction)
    target = pair.target(direction)
    if direction == "en-zh":  # 2 0 2 4 年 3 月 5 日
        order, ends = ("year", "month", "day"), (4, target.index("月"))
    else:  # the fifth of march , 2 0 2 4
        order, ends = ("day", "month", "year"), (target.index("of"), target.index(","))
    return {j: order[sum(j >= end for end in ends)] for j in alignment}


def alignment_accuracy(
    weights: Tensor,
    pairs: Sequence[Pair],
    direction: str,
    tolerance: int = 0,
    field: str | None = None,
) -> float:
    """The fraction of aligned target tokens whose most attended source token is a reference one.

    The encoder mixes positions, so a trained model often reads a word's meaning from its
    neighbour (the day of ``"the fifth of march"`` from ``"of"``, that of ``2024年3月5日`` from
    ``日``); ``tolerance=1`` also counts a source position next to a reference one.

    Args:
        weights: (N, T, S), one attention map per pair (for example one layer's weights
            averaged over heads, or one head's), rows as in :func:`cross_attention` (row 0
            writes the first target token).
        pairs: N dates, in the order of ``weights``.
        direction: ``"en-zh"`` or ``"zh-en"``.
        tolerance: how many positions away from a reference position still count.
        field: count only the target tokens of one part of the date (see :func:`date_fields`);
            None counts them all.
    """
    if field is not None and field not in FIELDS:
        raise ValueError(f"field must be None or one of {FIELDS}; got {field!r}")
    if isinstance(tolerance, bool) or not isinstance(tolerance, int) or tolerance < 0:
        raise ValueError(f"tolerance must be a non-negative integer; got {tolerance!r}")
    if not isinstance(weights, Tensor) or weights.dim() != 3 or weights.size(0) != len(pairs):
        shape = tuple(weights.shape) if isinstance(weights, Tensor) else type(weights).__name__
        raise ValueError(
            f"weights must be (N, T, S) with N = len(pairs) = {len(pairs)}; got {shape}"
        )
    hits = total = 0
    most = weights.argmax(dim=-1)  # (N, T)
    for n, pair in enumerate(pairs):
        fields = date_fields(pair, direction)
        for target, sources in date_alignment(pair, direction).items():
            if field is not None and fields[target] != field:
                continue
            if target >= weights.size(1):
                raise ValueError(
                    f"weights have {weights.size(1)} rows; pair {n} needs {target + 1}"
                )
            hits += any(abs(int(most[n, target]) - s) <= tolerance for s in sources)
            total += 1
    if total == 0:
        raise ValueError("no aligned target token among the pairs")
    return hits / total


def _check_shape(pairs: Sequence[Pair], direction: str, target_len: int, source_len: int) -> None:
    if len(pairs) == 0 or not all(isinstance(p, Pair) for p in pairs):
        raise ValueError("pairs must be a non-empty sequence of Pair")
    longest_t = max(len(p.target(direction)) for p in pairs) + 1  # the row that writes </s>
    longest_s = max(len(p.source(direction)) for p in pairs)
    if target_len < longest_t or source_len < longest_s:
        raise ValueError(
            f"(target_len, source_len) must be at least ({longest_t}, {longest_s}) for these "
            f"pairs; got ({target_len}, {source_len})"
        )


def monotone_weights(
    pairs: Sequence[Pair], direction: str, target_len: int, source_len: int
) -> Tensor:
    """One-hot weights (N, T, S) of a monotone reader: row ``j`` looks ``j / (T_n - 1)`` of the way.

    ``T_n`` is the number of target tokens of pair ``n`` and ``S_n`` of its source tokens: row
    ``j`` puts all its weight on source position ``round(j * (S_n - 1) / (T_n - 1))`` (clamped to
    the source), so the first target token reads the first source token and the last the last.
    A control for :func:`alignment_accuracy`: what position alone gives, without reordering.

    Args:
        pairs: N pairs.
        direction: ``"en-zh"`` or ``"zh-en"``.
        target_len: T, rows (at least the longest target plus one, for ``</s>``).
        source_len: S, columns (at least the longest source).
    """
    _check_shape(pairs, direction, target_len, source_len)
    weights = torch.zeros(len(pairs), target_len, source_len)
    for n, pair in enumerate(pairs):
        s_n, t_n = len(pair.source(direction)), len(pair.target(direction))
        for j in range(target_len):
            where = min(round(j * (s_n - 1) / max(t_n - 1, 1)), s_n - 1)
            weights[n, j, where] = 1.0
    return weights


def length_template_weights(
    fit_pairs: Sequence[Pair],
    pairs: Sequence[Pair],
    direction: str,
    target_len: int,
    source_len: int,
) -> Tensor:
    """One-hot weights (N, T, S) from a rule that sees only lengths and positions, never tokens.

    For each (source length, target length, target position ``j``) the rule looks at the
    reference source position (:func:`date_alignment`) seen most often among ``fit_pairs``
    (ties: the lower position); a combination never seen falls back to
    :func:`monotone_weights`. Fit it on training dates and score it on held-out ones: it is the
    control that tells whether matching the reference needs the tokens at all.

    Args:
        fit_pairs: dates to count reference positions in (for example a training sample).
        pairs: N dates to make weights for.
        direction: ``"en-zh"`` or ``"zh-en"``.
        target_len: T, rows (at least the longest target plus one, for ``</s>``).
        source_len: S, columns (at least the longest source).
    """
    _check_shape(pairs, direction, target_len, source_len)
    counts: defaultdict[tuple[int, int, int], Counter[int]] = defaultdict(Counter)
    for pair in fit_pairs:
        if pair.kind != "date":
            continue
        key = len(pair.source(direction)), len(pair.target(direction))
        for j, sources in date_alignment(pair, direction).items():
            counts[(*key, j)].update(sources)
    weights = monotone_weights(pairs, direction, target_len, source_len)
    for n, pair in enumerate(pairs):
        key = len(pair.source(direction)), len(pair.target(direction))
        for j in range(target_len):
            seen = counts.get((*key, j))
            if seen:
                weights[n, j] = 0.0
                weights[n, j, min(seen, key=lambda s: (-seen[s], s))] = 1.0
    return weights
