"""Activation patching and attention knockout, through forward hooks (chapter 7).

Attention maps show where a model reads; they do not show that what it reads there decides the
answer. Interventions do. Run the model on a *clean* sentence and, at one place inside it, put in
what a *counterfactual* run computed there (activation patching, in the manner of TransformerLens
and ARENA): if the answer moves to the counterfactual's answer, that place carries what decides
it. Or cut one path, and measure what the model loses.

Two interventions, each a hook on a module the model already has (nothing is edited):

* :func:`patch_residual` and :func:`patch_from` overwrite the residual stream at one depth.
  Depth ``d`` is the input of encoder block ``d``: 0 is the embedding's output, and ``d`` = the
  number of blocks is the last block's output (before the encoder's final layer norm, which acts
  on each position alone, so patching before it or after it is the same).
* :func:`knock_out` removes chosen query→key edges from chosen heads: their scores become
  ``-inf`` before the softmax, so each head spreads its weight over the keys it may still see
  (the attention knockout of Geva et al., 2023). :func:`cut_edges` does the same for the length
  of a ``with`` block, to combine a cut with a patch. :func:`binding_edges` builds the edges from
  each person's name to their action.

:func:`patch_effect` measures a patch: answers that follow the counterfactual, answers that
leave the clean one, and the share of the logit difference moved (Zhang and Nanda, 2024).

They work on a model with an ``embedding``, an ``encoder`` whose ``layers`` are
:class:`~attnbook.blocks.EncoderBlock`, a ``config`` and a ``run(batch)`` method — the
:class:`~attnbook.models.detective.Detective`. They run it in eval mode without gradients,
remove their hooks afterwards (also after an error) and return the pointer's logits (N, S).

Shape legend: N batch, S sentence length, E ``d_model``, H heads, K patched positions in all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from math import nan
from typing import NamedTuple

import torch
from torch import Tensor, nn

from attnbook.tasks.coref import Batch, Example
from attnbook.tasks.vocab import tokenize

__all__ = [
    "residual_points",
    "run_with_residuals",
    "patch_residual",
    "patch_from",
    "cut_edges",
    "knock_out",
    "binding_edges",
    "PatchEffect",
    "patch_effect",
]


def residual_points(model: nn.Module) -> list[nn.Module]:
    """The modules whose outputs are the residual stream at depth 0, 1, ..., num_layers:
    the embedding (which returns (N, S, E)) and each encoder block (which returns
    ``(output, weights)``)."""
    if not hasattr(model, "embedding") or not hasattr(getattr(model, "encoder", None), "layers"):
        raise TypeError(
            "model must have an `embedding` and an `encoder` with `layers` (a Detective); "
            f"got {type(model).__name__}"
        )
    return [model.embedding, *model.encoder.layers]


def _stream(output: Tensor | tuple) -> Tensor:
    return output[0] if isinstance(output, tuple) else output  # (N, S, E)


@contextmanager
def _evaluating(model: nn.Module, *hooks: torch.utils.hooks.RemovableHandle) -> Iterator[None]:
    """Eval mode and no gradients for a ``with`` block; afterwards remove ``hooks``."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)
        for hook in hooks:
            hook.remove()


def _check_depth(model: nn.Module, depth: int) -> None:
    top = len(residual_points(model)) - 1
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= top:
        raise ValueError(f"depth must be an integer from 0 (embedding) to {top}; got {depth!r}")


def _where(positions: Tensor, N: int, S: int, name: str = "positions") -> Tensor:
    """``positions`` (N,) integer or (N, S) bool, as an (N, S) bool mask."""
    if not isinstance(positions, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(positions).__name__}")
    if positions.dtype == torch.bool:
        if positions.shape != (N, S):
            raise ValueError(
                f"{name} as a bool mask must have shape (N, S) = ({N}, {S}); "
                f"got {tuple(positions.shape)}"
            )
        return positions
    if positions.dtype.is_floating_point or positions.shape != (N,):
        raise ValueError(
            f"{name} must be (N,) = ({N},) integer positions or an (N, S) = ({N}, {S}) bool "
            f"mask; got {tuple(positions.shape)} {positions.dtype}"
        )
    if ((positions < 0) | (positions >= S)).any():
        raise ValueError(f"{name} must lie in [0, S) = [0, {S}); got {positions.tolist()}")
    mask = torch.zeros(N, S, dtype=torch.bool, device=positions.device)
    mask[torch.arange(N, device=positions.device), positions] = True
    return mask  # (N, S)


def run_with_residuals(model: nn.Module, batch: Batch) -> tuple[Tensor, list[Tensor]]:
    """Run ``model`` on ``batch`` and keep the residual stream at every depth.

    Returns:
        ``(logits, residuals)``: logits (N, S); residuals a list of num_layers + 1 tensors
        (N, S, E), ``residuals[d]`` being the input of block ``d`` (the last one: the last
        block's output).
    """
    residuals: list[Tensor] = []

    def keep(module: nn.Module, args: tuple, output: Tensor | tuple) -> None:
        residuals.append(_stream(output).clone())

    hooks = [point.register_forward_hook(keep) for point in residual_points(model)]
    with _evaluating(model, *hooks):
        logits, _ = model.run(batch)
    return logits, residuals


def patch_residual(
    model: nn.Module, batch: Batch, depth: int, positions: Tensor, values: Tensor
) -> Tensor:
    """Run ``model`` on ``batch`` with the residual stream at ``depth`` overwritten.

    Args:
        model: a Detective.
        batch: the (clean) sentences.
        depth: 0 (the embedding's output) to num_layers (the last block's output).
        positions: (N,) one position per sentence, or (N, S) bool, ``True`` where to write.
        values: (N, E) for one position per sentence; (K, E) for a mask with K ``True``
            entries, in the order ``x[positions]`` lists them (sentence by sentence).

    Returns:
        The pointer's logits (N, S).
    """
    _check_depth(model, depth)
    N, S = batch.tokens.shape
    where = _where(positions, N, S)
    E = model.config.d_model
    K = int(where.sum())
    if not isinstance(values, Tensor) or values.shape != (K, E):
        shape = tuple(values.shape) if isinstance(values, Tensor) else type(values).__name__
        raise ValueError(
            f"values must have shape (K, E) = ({K}, {E}), one row per patched position; got {shape}"
        )

    def overwrite(module: nn.Module, args: tuple, output: Tensor | tuple) -> Tensor | tuple:
        x = _stream(output).clone()  # (N, S, E)
        x[where] = values.to(x.dtype)
        return (x, *output[1:]) if isinstance(output, tuple) else x

    hook = residual_points(model)[depth].register_forward_hook(overwrite)
    with _evaluating(model, hook):
        logits, _ = model.run(batch)
    return logits


def patch_from(
    model: nn.Module,
    clean: Batch,
    source: Batch,
    depth: int,
    positions: Tensor,
    source_positions: Tensor | None = None,
    *,
    residuals: Sequence[Tensor] | None = None,
) -> Tensor:
    """Run ``clean`` with its residual stream at ``depth`` and ``positions`` taken from ``source``.

    ``source`` is usually a counterfactual of ``clean``: the same sentences with one clue changed
    (its padded length may differ). Clean sentence ``n`` receives the vectors that source
    sentence ``n`` has at ``source_positions`` (default: the same positions).

    Args:
        model: a Detective.
        clean: the sentences to run.
        source: as many sentences, to take the vectors from.
        depth: 0 (the embedding's output) to num_layers (the last block's output).
        positions: (N,) one position per sentence, or (N, S) bool for several.
        source_positions: for (N,) ``positions`` only: (N,) where to read in ``source``.
        residuals: ``source``'s residual stream from :func:`run_with_residuals`, if it is
            already computed (to patch many places from one run of the source).

    Returns:
        The pointer's logits (N, S) for the clean sentences.
    """
    N, S = clean.tokens.shape
    source_shape = N_source, S_source = source.tokens.shape
    if N_source != N:
        raise ValueError(
            f"clean and source must hold the same number of sentences; got {N} and {N_source}"
        )
    where = _where(positions, N, S)
    if source_positions is None:
        if where[:, S_source:].any():
            raise ValueError(f"positions must lie inside the source sentences (S = {S_source})")
        read = torch.zeros(N, S_source, dtype=torch.bool, device=where.device)
        width = min(S, S_source)
        read[:, :width] = where[:, :width]
    elif positions.dtype == torch.bool:
        raise ValueError("source_positions needs (N,) integer positions, not a bool mask")
    else:
        read = _where(source_positions, N, S_source, "source_positions")
    if (read & source.key_padding_mask).any():
        raise ValueError("positions must read real tokens of the source sentences, not padding")
    if residuals is None:
        _, residuals = run_with_residuals(model, source)
    elif len(residuals) != len(residual_points(model)) or residuals[0].shape[:2] != source_shape:
        raise ValueError(
            f"residuals must be source's {len(residual_points(model))} tensors (N, S, E) with "
            f"(N, S) = ({N}, {S_source}), from run_with_residuals(model, source)"
        )
    return patch_residual(model, clean, depth, where, residuals[depth][read])


def _check_heads(model: nn.Module, heads: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    layers, H = len(residual_points(model)) - 1, model.config.nhead
    pairs = list(heads)
    valid = [isinstance(p, tuple) and len(p) == 2 and all(type(i) is int for i in p) for p in pairs]
    if not pairs or not all(valid):
        raise ValueError(f"heads must be (layer, head) pairs, e.g. [(1, 0)]; got {heads!r}")
    for layer, head in pairs:
        if not 0 <= layer < layers:
            raise ValueError(f"layer must be an integer from 0 to {layers - 1}; got {layer!r}")
        if not 0 <= head < H:
            raise ValueError(f"head must be an integer from 0 to H - 1 = {H - 1}; got {head!r}")
    return pairs


@contextmanager
def cut_edges(model: nn.Module, heads: Iterable[tuple[int, int]], edges: Tensor) -> Iterator[None]:
    """While the ``with`` block runs, the given heads cannot use the given query→key edges.

    A forward pre-hook on each chosen block's attention adds ``-inf`` at the cut edges to the
    attention mask the block passes in, so a cut edge's weight is 0 and the head spreads its
    weight over the keys its query may still see (a query left with none gets a zero output).
    Every run of ``model`` inside the block must be on sentences of the shape of ``edges``; use
    it around :func:`patch_from` (with the source's ``residuals``) to cut and patch at once.

    Args:
        model: a Detective.
        heads: (layer, head) pairs, ``0 <= layer < num_layers`` and ``0 <= head < H``.
        edges: (N, S, S) bool, ``True`` at ``[n, query, key]`` for each edge to remove.
    """
    pairs = _check_heads(model, heads)
    if not isinstance(edges, Tensor) or edges.dtype != torch.bool or edges.dim() != 3:
        got = f"{tuple(edges.shape)} {edges.dtype}" if isinstance(edges, Tensor) else type(edges)
        raise ValueError(f"edges must be a bool tensor of shape (N, S, S); got {got}")
    H = model.config.nhead

    def cut_in(heads_here: list[int]) -> Callable:
        def cut(module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
            N, S, _ = args[0].shape  # the query (N, S, E)
            if edges.shape != (N, S, S):
                raise ValueError(
                    f"edges must have shape (N, S, S) = ({N}, {S}, {S}) for the sentences the "
                    f"model runs on; got {tuple(edges.shape)}"
                )
            extra = torch.zeros(N, H, S, S, dtype=args[0].dtype, device=args[0].device)
            extra[:, heads_here] = extra[:, heads_here].masked_fill(
                edges.to(extra.device)[:, None], float("-inf")
            )  # (N, H, S, S)
            extra = extra.reshape(N * H, S, S)  # (N*H, S, S), heads fastest: the attn_mask layout
            mask = kwargs.get("attn_mask")
            if mask is not None and mask.dtype == torch.bool:  # True = not allowed
                extra = extra.masked_fill(mask.expand(N * H, S, S), float("-inf"))
            elif mask is not None:
                extra = extra + mask.expand(N * H, S, S)
            return args, {**kwargs, "attn_mask": extra}

        return cut

    blocks = residual_points(model)[1:]
    hooks = [
        blocks[layer].self_attn.register_forward_pre_hook(
            cut_in(sorted({h for l, h in pairs if l == layer})), with_kwargs=True
        )
        for layer in sorted({layer for layer, _ in pairs})
    ]
    try:
        yield
    finally:
        for hook in hooks:
            hook.remove()


def knock_out(
    model: nn.Module, batch: Batch, heads: Iterable[tuple[int, int]], edges: Tensor
) -> Tensor:
    """Run ``model`` with some query→key edges removed from the attention of ``heads``.

    The attention knockout of Geva et al. (2023), through :func:`cut_edges`.

    Args:
        model: a Detective.
        batch: the sentences.
        heads: the (layer, head) pairs to cut the edges in, e.g. ``[(1, 0)]``.
        edges: (N, S, S) bool, ``True`` at ``[n, query, key]`` for each edge to remove.

    Returns:
        The pointer's logits (N, S).
    """
    with cut_edges(model, heads, edges), _evaluating(model):
        logits, _ = model.run(batch)
    return logits


def binding_edges(examples: Sequence[Example], length: int, shift: int = 0) -> Tensor:
    """Edges from each person's name to every token of an action, as :func:`knock_out` takes.

    With ``shift=0`` each name is joined to its own action (the binding a pointer needs). With
    ``shift=1`` each name is joined to the next person's action instead (the last person to the
    first's): as many edges per sentence, the wrong partner — a control. The query is the name
    token the pointer points at; in Chinese that is the given name (芳 of 王芳), so the surname's
    reads of the action are not cut.

    Args:
        examples: sentences from :class:`~attnbook.tasks.coref.CorefTask` (with ``verbs``).
        length: S, the padded length of their batch.
        shift: whose action: person ``(i + shift) mod P`` for person ``i``.

    Returns:
        (N, S, S) bool, ``True`` at ``[n, name, action token]``.
    """
    edges = torch.zeros(len(examples), length, length, dtype=torch.bool)  # (N, S, S)
    for n, e in enumerate(examples):
        if not e.verbs or len(e.tokens) > length:
            raise ValueError(
                f"examples need their verbs recorded and at most length = {length} tokens; "
                f"sentence {n} has {len(e.tokens)} tokens and verbs {e.verbs!r}"
            )
        P = len(e.candidates)
        for i, name in enumerate(e.candidates):
            j = (i + shift) % P
            start = e.actions[j]
            edges[n, name, start : start + len(tokenize(e.verbs[j]))] = True
    return edges


class PatchEffect(NamedTuple):
    """How far a patch moved the answers of N clean sentences toward a counterfactual's."""

    follows: float  # fraction whose answer among the names is the counterfactual's answer
    leaves: float  # fraction whose answer among the names is not the clean answer
    logit_diff: float  # share of the mean logit difference moved: 0 none, 1 all the way


def patch_effect(
    patched: Tensor, clean_logits: Tensor, source_logits: Tensor, clean: Batch, source: Batch
) -> PatchEffect:
    """Measure a patch against the clean run and the counterfactual (source) run.

    Answers are taken among the names only (``clean.candidates``). The logit difference of a
    run is the score of the clean answer minus the score of the counterfactual's answer,
    averaged over sentences; the share moved is ``(clean - patched) / (clean - source)`` (the
    normalised logit difference of Zhang and Nanda, 2024). The names must sit at the same
    positions in both batches. The share is NaN when the two runs' differences are equal.

    Args:
        patched: (N, S) the pointer's logits from the patched clean run.
        clean_logits: (N, S) from the clean run.
        source_logits: (N, S_source) from the counterfactual run.
        clean: the clean sentences (their ``target`` and ``candidates``).
        source: the counterfactual sentences (their ``target``).
    """
    (N, S), S_source = clean.tokens.shape, source.tokens.shape[1]
    given = {"patched": (patched, S), "clean_logits": (clean_logits, S)}
    for name, (logits, width) in {**given, "source_logits": (source_logits, S_source)}.items():
        if not isinstance(logits, Tensor) or logits.shape != (N, width):
            shape = tuple(logits.shape) if isinstance(logits, Tensor) else type(logits).__name__
            raise ValueError(f"{name} must have shape (N, S) = ({N}, {width}); got {shape}")
    a, b = clean.target[:, None], source.target[:, None]  # (N, 1): the two answers

    def difference(logits: Tensor) -> float:
        return float((logits.gather(1, a) - logits.gather(1, b)).mean())

    answer = patched.masked_fill(~clean.candidates, float("-inf")).argmax(-1)  # (N,)
    before, after = difference(clean_logits), difference(source_logits)
    return PatchEffect(
        follows=float((answer == source.target).float().mean()),
        leaves=float((answer != clean.target).float().mean()),
        logit_diff=(before - difference(patched)) / (before - after) if before != after else nan,
    )
