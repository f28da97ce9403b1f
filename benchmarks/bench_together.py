"""Time S seeds trained one after another (``fit``) against together (``fit_together``).

Two workloads from the book, with the chapters' sizes and one PyTorch thread, as nbval runs them:

* ``lookup``: chapter 3's head study, a one-layer LookupModel (E = 64, 1 or 2 heads, batch 64,
  8 tokens), 400 steps, evaluated every 25 steps on 1,024 held-out sequences, 10 seeds;
* ``seq2seq``: chapter 5.12's warm-up study, a 6-layer post-LN Seq2SeqTransformer (d = 32,
  batch 32), 300 steps, evaluated at the end, 3 and 8 seeds.

Per member it also reports what the chapters compare: the accuracy each member reaches alone
and together (they agree to rounding at first and then drift, as on another CPU). Times are
wall-clock on a machine that may be shared: compare the two columns of one run, not runs.

    python benchmarks/bench_together.py [--steps-scale 1.0] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import replace

import torch

from attnbook.models.lookup_model import LookupModel, LookupModelConfig
from attnbook.models.seq2seq import Seq2SeqConfig, Seq2SeqTransformer, seq2seq_loss
from attnbook.tasks.lookup import lookup_accuracy, lookup_batch, lookup_loss
from attnbook.tasks.numbers import number_batch, number_vocabulary
from attnbook.train import TrainConfig, fit, fit_together

NAMES = ("previous", "first")
TASK = dict(seq_len=8, vocab_size=128, lookups=NAMES)


def lookup_workload(heads: int):
    test = lookup_batch(1024, torch.Generator().manual_seed(1234), **TASK)

    def build(seed):
        torch.manual_seed(seed)
        config = LookupModelConfig(vocab_size=128, max_len=8, embed_dim=64, num_heads=heads,
                                   num_readouts=2)  # fmt: skip
        return LookupModel(config)

    def loss(model, batch):
        return lookup_loss(model(batch[0])[0], batch[1])

    def evaluate(model):
        return {"all": lookup_accuracy(model(test[0])[0], test[1], NAMES)["all"]}

    config = TrainConfig(steps=400, batch_size=64, lr=3e-3, warmup_steps=50, eval_every=25,
                         progress=False)  # fmt: skip
    return build, lambda n, g: lookup_batch(n, g, **TASK), loss, evaluate, config, "all"


def seq2seq_workload():
    vocab = number_vocabulary()
    numbers = list(range(1000))

    def build(seed):
        torch.manual_seed(seed)
        config = Seq2SeqConfig(len(vocab), d_model=32, nhead=4, num_layers=6,
                               dim_feedforward=64, norm_first=False)  # fmt: skip
        return Seq2SeqTransformer(config)

    config = TrainConfig(steps=300, batch_size=32, lr=1e-2, warmup_steps=100, eval_every=300,
                         progress=False)  # fmt: skip

    def make_batch(n, g):
        return number_batch(n, g, numbers, vocab)

    def evaluate(model):
        with torch.no_grad():
            return {"loss": seq2seq_loss(model, make_batch(256, torch.Generator().manual_seed(7)))}

    return build, make_batch, seq2seq_loss, evaluate, config, "loss"


def compare(name, workload, seeds, steps_scale):
    build, make_batch, loss, evaluate, config, metric = workload
    config = replace(config, steps=max(1, round(config.steps * steps_scale)))
    start = time.perf_counter()
    alone = [fit(build(s), make_batch, loss, replace(config, seed=s), evaluate) for s in seeds]
    solo_s = time.perf_counter() - start
    start = time.perf_counter()
    configs = [replace(config, seed=s) for s in seeds]
    together = fit_together([build(s) for s in seeds], make_batch, loss, configs, evaluate)
    together_s = time.perf_counter() - start
    row = dict(workload=name, seeds=len(seeds), steps=config.steps, one_after_another_s=solo_s,
               together_s=together_s, speed_up=solo_s / together_s,
               alone=[h.last(metric) for h in alone], together=[h.last(metric) for h in together],
               metric=metric)  # fmt: skip
    print(f"{name:10} {len(seeds):2} seeds: one after another {solo_s:6.1f} s, together "
          f"{together_s:6.1f} s (x{row['speed_up']:.2f}); {metric} alone "
          + " ".join(f"{v:.3f}" for v in row["alone"]) + " | together "
          + " ".join(f"{v:.3f}" for v in row["together"]))  # fmt: skip
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps-scale", type=float, default=1.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"CPU kernels {torch.backends.cpu.get_cpu_capability()}, 1 thread")  # fmt: skip
    rows = [
        compare("lookup 1h", lookup_workload(1), list(range(10)), args.steps_scale),
        compare("lookup 2h", lookup_workload(2), list(range(10)), args.steps_scale),
        compare("seq2seq", seq2seq_workload(), [0, 1, 2], args.steps_scale),
        compare("seq2seq", seq2seq_workload(), list(range(8)), args.steps_scale),
    ]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(torch=torch.__version__, rows=rows), f, indent=1, default=float)


if __name__ == "__main__":
    main()
