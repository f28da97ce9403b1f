"""Time attnbook.MultiHeadAttention against torch.nn.MultiheadAttention (batch_first=True).

Forward + backward of self-attention with identical weights, N=8, L=S=512, E=512, H=8, with
need_weights=True and need_weights=False. The two implementations are interleaved within each
repeat (alternating which goes first) so that drift in machine load hits both alike; the ratios
are therefore only meaningful within one run.

    python benchmarks/bench_mha.py [--repeats 20] [--warmup 3] [--threads K] [--csv PATH]
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import statistics
import time
from collections.abc import Callable

import torch
from torch import Tensor, nn

from attnbook.interop import from_torch

N, L, E, H = 8, 512, 512, 8
TARGETS = {False: 0.90, True: 1.05}  # need_weights -> maximum ratio ours / torch


def step(module: nn.Module, x: Tensor, need_weights: bool) -> Callable[[], None]:
    """One forward + backward of self-attention on ``x``, gradients cleared first."""

    def run() -> None:
        module.zero_grad(set_to_none=True)
        x.grad = None
        output, _ = module(x, x, x, need_weights=need_weights)
        output.sum().backward()

    return run


def time_ms(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="timed repeats per case")
    parser.add_argument("--warmup", type=int, default=3, help="untimed repeats per case")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="torch threads")
    parser.add_argument("--csv", type=str, default=None, help="write every timing to this CSV")
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    reference = nn.MultiheadAttention(E, H, batch_first=True)
    ours = from_torch(reference)
    x = torch.randn(N, L, E, requires_grad=True)
    implementations = {"attnbook": ours, "torch": reference}

    with torch.no_grad():  # same weights, same answer, before timing anything
        for need_weights in (True, False):
            a, _ = ours(x, x, x, need_weights=need_weights)
            b, _ = reference(x, x, x, need_weights=need_weights)
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)

    print(
        f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
        f"threads={torch.get_num_threads()}, N={N} L=S={L} E={E} H={H}, "
        f"forward+backward, self-attention, repeats={args.repeats} (+{args.warmup} warm-up)"
    )
    rows: list[tuple[str, bool, int, float]] = []
    times: dict[tuple[str, bool], list[float]] = {}
    for need_weights in (True, False):
        runs = {name: step(m, x, need_weights) for name, m in implementations.items()}
        for _ in range(args.warmup):
            for run in runs.values():
                run()
        for repeat in range(args.repeats):
            order = list(runs) if repeat % 2 == 0 else list(reversed(runs))
            for name in order:
                ms = time_ms(runs[name])
                times.setdefault((name, need_weights), []).append(ms)
                rows.append((name, need_weights, repeat, ms))

    print(f"{'need_weights':>12}  {'attnbook ms':>11}  {'torch ms':>9}  {'ratio':>6}  target")
    for need_weights in (True, False):
        ours_ms = statistics.median(times[("attnbook", need_weights)])
        torch_ms = statistics.median(times[("torch", need_weights)])
        ratio = ours_ms / torch_ms
        target = TARGETS[need_weights]
        verdict = "met" if ratio <= target else "MISSED"
        print(
            f"{str(need_weights):>12}  {ours_ms:11.1f}  {torch_ms:9.1f}  {ratio:6.3f}  "
            f"<= {target:.2f}: {verdict}"
        )

    if args.csv:
        os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["implementation", "need_weights", "repeat", "ms"])
            writer.writerows(rows)
        print(f"wrote {len(rows)} timings to {args.csv}")


if __name__ == "__main__":
    main()
