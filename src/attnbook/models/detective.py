"""The detective model: a tiny Transformer encoder that points from a pronoun to its antecedent.

:class:`Detective` embeds the tokens (:class:`attnbook.positional.TransformerEmbedding`), runs a
few :class:`~attnbook.blocks.EncoderBlock`, then scores every position against the pronoun
with one more (single-head) attention — the *pointer*: ``logits[n, s] = q(pronoun) · k(s) / √E``.
The answer is the position with the largest score; training is cross-entropy over positions.

Every head also gets a fixed penalty proportional to distance (ALiBi, Press et al. 2022), with a
different slope per head: a steep one for heads that should look at their neighbours, a gentle
one for heads that look far. It is a prior, not a requirement: without it the model still has
sinusoidal positions, from which a head can learn to look at its neighbours, but it must
discover that from scratch — and within the book's budget (:data:`DETECTIVE_TRAINING`) it did
not, on either of the two seeds chapter 6 trains.

:class:`BagOfWordsPointer` is the baseline with **no attention at all**: each position is
scored from its own token, its position, and the average of all the tokens in the sentence.

Shape legend: N batch, S sentence length, E ``d_model``, H ``nhead``, V vocabulary size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnbook.positional import TransformerEmbedding, alibi_bias
from attnbook.tasks.coref import Batch, CorefTask, Hide, Vocabulary, batch_maker
from attnbook.train import History, TrainConfig, fit
from attnbook.transformer import Encoder

__all__ = [
    "DetectiveConfig",
    "Detective",
    "BagOfWordsPointer",
    "alibi_bias",
    "pointer_loss",
    "pointer_accuracy",
    "evaluator",
    "batch_loss",
    "DETECTIVE_TRAINING",
    "train_detective",
]


@dataclass
class DetectiveConfig:
    """Sizes of a :class:`Detective`."""

    vocab_size: int  # V, including the padding token (id 0)
    d_model: int = 32  # E
    nhead: int = 2  # H heads per block
    num_layers: int = 2  # encoder blocks
    dim_feedforward: int = 64  # hidden size of each block's feed-forward network
    max_len: int = 64  # longest sentence accepted
    alibi: bool = True  # distance penalty with slope 4**-h for head h
    only_candidates: bool = False  # let the pointer choose among name tokens only


class Detective(nn.Module):
    """Embeddings, an :class:`~attnbook.transformer.Encoder`, and a pointer from the pronoun.

    ``forward`` returns ``(logits, weights)``: logits (N, S) over positions (padding, and
    non-names when ``only_candidates``, get ``-inf``); weights, with ``need_weights``, a list with
    one (N, H, S, S) tensor per layer.
    """

    def __init__(self, config: DetectiveConfig) -> None:
        super().__init__()
        self.config = config
        E = config.d_model
        self.embedding = TransformerEmbedding(
            config.vocab_size, E, config.max_len, kind="sinusoidal", scale=False, padding_idx=0
        )
        self.encoder = Encoder(
            config.num_layers,
            d_model=E,
            nhead=config.nhead,
            dim_feedforward=config.dim_feedforward,
            dropout=0.0,
            norm_first=True,
        )
        self.pointer_query = nn.Linear(E, E)
        self.pointer_key = nn.Linear(E, E)
        slopes = 4.0 ** -torch.arange(config.nhead, dtype=torch.float32)
        self.register_buffer(
            "slopes", slopes if config.alibi else torch.zeros(config.nhead), persistent=False
        )

    def forward(
        self,
        tokens: Tensor,
        key_padding_mask: Tensor,
        pronoun: Tensor,
        candidates: Tensor | None = None,
        *,
        head_mask: Tensor | None = None,
        need_weights: bool = False,
    ) -> tuple[Tensor, list[Tensor] | None]:
        """Score every position as the antecedent of the pronoun.

        Args:
            tokens: (N, S) token ids.
            key_padding_mask: (N, S) bool, ``True`` on padding.
            pronoun: (N,) position of the pronoun in each sentence.
            candidates: (N, S) bool, ``True`` on names; required if ``only_candidates``.
            head_mask: (num_layers, H) or (num_layers, N, H); 0 switches a head off.
            need_weights: also return every head's attention weights.
        """
        N, S = tokens.shape
        H = self.config.nhead
        bias = alibi_bias(S, self.slopes)  # (H, S, S)
        # The padding joins the bias once here, as -inf on its keys, instead of in every block:
        # the same float mask the blocks would form, one (N, H, S, S) tensor per forward pass.
        padding = bias.new_zeros(N, 1, 1, S).masked_fill(
            key_padding_mask[:, None, None, :], float("-inf")
        )  # (N, 1, 1, S)
        mask = (bias + padding).reshape(N * H, S, S)  # (N*H, S, S), heads fastest
        x = self.embedding(tokens)  # (N, S, E)
        x, weights = self.encoder(x, mask=mask, need_weights=need_weights, head_mask=head_mask)
        query = self.pointer_query(x[torch.arange(N), pronoun])  # (N, E)
        keys = self.pointer_key(x)  # (N, S, E)
        logits = torch.einsum("ne,nse->ns", query, keys) / self.config.d_model**0.5  # (N, S)
        forbidden = key_padding_mask
        if self.config.only_candidates:
            if candidates is None:
                raise ValueError("only_candidates=True needs the candidates mask (N, S)")
            forbidden = forbidden | ~candidates
        return logits.masked_fill(forbidden, float("-inf")), weights

    def run(self, batch: Batch, **kwargs) -> tuple[Tensor, list[Tensor] | None]:
        """``forward`` on a :class:`attnbook.tasks.coref.Batch`."""
        return self(batch.tokens, batch.key_padding_mask, batch.pronoun, batch.candidates, **kwargs)


class BagOfWordsPointer(nn.Module):
    """A pointer with no attention: position s is scored from its token, its position and the
    sentence's average token embedding — which says *what* is in the sentence, not *where*.

    Args:
        vocab_size: V.
        d_model: E.
        hidden: width of the scoring MLP.
        max_len: longest sentence accepted.
    """

    def __init__(
        self, vocab_size: int, d_model: int = 32, hidden: int = 128, max_len: int = 64
    ) -> None:
        super().__init__()
        self.embedding = TransformerEmbedding(
            vocab_size, d_model, max_len, kind="learned", scale=False, padding_idx=0
        )
        self.bag = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.score = nn.Sequential(
            nn.Linear(2 * d_model, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def forward(
        self,
        tokens: Tensor,
        key_padding_mask: Tensor,
        pronoun: Tensor,
        candidates: Tensor | None = None,
    ) -> tuple[Tensor, None]:
        """Same arguments and return value as :meth:`Detective.forward` (weights: None)."""
        real = (~key_padding_mask).float()  # (N, S)
        bag = (self.bag(tokens) * real[..., None]).sum(1) / real.sum(1, keepdim=True)  # (N, E)
        own = self.embedding(tokens)  # (N, S, E)
        features = torch.cat([own, bag[:, None].expand_as(own)], dim=-1)  # (N, S, 2E)
        logits = self.score(features).squeeze(-1)  # (N, S)
        return logits.masked_fill(key_padding_mask, float("-inf")), None

    def run(self, batch: Batch, **kwargs) -> tuple[Tensor, None]:
        return self(batch.tokens, batch.key_padding_mask, batch.pronoun, batch.candidates, **kwargs)


def pointer_loss(logits: Tensor, target: Tensor) -> Tensor:
    """Cross-entropy over positions. ``logits`` (N, S) float; ``target`` (N,) integer positions."""
    if target.dim() != 1 or target.dtype.is_floating_point or target.shape[0] != logits.shape[0]:
        raise ValueError(
            f"target must hold one integer position per sentence, shape (N,) = ({logits.shape[0]},);"
            f" got shape {tuple(target.shape)} and dtype {target.dtype}"
        )
    return F.cross_entropy(logits, target)


def pointer_accuracy(logits: Tensor, target: Tensor) -> float:
    """Fraction of sentences whose highest-scoring position is the antecedent."""
    return (logits.argmax(-1) == target).float().mean().item()


def evaluator(eval_sets: dict[str, Batch]):
    """An ``evaluate(model) -> {name: accuracy}`` over fixed batches, for :func:`attnbook.train.fit`."""

    def evaluate(model: nn.Module) -> dict[str, float]:
        return {
            name: pointer_accuracy(model.run(batch)[0], batch.target)
            for name, batch in eval_sets.items()
        }

    return evaluate


def batch_loss(model: nn.Module, batch: Batch) -> Tensor:
    """The training loss of ``model`` on ``batch``, for :func:`attnbook.train.fit`."""
    return pointer_loss(model.run(batch)[0], batch.target)


#: How the book's detectives are trained (chapter 6; ``make checkpoints`` writes the committed
#: files with it): 1,500 steps of 32 fresh sentences, half English, half Chinese.
DETECTIVE_TRAINING = TrainConfig(steps=1500, batch_size=32, lr=3e-3, eval_every=100, seed=0)


def train_detective(
    config: DetectiveConfig,
    train_config: TrainConfig = DETECTIVE_TRAINING,
    eval_sets: dict[str, Batch] | None = None,
    *,
    init_seed: int = 0,
    hide: Hide | None = None,
) -> tuple[Detective, History]:
    """Build a :class:`Detective` and train it on the ``"cue"`` task in English and Chinese.

    The initial weights are drawn after ``torch.manual_seed(init_seed)``; ``fit`` seeds the
    batches from ``train_config.seed``. On one machine (one thread) the result is the same bit
    for bit every time; another CPU's kernels round differently, so its weights differ slightly
    and its accuracies a little (chapter 6 compares them with the committed checkpoint).

    Args:
        config: the model's sizes; ``vocab_size`` must be that of the two tasks' vocabulary.
        train_config: the training run (default :data:`DETECTIVE_TRAINING`).
        eval_sets: batches to evaluate every ``eval_every`` steps, by name.
        init_seed: seed of the initial weights.
        hide: ``None``, or the clue to remove from every training sentence (``"cue"`` or
            ``"gender"``, as in :class:`~attnbook.tasks.coref.CorefTask`): a control model that
            is blind to that clue. The vocabulary is the same either way.

    Returns:
        The trained model (in eval mode) and its :class:`~attnbook.train.History`.
    """
    tasks = [CorefTask("en", hide=hide), CorefTask("zh", hide=hide)]
    vocab = Vocabulary.for_tasks(*tasks)
    if config.vocab_size != len(vocab):
        raise ValueError(
            f"config.vocab_size must be the tasks' vocabulary size {len(vocab)}; "
            f"got {config.vocab_size}"
        )
    torch.manual_seed(init_seed)
    model = Detective(config)
    evaluate = evaluator(eval_sets) if eval_sets else None
    history = fit(model, batch_maker(tasks, vocab), batch_loss, train_config, evaluate)
    return model, history
