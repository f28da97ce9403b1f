"""Chapter 9's checkers of the online softmax: merge two blocks, and attention over key blocks.

* ``merge(state_a, state_b) -> state`` with ``state = (m, l, acc)`` of shapes (L, 1), (L, 1),
  (L, Ev): the running maximum, sum of exponentials and weighted sum of values of a block of keys
  (see :func:`attnbook.efficient.online_softmax_merge`). ``l`` and ``acc`` are relative to the
  ``m`` returned with them, row by row, so that a later merge can rescale them again.
* ``block_attention(query, key, value, block) -> output``: exact attention of (L, E) queries over
  (S, E) keys and (S, Ev) values, ``block`` keys at a time with the online softmax; the largest
  tensor it makes is watched, so that attention computed in one piece does not pass.

The cost questions of the chapter are checked in :mod:`attnbook.exercises.ch09_cost`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.efficient.chunked import chunked_attention, online_softmax_merge
from attnbook.efficient.recompute import attention_block
from attnbook.exercises.attention_mistakes import block_mistake
from attnbook.exercises.cases import random_qkv
from attnbook.exercises.observers import LargestTensor
from attnbook.exercises.report import Refused, Report, call, changed_inputs, expect_tensor, library
from attnbook.i18n import N_, tr

__all__ = ["check_online_softmax_merge", "check_block_attention"]

State = tuple[Tensor, Tensor, Tensor]
ATOL = RTOL = 1e-5


def _state(scores: Tensor, values: Tensor) -> State:
    m = scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores - m.masked_fill(torch.isneginf(m), 0.0))
    return m, p.sum(dim=-1, keepdim=True), p @ values


def _close(a: Tensor, b: Tensor, atol: float = ATOL) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol, rtol=RTOL)


def _as_state(out: object, L: int, Ev: int) -> State | str:
    """The learner's (m, l, acc), checked once: a triple of tensors of the right shapes."""
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        return tr("return a triple (m, l, acc); got {out_type}").format(out_type=type(out).__name__)
    for name, t, shape in zip(("m", "l", "acc"), out, ((L, 1), (L, 1), (L, Ev))):
        problem = expect_tensor(t, shape, what=tr("the merged {name}").format(name=name))
        if problem is not None:
            return problem
    return tuple(out)


def _against(scores: Tensor, values: Tensor, m: Tensor) -> tuple[Tensor, Tensor]:
    """The l and acc of these scores relative to the maximum ``m`` (one per row, or one)."""
    p = torch.exp(scores - m)
    return p.sum(dim=-1, keepdim=True), p @ values


def check_online_softmax_merge(merge: Callable[[State, State], State]) -> Report:
    """Run the reader's ``merge`` on pairs of blocks and compare with a softmax over both; check
    that ``l`` and ``acc`` are relative to the returned ``m``, and merge three blocks in a row."""
    report = Report(N_("online softmax merge"), refused=library(online_softmax_merge))
    g = torch.Generator().manual_seed(0)
    scores, values = 3 * torch.randn(4, 9, generator=g), torch.randn(9, 2, generator=g)
    a, b = _state(scores[:, :4], values[:4]), _state(scores[:, 4:], values[4:])
    expected = torch.softmax(scores, dim=-1) @ values

    def result(x: State, y: State) -> State | str:
        return _as_state(call(merge, x, y), 4, 2)

    def union() -> str | None:
        out = result(a, b)
        if isinstance(out, str):
            return out
        m, l, acc = out
        if not _close(m, scores.amax(dim=-1, keepdim=True)):
            return tr("m must be the larger of the two maxima")
        if _close(acc / l, expected):
            right_l, right_acc = _against(scores, values, m)
            if _close(l, right_l, atol=1e-4) and _close(acc, right_acc, atol=1e-4):
                return None
            one_l, one_acc = _against(scores, values, m.max())
            if _close(l, one_l, atol=1e-4) and _close(acc, one_acc, atol=1e-4):
                return tr(
                    "acc / l is right, but you rescaled every row against ONE maximum for all "
                    "rows (m.max()): l and acc must be relative to each row's own m, the one you "
                    "return, because the next merge rescales them by exp(m - m_new) row by row"
                )
            return tr(
                "acc / l is right, but l and acc are not relative to the m you return: l must "
                "be the sum of exp(s - m) over the row's keys, with that row's m, because the "
                "next merge rescales them by exp(m - m_new)"
            )
        plain_l, plain_acc = _close(l, a[1] + b[1]), _close(acc, a[2] + b[2])
        if plain_l and plain_acc:
            return tr(
                "you add l and acc without rescaling: multiply each block's l and acc by exp(m_block - m)"
            )
        if plain_l or plain_acc:
            if plain_l:
                return tr(
                    "you add l without rescaling: multiply each block's l by exp(m_block - m), as acc"
                )
            return tr(
                "you add acc without rescaling: multiply each block's acc by exp(m_block - m), as l"
            )
        reversed_sign = (a[2] * torch.exp(m - a[0]) + b[2] * torch.exp(m - b[0])) / (
            a[1] * torch.exp(m - a[0]) + b[1] * torch.exp(m - b[0])
        )
        if _close(acc / l, reversed_sign):
            return tr(
                "the rescaling factor is exp(m_block - m), at most 1: it shrinks the block whose "
                "maximum is smaller; you used exp(m - m_block)"
            )
        return tr(
            "acc / l of the merged state is not the softmax over both blocks times the values"
        )

    def chain() -> str | None:
        if union() is not None:
            return tr("cannot check: wrong for ordinary blocks already (see above)")
        c = _state(scores[:, 6:], values[6:])
        first = _state(scores[:, :3], values[:3]), _state(scores[:, 3:6], values[3:6])
        left = result(*first)
        if isinstance(left, str):
            return left
        for out in (result(left, c), result(first[0], result(first[1], c))):
            if isinstance(out, str):
                return out
            if not _close(out[2] / out[1], expected, atol=1e-4):
                worst = (out[2] / out[1] - expected).abs().max().item()
                return tr(
                    "one merge is right, but merging three blocks in a row is off by up to "
                    "{worst:.3g}: the state a merge returns must be usable by the next merge"
                ).format(worst=worst)
        return None

    def symmetric() -> str | None:
        one, two = result(a, b), result(b, a)
        if isinstance(one, str) or isinstance(two, str):
            return tr("cannot check: wrong result (see above)")
        if _close(one[2] / one[1], two[2] / two[1]):
            return None
        return tr("merging (a, b) and (b, a) must give the same output")

    def wrong_already() -> bool:
        """The ordinary case fails: later cases cannot tell what else is wrong."""
        return union() is not None

    cannot_check = tr("cannot check: wrong for ordinary blocks already (see above)")

    def huge() -> str | None:
        if wrong_already():
            return cannot_check
        big = _state(scores[:, :4] + 1000, values[:4]), _state(scores[:, 4:] + 1000, values[4:])
        out = result(*big)
        if isinstance(out, str):
            return out
        m, l, acc = out
        if not (torch.isfinite(l).all() and torch.isfinite(acc).all()):
            return tr(
                "scores near 1000 overflow: never exponentiate m itself, only differences such as "
                "m_a - m"
            )
        if _close(acc / l, expected):
            return None
        return tr("with all scores shifted by 1000 the output must not change")

    def empty() -> str | None:
        if wrong_already():
            return cannot_check
        out = result(a, nothing)
        if isinstance(out, str):
            return out
        m, l, acc = out
        if not (torch.isfinite(l).all() and torch.isfinite(acc).all()):
            return tr(
                "merging with an empty block (m = -inf, l = 0, acc = 0) gives NaN; exp(-inf - m) is "
                "0, but check -inf - (-inf)"
            )
        if not _close(acc / l, a[2] / a[1]):
            return tr("merging with an empty block must leave the output unchanged")
        out = result(nothing, nothing)
        if isinstance(out, str):
            return out
        if torch.isnan(out[1]).any() or torch.isnan(out[2]).any():
            return tr(
                "merging two empty blocks gives NaN: when both maxima are -inf, rescale against 0 instead"
            )
        return None

    nothing = (torch.full((4, 1), float("-inf")), torch.zeros(4, 1), torch.zeros(4, 2))

    def mixed() -> str | None:
        # Row 0: every key masked in both blocks; row 1: in block a only; row 2: in block b only;
        # row 3: none. A merge must decide per row, not once for the whole tensor.
        if wrong_already():
            return cannot_check
        masked = scores.clone()
        masked[0] = float("-inf")
        masked[1, :4] = float("-inf")
        masked[2, 4:] = float("-inf")
        out = result(_state(masked[:, :4], values[:4]), _state(masked[:, 4:], values[4:]))
        if isinstance(out, str):
            return out
        m, l, acc = out
        if not (torch.isfinite(l[0]).all() and torch.isfinite(acc[0]).all()):
            both_empty = result(nothing, nothing)
            if isinstance(both_empty, str) or not torch.isfinite(both_empty[1]).all():
                return tr(
                    "a row empty in both blocks gives NaN here too (see the empty blocks above)"
                )
            return tr(
                "a row whose keys are masked in both blocks gives NaN when the other rows are not "
                "empty: decide per row (e.g. torch.where(torch.isneginf(m), 0, m)), not with one if "
                "for the whole tensor"
            )
        if not (torch.isneginf(m[0]).all() and (l[0] == 0).all() and (acc[0] == 0).all()):
            return tr("a row empty in both blocks must stay empty: m = -inf, l = 0, acc = 0")
        expected_rows = torch.softmax(masked[1:], dim=-1) @ values
        if not (torch.isfinite(acc[1:] / l[1:]).all() and _close(acc[1:] / l[1:], expected_rows)):
            return tr(
                "rows empty in one block only (and ordinary rows next to them) must keep the other "
                "block's result; is the rescaling decided per row?"
            )
        return None

    report.run("acc / l equals the softmax over both blocks; l and acc match the m", union)
    report.run("three blocks merged in a row, either way round", chain)
    report.run("the order of the blocks does not matter", symmetric)
    report.run("stays finite and exact for very large scores", huge)
    report.run("empty blocks (all keys masked) are harmless", empty)
    report.run("rows empty in both, one or neither block, side by side", mixed)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(merge, ("state_a", "state_b"), a, b),
    )
    return report


def _shared_maximum(q: Tensor, k: Tensor, out: Tensor) -> str | None:
    """The message for NaN in exactly the rows whose scores lie far below the largest score of
    all rows: the mark of one running maximum shared by every query (None otherwise)."""
    row_max = (q @ k.T / q.size(-1) ** 0.5).amax(-1)  # (L,)
    bad = ~torch.isfinite(out).all(-1)  # (L,)
    if not bad.any() or bad.all() or bool((row_max[bad] > row_max.max() - 80).any()):
        return None
    return tr(
        "rows whose scores lie far below the largest score of all rows give NaN: one running "
        "maximum shared by every query makes their exp() underflow to 0 / 0; keep one maximum "
        "per query, of shape (L, 1)"
    )


def check_block_attention(
    block_attention: Callable[[Tensor, Tensor, Tensor, int], Tensor],
) -> Report:
    """Compare the reader's ``block_attention(query, key, value, block)`` with exact attention,
    and check that no tensor as large as the (L, S) score matrix is made."""
    refused = (
        *library(scaled_dot_product_attention, chunked_attention, attention_block),
        Refused(F, "scaled_dot_product_attention", "F.scaled_dot_product_attention"),
    )
    report = Report(N_("attention over key blocks"), refused=refused)

    def blocks(size: int, seed: int = 1, L: int = 5, S: int = 11, E: int = 4, Ev: int = 3):
        def case() -> str | None:
            q, k, v = random_qkv(seed, L, S, E, Ev)
            out = call(block_attention, q, k, v, size)
            problem = expect_tensor(out, (L, Ev), what="block_attention")
            if problem is not None:
                return problem
            if _close(out, scaled_dot_product_attention(q, k, v)[0]):
                return None
            return block_mistake(q, k, v, size, out)

        return case

    def huge() -> str | None:
        q, k, v = random_qkv(1, 5, 11, 4, 3)
        out = call(block_attention, q * 500, k, v, 3)
        problem = expect_tensor(out, (5, 3), what="block_attention")
        if problem is not None:
            return problem
        if not torch.isfinite(out).all():
            return _shared_maximum(q * 500, k, out) or tr(
                "large scores overflow: subtract the running maximum before exponentiating"
            )
        if _close(out, scaled_dot_product_attention(q * 500, k, v)[0], atol=1e-4):
            return None
        normal = call(block_attention, q, k, v, 3)
        if expect_tensor(normal, (5, 3)) is None and not _close(
            normal, scaled_dot_product_attention(q, k, v)[0]
        ):
            return tr("cannot check: wrong at ordinary scores already (see above)")
        return tr(
            "with every score multiplied by 500 the output differs from exact attention by up to "
            "{worst:.3g}"
        ).format(worst=(out - scaled_dot_product_attention(q * 500, k, v)[0]).abs().max().item())

    def very_negative() -> str | None:
        # Every score below -250: exp underflows unless the running maximum is subtracted. Integer
        # q, k in quarters: scores exact in float32 (near -2000 a rounding step is 1e-4 otherwise).
        q, k, v = random_qkv(6, 5, 11, 4, 3)
        q, k = -torch.round(1000 * (q.abs() + 0.5)), torch.round(4 * (k.abs() + 0.5)) / 4
        out = call(block_attention, q, k, v, 3)
        problem = expect_tensor(out, (5, 3), what="block_attention")
        if problem is not None:
            return problem
        if _close(out, scaled_dot_product_attention(q, k, v)[0], atol=1e-4):
            return None
        plain = random_qkv(1, 5, 11, 4, 3)
        normal = call(block_attention, *plain, 3)
        if expect_tensor(normal, (5, 3)) is None and not _close(
            normal, scaled_dot_product_attention(*plain)[0]
        ):
            return tr("cannot check: wrong at ordinary scores already (see above)")
        if _shared_maximum(q, k, out) is not None:
            return _shared_maximum(q, k, out)
        if torch.isfinite(out).all():
            return tr(
                "with every score below -250 the output differs from exact attention by up to "
                "{worst:.3g}"
            ).format(worst=(out - scaled_dot_product_attention(q, k, v)[0]).abs().max().item())
        large = call(block_attention, plain[0] * 500, plain[1], plain[2], 3)
        if expect_tensor(large, (5, 3)) is None and not torch.isfinite(large).all():
            return tr(
                "every score here is below -250 and exp underflows to 0, giving 0 / 0: subtract the "
                "running maximum before exponentiating"
            )
        return tr(
            "every score here is below -250 and the output is NaN: start the running maximum "
            "at -inf, not 0; with m = 0, exp(s - m) underflows to 0 for every key and acc / l "
            "is 0 / 0"
        )

    def in_blocks() -> str | None:
        # 32 queries, 2048 keys of 4, blocks of 64: a block's scores are 2,048 numbers, the
        # inputs at most 8,192, the whole score matrix 65,536.
        L, S, E, Ev, size = 32, 2048, 4, 3, 64
        q, k, v = random_qkv(7, L, S, E, Ev)
        with LargestTensor() as sizes:
            out = call(block_attention, q, k, v, size)
        problem = expect_tensor(out, (L, Ev), what="block_attention")
        if problem is not None:
            return problem
        if not _close(out, scaled_dot_product_attention(q, k, v)[0], atol=1e-4):
            return tr("cannot check: wrong on {S} keys (see the cases above)").format(S=S)
        if sizes.largest >= L * S // 2:
            return tr(
                "a tensor of {largest:,} elements for {L} queries and {S} keys in blocks of "
                "{size}: the whole (L, S) score matrix was built. Compute the scores of one "
                "block of keys at a time (L x block) and carry the running (m, l, acc) from "
                "block to block"
            ).format(largest=sizes.largest, L=L, S=S, size=size)
        return None

    report.run("equals exact attention with blocks of 3 (the last block is shorter)", blocks(3))
    report.run("equals exact attention with blocks of 1", blocks(1))
    report.run("equals exact attention with one block larger than S", blocks(20))
    report.run(
        "other sizes: 7 queries, 16 keys of 8, values of 5, blocks of 4", blocks(4, 2, 7, 16, 8, 5)
    )
    report.run("stays finite for very large scores", huge)
    report.run("stays finite when every score is very negative", very_negative)
    report.run("never builds the (L, S) scores: 32 queries, 2048 keys, blocks of 64", in_blocks)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(
            lambda q, k, v: block_attention(q, k, v, 3),
            ("query", "key", "value"),
            *random_qkv(3, 4, 9, 4, 2),
        ),
    )
    return report
