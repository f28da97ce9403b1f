"""Chapter 1's checkers of the soft lookup: sharper or softer, and the lookup itself.

* ``check_sharpen(direction, temperature)``: doubling W_q moves 他's weight on 张 ``"up"``, and
  the temperature with the same effect is 1/2.
* ``soft_lookup(query, keys, values, temperature)`` with shapes ``(d,), (n, d), (n, dv) ->
  (dv,)``: softmax over ``keys @ query / temperature``, then the weighted average of ``values``.
  The reference is the library's attention with ``scale=1``; calling it is refused. A slip is
  named only when it gives the learner's output in every case.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.report import (
    LearnerError,
    Refused,
    Report,
    call,
    changed_inputs,
    expect_tensor,
    library,
)
from attnbook.i18n import N_, tr

__all__ = ["check_sharpen", "check_soft_lookup"]


def check_sharpen(direction: str, temperature: float) -> Report:
    """Check the answer to "multiply W_q by 2": does 他's weight on 张 go ``"up"`` or
    ``"down"``, and which temperature has the same effect (scores divided by T)?"""
    report = Report(N_("sharper or softer?"))

    def direction_case() -> str | None:
        if not isinstance(direction, str) or direction.strip().lower() not in ("up", "down"):
            return tr('answer "up" or "down"; got {direction!r}').format(direction=direction)
        if direction.strip().lower() == "up":
            return None
        return tr(
            "doubling W_q doubles every score (the scores are linear in the query), and the "
            "softmax of larger scores is sharper: the largest score, 张's, takes weight from the "
            "others, so it goes up"
        )

    def temperature_case() -> str | None:
        nonlocal temperature
        if isinstance(temperature, Tensor) and temperature.numel() == 1:
            temperature = temperature.item()  # torch.tensor(0.5) is an answer too
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real):
            return tr("answer with a number; got {temperature_type}").format(
                temperature_type=type(temperature).__name__
            )
        T = float(temperature)
        if math.isclose(T, 0.5, rel_tol=1e-9):
            return None
        slips = {
            2.0: N_(
                "dividing the scores by T = 2 halves them and flattens the weights; doubling "
                "them is dividing by T = 1/2"
            ),
            0.25: N_(
                "the scores are linear in W_q: doubling it doubles each score once, so T = "
                "1/2, not 1/4"
            ),
            2**-0.5: N_(
                "the scores are linear in W_q: doubling it doubles each score, not by √2, "
                "so T = 1/2"
            ),
            2**0.5: "the scores are linear in W_q: doubling it doubles each score, not by √2, "
            "so T = 1/2",
        }
        for value, why in slips.items():
            if math.isclose(T, value, rel_tol=1e-6):
                return tr(why)
        if T > 1:
            return tr(
                "a temperature above 1 divides the scores by more than 1 and flattens them; "
                "doubling W_q sharpens: T = 1/2"
            )
        return tr("softmax(2s) = softmax(s / T) for T = 1/2; got {T:g}").format(T=T)

    report.run("the weight of 张 when W_q is doubled", direction_case)
    report.run("the temperature with the same effect", temperature_case)
    return report


SoftLookup = Callable[[Tensor, Tensor, Tensor, float], Tensor]


def _reference(query: Tensor, keys: Tensor, values: Tensor, temperature: float) -> Tensor:
    output, _ = scaled_dot_product_attention(
        query[None], keys, values, scale=1.0, temperature=temperature
    )
    return output[0]


def _cases(seed: int = 0, n: int = 5, d: int = 4, dv: int = 3) -> tuple[Tensor, Tensor, Tensor]:
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(d, generator=g),
        torch.randn(n, d, generator=g),
        torch.randn(n, dv, generator=g),
    )


# The usual slips, each (what is wrong, what it computes from query, keys, values, T).
_LOOKUP_SLIPS: list[tuple[str, Callable[[Tensor, Tensor, Tensor, float], Tensor]]] = [
    (
        N_("you also divide by √d: a soft lookup divides the scores by the temperature only"),
        lambda q, k, v, t: _reference(q, k, v, t * q.numel() ** 0.5),
    ),
    (
        N_("you multiply the scores by the temperature; divide them by it instead"),
        lambda q, k, v, t: _reference(q, k, v, 1.0 / t),
    ),
    (
        N_("the temperature is ignored: divide the scores by it before the softmax"),
        lambda q, k, v, t: _reference(q, k, v, 1.0),
    ),
    (
        N_("you return the plain average of the values: the weights ignore the query"),
        lambda q, k, v, t: v.mean(0),
    ),
    (
        N_("you weight the values by the raw scores; apply softmax to them first"),
        lambda q, k, v, t: (k @ q / t) @ v,
    ),
    (
        N_("you average the keys; the output is the weighted average of the VALUES"),
        lambda q, k, v, t: torch.softmax(k @ q / t, dim=0) @ k,
    ),
]


def _overflow(out: Tensor) -> str | None:
    if torch.isfinite(out).all():
        return None
    return tr(
        "the output contains NaN or inf: exp() of a large score overflows (inf / inf = NaN); "
        "use torch.softmax, which subtracts the largest score first"
    )


def _explains(slip: Callable[..., Tensor], runs: list[tuple[tuple, Tensor]]) -> bool:
    """The slip gives every output of the runs (and differs from the right one in one)."""

    def close(a: Tensor, b: Tensor) -> bool:
        return a.shape == b.shape and torch.allclose(a, b, atol=1e-4)

    return all(close(out, slip(*args)) for args, out in runs) and any(
        not close(slip(*args), _reference(*args)) for args, _ in runs
    )


def check_soft_lookup(soft_lookup: SoftLookup) -> Report:
    """Run the reader's ``soft_lookup`` on known cases and say what is right and wrong."""
    refused = (
        *library(scaled_dot_product_attention),
        Refused(F, "scaled_dot_product_attention", "F.scaled_dot_product_attention"),
    )
    report = Report("soft_lookup", refused=refused)

    settings = {  # description -> (temperature, seed, n, d, dv)
        N_("equals the reference at temperature 1"): (1.0, 0, 5, 4, 3),
        N_("temperature 0.5 divides the scores (sharper)"): (0.5, 1, 5, 4, 3),
        N_("temperature 3 divides the scores (flatter)"): (3.0, 2, 5, 4, 3),
        N_("other sizes: 7 keys of size 2, values of size 5"): (1.0, 3, 7, 2, 5),
    }
    runs: list[tuple[tuple, Tensor]] = []  # the usable outputs, to name a slip that fits them all
    outs: dict[str, object] = {}
    with report.refusing():
        for description, (temperature, seed, n, d, dv) in settings.items():
            args = (*_cases(seed, n, d, dv), temperature)
            try:
                outs[description] = out = call(soft_lookup, *args)
            except LearnerError as exc:
                outs[description] = exc
                continue
            if expect_tensor(out, (dv,)) is None and torch.isfinite(out).all():
                runs.append((args, out))
    named = [why for why, slip in _LOOKUP_SLIPS if runs and _explains(slip, runs)]
    nan_already = (  # NaN at ordinary scores: not an overflow; the ordinary cases name it
        tr("the output is NaN or inf already for ordinary scores (see above)")
        if any(
            isinstance(out, Tensor) and out.is_floating_point() and not torch.isfinite(out).all()
            for out in outs.values()
        )
        else None
    )

    def matches(description: str) -> Callable[[], str | None]:
        def case() -> str | None:
            temperature, seed, n, d, dv = settings[description]
            query, keys, values = _cases(seed, n, d, dv)
            out = outs[description]
            if isinstance(out, LearnerError):
                raise out
            problem = expect_tensor(out, (dv,), what="soft_lookup")
            if problem is not None:
                return problem + tr(" (query ({d},), keys ({n}, {d}), values ({n}, {dv}))").format(
                    d=d, n=n, dv=dv
                )
            expected = _reference(query, keys, values, temperature)
            if torch.allclose(out, expected, atol=1e-5):
                return None
            if not torch.isfinite(out).all():  # these scores are small: exp() cannot overflow
                return tr(
                    "the output contains NaN or inf although every score here is small (|s / T| "
                    "< 10), so exp() cannot overflow: look for a log, a root or a power of a "
                    "negative number, or a division by zero"
                )
            if len(named) == 1:
                return tr(named[0])
            return tr("expected {value}, got {value2}").format(
                value=[round(x, 4) for x in expected.tolist()],
                value2=[round(x, 4) for x in out.tolist()],
            )

        return case

    def convex() -> str | None:
        query, keys, _ = _cases()
        out = call(soft_lookup, query, keys, torch.ones(5, 1), 0.7)
        problem = expect_tensor(out, (1,), what="soft_lookup")
        if problem is not None:
            return problem
        if not torch.allclose(out, torch.ones(1), atol=1e-5):
            return tr(
                "with every value equal to 1 the output must be 1 (weights sum to one); got "
                "{out_tolist}"
            ).format(out_tolist=out.tolist())
        return None

    def hard_limit() -> str | None:
        _, keys, values = _cases()
        exact = keys[2] * 10
        out = call(soft_lookup, exact, keys, values, 0.01)
        best = int((keys @ exact).argmax())
        if expect_tensor(out, (3,)) is not None:
            return tr("cannot check: the result is not a tensor of shape (3,) (see above)")
        if torch.allclose(out, values[best], atol=1e-4):
            return None
        if not torch.isfinite(out).all():  # scores of several hundred at T = 0.01: exp() overflows
            return nan_already or _overflow(out)
        return tr(
            "at a tiny temperature the lookup should return the value of the best-matching key"
        )

    def stable() -> str | None:
        query, keys, values = _cases()
        out = call(soft_lookup, query * 1000, keys, values, 1.0)
        if expect_tensor(out, (3,)) is not None:
            return tr("cannot check: the result is not a tensor of shape (3,) (see above)")
        if torch.isfinite(out).all():
            return None
        return nan_already or tr(
            "large scores overflow exp(); subtract the largest score before exponentiating"
        )

    def unchanged() -> str | None:
        return changed_inputs(
            lambda *a: soft_lookup(*a, 0.5), ("query", "keys", "values"), *_cases(4)
        )

    for description in settings:
        report.run(description, matches(description))
    report.run("the weights sum to one", convex)
    report.run("temperature → 0 gives the hard lookup", hard_limit)
    report.run("stays finite for very large scores", stable)
    report.run("does not modify its inputs", unchanged)
    return report
