"""Measure what attention costs, and what the efficient variants save (chapters 9 and 10).

Every memory number is the peak resident memory a single forward (or training step) adds, each
configuration in a fresh Python process (:func:`attnbook.measure.memory.measure_in_subprocess`). Every
time is a median of interleaved repeats within this one process
(:func:`attnbook.measure.timing.interleaved_times`), so ratios are meaningful only within one run.

Sections (all by default):

Sweeps run with ``--threads`` PyTorch threads (default 1, the steadiest on a shared machine);
the target is measured with 1 thread and with all cores.

* ``core``: naive attention (``attnbook.scaled_dot_product_attention``, which forms the weights),
  ``chunked_attention`` and PyTorch's fused SDPA; 8 head-batches, d = 64, forward, n = 256 ...
  16384. The target: at n = 16384, chunked memory <= naive / 100 and chunked time <= 2 x SDPA.
* ``train``: the same three with a backward pass (memory only), n = 512 ... 4096.
* ``approx``: local attention (as a mask and as a band), low-rank (Linformer, pooled, R = 256)
  and linear attention (non-causal and causal), n = 256 ... 16384 (the mask up to 8192).
* ``checkpoint``: a training step of a stack of EncoderBlocks with and without
  ``attnbook.efficient.Checkpointed``.

Writes ``benchmarks/results/bench_efficient.csv`` (every measurement), and the figures, a small
summary CSV and ``machine.json`` into ``book/figures/efficient/``, which the chapters show.

    python benchmarks/bench_efficient.py [--sections core,train,approx,checkpoint]
                                         [--max-n 16384] [--repeats 5] [--threads 1]
    python benchmarks/bench_efficient.py --redraw   # figures only, from the saved numbers
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

from attnbook import scaled_dot_product_attention
from attnbook.efficient import (
    Checkpointed,
    chunked_attention,
    linear_attention,
    local_attention,
    local_mask,
    lowrank_attention,
    pooling_projection,
)
from attnbook.measure.memory import measure_in_subprocess
from attnbook.measure.timing import interleaved_times, loglog_slope

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
FIGURES = ROOT / "book" / "figures" / "efficient"
THIS = str(Path(__file__).resolve())

HEADS, D = 8, 64  # 8 head-batches of head size 64, as in the issue: inputs (1, 8, n, 64)
WINDOW, RANK = 128, 256  # local attention half-width; low-rank projection size
MEMORY_TARGET, TIME_TARGET = 1 / 100, 2.0  # chunked vs naive memory; chunked vs SDPA time


def _method(name: str, n: int) -> Callable:
    """The attention function ``f(q, k, v) -> output`` of one benchmarked method."""
    if name == "naive":
        return lambda q, k, v: scaled_dot_product_attention(q, k, v)[0]
    if name == "chunked":
        return lambda q, k, v: chunked_attention(q, k, v)
    if name == "torch_sdpa":
        return lambda q, k, v: F.scaled_dot_product_attention(q, k, v)
    if name == "local_mask":
        mask = local_mask(n, window=WINDOW)
        return lambda q, k, v: scaled_dot_product_attention(q, k, v, mask)[0]
    if name == "local_band":
        return lambda q, k, v: local_attention(q, k, v, WINDOW)
    if name == "lowrank":
        projection = pooling_projection(n, min(RANK, n))
        return lambda q, k, v: lowrank_attention(q, k, v, projection, log_counts=True)
    if name == "linear":
        return lambda q, k, v: linear_attention(q, k, v)
    if name == "linear_causal":
        return lambda q, k, v: linear_attention(q, k, v, is_causal=True)
    if name == "chunked_no_checkpoint":  # autograd keeps every tile
        return lambda q, k, v: chunked_attention(q, k, v, backward="autograd")
    if name == "chunked_checkpoint":  # each query block recomputed by torch.utils.checkpoint
        return lambda q, k, v: chunked_attention(q, k, v, backward="checkpoint")
    raise ValueError(f"unknown method {name!r}")


def setup_attention(
    method: str, n: int, grad: bool = False, threads: int = 2
) -> Callable[[], object]:
    """Inputs for one configuration, and the work to measure (a forward, or forward + backward)."""
    torch.set_num_threads(threads)
    # Run the method once on a tiny input first: the first call of an operation pages in library
    # code and starts thread pools (tens of MiB of RSS) that have nothing to do with n.
    # Inputs are 4-D (batch, heads, n, d): PyTorch's fused CPU kernel runs only for 4-D inputs;
    # 3-D ones silently fall back to the math path, which forms the (n, n) weights.
    tiny = [torch.randn(1, HEADS, 64, D, requires_grad=grad) for _ in range(3)]
    out = _method(method, 64)(*tiny)
    if grad:
        out.sum().backward()
    del tiny, out
    generator = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(1, HEADS, n, D, generator=generator, requires_grad=grad) for _ in range(3)
    )
    fn = _method(method, n)

    def forward() -> None:
        with torch.no_grad():
            fn(q, k, v)

    def train_step() -> None:
        fn(q, k, v).sum().backward()

    return train_step if grad else forward


# ---- checkpointing: a small stack of encoder blocks -------------------------------------------

CKPT = dict(layers=6, batch=8, length=512, d_model=256, nhead=4, dim_feedforward=1024)


def _stack(checkpointed: bool) -> torch.nn.Module:
    from attnbook.blocks import EncoderBlock

    torch.manual_seed(0)
    blocks = [
        EncoderBlock(CKPT["d_model"], CKPT["nhead"], CKPT["dim_feedforward"], dropout=0.1)
        for _ in range(CKPT["layers"])
    ]
    return torch.nn.ModuleList(Checkpointed(b, enabled=checkpointed) for b in blocks).train()


def _train_step(stack: torch.nn.Module, x: torch.Tensor) -> None:
    for block in stack:
        x, _ = block(x)
    x.square().mean().backward()


def setup_checkpoint(checkpointed: bool, threads: int = 2) -> Callable[[], object]:
    torch.set_num_threads(threads)
    stack = _stack(checkpointed)
    _train_step(stack, torch.randn(1, 16, CKPT["d_model"]))  # warm-up: page in code, start threads
    stack.zero_grad(set_to_none=False)  # the gradients exist in both cases; do not count them
    x = torch.randn(
        CKPT["batch"], CKPT["length"], CKPT["d_model"], generator=torch.Generator().manual_seed(0)
    )
    return lambda: _train_step(stack, x)


# ---- running the sweeps -----------------------------------------------------------------------


def loadavg() -> float:
    return os.getloadavg()[0]


class Recorder:
    """Collects rows (section, method, n, metric, value, load) and prints them as they come."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(self, section: str, method: str, n: int, metric: str, value: float) -> None:
        row = dict(
            section=section,
            method=method,
            n=n,
            metric=metric,
            value=value,
            load=round(loadavg(), 2),
        )
        self.rows.append(row)
        print(
            f"  {section:10} {method:22} n={n:<6} {metric:10} {value:12.4f}  (load {row['load']})",
            flush=True,
        )

    def get(self, section: str, metric: str, method: str) -> tuple[list[int], list[float]]:
        pairs = sorted(
            (r["n"], r["value"])
            for r in self.rows
            if (r["section"], r["metric"], r["method"]) == (section, metric, method)
        )
        return [p[0] for p in pairs], [p[1] for p in pairs]


def memory_sweep(
    rec: Recorder, section: str, methods: dict[str, list[int]], grad: bool, threads: int
) -> None:
    for method, ns in methods.items():
        for n in ns:
            report = measure_in_subprocess(
                f"{THIS}:setup_attention", dict(method=method, n=n, grad=grad, threads=threads)
            )
            rec.add(section, method, n, "peak_mib", report.increase_mib)


def time_sweep(rec: Recorder, section: str, methods: dict[str, list[int]], repeats: int) -> None:
    ns = sorted({n for ms in methods.values() for n in ms})
    for n in ns:
        names = [m for m, m_ns in methods.items() if n in m_ns]
        fns = {m: setup_attention(m, n, threads=torch.get_num_threads()) for m in names}
        big = n >= 8192
        times = interleaved_times(fns, repeats=3 if big else repeats, warmup=0 if big else 1)
        del fns
        for m, ts in times.items():
            rec.add(section, m, n, "time_s", statistics.median(ts))


def target_check(rec: Recorder, n: int, repeats: int, threads: int) -> dict:
    """The issue's targets at n: chunked vs naive memory, chunked vs SDPA time (interleaved)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    fns = {m: setup_attention(m, n, threads=threads) for m in ("chunked", "torch_sdpa")}
    times = interleaved_times(fns, repeats=repeats, warmup=1)
    torch.set_num_threads(previous)
    ratios = [c / s for c, s in zip(times["chunked"], times["torch_sdpa"])]
    chunked_s, sdpa_s = statistics.median(times["chunked"]), statistics.median(times["torch_sdpa"])
    result = dict(
        n=n,
        threads=threads,
        repeats=repeats,
        chunked_s=chunked_s,
        sdpa_s=sdpa_s,
        time_ratio=chunked_s / sdpa_s,
        # best of the repeats: the least disturbed run of each (timeit's advice)
        time_ratio_best=min(times["chunked"]) / min(times["torch_sdpa"]),
        time_ratio_per_repeat=[round(r, 3) for r in ratios],
        load=round(loadavg(), 2),
    )
    naive_mem = dict(zip(*rec.get("core", "peak_mib", "naive")))
    if n in naive_mem:
        # chunked memory with this many threads (= parallel query blocks, one tile each)
        chunked_mib = measure_in_subprocess(
            f"{THIS}:setup_attention", dict(method="chunked", n=n, threads=threads)
        ).increase_mib
        result.update(
            naive_mib=naive_mem[n], chunked_mib=chunked_mib, memory_ratio=chunked_mib / naive_mem[n]
        )
    rec.add(
        "target", f"chunked/torch_sdpa, {threads} thread(s)", n, "time_ratio", result["time_ratio"]
    )
    return result


def checkpoint_section(rec: Recorder, repeats: int, threads: int) -> None:
    for checkpointed in (False, True):
        report = measure_in_subprocess(
            f"{THIS}:setup_checkpoint", dict(checkpointed=checkpointed, threads=threads)
        )
        rec.add(
            "checkpoint",
            "checkpointed" if checkpointed else "plain",
            CKPT["length"],
            "peak_mib",
            report.increase_mib,
        )
    fns = {
        "plain": setup_checkpoint(False, threads),
        "checkpointed": setup_checkpoint(True, threads),
    }
    times = interleaved_times(fns, repeats=repeats, warmup=1)
    for name, ts in times.items():
        rec.add("checkpoint", name, CKPT["length"], "time_s", statistics.median(ts))


# ---- figures ----------------------------------------------------------------------------------


def draw(rec: Recorder, machine: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")

    from attnbook.viz.efficient_plots import scaling_plot
    from attnbook.viz.style import render_png, setup_plotting

    setup_plotting()
    FIGURES.mkdir(parents=True, exist_ok=True)
    threads = machine["threads"]
    where = f"{machine['cpu_model']}, {threads} thread{'s' if threads > 1 else ''}, torch {machine['torch']}"
    groups = {
        "core": (["naive", "chunked", "torch_sdpa"], "forward, 8 head-batches, d = 64"),
        "train": (
            ["naive", "chunked", "chunked_no_checkpoint", "torch_sdpa"],
            "forward + backward, 8 head-batches, d = 64",
        ),
        "approx": (
            ["local_mask", "local_band", "lowrank", "linear", "linear_causal", "chunked"],
            f"forward, 8 head-batches, d = 64, window {WINDOW}, rank {RANK}",
        ),
    }
    for section, (methods, what) in groups.items():
        for metric, ylabel, name in (
            ("time_s", "median time per call (s)", "time"),
            ("peak_mib", "peak memory added (MiB)", "memory"),
        ):
            series = {}
            for m in methods:
                ns, ys = rec.get(
                    section if not (section == "approx" and m == "chunked") else "core", metric, m
                )
                ys_pos = [(a, b) for a, b in zip(ns, ys) if b > 0]
                if ys_pos:
                    series[m] = tuple(zip(*ys_pos))
            if not series:
                continue
            fig = scaling_plot(
                series, title=f"{name.capitalize()}: {what}", ylabel=ylabel, fit_from=1024
            )
            fig.text(0.01, -0.02, where, color="dimgray", ha="left", va="top")
            (FIGURES / f"{section}_{name}.png").write_bytes(render_png(fig).png)


# ---- main -------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="core,train,approx,checkpoint")
    parser.add_argument("--max-n", type=int, default=16384)
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per configuration")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads for the sweeps (1: steadiest on a shared machine); the "
        "target is measured with 1 thread and with all cores",
    )
    parser.add_argument("--skip-time", action="store_true", help="memory only")
    parser.add_argument(
        "--redraw",
        action="store_true",
        help="measure nothing: redraw the figures from book/figures/efficient/results.csv",
    )
    args = parser.parse_args()
    if args.redraw:
        rec = Recorder()
        with open(FIGURES / "results.csv") as f:
            rec.rows = [
                {**r, "n": int(r["n"]), "value": float(r["value"])} for r in csv.DictReader(f)
            ]
        draw(rec, json.loads((FIGURES / "machine.json").read_text()))
        return
    sections = set(args.sections.split(","))
    torch.set_num_threads(args.threads)

    command = "python benchmarks/bench_efficient.py " + " ".join(sys.argv[1:])
    machine = dict(
        command=command.strip(),
        cpu=platform.processor() or platform.machine(),
        cpu_model=_cpu_model(),
        cores=os.cpu_count(),
        threads=torch.get_num_threads(),
        torch=torch.__version__,
        python=platform.python_version(),
        started=datetime.datetime.now().isoformat(timespec="seconds"),
        load_at_start=list(os.getloadavg()),
    )
    print(json.dumps(machine), flush=True)
    rec = Recorder()
    ns = [n for n in (256, 512, 1024, 2048, 4096, 8192, 16384) if n <= args.max_n]
    summary: dict = {}

    if "core" in sections:
        core = {"naive": ns, "chunked": ns, "torch_sdpa": ns}
        memory_sweep(rec, "core", core, grad=False, threads=args.threads)
        if not args.skip_time:
            time_sweep(rec, "core", core, args.repeats)
            summary["targets"] = [
                target_check(rec, ns[-1], max(args.repeats, 7), threads)
                for threads in sorted({1, os.cpu_count() or 1})
            ]
    if "train" in sections:
        small = [n for n in ns if 512 <= n <= 4096]
        memory_sweep(
            rec,
            "train",
            {m: small for m in ("naive", "chunked", "chunked_no_checkpoint", "torch_sdpa")},
            grad=True,
            threads=args.threads,
        )
    if "approx" in sections:
        approx = {
            "local_mask": [n for n in ns if n <= 8192],
            "local_band": ns,
            "lowrank": ns,
            "linear": ns,
            "linear_causal": ns,
        }
        memory_sweep(rec, "approx", approx, grad=False, threads=args.threads)
        if not args.skip_time:
            time_sweep(rec, "approx", approx, args.repeats)
    if "checkpoint" in sections:
        checkpoint_section(rec, args.repeats, args.threads)

    machine["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    machine["load_at_end"] = list(os.getloadavg())
    slopes = {}
    for section in ("core", "train", "approx"):
        for metric in ("time_s", "peak_mib"):
            for method in sorted({r["method"] for r in rec.rows if r["section"] == section}):
                n_, y_ = rec.get(section, metric, method)
                fit = [(a, b) for a, b in zip(n_, y_) if a >= 1024 and b > 0]
                if len(fit) >= 2:
                    slopes[f"{section}/{method}/{metric}"] = round(loglog_slope(*zip(*fit)), 3)
    summary["slopes"] = slopes
    machine["summary"] = summary

    RESULTS.mkdir(parents=True, exist_ok=True)
    FIGURES.mkdir(parents=True, exist_ok=True)
    fields = ["section", "method", "n", "metric", "value", "load"]
    for path in (RESULTS / "bench_efficient.csv", FIGURES / "results.csv"):
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows({**r, "value": round(r["value"], 5)} for r in rec.rows)
    (FIGURES / "machine.json").write_text(json.dumps(machine, indent=1) + "\n")
    draw(rec, machine)

    print(json.dumps(summary, indent=1))
    for target in summary.get("targets", []):
        if "memory_ratio" in target:
            print(
                f"\nAt n = {target['n']}, {target['threads']} thread(s): chunked memory / naive = "
                f"{target['memory_ratio']:.4f} (target <= {MEMORY_TARGET:.2f}: "
                f"{'met' if target['memory_ratio'] <= MEMORY_TARGET else 'MISSED'}); chunked time / SDPA = "
                f"{target['time_ratio']:.2f} (target <= {TIME_TARGET:.1f}: "
                f"{'met' if target['time_ratio'] <= TIME_TARGET else 'MISSED'}; best-of-repeats ratio "
                f"{target['time_ratio_best']:.2f}); load average {target['load']}"
            )


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
