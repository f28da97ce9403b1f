"""An extractive summariser whose pointer *is* an attention distribution.

:class:`SentencePointer` reads a paragraph (see :mod:`attnbook.tasks.summaries`) in three steps:

1. token embeddings plus a learned embedding of each token's position **inside its sentence**
   (no paragraph positions, so the model cannot know which sentence comes first), then an
   :class:`~attnbook.transformer.Encoder` over the whole paragraph — self-attention lets a word
   see the other sentences;
2. one vector per sentence: the largest value of each feature over its tokens (max pooling);
3. a learned **summary query** attends over the sentence vectors with one
   :class:`~attnbook.mha.MultiHeadAttention` head. Its attention weights are the model's
   prediction: a distribution over sentences, trained with the negative log-likelihood of the key
   sentence. The summary is the sentence with the largest weight.

With ``num_layers=0`` there is no encoder: each sentence vector sees only its own words, the
no-context control of the chapter.

Shape legend: N paragraphs, T tokens, M sentences, E ``d_model``, H heads, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnbook.mha import MultiHeadAttention
from attnbook.tasks.summaries import SummaryBatch
from attnbook.transformer import Encoder

__all__ = [
    "SentencePointerConfig",
    "SentencePointer",
    "sentence_max",
    "pointer_loss",
    "repeat_share",
]


@dataclass
class SentencePointerConfig:
    """Sizes of a :class:`SentencePointer`."""

    vocab_size: int = 80  # V (id 0 is padding)
    max_sentence_len: int = 16  # learned positions inside a sentence
    d_model: int = 64  # E
    nhead: int = 4  # H of the encoder
    num_layers: int = 1  # encoder blocks; 0 = no context across sentences
    dim_feedforward: int = 128  # hidden size of the encoder's feed-forward networks


def sentence_max(hidden: Tensor, sentence_ids: Tensor, num_sentences: int) -> Tensor:
    """Each sentence's vector: the largest value of every feature over its tokens (max pooling).

    Max rather than mean pooling: one word that matters (a project mentioned elsewhere) is not
    averaged away by the sentence's other words, and training takes fewer steps.

    Args:
        hidden: (N, T, E) token vectors.
        sentence_ids: (N, T) sentence index of each token, -1 for padding.
        num_sentences: M, the number of sentence slots to return.

    Returns:
        (N, M, E); a sentence with no tokens gets zeros.
    """
    if hidden.dim() != 3 or sentence_ids.shape != hidden.shape[:2]:
        raise ValueError(
            f"hidden must be (N, T, E) and sentence_ids (N, T); got {tuple(hidden.shape)} "
            f"and {tuple(sentence_ids.shape)}"
        )
    N, _, E = hidden.shape
    index = (sentence_ids + 1).unsqueeze(-1).expand(-1, -1, E)  # (N, T, E); slot 0 = padding
    empty = hidden.new_full((N, num_sentences + 1, E), float("-inf"))  # (N, M + 1, E)
    pooled = empty.scatter_reduce(1, index, hidden, "amax")[:, 1:]  # (N, M, E)
    return pooled.masked_fill(pooled == float("-inf"), 0.0)  # (N, M, E)


class SentencePointer(nn.Module):
    """Encoder over the paragraph, max-pooled sentences, and a summary query that points."""

    def __init__(self, config: SentencePointerConfig) -> None:
        super().__init__()
        self.config = config
        E = config.d_model
        self.token_embedding = nn.Embedding(config.vocab_size, E, padding_idx=0)
        self.position_embedding = nn.Embedding(config.max_sentence_len, E)
        self.encoder = (
            Encoder(
                config.num_layers,
                d_model=E,
                nhead=config.nhead,
                dim_feedforward=config.dim_feedforward,
                dropout=0.0,
            )
            if config.num_layers > 0
            else None
        )
        self.summary_query = nn.Parameter(torch.randn(1, 1, E) * E**-0.5)  # (1, 1, E)
        self.pointer = MultiHeadAttention(E, 1)

    def forward(self, batch: SummaryBatch) -> tuple[Tensor, list[Tensor] | None]:
        """Point at the summary sentence of every paragraph.

        Returns:
            ``(weights, encoder_weights)``: weights (N, M), the summary query's attention over
            the sentences (zero on padding sentences; each row sums to 1); encoder_weights a
            list of (N, H, T, T), one per encoder layer, or ``None`` without an encoder.
        """
        tokens, positions = batch.tokens, batch.positions
        if tokens.dim() != 2 or positions.shape != tokens.shape:
            raise ValueError(
                f"tokens and positions must both be (N, T); got {tuple(tokens.shape)} and "
                f"{tuple(positions.shape)}"
            )
        if int(positions.max()) >= self.config.max_sentence_len:
            raise ValueError(
                f"a sentence is longer than max_sentence_len = {self.config.max_sentence_len}"
            )
        x = self.token_embedding(tokens) + self.position_embedding(positions)  # (N, T, E)
        encoder_weights = None
        if self.encoder is not None:
            x, encoder_weights = self.encoder(
                x, src_key_padding_mask=batch.sentence_ids < 0, need_weights=True
            )  # (N, T, E), [(N, H, T, T)]
        M = batch.sentence_mask.size(1)
        sentences = sentence_max(x, batch.sentence_ids, M)  # (N, M, E)
        query = self.summary_query.expand(tokens.size(0), 1, -1)  # (N, 1, E)
        _, weights = self.pointer(
            query, sentences, sentences, key_padding_mask=batch.sentence_mask
        )  # (N, 1, M)
        return weights.squeeze(1), encoder_weights  # (N, M)


def pointer_loss(weights: Tensor, key: Tensor) -> Tensor:
    """Negative log-likelihood of the key sentence under the pointer's weights (N, M); key (N,)."""
    if weights.dim() != 2 or key.shape != weights.shape[:1]:
        raise ValueError(
            f"weights must be (N, M) and key (N,); got {tuple(weights.shape)} and {tuple(key.shape)}"
        )
    picked = weights.gather(1, key.unsqueeze(1)).squeeze(1)  # (N,)
    return -picked.clamp_min(1e-9).log().mean()


def repeat_share(weights: Tensor, batch: SummaryBatch, query: Tensor) -> tuple[Tensor, Tensor]:
    """How much attention a token pays to the same word in the *other* sentences.

    Args:
        weights: (N, H, T, T) one encoder layer's attention weights.
        batch: the paragraphs the weights came from.
        query: (N,) the position of the attending token in each paragraph.

    Returns:
        ``(share, uniform)``: share (N, H), the weight each head puts on tokens equal to the
        query's token in other sentences; uniform (N,), the share a head that spreads its weight
        evenly over the paragraph's tokens would put there.
    """
    N, H, T, _ = weights.shape
    if batch.tokens.shape != (N, T) or query.shape != (N,):
        raise ValueError(
            f"weights (N, H, T, T) = {tuple(weights.shape)} needs tokens (N, T) and query (N,); "
            f"got {tuple(batch.tokens.shape)} and {tuple(query.shape)}"
        )
    rows = torch.arange(N, device=query.device)  # (N,)
    word = batch.tokens[rows, query]  # (N,)
    sentence = batch.sentence_ids[rows, query]  # (N,)
    same = (batch.tokens == word[:, None]) & (batch.sentence_ids != sentence[:, None])  # (N, T)
    share = (weights[rows, :, query] * same[:, None]).sum(-1)  # (N, H)
    length = (batch.sentence_ids >= 0).sum(-1)  # (N,)
    return share, same.sum(-1) / length
