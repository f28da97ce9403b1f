"""A reader that answers questions about stories (:mod:`attnbook.tasks.stories`), and a baseline.

:class:`Reader` encodes the story with :class:`~attnbook.transformer.Encoder` blocks in which a
token attends only to the tokens of its own sentence (a block-diagonal mask): each token learns
what its sentence says ("the *garden* that mary went to"), and nothing crosses from sentence to
sentence inside the encoder. Each token's embedding adds its word position in the sentence and
its sentence's *recency* (0 for the last sentence), the temporal encoding of end-to-end memory
networks (Sukhbaatar et al., 2015). The question, as the mean of its word embeddings, is one
query vector; :class:`~attnbook.transformer.Decoder` blocks let it cross-attend over the story
tokens, once per block (``hops``): all information from the story reaches the answer through
those cross-attention weights, which is what makes them worth measuring. The answer is a
*pointer* (Vinyals et al., 2015): after the hops, one more attention of the query over the story
tokens, restricted to the place words, and the probability of a place is the weight on the tokens
that spell it.

:class:`GRUReader` has no attention: a GRU starts from the question and reads the story one
sentence vector at a time; its final state answers.

Shape legend: N stories, S story tokens, Q question tokens, E ``d_model``, H ``nhead``,
P places, V vocabulary size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence

from attnbook.tasks.stories import PLACES, StoryBatch, vocabulary
from attnbook.transformer import Decoder, Encoder

__all__ = [
    "ReaderConfig",
    "Reader",
    "GRUReader",
    "sentence_grid",
    "question_vector",
    "reader_loss",
    "accuracy_by_kind",
    "hop_weights",
]


@dataclass
class ReaderConfig:
    """Sizes of a :class:`Reader`."""

    vocab_size: int  # V, including the padding token (id 0)
    d_model: int = 32  # E
    nhead: int = 2  # H heads in every attention
    encoder_layers: int = 1  # sentence-local encoder blocks
    hops: int = 2  # decoder blocks: how many times the question reads the story
    dim_feedforward: int = 64  # hidden size of each block's feed-forward network
    max_sentences: int = 16  # the longest story accepted, in sentences
    max_words: int = 8  # the longest sentence accepted, in tokens
    # the vocabulary ids of PLACES, in order: the pointer's answer p is the weight on tokens places[p]
    places: tuple[int, ...] = field(default_factory=lambda: tuple(vocabulary().encode(PLACES)))


def question_vector(embedding: nn.Embedding, question: Tensor, padding: Tensor) -> Tensor:
    """The mean embedding of each question's real tokens: (N, Q) ids -> (N, E)."""
    real = (~padding).to(embedding.weight.dtype)  # (N, Q)
    summed = (embedding(question) * real[..., None]).sum(1)  # (N, E)
    return summed / real.sum(1, keepdim=True).clamp_min(1)


class Reader(nn.Module):
    """Sentence-local encoder, then the question cross-attends over the story ``hops`` times.

    ``forward`` returns ``(logits, weights)``: logits (N, P) over the places,
    :data:`~attnbook.tasks.stories.PLACES` — the log of the pointer's weight on each place's
    tokens; weights, with ``need_weights``, a list with one (N, H, S) tensor per hop — the
    question's cross-attention over the story tokens — and, last, the pointer's (N, 1, S).
    """

    def __init__(self, config: ReaderConfig) -> None:
        super().__init__()
        self.config = config
        E = config.d_model
        self.token = nn.Embedding(config.vocab_size, E, padding_idx=0)
        self.word = nn.Embedding(config.max_words, E)
        self.recency = nn.Embedding(config.max_sentences, E)
        block = dict(d_model=E, nhead=config.nhead, dim_feedforward=config.dim_feedforward)
        self.encoder = Encoder(config.encoder_layers, dropout=0.0, norm_first=True, **block)
        self.hops = Decoder(config.hops, dropout=0.0, norm_first=True, **block)
        self.point_query = nn.Linear(E, E)
        self.point_key = nn.Linear(E, E)
        self.register_buffer("places", torch.tensor(config.places), persistent=False)  # (P,)

    def forward(
        self,
        tokens: Tensor,
        sentence: Tensor,
        recency: Tensor,
        word: Tensor,
        question: Tensor,
        question_padding_mask: Tensor,
        *,
        need_weights: bool = False,
    ) -> tuple[Tensor, list[Tensor] | None]:
        """Answer each question; arguments as the fields of :class:`~attnbook.tasks.stories.StoryBatch`.

        Args:
            tokens, sentence, recency, word: (N, S) story token ids, sentence index, sentences
                from the end, position in the sentence (the last three -1 on padding).
            question, question_padding_mask: (N, Q) ids and True on padding.
            need_weights: also return the question's cross-attention in every hop.
        """
        if tokens.dim() != 2 or not tokens.shape == sentence.shape == recency.shape == word.shape:
            raise ValueError(
                "tokens, sentence, recency and word must all be (N, S); got "
                f"{[tuple(t.shape) for t in (tokens, sentence, recency, word)]}"
            )
        too_long = int(recency.max()) >= self.config.max_sentences
        if too_long or int(word.max()) >= self.config.max_words:
            raise ValueError(
                f"stories may have at most {self.config.max_sentences} sentences of "
                f"{self.config.max_words} tokens; got {int(recency.max()) + 1} sentences, "
                f"a sentence of {int(word.max()) + 1} tokens"
            )
        padding = sentence < 0  # (N, S)
        memory = self.encode(tokens, sentence, recency, word)  # (N, S, E)
        q = question_vector(self.token, question, question_padding_mask)[:, None]  # (N, 1, E)
        q, weights = self.hops(
            q, memory, memory_key_padding_mask=padding, need_weights=need_weights
        )
        logits, pointer = self.point(q[:, 0], memory, tokens)  # (N, P), (N, S)
        if not need_weights:
            return logits, None
        hops = [w.cross_attn[:, :, 0] for w in weights]  # hops x (N, H, S)
        return logits, [*hops, pointer[:, None]]

    def point(self, query: Tensor, memory: Tensor, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """The answer as a pointer: attention of ``query`` (N, E) over the place words only.

        Returns the logits (N, P), the log of the weight on each place's tokens (about -1e4 for
        a place the story does not name), and the pointer's weights (N, S).
        """
        scores = self.point_key(memory) @ self.point_query(query)[:, :, None]  # (N, S, 1)
        scores = scores / math.sqrt(self.config.d_model)
        spells = tokens[:, :, None] == self.places  # (N, S, P): token s is place p
        per_place = scores.masked_fill(~spells, -1e4)  # (N, S, P)
        logits = per_place.logsumexp(1) - per_place.logsumexp((1, 2))[:, None]  # (N, P)
        weights = scores[..., 0].masked_fill(~spells.any(-1), float("-inf")).softmax(-1)
        return logits, weights.nan_to_num(0.0)  # (N, S); zeros for a story with no place

    def encode(self, tokens: Tensor, sentence: Tensor, recency: Tensor, word: Tensor) -> Tensor:
        """Every story token's encoding, (N, S, E), computed from its own sentence only.

        The sentences are laid out one per row, (N*T, W), so that the encoder attends within a
        sentence — the same as a block-diagonal mask over the flat story, at a fraction of the
        cost. Padding positions get zeros (the hops never read them).
        """
        N, S = tokens.shape
        E = self.config.d_model
        real = sentence >= 0  # (N, S)
        x = self.token(tokens) + self.word(word.clamp_min(0)) + self.recency(recency.clamp_min(0))
        T, W = int(sentence.max()) + 1, int(word.max()) + 1
        rows = torch.arange(N, device=tokens.device)[:, None].expand(N, S)[real]  # (real tokens,)
        slot = (rows * T + sentence[real], word[real])  # row (story, sentence), column word
        grid = x.new_zeros(N * T, W, E)
        grid[slot] = x[real]  # (N*T, W, E): one row per sentence
        empty = torch.ones(N * T, W, dtype=torch.bool, device=tokens.device)
        empty[slot] = False  # (N*T, W), True on padding
        encoded, _ = self.encoder(grid, src_key_padding_mask=empty)  # (N*T, W, E)
        memory = x.new_zeros(N, S, E)
        memory[real] = encoded[slot]
        return memory  # (N, S, E)

    def run(self, batch: StoryBatch, **kwargs) -> tuple[Tensor, list[Tensor] | None]:
        """``forward`` on a :class:`~attnbook.tasks.stories.StoryBatch`."""
        return self(
            batch.tokens, batch.sentence, batch.recency, batch.word,
            batch.question, batch.question_padding_mask, **kwargs,
        )  # fmt: skip


def sentence_grid(tokens: Tensor, sentence: Tensor, word: Tensor, max_words: int) -> Tensor:
    """The flat story (N, S) as one row per sentence: (N, T, W) token ids, 0 = padding.

    T is the longest story's number of sentences, W = ``max_words``.
    """
    N = tokens.size(0)
    T = int(sentence.max()) + 1
    grid = tokens.new_zeros(N, T, max_words)
    real = sentence >= 0  # (N, S)
    rows = torch.arange(N, device=tokens.device)[:, None].expand_as(tokens)  # (N, S)
    grid[rows[real], sentence[real], word[real]] = tokens[real]
    return grid


class GRUReader(nn.Module):
    """No attention: a GRU, started from the question, reads the story one sentence at a time.

    Each sentence becomes one vector, a linear map of its word embeddings laid side by side
    (so "mary went to the garden" and "garden went to the mary" differ); the GRU reads these
    vectors in order, from a state made from the question, and its final state answers. Nothing
    lets the question look back at a sentence: what the GRU did not keep is lost.

    Args:
        vocab_size: V.
        d_model: E, the word embedding size.
        hidden_size: K, the GRU state size (also the sentence vector size).
        max_words: W, the longest sentence accepted.
    """

    def __init__(
        self, vocab_size: int, d_model: int = 32, hidden_size: int = 64, max_words: int = 8
    ) -> None:
        super().__init__()
        self.max_words = max_words
        self.token = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.sentence = nn.Linear(max_words * d_model, hidden_size)
        self.start = nn.Linear(d_model, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.out = nn.Sequential(
            nn.Linear(hidden_size + d_model, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, len(PLACES)),
        )

    def forward(
        self,
        tokens: Tensor,
        sentence: Tensor,
        word: Tensor,
        question: Tensor,
        question_padding_mask: Tensor,
    ) -> tuple[Tensor, None]:
        """Logits (N, P) and ``None`` (no weights); arguments as in :meth:`Reader.forward`."""
        if int(word.max()) >= self.max_words:
            raise ValueError(
                f"sentences may have at most {self.max_words} tokens; got {int(word.max()) + 1}"
            )
        q = question_vector(self.token, question, question_padding_mask)  # (N, E)
        grid = sentence_grid(tokens, sentence, word, self.max_words)  # (N, T, W)
        vectors = self.sentence(self.token(grid).flatten(2))  # (N, T, K)
        lengths = (sentence.max(1).values + 1).cpu()  # (N,) sentences per story
        packed = pack_padded_sequence(vectors, lengths, batch_first=True, enforce_sorted=False)
        _, final = self.gru(packed, torch.tanh(self.start(q))[None])  # final (1, N, K)
        return self.out(torch.cat([final[0], q], dim=-1)), None

    def run(self, batch: StoryBatch, **kwargs) -> tuple[Tensor, None]:
        """``forward`` on a :class:`~attnbook.tasks.stories.StoryBatch`."""
        return self(
            batch.tokens, batch.sentence, batch.word, batch.question, batch.question_padding_mask
        )


def reader_loss(model: nn.Module, batch: StoryBatch) -> Tensor:
    """Cross-entropy of the answer, for :func:`attnbook.train.fit`."""
    return F.cross_entropy(model.run(batch)[0], batch.answer)


@torch.no_grad()
def accuracy_by_kind(model: nn.Module, batch: StoryBatch) -> dict[str, float]:
    """Accuracy on one-fact questions, on two-fact questions, and on all of them."""
    was_training = model.training
    model.eval()
    right = model.run(batch)[0].argmax(-1) == batch.answer  # (N,)
    model.train(was_training)
    two = batch.two_facts
    result = {"one fact": right[~two], "two facts": right[two], "all": right}
    return {name: r.float().mean().item() for name, r in result.items() if len(r)}


@torch.no_grad()
def hop_weights(model: Reader, batch: StoryBatch) -> Tensor:
    """The question's cross-attention in every hop, then the pointer's, averaged over heads.

    Returns (hops + 1, N, S): row ``h`` is hop ``h + 1``, the last row the pointer.
    """
    was_training = model.training
    model.eval()
    _, weights = model.run(batch, need_weights=True)
    model.train(was_training)
    return torch.stack([w.mean(1) for w in weights])  # (hops + 1, N, S)
