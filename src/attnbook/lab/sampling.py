"""Choosing the next token, and writing with a causal lab model: greedy, temperature, top-k, top-p.

A causal :class:`~attnbook.lab.lab_model.LabModel` whose classes are its own tokens is a language
model: its logits at the last position score every token as the next one. How to pick from them:

* **greedy** takes the highest score every time (``temperature=0``);
* **temperature** T divides the logits before the softmax: T < 1 sharpens the distribution
  towards greedy, T > 1 flattens it towards uniform, T = 1 is the model's own;
* **top-k** keeps the k highest-scoring tokens (and any tied with the k-th) and renormalises;
* **top-p**, or nucleus sampling (Holtzman et al. 2020), keeps the smallest set of most likely
  tokens whose probabilities add up to at least p, so that the set is small where the model is
  sure and large where it is not.

They apply in that order (temperature, then top-k, then top-p), as in Hugging Face's
``generate``. :func:`generate` writes ``steps`` tokens after a prompt, with the key/value cache of
:mod:`attnbook.lab.decoding` or by re-reading the whole sequence at every step; both return the
logits of every step, so that a test can check they agree.

Shape legend: N batch, P prompt length, V vocabulary (the model's classes).
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnbook.lab.decoding import decode, decode_step
from attnbook.lab.lab_model import LabModel

__all__ = ["generate", "next_token_distribution", "sample_next"]


def _check(temperature: float, top_k: int | None, top_p: float | None) -> None:
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or temperature < 0
    ):
        raise ValueError(f"temperature must be a number >= 0 (0 = greedy); got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be None or an integer >= 1; got {top_k!r}")
    if top_p is not None and not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
        raise ValueError(f"top_p must be None or in (0, 1]; got {top_p!r}")


def next_token_distribution(
    logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> Tensor:
    """The probabilities (N, V) to sample the next token from, given its logits (N, V).

    ``temperature`` must be positive here (greedy is not a distribution); tokens that top-k or
    top-p remove get probability exactly 0, and the others are renormalised.
    """
    _check(temperature, top_k, top_p)
    if temperature == 0:
        raise ValueError("temperature 0 is greedy decoding, not a distribution: use sample_next")
    if logits.dim() != 2 or not logits.is_floating_point():
        raise ValueError(
            f"logits must be floating (N, V); got {logits.dtype} {tuple(logits.shape)}"
        )
    scores = logits / temperature  # (N, V)
    if top_k is not None and top_k < scores.size(-1):
        kth = scores.topk(top_k, dim=-1).values[:, -1:]  # (N, 1) the k-th highest score
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p is not None and top_p < 1:
        probs, order = scores.softmax(-1).sort(dim=-1, descending=True)  # (N, V) each
        before = probs.cumsum(-1) - probs  # mass of the tokens ranked above each one
        drop = torch.zeros_like(before, dtype=torch.bool).scatter(-1, order, before >= top_p)
        scores = scores.masked_fill(drop, float("-inf"))  # the first token always stays
    return scores.softmax(-1)


def sample_next(
    logits: Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """The next token (N,) for logits (N, V): the argmax if ``temperature`` is 0, else a draw."""
    _check(temperature, top_k, top_p)
    if temperature == 0:
        return logits.argmax(-1)
    probs = next_token_distribution(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, 1, generator=generator)[:, 0]


@torch.no_grad()
def generate(
    model: LabModel,
    prompt: Tensor,
    steps: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> tuple[Tensor, Tensor]:
    """Write ``steps`` tokens after ``prompt`` (N, P) with a causal lab model in eval mode.

    With ``use_cache`` each step feeds only the newest token and keeps every layer's keys and
    values (:func:`~attnbook.lab.decoding.decode_step`); without it each step runs the model on
    the whole sequence so far and keeps the last position's logits.

    Returns:
        ``(tokens (N, P + steps), logits (N, steps, V))``: the prompt and what was written, and
        the logits each written token was chosen from.
    """
    _check(temperature, top_k, top_p)
    if not model.config.causal or model.training:
        raise ValueError(
            f"generate needs a causal model in eval mode; got causal={model.config.causal}, "
            f"training={model.training}"
        )
    if prompt.dim() != 2 or prompt.size(1) < 1:
        raise ValueError(f"prompt must be (N, P) with P >= 1; got {tuple(prompt.shape)}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an integer >= 0; got {steps!r}")
    tokens, written = prompt, []
    if use_cache:
        all_logits, cache = decode(model, prompt)
        logits = all_logits[:, -1]  # (N, V)
    for step in range(steps):
        if not use_cache:
            logits = model(tokens)[0][:, -1]  # (N, V)
        written.append(logits)
        token = sample_next(logits, temperature, top_k, top_p, generator)  # (N,)
        tokens = torch.cat((tokens, token[:, None]), dim=1)
        if use_cache and step < steps - 1:
            logits = decode_step(model, token, cache)
    empty = prompt.new_zeros((prompt.size(0), 0, model.config.num_classes), dtype=torch.float)
    return tokens, (torch.stack(written, dim=1) if written else empty)
