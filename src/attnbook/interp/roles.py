"""What the heads of a pretrained encoder do: per-head statistics over padded batches, and
what switching each head off costs the model's own task, sentence similarity (chapter 17).

The measurements take the ``(weights, attention_mask)`` that
:class:`~attnbook.pretrained.minilm_l6.MiniLM` returns and ignore padding everywhere: only real query
rows are averaged, and padding keys (weight 0 anyway) are never counted as a target.

* :func:`head_statistics` — the mean weight each head puts on ``[CLS]``, on ``[SEP]``, on
  punctuation, on the previous and the next token, and its row entropy;
* :func:`candidate_choice`, :func:`hit_rate` — which of two candidate names each head's
  pronoun row weighs more, and how often that is the antecedent;
* :func:`single_head_cosines`, :func:`pruning_cosines`, :func:`separation` — cosine similarity
  of sentence pairs with heads switched off (``head_mask``), and how far paraphrases stay
  apart from non-paraphrases;
* :func:`bootstrap_interval`, :func:`spearman` — spread over sentences, rank correlation.

Shape legend: Y layers, N sentences, H heads per layer, L tokens (``[CLS]`` ... ``[SEP]``,
then padding), P sentence pairs, E hidden size.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from attnbook.interp.head_stats import head_entropy
from attnbook.tasks.probes import SimilarityPair

__all__ = [
    "stack_weights",
    "cls_keys",
    "sep_keys",
    "weight_on",
    "offset_weight",
    "row_entropy",
    "head_statistics",
    "candidate_choice",
    "hit_rate",
    "bootstrap_interval",
    "pair_batch",
    "sentence_embeddings",
    "pair_cosines",
    "separation",
    "single_head_cosines",
    "pruning_cosines",
    "spearman",
]


def stack_weights(weights: Sequence[Tensor] | Tensor) -> Tensor:
    """A list of Y per-layer (N, H, L, L) tensors as one (Y, N, H, L, L) tensor."""
    if isinstance(weights, Tensor):
        w = weights
    elif isinstance(weights, Sequence) and weights and all(isinstance(t, Tensor) for t in weights):
        w = torch.stack(list(weights))
    else:
        raise TypeError("weights must be a tensor or a non-empty list of (N, H, L, L) tensors")
    if w.dim() != 5 or w.size(-1) != w.size(-2):
        raise ValueError(f"weights must be Y layers of (N, H, L, L); got {tuple(w.shape)}")
    return w  # (Y, N, H, L, L)


def _real(weights: Tensor, attention_mask: Tensor) -> Tensor:
    """Check the mask against (Y, N, H, L, L) weights; (N, L) bool, True on real tokens."""
    _, N, _, L, _ = weights.shape
    if not isinstance(attention_mask, Tensor) or tuple(attention_mask.shape) != (N, L):
        shape = tuple(getattr(attention_mask, "shape", ()))
        raise ValueError(f"attention_mask must have shape (N, L) = {(N, L)}; got {shape}")
    return attention_mask.bool()


def _mean_over_real_queries(per_query: Tensor, queries: Tensor) -> Tensor:
    """per_query (Y, N, H, L), queries (N, L) bool -> (Y, H), the mean over chosen queries."""
    q = queries.to(per_query.dtype)[None, :, None, :]  # (1, N, 1, L)
    return (per_query * q).sum((1, 3)) / q.sum((1, 3)).clamp_min(1)  # (Y, H)


def cls_keys(attention_mask: Tensor) -> Tensor:
    """(N, L) bool, True at position 0 (``[CLS]``) of every sentence."""
    keys = torch.zeros_like(attention_mask, dtype=torch.bool)
    keys[:, 0] = True
    return keys


def sep_keys(attention_mask: Tensor) -> Tensor:
    """(N, L) bool, True at each sentence's last real token (``[SEP]``), wherever padding starts."""
    last = attention_mask.bool().sum(1) - 1  # (N,)
    return torch.nn.functional.one_hot(last, attention_mask.size(1)).bool()  # (N, L)


def weight_on(weights: Sequence[Tensor] | Tensor, attention_mask: Tensor, keys: Tensor) -> Tensor:
    """Each head's mean total weight on a set of keys, over all real queries of all sentences.

    Args:
        weights: Y layers of (N, H, L, L) attention weights (rows sum to 1 over real keys).
        attention_mask: (N, L), 1 on real tokens, 0 on padding.
        keys: (N, L) bool, the target keys (padding keys are never counted).

    Returns:
        (Y, H).
    """
    w = stack_weights(weights)
    real = _real(w, attention_mask)
    if tuple(keys.shape) != tuple(real.shape):
        raise ValueError(
            f"keys must have shape (N, L) = {tuple(real.shape)}; got {tuple(keys.shape)}"
        )
    on = (w * (keys.bool() & real).to(w.dtype)[None, :, None, None, :]).sum(-1)  # (Y, N, H, L)
    return _mean_over_real_queries(on, real)


def offset_weight(
    weights: Sequence[Tensor] | Tensor, attention_mask: Tensor, offset: int
) -> Tensor:
    """Each head's mean weight from query i to key i + offset (-1: previous token, +1: next).

    Averaged over the real queries whose key i + offset is real too (``[CLS]`` has no previous
    token, ``[SEP]`` no next one). Returns (Y, H).
    """
    w = stack_weights(weights)
    real = _real(w, attention_mask)
    L = real.size(1)
    if not isinstance(offset, int) or offset == 0 or abs(offset) >= L:
        raise ValueError(f"offset must be a non-zero int with |offset| < L = {L}; got {offset}")
    diagonal = torch.diagonal(w, offset=offset, dim1=-2, dim2=-1)  # (Y, N, H, L - |offset|)
    per_query = torch.zeros(w.shape[:-1], dtype=w.dtype, device=w.device)  # (Y, N, H, L)
    queries = torch.zeros_like(real)
    if offset > 0:
        per_query[..., : L - offset] = diagonal
        queries[:, : L - offset] = real[:, : L - offset] & real[:, offset:]
    else:
        per_query[..., -offset:] = diagonal
        queries[:, -offset:] = real[:, -offset:] & real[:, : L + offset]
    return _mean_over_real_queries(per_query, queries)


def row_entropy(weights: Sequence[Tensor] | Tensor, attention_mask: Tensor) -> Tensor:
    """Each head's row entropy in nats, averaged over real queries; (Y, H)."""
    w = stack_weights(weights)
    padding = ~_real(w, attention_mask)
    return head_entropy(w, padding)  # (Y, H)


def head_statistics(
    weights: Sequence[Tensor] | Tensor, attention_mask: Tensor, punctuation: Tensor
) -> dict[str, Tensor]:
    """The roles chapter 17 measures, each (Y, H).

    Args:
        weights: Y layers of (N, H, L, L).
        attention_mask: (N, L), 1 on real tokens.
        punctuation: (N, L) bool, True on punctuation tokens.

    Returns:
        ``{"[CLS]", "[SEP]", "punctuation", "previous", "next", "entropy"}`` -> (Y, H).
    """
    w = stack_weights(weights)
    return {
        "[CLS]": weight_on(w, attention_mask, cls_keys(attention_mask)),
        "[SEP]": weight_on(w, attention_mask, sep_keys(attention_mask)),
        "punctuation": weight_on(w, attention_mask, punctuation),
        "previous": offset_weight(w, attention_mask, -1),
        "next": offset_weight(w, attention_mask, 1),
        "entropy": row_entropy(w, attention_mask),
    }


def candidate_choice(
    weights: Sequence[Tensor] | Tensor, pronoun: Tensor, candidates: Tensor
) -> Tensor:
    """Which of two candidates each head's pronoun row weighs more: 0 (first) or 1 (second).

    Args:
        weights: Y layers of (N, H, L, L).
        pronoun: (N,) the pronoun's position.
        candidates: (N, 2) the two names' positions.

    Returns:
        (Y, N, H) int64; a tie counts as 0.
    """
    w = stack_weights(weights)
    N = w.size(1)
    if tuple(pronoun.shape) != (N,) or tuple(candidates.shape) != (N, 2):
        raise ValueError(
            f"pronoun must be (N,) and candidates (N, 2) with N = {N}; got "
            f"{tuple(pronoun.shape)} and {tuple(candidates.shape)}"
        )
    n = torch.arange(N, device=w.device)
    rows = w[:, n, :, pronoun]  # (N, Y, H, L): advanced indices first
    picked = rows.gather(
        -1, candidates[:, None, None, :].expand(*rows.shape[:3], 2)
    )  # (N, Y, H, 2)
    return (picked[..., 1] > picked[..., 0]).long().permute(1, 0, 2)  # (Y, N, H)


def hit_rate(choice: Tensor, target: Tensor) -> Tensor:
    """choice (Y, N, H) and target (N,) -> (Y, H), the share of sentences with choice == target."""
    if choice.dim() != 3 or tuple(target.shape) != (choice.size(1),):
        raise ValueError(
            f"choice must be (Y, N, H) and target (N,); got {tuple(choice.shape)}, {tuple(target.shape)}"
        )
    return (choice == target[None, :, None]).float().mean(1)


def bootstrap_interval(
    values: Tensor, n: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[Tensor, Tensor]:
    """A percentile bootstrap interval of the mean over the first dimension (sentences).

    Args:
        values: (N, ...) one value per sentence (or pair).
        n: resamples.
        seed: seed of the resampling.
        level: coverage, e.g. 0.95.

    Returns:
        ``(low, high)``, each of shape ``values.shape[1:]``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level}")
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(values.size(0), (n, values.size(0)), generator=g)  # (n, N)
    means = values.float()[idx].mean(1)  # (n, ...)
    tail = (1 - level) / 2
    q = torch.tensor([tail, 1 - tail], dtype=means.dtype)
    low, high = torch.quantile(means, q, dim=0)
    return low, high


# ----------------------------------------------------------------- sentence similarity


def pair_batch(model: nn.Module, pairs: Sequence[SimilarityPair]) -> tuple[Tensor, Tensor, Tensor]:
    """Tokenize pairs once: rows 0..P-1 are the first sentences, P..2P-1 the second ones.

    Returns:
        ``(input_ids, attention_mask, paraphrase)``: (2P, L), (2P, L), (P,) bool.
    """
    if not pairs or not all(isinstance(p, SimilarityPair) for p in pairs):
        raise TypeError("pairs must be a non-empty sequence of SimilarityPair")
    ids, mask = model.tokenize([p.first for p in pairs] + [p.second for p in pairs])
    return ids, mask, torch.tensor([p.paraphrase for p in pairs])


def _pool(hidden: Tensor, attention_mask: Tensor) -> Tensor:
    """Mean over real tokens, L2-normalised: (N, L, E) -> (N, E), as ``MiniLM.embed``."""
    real = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (N, L, 1)
    mean = (hidden * real).sum(1) / real.sum(1).clamp(min=1e-9)  # (N, E)
    return torch.nn.functional.normalize(mean, dim=-1)


@torch.no_grad()
def sentence_embeddings(
    model: nn.Module, input_ids: Tensor, attention_mask: Tensor, head_mask: Tensor | None = None
) -> Tensor:
    """``model.embed`` for ids already tokenized: (N, L) -> (N, E)."""
    hidden, _ = model(input_ids, attention_mask, head_mask=head_mask)  # (N, L, E)
    return _pool(hidden, attention_mask)


def pair_cosines(embeddings: Tensor) -> Tensor:
    """Cosine of row p with row P + p of L2-normalised (..., 2P, E) embeddings; (..., P)."""
    if embeddings.size(-2) % 2:
        raise ValueError(f"embeddings must have 2P rows; got {embeddings.size(-2)}")
    P = embeddings.size(-2) // 2
    return (embeddings[..., :P, :] * embeddings[..., P:, :]).sum(-1)


def separation(cosines: Tensor, paraphrase: Tensor) -> Tensor:
    """Mean cosine of paraphrase pairs minus that of non-paraphrase pairs.

    Args:
        cosines: (..., P).
        paraphrase: (P,) bool; both kinds must occur.

    Returns:
        (...): larger means paraphrases and non-paraphrases lie further apart.
    """
    paraphrase = paraphrase.bool()
    if paraphrase.shape != cosines.shape[-1:] or paraphrase.all() or not paraphrase.any():
        raise ValueError(
            f"paraphrase must be (P,) = {tuple(cosines.shape[-1:])} with both labels; "
            f"got {tuple(paraphrase.shape)} with {int(paraphrase.sum())} paraphrases"
        )
    return cosines[..., paraphrase].mean(-1) - cosines[..., ~paraphrase].mean(-1)


@torch.no_grad()
def single_head_cosines(model: nn.Module, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
    """Pair cosines with each head alone switched off (zero ablation, as ``head_mask``).

    Equal to ``pair_cosines(sentence_embeddings(model, ids, mask, head_mask))`` with one 0 in
    ``head_mask``, but the layers below the ablated head run once, not once per head: for
    layer l the input of block l is computed once and copied H times, each copy with one head
    of block l off.

    Args:
        model: a :class:`~attnbook.pretrained.bert.BertEncoder` (``embeddings``, ``encoder.layers``).
        input_ids, attention_mask: (2P, L), as :func:`pair_batch` returns them.

    Returns:
        (Y, H, P).
    """
    layers = model.encoder.layers
    H = model.config.num_heads
    N = input_ids.size(0)
    padding = attention_mask == 0  # (N, L)
    x = model.embeddings(input_ids, torch.zeros_like(input_ids))  # (N, L, E)
    result = []
    for i, block in enumerate(layers):
        copies = x.repeat(H, 1, 1)  # (H*N, L, E): copy h switches head h off
        head_mask = 1 - torch.eye(H, dtype=x.dtype).repeat_interleave(N, 0)  # (H*N, H)
        y = copies
        for j in range(i, len(layers)):
            y, _ = layers[j](
                y, None, padding.repeat(H, 1), False, False, head_mask if j == i else None
            )
        if model.encoder.norm is not None:
            y = model.encoder.norm(y)
        emb = _pool(y, attention_mask.repeat(H, 1)).view(H, N, -1)  # (H, N, E)
        result.append(pair_cosines(emb))  # (H, P)
        x, _ = block(x, None, padding, False, False, None)  # the intact input of block i + 1
    return torch.stack(result)  # (Y, H, P)


@torch.no_grad()
def pruning_cosines(
    model: nn.Module,
    input_ids: Tensor,
    attention_mask: Tensor,
    order: Sequence[tuple[int, int]],
    counts: Sequence[int],
) -> Tensor:
    """Pair cosines with the first k heads of ``order`` switched off, for each k in ``counts``.

    Args:
        model: the encoder; input_ids, attention_mask: (2P, L) from :func:`pair_batch`.
        order: (layer, head) pairs, the order of removal.
        counts: how many heads of ``order`` are off at each point, e.g. ``range(0, 73, 6)``.

    Returns:
        (len(counts), P).
    """
    Y, H = len(model.encoder.layers), model.config.num_heads
    if len(set(order)) != len(order) or not all(0 <= l < Y and 0 <= h < H for l, h in order):
        raise ValueError(f"order must list distinct (layer, head) pairs within ({Y}, {H})")
    if not all(0 <= k <= len(order) for k in counts):
        raise ValueError(f"counts must lie in [0, {len(order)}]; got {list(counts)}")
    curve = []
    for k in counts:
        head_mask = torch.ones(Y, H)
        for l, h in order[:k]:
            head_mask[l, h] = 0.0
        curve.append(pair_cosines(sentence_embeddings(model, input_ids, attention_mask, head_mask)))
    return torch.stack(curve)  # (K, P)


def _ranks(x: Tensor) -> Tensor:
    """Ranks 1..n, ties given their average rank."""
    x = x.flatten().double()
    order = x.argsort()
    ranks = torch.empty_like(x)
    ranks[order] = torch.arange(1, x.numel() + 1, dtype=x.dtype)
    for value in x.unique():
        tied = x == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(a: Tensor, b: Tensor) -> float:
    """Spearman's rank correlation of two equally sized tensors (flattened; ties averaged)."""
    if a.numel() != b.numel() or a.numel() < 2:
        raise ValueError(
            f"a and b need the same number (>= 2) of values; got {a.numel()}, {b.numel()}"
        )
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / (ra.norm() * rb.norm()))
