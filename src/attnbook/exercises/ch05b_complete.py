"""Checkers for the exercises of chapter 5's last section, a complete Transformer.

* ``transformer_lr(step, d_model, warmup_steps)``, the learning rate of Vaswani et al. (2017,
  section 5.3), compared with :func:`attnbook.train.lr_factor`;
* ``kv_rows(T, S, num_layers, cached)``, the rows the decoder's key projections process while
  greedy decoding, with and without a key/value cache, compared with the formula that the
  section's forward hooks confirm.

Both are re-exported by :mod:`attnbook.exercises.ch05_transformer`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from attnbook.exercises.report import Report, call, library
from attnbook.i18n import N_, tr
from attnbook.train import lr_factor

__all__ = ["check_transformer_schedule", "check_kv_rows"]


def check_transformer_schedule(transformer_lr: Callable[[int, int, int], float]) -> Report:
    """Check the reader's ``transformer_lr(step, d_model, warmup_steps)`` (steps count from 1)."""
    report = Report("transformer_lr", refused=library(lr_factor))

    def right(step: int, d: int, w: int) -> float:
        return (d * w) ** -0.5 * lr_factor(step, w, 10**9, "inverse_sqrt")

    mistakes = {
        N_("the warm-up term is step * warmup_steps**-1.5 (so that both terms meet at "
        "step = warmup_steps); you used warmup_steps**-0.5"):
            lambda s, d, w: d**-0.5 * min(s**-0.5, s * w**-0.5),
        N_("the whole rate is scaled by d_model**-0.5; that factor is missing"):
            lambda s, d, w: min(s**-0.5, s * w**-1.5),
        N_("take the MINIMUM of the two terms: the linear one while warming up, the decaying one "
        "after"): lambda s, d, w: d**-0.5 * max(s**-0.5, s * w**-1.5),
        N_("steps count from 1 here; you used step + 1 (a 0-based step counter)"):
            lambda s, d, w: d**-0.5 * min((s + 1) ** -0.5, (s + 1) * w**-1.5),
    }  # fmt: skip

    def case(d: int, w: int) -> Callable[[], str | None]:
        steps = (1, w // 2, w, 2 * w, 25 * w)

        def run() -> str | None:
            values = []
            for step in steps:
                got = call(transformer_lr, step, d, w)
                try:
                    values.append(float(got))
                except (TypeError, ValueError):
                    return tr("return a number; got {got_type}").format(got_type=type(got).__name__)
            wrong = [
                (step, value)
                for step, value in zip(steps, values)
                if not math.isclose(value, right(step, d, w), rel_tol=1e-6)
            ]
            if not wrong:
                return None
            for explanation, slip in mistakes.items():  # a slip must give every step's rate
                if all(
                    math.isclose(value, slip(step, d, w), rel_tol=1e-6)
                    for step, value in zip(steps, values)
                ):
                    return tr(explanation)
            step, value = wrong[0]
            if all(math.isclose(v, values[0], rel_tol=1e-9) for v in values):
                return tr(
                    "your rate is {value:.6g} at every step; it must rise linearly during the "
                    "warm-up and then decay like step**-0.5"
                ).format(value=values[0])
            return tr("at step {step} the rate should be {expected:.6g}; got {value:.6g}").format(
                step=step, expected=right(step, d, w), value=value
            )

        return run

    report.run("the paper's setting: d_model 512, 4000 warm-up steps", case(512, 4000))
    report.run("a small model: d_model 64, 100 warm-up steps", case(64, 100))
    return report


def check_kv_rows(kv_rows: Callable[[int, int, int, bool], int]) -> Report:
    """Check the reader's ``kv_rows(T, S, num_layers, cached)``: the rows (vectors) that the key
    projections of every decoder layer, self- and cross-attention together, process while
    greedily decoding T tokens for one source sentence of S tokens."""
    report = Report("kv_rows")

    def uncached(T: int, S: int, n: int) -> int:
        return n * (T * (T + 1) // 2 + T * S)

    def cached(T: int, S: int, n: int) -> int:
        return n * (T + S)

    mistakes = {
        N_("at step t the uncached decoder projects the t positions so far, not all T: "
        "1 + 2 + ... + T = T(T + 1)/2 rows, not T*T"):
            lambda T, S, n, c: n * (T * T + T * S),
        N_("at step t the uncached decoder projects all t positions so far, the newest "
        "included: 1 + 2 + ... + T = T(T + 1)/2 rows, not T(T - 1)/2"):
            lambda T, S, n, c: n * (T * (T - 1) // 2 + T * S),
        N_("the cross-attention keys count too: S rows of the memory per layer (once with the "
        "cache, at every step without)"):
            lambda T, S, n, c: n * (T if c else T * (T + 1) // 2),
        N_("the cache also keeps the cross-attention keys: the memory is projected once, not "
        "at every step"):
            lambda T, S, n, c: n * (T + T * S) if c else None,
        N_("without the cache the decoder projects the memory again at every step: T*S rows per "
        "layer, not S"):
            lambda T, S, n, c: None if c else n * (T * (T + 1) // 2 + S),
        N_("every one of the num_layers decoder layers has its own projections"):
            lambda T, S, n, c: cached(T, S, 1) if c else uncached(T, S, 1),
        N_("T counts the generated tokens; <s> is the first step's input, not one more step"):
            lambda T, S, n, c: (cached if c else uncached)(T + 1, S, n),
        N_("count the key projections only: the value projections see the same rows, so "
        "counting both doubles the answer"):
            lambda T, S, n, c: 2 * (cached if c else uncached)(T, S, n),
    }  # fmt: skip

    def case(T: int, S: int, n: int, with_cache: bool) -> Callable[[], str | None]:
        def run() -> str | None:
            got = call(kv_rows, T, S, n, with_cache)
            if isinstance(got, bool) or not isinstance(got, (int, float)) or got != int(got):
                return tr("return a whole number of rows; got {got!r}").format(got=got)
            expected = (cached if with_cache else uncached)(T, S, n)
            if got == expected:
                return None
            # Two slips can give the same number for small T, S and num_layers: name them all.
            found = [why for why, wrong in mistakes.items() if got == wrong(T, S, n, with_cache)]
            if found:
                return tr("; or ").join(tr(why) for why in found)
            return tr("expected {expected:,} rows; got {got:,}").format(
                expected=expected, got=int(got)
            )

        return run

    for T, S, n in ((4, 5, 2), (100, 100, 6)):
        for with_cache in (True, False):
            label = (
                tr("T = {T}, S = {S}, {n} layers, with the cache")
                if with_cache
                else tr("T = {T}, S = {S}, {n} layers, without the cache")
            )
            report.run(
                label.format(T=T, S=S, n=n),
                case(T, S, n, with_cache),
            )
    return report
