"""Time S seeds trained one after another (``fit``) against together (``fit_together``).

Two workloads from the book, with the chapters' sizes and one PyTorch thread, as nbval runs them:

* ``lookup``: chapter 3's head study, a one-layer LookupModel (E = 64, 1 or 2 heads, batch 64,
  8 tokens), 400 steps, evaluated every 25 steps on 1,024 held-out sequences, 10 seeds;
* ``seq2seq``: chapter 5.12's warm-up study, a 6-layer post-LN Seq2SeqTransformer (d = 32,
  batch 32), 300 steps, evaluated at the end, 3 and 8 seeds;
* ``detective``: chapter 6's detective (2 layers x 2 heads, batch 32), 300 of its 1,500 steps,
  2 and 4 seeds. Its sentences differ in length, so each batch is padded to its longest; stacked
  batches must share one length, so together every batch is padded to the longest sentence the
  task makes (41 tokens), which is what training the chapter's seeds together would cost.

Per member it also reports what the chapters compare: the accuracy each member reaches alone
and together (they agree to rounding at first and then drift, as on another CPU). Times are
wall-clock on a machine that may be shared: compare the two columns of one run, not runs.

    python benchmarks/bench_together.py [--steps-scale 1.0] [--only detective] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import replace

import torch

from attnbook.models.detective import Detective, DetectiveConfig, batch_loss, evaluator
from attnbook.models.lookup_model import LookupModel, LookupModelConfig
from attnbook.models.seq2seq import Seq2SeqConfig, Seq2SeqTransformer, seq2seq_loss
from attnbook.tasks.coref import CorefTask, batch_maker, collate
from attnbook.tasks.lookup import lookup_accuracy, lookup_batch, lookup_loss
from attnbook.tasks.numbers import number_batch, number_vocabulary
from attnbook.tasks.vocab import Vocabulary
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


def detective_workload():
    tasks = [CorefTask("en"), CorefTask("zh")]
    vocab = Vocabulary.for_tasks(*tasks)
    natural = batch_maker(tasks, vocab)
    longest = 41  # the longest sentence either task makes, in tokens (six people, Chinese)

    def padded(n, g):  # one length for every member, so that the batches stack
        batch = natural(n, g)
        extra = longest - batch.tokens.shape[1]
        pad = torch.nn.functional.pad
        return batch._replace(
            tokens=pad(batch.tokens, (0, extra), value=vocab.pad_id),
            key_padding_mask=pad(batch.key_padding_mask, (0, extra), value=True),
            candidates=pad(batch.candidates, (0, extra), value=False),
        )

    def build(seed):
        torch.manual_seed(seed)
        return Detective(DetectiveConfig(vocab_size=len(vocab)))

    pairs = {"en pairs": collate(tasks[0].examples(500, "pairs", seed=1), vocab)}
    config = TrainConfig(steps=300, batch_size=32, lr=3e-3, eval_every=300, progress=False)
    return build, natural, batch_loss, evaluator(pairs), config, "en pairs", padded


def compare(name, workload, seeds, steps_scale):
    build, make_batch, loss, evaluate, config, metric, *stackable = workload
    together_batch = stackable[0] if stackable else make_batch
    config = replace(config, steps=max(1, round(config.steps * steps_scale)))
    start = time.perf_counter()
    alone = [fit(build(s), make_batch, loss, replace(config, seed=s), evaluate) for s in seeds]
    solo_s = time.perf_counter() - start
    start = time.perf_counter()
    configs = [replace(config, seed=s) for s in seeds]
    together = fit_together([build(s) for s in seeds], together_batch, loss, configs, evaluate)
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
    parser.add_argument("--only", default=None, help="run only the workloads whose name starts so")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"CPU kernels {torch.backends.cpu.get_cpu_capability()}, 1 thread")  # fmt: skip
    runs = [
        ("lookup 1h", lambda: lookup_workload(1), list(range(10))),
        ("lookup 2h", lambda: lookup_workload(2), list(range(10))),
        ("seq2seq", seq2seq_workload, [0, 1, 2]),
        ("seq2seq", seq2seq_workload, list(range(8))),
        ("detective", detective_workload, [0, 1]),
        ("detective", detective_workload, [0, 1, 2, 3]),
    ]
    rows = [
        compare(name, workload(), seeds, args.steps_scale)
        for name, workload, seeds in runs
        if args.only is None or name.startswith(args.only)
    ]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(torch=torch.__version__, rows=rows), f, indent=1, default=float)


if __name__ == "__main__":
    main()
