"""Setups for the live memory measurements of chapters 9 and 11, one configuration per process.

Each function is a *setup* for :func:`attnbook.measure.memory.measure_in_subprocess`: it builds
the model and inputs in the fresh child process, runs the step once on a tiny input (to page in
code and create the gradients), and returns the step to measure. The sizes are the chapters'.
Memory does not depend on the weights' values, so the models keep their seeded initialisation.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnbook.blocks import EncoderBlock
from attnbook.efficient import Checkpointed
from attnbook.models.toy import ToyConfig, ToyModel


def setup_encoder_step(checkpointed: bool) -> Callable[[], None]:
    """Chapter 9: one training step of four EncoderBlock(128, 4, 512), input (8, 256, 128)."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    blocks = [EncoderBlock(128, 4, 512, dropout=0.0) for _ in range(4)]
    layers = torch.nn.ModuleList(Checkpointed(b, enabled=checkpointed) for b in blocks).train()

    def step(x: torch.Tensor) -> None:
        layers.zero_grad(set_to_none=False)
        for layer in layers:
            x, _ = layer(x)
        x.square().mean().backward()

    step(torch.randn(1, 16, 128))  # warm-up: page in code, create the gradients
    x = torch.randn(8, 256, 128, generator=torch.Generator().manual_seed(2))
    return lambda: step(x)


def setup_toy_step(config: dict, attention: str, n: int, seed: int = 2) -> Callable[[], None]:
    """Chapter 11: one training step of a ToyModel(``config``, ``attention``) on one sequence of n."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = ToyModel(ToyConfig(**config, attention=attention))

    def step(length: int) -> None:
        g = torch.Generator().manual_seed(seed)
        tokens = torch.randint(0, config["vocab_size"], (1, length), generator=g)
        payloads = torch.randint(0, 16, (1, length), generator=g)
        target = torch.randint(0, config["num_classes"], (1, length), generator=g)
        logits = model(tokens, payloads)
        F.cross_entropy(logits.flatten(0, 1), target.flatten()).backward()

    step(64)  # warm-up: page in code, create the gradients
    return lambda: step(n)
