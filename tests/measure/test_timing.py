"""attnbook.measure.timing: slopes of exact power laws, interleaving, medians (nothing is timed)."""

import pytest

from attnbook.measure.timing import interleaved_times, loglog_slope, medians


@pytest.mark.parametrize("power", [0.5, 1.0, 2.0, 3.0])
def test_slope_of_an_exact_power_law(power):
    n = [256, 512, 1024, 2048]
    assert loglog_slope(n, [3.0 * x**power for x in n]) == pytest.approx(power)


def test_slope_rejects_non_positive_values():
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([1, 2], [0.0, 1.0])


def test_slope_rejects_unequal_lengths():
    with pytest.raises(ValueError, match="equal length"):
        loglog_slope([1, 2, 3], [1.0, 2.0])


def test_each_function_runs_warmup_plus_repeats_times_in_alternating_order():
    calls = []
    fns = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    times = interleaved_times(fns, repeats=4, warmup=1)
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]
    assert {name: len(ts) for name, ts in times.items()} == {"a": 4, "b": 4}


def test_medians_take_the_middle_value():
    assert medians({"a": [3.0, 1.0, 100.0]}) == {"a": 3.0}
