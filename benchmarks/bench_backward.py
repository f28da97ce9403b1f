"""Training exact attention in linear memory (chapter 11): forward + backward, measured.

Four ways to get the gradients of exact attention, 8 head-batches, d = 64, inputs (1, 8, n, 64):

* ``naive``: ``attnbook.scaled_dot_product_attention`` under autograd (keeps the n x n weights);
* ``chunked``: ``chunked_attention`` with its recomputing backward (keeps O and the log-sum-exp);
* ``chunked_checkpoint``: ``chunked_attention(backward="checkpoint")`` (autograd recomputes each
  query block);
* ``torch_sdpa``: PyTorch's fused ``F.scaled_dot_product_attention`` and its backward.

Memory: the peak resident memory one training step adds, each configuration in a fresh process
(:func:`attnbook.measure.memory.measure_in_subprocess`). Time: medians of interleaved repeats in
this process (:func:`attnbook.measure.timing.interleaved_times`). The targets: at n = 8192,
chunked memory <= naive / 30 and chunked time <= 2.5 x SDPA; at n = 16384, chunked peak < 256 MiB.

Writes ``benchmarks/results/bench_backward.csv`` and, for the chapter,
``book/figures/efficient/backward_{memory,time}.png`` and ``backward.json``.

    python benchmarks/bench_backward.py [--threads 2] [--repeats 3]
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
from pathlib import Path

import torch

from attnbook.measure.memory import measure_in_subprocess
from attnbook.measure.timing import interleaved_times, loglog_slope

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_efficient import setup_attention  # noqa: E402  (the same inputs and warm-up)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
FIGURES = ROOT / "book" / "figures" / "efficient"
EFFICIENT = str(Path(__file__).resolve().parent / "bench_efficient.py")

MEMORY_NS = {
    "naive": [1024, 2048, 4096, 8192],
    "chunked": [1024, 2048, 4096, 8192, 16384],
    "chunked_checkpoint": [1024, 2048, 4096, 8192, 16384],
    "torch_sdpa": [1024, 2048, 4096, 8192, 16384],
}
TIME_NS = {
    "naive": [1024, 2048, 4096],
    "chunked": [1024, 2048, 4096, 8192],
    "chunked_checkpoint": [1024, 2048, 4096],
    "torch_sdpa": [1024, 2048, 4096, 8192],
}
MEMORY_TARGET, TIME_TARGET, PEAK_TARGET_MIB = 1 / 30, 2.5, 256.0


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def series_of(rows: list[dict]):
    """series(method, metric) -> (sizes, values) of the measured rows, by size."""

    def series(method: str, metric: str) -> tuple[list[int], list[float]]:
        pairs = sorted(
            (r["n"], r["value"]) for r in rows if (r["method"], r["metric"]) == (method, metric)
        )
        return [p[0] for p in pairs], [p[1] for p in pairs]

    return series


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--redraw",
        action="store_true",
        help="measure nothing: redraw the figures from book/figures/efficient/backward.json",
    )
    args = parser.parse_args()
    if args.redraw:
        summary = json.loads((FIGURES / "backward.json").read_text())
        draw(series_of(summary["rows"]), summary["machine"])
        return
    torch.set_num_threads(args.threads)
    rows: list[dict] = []

    def add(method: str, n: int, metric: str, value: float) -> None:
        rows.append(
            dict(method=method, n=n, metric=metric, value=value, load=round(os.getloadavg()[0], 2))
        )
        print(
            f"  {method:20} n={n:<6} {metric:9} {value:10.4f}  (load {rows[-1]['load']})",
            flush=True,
        )

    print("memory: one training step, each in a fresh process")
    for method, ns in MEMORY_NS.items():
        for n in ns:
            report = measure_in_subprocess(
                f"{EFFICIENT}:setup_attention",
                dict(method=method, n=n, grad=True, threads=args.threads),
            )
            add(method, n, "peak_mib", report.increase_mib)

    print("time: interleaved medians")
    for n in sorted({n for ns in TIME_NS.values() for n in ns}):
        names = [m for m, ns in TIME_NS.items() if n in ns]
        steps = {m: setup_attention(m, n, grad=True, threads=args.threads) for m in names}
        times = interleaved_times(steps, repeats=args.repeats, warmup=1)
        for m, ts in times.items():
            add(m, n, "time_s", statistics.median(ts))
        if n == 8192:
            per_repeat = [c / s for c, s in zip(times["chunked"], times["torch_sdpa"])]
        del steps

    def value(method: str, n: int, metric: str) -> float:
        return next(
            r["value"] for r in rows if (r["method"], r["n"], r["metric"]) == (method, n, metric)
        )

    series = series_of(rows)

    targets = {
        "memory_ratio_8192": value("chunked", 8192, "peak_mib") / value("naive", 8192, "peak_mib"),
        "time_ratio_8192": value("chunked", 8192, "time_s") / value("torch_sdpa", 8192, "time_s"),
        "time_ratio_8192_per_repeat": [round(r, 3) for r in per_repeat],
        "chunked_peak_mib_16384": value("chunked", 16384, "peak_mib"),
    }
    targets["met"] = {
        "memory": targets["memory_ratio_8192"] <= MEMORY_TARGET,
        "time": targets["time_ratio_8192"] <= TIME_TARGET,
        "peak": targets["chunked_peak_mib_16384"] < PEAK_TARGET_MIB,
    }
    slopes = {}  # log-log slopes from n = 2048 on, where the quadratic terms dominate
    for method in MEMORY_NS:
        for metric in ("peak_mib", "time_s"):
            fitted = [(n, y) for n, y in zip(*series(method, metric)) if n >= 2048]
            if len(fitted) >= 2:
                slopes[f"{method}/{metric}"] = round(loglog_slope(*zip(*fitted)), 3)
    machine = dict(
        date=datetime.date.today().isoformat(),
        cpu_model=cpu_model(),
        cpu_capability=torch.backends.cpu.get_cpu_capability(),
        cores=os.cpu_count(),
        threads=args.threads,
        torch=torch.__version__,
        repeats=args.repeats,
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "bench_backward.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    FIGURES.mkdir(parents=True, exist_ok=True)
    summary = dict(machine=machine, targets=targets, slopes=slopes, rows=rows)
    (FIGURES / "backward.json").write_text(json.dumps(summary, indent=1) + "\n")
    draw(series, machine)
    print(json.dumps(dict(targets=targets, slopes=slopes), indent=1))
    print(
        f"n = 8192: chunked memory / naive = {targets['memory_ratio_8192']:.4f} (target <= {MEMORY_TARGET:.4f}), "
        f"chunked time / SDPA = {targets['time_ratio_8192']:.2f} (target <= {TIME_TARGET}); "
        f"n = 16384: chunked peak {targets['chunked_peak_mib_16384']:.1f} MiB (target < {PEAK_TARGET_MIB:.0f})"
    )


def draw(series, machine: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")

    from attnbook.viz.efficient_plots import scaling_plot
    from attnbook.viz.style import render_png, setup_plotting

    setup_plotting()
    where = f"{machine['cpu_model']}, {machine['threads']} threads, torch {machine['torch']}"
    for metric, ylabel, name in (
        ("peak_mib", "peak memory added by one training step (MiB)", "memory"),
        ("time_s", "median time of one forward + backward (s)", "time"),
    ):
        data = {m: series(m, metric) for m in MEMORY_NS if series(m, metric)[0]}
        fig = scaling_plot(
            data, title=f"{name.capitalize()}: forward + backward, 8 head-batches, d = 64",
            ylabel=ylabel, fit_from=2048,
        )  # fmt: skip
        fig.text(0.01, -0.02, where, color="dimgray", ha="left", va="top")
        (FIGURES / f"backward_{name}.png").write_bytes(render_png(fig).png)


if __name__ == "__main__":
    main()
