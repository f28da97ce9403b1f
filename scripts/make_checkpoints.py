"""Train the detectives that chapters 7 and 8 study, and write the committed checkpoints.

    python scripts/make_checkpoints.py          # or: make checkpoints

Chapters 7 and 8 load these files; nothing else writes them (chapter 6 trains its own copy into
the ignored book/_checkpoints/). Each file records how it was made in its metadata: the training
run, the PyTorch version and the CPU kernels in force (another CPU gives slightly different
weights; see chapter 6). Run it only when the model or the task changes, then re-execute the
notebooks (make notebooks) and commit the checkpoints with them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from pathlib import Path

import torch

from attnbook.checkpoint import save_checkpoint, training_metadata
from attnbook.models.detective import (
    DETECTIVE_TRAINING,
    DetectiveConfig,
    evaluator,
    train_detective,
)
from attnbook.tasks.coref import CorefTask, collate
from attnbook.tasks.vocab import Vocabulary

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = ROOT / "book" / "checkpoints"
# File name -> (the model's sizes beyond the vocabulary, the seed of its initial weights):
# chapter 6's detective; chapter 8's wide one, three times from different initial weights.
MODELS = {
    "detective.safetensors": ({}, 0),
    "detective_8heads.safetensors": ({"nhead": 8}, 0),
    "detective_8heads_seed1.safetensors": ({"nhead": 8}, 1),
    "detective_8heads_seed2.safetensors": ({"nhead": 8}, 2),
}


def main() -> int:
    torch.set_num_threads(1)  # as the chapters train: one thread, one result per machine
    tasks = [CorefTask("en"), CorefTask("zh")]
    vocab = Vocabulary.for_tasks(*tasks)
    pairs = {f"{t.language} pairs": collate(t.examples(500, "pairs", seed=1), vocab) for t in tasks}
    for name, (sizes, init_seed) in MODELS.items():
        config = DetectiveConfig(vocab_size=len(vocab), **sizes)
        run = dataclasses.replace(DETECTIVE_TRAINING, progress=False)
        model, _ = train_detective(config, run, init_seed=init_seed)
        metadata = training_metadata(DETECTIVE_TRAINING, init_seed)
        path = save_checkpoint(model, CHECKPOINTS / name, metadata)
        path.chmod(0o644)
        with torch.no_grad():
            accuracy = evaluator(pairs)(model)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        print(
            f"{path.relative_to(ROOT)}: sha256 {digest}…, held-out pairs "
            + ", ".join(f"{k} {v:.3f}" for k, v in accuracy.items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
