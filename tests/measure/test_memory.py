"""attnbook.measure.memory measures known allocations within a small tolerance."""

from pathlib import Path

import pytest
import torch

from attnbook.measure.memory import (
    MemoryReport,
    autograd_saved_bytes,
    measure_in_subprocess,
    peak_memory_during,
)

MIB = 2**20
TARGET = str(Path(__file__).with_name("memory_targets.py"))


def test_a_fresh_process_sees_a_200_mib_allocation():
    report = measure_in_subprocess(f"{TARGET}:allocate", {"mib": 200})
    assert report.exact
    assert 195 * MIB <= report.increase <= 215 * MIB, str(report)
    assert report.baseline >= report.idle


def test_in_process_measurement_sees_a_100_mib_allocation():
    report = peak_memory_during(lambda: torch.ones(100 * MIB // 4))
    assert 95 * MIB <= report.increase <= 110 * MIB, str(report)


def test_memory_freed_inside_the_call_still_counts_at_its_peak():
    def work():
        a = torch.ones(80 * MIB // 4)
        del a
        return torch.ones(MIB // 4)

    report = peak_memory_during(work)
    assert report.increase >= 75 * MIB, str(report)


def test_increase_is_peak_minus_baseline():
    report = MemoryReport(idle=1, baseline=10 * MIB, peak=25 * MIB, exact=True)
    assert report.increase == 15 * MIB and report.increase_mib == 15.0


def test_autograd_saved_bytes_counts_what_backward_needs():
    x = torch.randn(1000, requires_grad=True)
    assert autograd_saved_bytes(lambda: x.exp()) == 4000  # exp saves its result
    assert autograd_saved_bytes(lambda: x + 1) == 0  # addition saves nothing
    assert autograd_saved_bytes(lambda: x * x) == 4000  # x saved once (same storage)


def test_a_failing_child_raises_with_its_error():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        measure_in_subprocess(f"{TARGET}:fail")


def test_a_malformed_target_is_rejected_before_starting_a_process():
    with pytest.raises(ValueError, match="target must look like"):
        measure_in_subprocess("no_colon_here")
