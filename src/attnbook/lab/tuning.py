"""Losses that tune attention, and the measurements that say whether they did.

Chapter 18 tests the usual tuning advice on the lab model. Each piece of advice is a term added
to the task's loss, written here as a pure function of logits or attention weights:

* :func:`distillation_loss` — learn from a teacher's softened outputs (Hinton et al. 2015):
  ``alpha · T² · KL(teacher_T ‖ student_T) + (1 - alpha) · cross-entropy``;
* :func:`attention_transfer_loss` — make chosen student heads reproduce chosen teacher heads'
  maps (as TinyBERT, Jiao et al. 2020, and MiniLM, Wang et al. 2020, do with real models);
* :func:`head_diversity_penalty` — the mean (cosine) similarity between the heads of a layer,
  to push them apart;
* :func:`head_supervision_loss` — the cross-entropy between one head's rows and a target map
  (e.g. :func:`previous_token_map`), to tell a head what to look at.

And two measurements: :func:`head_similarity` (how alike two sets of heads are, row by row) and
:func:`head_output_share` (how much of a layer's attention output each head carries).

Shape legend: N batch, H heads, L queries, S keys, C classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnbook.lab.lab_model import IGNORE

__all__ = [
    "attention_transfer_loss",
    "distillation_loss",
    "head_diversity_penalty",
    "head_output_share",
    "head_similarity",
    "head_supervision_loss",
    "previous_token_map",
]


def _check_weights(weights: Tensor, name: str) -> None:
    if not isinstance(weights, Tensor):
        raise TypeError(f"{name} must be a tensor (N, H, L, S); got {type(weights).__name__}")
    if weights.dim() != 4:
        raise ValueError(f"{name} must be (N, H, L, S); got {tuple(weights.shape)}")


def distillation_loss(
    student_logits: Tensor,
    teacher_logits: Tensor,
    targets: Tensor,
    temperature: float = 2.0,
    alpha: float = 0.5,
    ignore_index: int = IGNORE,
) -> Tensor:
    """Knowledge distillation with soft targets (Hinton et al. 2015).

    ``alpha · T² · KL(softmax(teacher/T) ‖ softmax(student/T)) + (1 - alpha) · CE(student,
    targets)``, both averaged over the positions whose target is not ``ignore_index``. The KL
    runs from the teacher's distribution to the student's (the teacher is the reference; the
    student is pulled towards it). ``T²`` keeps the soft term's gradients the same size as the
    hard term's when ``T`` changes: softening by ``T`` shrinks them by ``1/T²``.

    Args:
        student_logits: (..., C).
        teacher_logits: (..., C); treated as constants (detached).
        targets: (...) class indices, ``ignore_index`` where not scored.
        temperature: T > 0; 1 leaves the distributions as they are.
        alpha: weight of the soft term, in [0, 1]; 0 is plain cross-entropy.

    Returns:
        A scalar.
    """
    if student_logits.shape != teacher_logits.shape or student_logits.dim() < 1:
        raise ValueError(
            f"student_logits and teacher_logits must be the same (..., C); got "
            f"{tuple(student_logits.shape)} and {tuple(teacher_logits.shape)}"
        )
    if targets.shape != student_logits.shape[:-1]:
        raise ValueError(
            f"targets must be {tuple(student_logits.shape[:-1])} (the logits without C); "
            f"got {tuple(targets.shape)}"
        )
    if temperature <= 0 or not 0.0 <= alpha <= 1.0:
        raise ValueError(f"need temperature > 0 and alpha in [0, 1]; got {temperature}, {alpha}")
    C = student_logits.size(-1)
    scored = targets.reshape(-1) != ignore_index  # (P,)
    if not scored.any():
        raise ValueError("targets has no scored position (all are ignore_index)")
    student = student_logits.reshape(-1, C)[scored]  # (P', C)
    teacher = teacher_logits.detach().reshape(-1, C)[scored]  # (P', C)
    log_s = F.log_softmax(student / temperature, dim=-1)
    log_t = F.log_softmax(teacher / temperature, dim=-1)
    soft = (log_t.exp() * (log_t - log_s)).sum(-1).mean() * temperature**2
    hard = F.cross_entropy(student, targets.reshape(-1)[scored])
    return alpha * soft + (1.0 - alpha) * hard


def attention_transfer_loss(
    student_weights: Sequence[Tensor],
    teacher_weights: Sequence[Tensor],
    pairs: Sequence[tuple[tuple[int, int], tuple[int, int]]],
    kind: str = "kl",
) -> Tensor:
    """How far chosen student heads are from chosen teacher heads, row by row.

    For each pair ``((student_layer, student_head), (teacher_layer, teacher_head))`` it compares
    the two heads' (N, L, S) maps: ``"kl"`` is the mean over rows of ``KL(teacher row ‖ student
    row)`` (MiniLM's choice), ``"mse"`` the mean squared difference, as TinyBERT does — here on the weights,
    where TinyBERT fits the unnormalised scores.
    Rows where the teacher has no weight (no allowed key) are left out. The teacher's weights
    are detached. The result is the mean over the pairs.

    Args:
        student_weights: one (N, H_s, L, S) tensor per student layer.
        teacher_weights: one (N, H_t, L, S) tensor per teacher layer.
        pairs: at least one pair of (layer, head) indices.
        kind: ``"kl"`` or ``"mse"``.

    Returns:
        A scalar.
    """
    if kind not in ("kl", "mse"):
        raise ValueError(f'kind must be "kl" or "mse"; got {kind!r}')
    if not pairs:
        raise ValueError(
            "pairs must name at least one ((student layer, head), (teacher layer, head))"
        )
    losses = []
    for (sl, sh), (tl, th) in pairs:
        if not (0 <= sl < len(student_weights) and 0 <= tl < len(teacher_weights)):
            raise ValueError(
                f"pair {((sl, sh), (tl, th))} names a layer outside the student's "
                f"{len(student_weights)} or the teacher's {len(teacher_weights)}"
            )
        s, t = student_weights[sl], teacher_weights[tl]
        _check_weights(s, "student_weights[layer]")
        _check_weights(t, "teacher_weights[layer]")
        if s.shape[0] != t.shape[0] or s.shape[2:] != t.shape[2:]:
            raise ValueError(
                f"student and teacher maps must share N, L, S; got {tuple(s.shape)} "
                f"and {tuple(t.shape)}"
            )
        if not (0 <= sh < s.shape[1] and 0 <= th < t.shape[1]):
            raise ValueError(
                f"pair {((sl, sh), (tl, th))} names a head outside the student's {s.shape[1]} "
                f"or the teacher's {t.shape[1]}"
            )
        s_map, t_map = s[:, sh], t[:, th].detach()  # (N, L, S) each
        rows = t_map.sum(-1) > 0  # (N, L)
        if kind == "kl":
            per_row = (t_map * (t_map.clamp_min(1e-12).log() - s_map.clamp_min(1e-12).log())).sum(
                -1
            )
        else:
            per_row = (s_map - t_map).pow(2).mean(-1)
        losses.append(per_row[rows].mean())
    return torch.stack(losses).mean()


def head_similarity(weights_a: Tensor, weights_b: Tensor | None = None) -> Tensor:
    """Mean cosine similarity between every head of ``a`` and every head of ``b``, row by row.

    Rows are compared as vectors over the keys and the cosine is averaged over the examples and
    the queries where both rows have weight. Weights are never negative, so the result is in
    [0, 1]: 1 for heads that look at the same keys in the same proportions, 0 for heads that
    never share a key.

    Args:
        weights_a: (N, H_a, L, S).
        weights_b: (N, H_b, L, S); default ``weights_a`` (the heads of one layer among themselves).

    Returns:
        (H_a, H_b).
    """
    _check_weights(weights_a, "weights_a")
    b = weights_a if weights_b is None else weights_b
    _check_weights(b, "weights_b")
    if b.shape[0] != weights_a.shape[0] or b.shape[2:] != weights_a.shape[2:]:
        raise ValueError(
            f"weights_a and weights_b must share N, L, S; got {tuple(weights_a.shape)} "
            f"and {tuple(b.shape)}"
        )
    a_unit = F.normalize(weights_a, dim=-1)  # (N, H_a, L, S), zero rows stay zero
    b_unit = F.normalize(b, dim=-1)  # (N, H_b, L, S)
    cos = torch.einsum("nals,nbls->nabl", a_unit, b_unit)  # (N, H_a, H_b, L)
    both = (weights_a.sum(-1) > 0)[:, :, None, :] & (b.sum(-1) > 0)[:, None, :, :]  # same shape
    both = both.to(cos.dtype)
    return (cos * both).sum((0, 3)) / both.sum((0, 3)).clamp_min(1.0)


def head_diversity_penalty(weights: Tensor) -> Tensor:
    """Mean :func:`head_similarity` over the pairs of different heads of one layer.

    0 when no two heads share a key, 1 when all heads are the same. Adding ``β ·`` this to the
    loss pushes the heads apart: a cosine variant of the disagreement penalty of Li et al. (2018),
    who compare attention maps by element-wise products.

    Args:
        weights: (N, H, L, S), H >= 2.

    Returns:
        A scalar in [0, 1].
    """
    _check_weights(weights, "weights")
    H = weights.shape[1]
    if H < 2:
        raise ValueError(
            f"a diversity penalty needs at least 2 heads; got weights {tuple(weights.shape)}"
        )
    similarity = head_similarity(weights)  # (H, H)
    off_diagonal = ~torch.eye(H, dtype=torch.bool, device=weights.device)
    return similarity[off_diagonal].mean()


def previous_token_map(length: int, device=None) -> Tensor:
    """(L, L) target map: row i puts all its weight on key i - 1; row 0 is empty (all 0)."""
    if length < 2:
        raise ValueError(f"length must be at least 2; got {length}")
    return torch.eye(length, device=device).roll(-1, dims=1).tril(-1)  # (L, L)


def head_supervision_loss(weights: Tensor, target_map: Tensor, head: int) -> Tensor:
    """Cross-entropy of one head's rows against a target map, averaged over the target's rows.

    ``-Σ_j target[i, j] · log weights[n, head, i, j]``, averaged over the examples and the rows
    ``i`` where the target has weight (an empty target row does not supervise that query). It
    is 0 when the head's rows equal one-hot target rows.

    Args:
        weights: (N, H, L, S).
        target_map: (L, S) for every example, or (N, L, S); rows sum to 1 or to 0.
        head: which head to supervise.

    Returns:
        A scalar.
    """
    _check_weights(weights, "weights")
    N, H, L, S = weights.shape
    if target_map.shape not in ((L, S), (N, L, S)):
        raise ValueError(
            f"target_map must be ({L}, {S}) or ({N}, {L}, {S}) like weights {tuple(weights.shape)}; "
            f"got {tuple(target_map.shape)}"
        )
    if not 0 <= head < H:
        raise ValueError(f"head must be in [0, {H}); got {head}")
    target = target_map.to(weights.dtype).expand(N, L, S)  # (N, L, S)
    rows = target.sum(-1) > 0  # (N, L)
    if not rows.any():
        raise ValueError("target_map has no row with weight")
    per_row = -(target * weights[:, head].clamp_min(1e-12).log()).sum(-1)  # (N, L)
    return per_row[rows].mean()


@torch.no_grad()
def head_output_share(model: nn.Module, tokens: Tensor) -> Tensor:
    """Each head's share of its layer's attention output, (layers, H), rows summing to 1.

    A forward pre-hook on every block's ``attn.out_proj`` (a
    :class:`~attnbook.lab.lab_model.LabModel`) sees the heads' outputs side by side, (N, L, H·D);
    head h's contribution is its slice times its columns of ``out_proj``. The share is the mean
    norm of that contribution over positions, divided by the sum over the layer's heads — how
    much of what attention writes comes from each head.

    Args:
        model: a LabModel (anything with ``blocks[i].attn.out_proj`` and ``num_heads``).
        tokens: (N, L) a batch to measure on.
    """
    norms: list[Tensor] = []

    def hook(module: nn.Linear, inputs: tuple[Tensor, ...], H: int) -> None:
        x = inputs[0]  # (N, L, H*D)
        D = x.size(-1) // H
        heads = x.unflatten(-1, (H, D))  # (N, L, H, D)
        w = module.weight.unflatten(1, (H, D))  # (E, H, D)
        out = torch.einsum("nlhd,ehd->nlhe", heads, w)  # (N, L, H, E)
        norms.append(out.norm(dim=-1).mean((0, 1)))  # (H,)

    handles = [
        block.attn.out_proj.register_forward_pre_hook(
            lambda m, i, H=block.attn.num_heads: hook(m, i, H)
        )
        for block in model.blocks
    ]
    was_training = model.training
    try:
        model.eval()
        model(tokens)
    finally:
        model.train(was_training)
        for handle in handles:
            handle.remove()
    stacked = torch.stack(norms)  # (layers, H)
    return stacked / stacked.sum(-1, keepdim=True)
