"""Measuring peak memory honestly on a CPU.

On a GPU, PyTorch counts every byte it allocates (``torch.cuda.max_memory_allocated``). On a
CPU there is no such counter, so this module asks the operating system instead: the **resident
set size** (RSS) of the process — the pages of memory it really occupies — and its **high-water
mark** (Linux ``VmHWM``), the largest RSS so far. The memory a computation needs is the
high-water mark reached during the call minus the RSS just before it.

Three things make that honest:

1. **A fresh process per configuration** (:func:`measure_in_subprocess`). Memory freed by an
   earlier run may stay in the process and be reused silently, hiding what a later run needs;
   a new process starts clean. The high-water mark is reset just before the call (Linux:
   ``/proc/self/clear_refs``), so the setup (importing torch, making the inputs) does not count.
2. **Large allocations go straight to the operating system.** glibc's ``malloc`` serves big
   blocks with ``mmap`` and returns them on ``free``, but it raises that threshold dynamically
   after the first frees, after which freed blocks stay resident. Fixing the threshold
   (``M_MMAP_THRESHOLD``) makes RSS follow what is really alive.
3. **Measure the inputs separately.** The report gives the RSS of the bare interpreter with
   torch imported (``idle``), after the setup (``baseline``) and the peak during the call.

Limits, stated plainly:

* Linux with glibc only for the exact method; elsewhere :func:`reset_peak` fails and the peak
  is the process's peak since it started (``ru_maxrss``), still right in a fresh process when
  the call needs more than the setup did.
* RSS counts pages *touched*: ``torch.empty`` of 1 GB that is never written costs almost
  nothing; every library (oneDNN, OpenMP thread stacks) and the allocator's own overhead count
  too. Page granularity is 4 KiB; differences of a few MiB are noise.
* Allocations below the mmap threshold (128 KiB here) come from the heap and may reuse memory
  freed earlier: many tiny tensors are under-counted.
* Another thread allocating at the same time is counted as well.

Nothing here is timed: memory is a count, so it is robust to a busy machine; time is not.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import importlib.util
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "MemoryReport",
    "resident_bytes",
    "peak_resident_bytes",
    "reset_peak",
    "fix_mmap_threshold",
    "peak_memory_during",
    "measure_in_subprocess",
    "autograd_saved_bytes",
]

#: Bytes. Allocations at least this large are mmap-ed, and returned to the system when freed.
MMAP_THRESHOLD = 128 * 1024
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
_MIB = 2**20


@dataclass(frozen=True)
class MemoryReport:
    """Resident memory around one call, in bytes."""

    idle: int  # RSS before the setup (in a subprocess: torch and the target imported)
    baseline: int  # RSS just before the call (setup done, inputs allocated)
    peak: int  # highest RSS during the call
    exact: bool  # True if the peak was reset before the call; False: peak since start

    @property
    def increase(self) -> int:
        """The bytes the call needed beyond what existed before it, ``peak - baseline``."""
        return max(0, self.peak - self.baseline)

    @property
    def increase_mib(self) -> float:
        return self.increase / _MIB

    def __str__(self) -> str:
        return (
            f"peak +{self.increase_mib:.1f} MiB over a baseline of {self.baseline / _MIB:.1f} MiB "
            f"({'exact reset' if self.exact else 'peak since start'})"
        )


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def resident_bytes() -> int:
    """Current resident set size of this process, in bytes."""
    kib = _status_kib("VmRSS")
    if kib is not None:
        return kib * 1024
    return peak_resident_bytes()  # without /proc (macOS): the best we can cheaply do


def peak_resident_bytes() -> int:
    """Highest resident set size since start or since :func:`reset_peak`, in bytes."""
    kib = _status_kib("VmHWM")
    if kib is not None:
        return kib * 1024
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024  # bytes on macOS, KiB on Linux


def reset_peak() -> bool:
    """Reset the high-water mark to the current RSS (Linux); return whether it worked."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Make glibc ``mmap`` (and later return) every allocation of ``threshold`` bytes or more.

    Returns False where that is not possible (not glibc).
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, int(threshold)))
    except (OSError, AttributeError):
        return False


def peak_memory_during(fn: Callable[[], Any], *, idle: int | None = None) -> MemoryReport:
    """Run ``fn()`` once in this process and report the resident memory it added at its peak.

    Good for quick looks inside a notebook; for numbers to publish, use
    :func:`measure_in_subprocess`, which avoids memory left over from earlier work. Side
    effect: it fixes glibc's mmap threshold for the rest of the process (see
    :func:`fix_mmap_threshold`), so later large allocations always come fresh from the
    operating system, which makes them slightly slower.

    Args:
        fn: the work; its result is dropped only after the peak is read.
        idle: an earlier RSS to report as ``idle``; defaults to the baseline.
    """
    fix_mmap_threshold()
    gc.collect()
    baseline = resident_bytes()
    exact = reset_peak()
    result = fn()
    peak = peak_resident_bytes()
    del result
    return MemoryReport(
        idle=baseline if idle is None else idle, baseline=baseline, peak=peak, exact=exact
    )


def autograd_saved_bytes(fn: Callable[[], Any]) -> int:
    """Bytes of the tensors autograd saves for backward while ``fn()`` runs (each storage once).

    This is the memory a training step keeps alive between forward and backward, counted
    exactly and without any noise from the machine; parameters and inputs that autograd saves
    are included, since they are saved by reference (they usually exist anyway).
    """
    import torch

    seen: dict[tuple[int, torch.device], int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        seen[(storage.data_ptr(), tensor.device)] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        result = fn()
    del result
    return sum(seen.values())


def _load(target: str) -> Callable[..., Callable[[], Any]]:
    """``"package.module:function"`` or ``"path/to/file.py:function"`` -> the function."""
    where, _, name = target.rpartition(":")
    if not where or not name:
        raise ValueError(
            f"target must look like 'module:function' or 'file.py:function'; got {target!r}"
        )
    if where.endswith(".py"):
        spec = importlib.util.spec_from_file_location("_measured", where)
        if spec is None or spec.loader is None:
            raise ValueError(f"cannot load {where!r}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    return getattr(module, name)


def measure_in_subprocess(
    target: str, kwargs: dict[str, Any] | None = None, *, timeout: float | None = 900
) -> MemoryReport:
    """Measure one configuration in a fresh Python process.

    The child imports torch and ``target``, calls ``target(**kwargs)`` — a *setup* function that
    makes the inputs and returns a zero-argument callable, the work — then measures the work
    with :func:`peak_memory_during` and sends back a :class:`MemoryReport`.

    The setup should run the work once on a tiny input before making the real one: the first
    call of an operation pages in library code and starts thread pools, tens of MiB that do not
    depend on the size being measured.

    Args:
        target: ``"package.module:function"`` or ``"path/to/file.py:function"``.
        kwargs: JSON-serialisable keyword arguments for the setup function.
        timeout: seconds before the child is killed.

    Raises:
        ValueError: ``target`` is not of the form ``"where:function"``.
        RuntimeError: the child failed (its stderr is included).
    """
    where, _, name = target.rpartition(":")
    if not where or not name:
        raise ValueError(
            f"target must look like 'module:function' or 'file.py:function'; got {target!r}"
        )
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=str(MMAP_THRESHOLD))
    command = [sys.executable, "-m", "attnbook.measure.memory", target, json.dumps(kwargs or {})]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(
            f"measuring {target} {kwargs} failed with exit code {done.returncode}:\n{done.stderr[-2000:]}"
        )
    return MemoryReport(**json.loads(lines[-1]))


def _child(target: str, kwargs_json: str) -> None:
    import torch  # noqa: F401  (part of the idle baseline, as in every measured program)

    setup = _load(target)
    idle = resident_bytes()
    work = setup(**json.loads(kwargs_json))
    report = peak_memory_during(work, idle=idle)
    print(json.dumps(asdict(report)), flush=True)


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
