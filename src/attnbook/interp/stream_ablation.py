"""One position's residual stream in an encoder: read it, or mean-ablate it (chapter 20).

A head's ablation (:mod:`attnbook.interp.ablation`) asks what one head contributes. This asks what
one *token* carries: at every depth of the encoder — the first block's input and every block's
output — the residual stream at one chosen position of each sentence is replaced by its mean over
the batch's sentences at that depth. The token keeps its average state, the one the later layers
were trained to meet, and loses whatever is particular to its sentence. If the sentences'
outputs do not move, the position carried nothing sentence-specific: it may still matter (hiding
it as a key can change everything), but as a constant, not as content.

:func:`position_states` reads that stream: the state at one position of each sentence after
every layer, to see how much it differs from sentence to sentence before ablating it.

Works on any stack whose ``layers`` take the residual stream as their first argument and return
it first (a tensor or a tuple), such as :class:`attnbook.transformer.Encoder`. Hooks are removed
afterwards, also after an error.

Shape legend: N sentences, L positions, E model width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import Tensor, nn

__all__ = ["mean_ablated_positions", "position_states"]


def _replace(x: Tensor, positions: Tensor) -> Tensor:
    if x.dim() != 3 or x.size(0) != len(positions):
        raise ValueError(
            f"the residual stream must be (N, L, E) with N = {len(positions)} sentences, one "
            f"position each; got {tuple(x.shape)}"
        )
    n = torch.arange(len(positions), device=x.device)
    x = x.clone()
    x[n, positions] = x[n, positions].mean(0)  # (N, E) <- (E,)
    return x


def _check(layers: Sequence[nn.Module], positions: Tensor) -> list[nn.Module]:
    if (
        not isinstance(positions, Tensor)
        or positions.dtype.is_floating_point
        or positions.dtype == torch.bool
    ):
        raise TypeError(
            f"positions must be an integer tensor; got {getattr(positions, 'dtype', type(positions))}"
        )
    if positions.dim() != 1:
        raise ValueError(f"positions must be (N,), one per sentence; got {tuple(positions.shape)}")
    layers = list(layers)
    if not layers:
        raise ValueError("layers must hold at least one block")
    return layers


@contextmanager
def mean_ablated_positions(layers: Sequence[nn.Module], positions: Tensor) -> Iterator[None]:
    """Inside the ``with`` block, the stream at ``positions`` is its batch mean at every depth.

    Args:
        layers: the encoder's blocks, in order (e.g. ``model.encoder.layers``).
        positions: (N,) int, the position to ablate in each sentence of the next batch.

    Raises:
        TypeError: if ``positions`` is not an integer tensor.
        ValueError: if ``positions`` is not one-dimensional or ``layers`` is empty; when the
            model runs, if the batch does not hold N sentences or a position is out of range.
    """
    layers = _check(layers, positions)

    def before(module, args):
        x = args[0]
        if int(positions.max()) >= x.size(1) or int(positions.min()) < 0:
            raise ValueError(f"positions must lie in [0, {x.size(1)}); got {positions.tolist()}")
        return (_replace(x, positions), *args[1:])

    def after(module, args, output):
        if isinstance(output, tuple):
            return (_replace(output[0], positions), *output[1:])
        return _replace(output, positions)

    handles = [layers[0].register_forward_pre_hook(before)]
    handles += [layer.register_forward_hook(after) for layer in layers]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@torch.no_grad()
def position_states(
    layers: Sequence[nn.Module], positions: Tensor, run: Callable[[], object]
) -> Tensor:
    """The residual stream at one position per sentence after every layer: (Y, N, E).

    Args:
        layers: the encoder's Y blocks, in order (e.g. ``model.encoder.layers``).
        positions: (N,) int, the position to read in each sentence.
        run: runs the model once on the N sentences, e.g. ``lambda: model(ids, mask)``.

    Raises:
        TypeError: if ``positions`` is not an integer tensor.
        ValueError: if ``positions`` is not one-dimensional or ``layers`` is empty.
    """
    layers = _check(layers, positions)
    n = torch.arange(len(positions))
    seen: list[Tensor] = []

    def record(module, args, output):
        stream = output[0] if isinstance(output, tuple) else output
        seen.append(stream[n, positions])  # (N, E)

    handles = [layer.register_forward_hook(record) for layer in layers]
    try:
        run()
    finally:
        for handle in handles:
            handle.remove()
    return torch.stack(seen)  # (Y, N, E)
