"""Text for a language model: a tokenizer learned from the text, and windows of it to train on.

Two tokenizers with one interface (:class:`TextTokenizer`: ``encode``, ``decode``, ``pieces``,
``vocab_size``):

* :func:`train_bpe` learns a **byte-level BPE** (byte-pair encoding: Sennrich et al. 2016, on
  bytes as in GPT-2, Radford et al. 2019) with Hugging Face ``tokenizers``. It starts from the 256
  bytes and merges the most frequent adjacent pair again and again until the vocabulary has
  ``vocab_size`` tokens, so frequent words become one token and rare ones several. Every string
  can be encoded, since every byte is a token, and ``decode(encode(text)) == text``. Training is
  deterministic: the same texts give the same vocabulary and the same ids.
* :class:`CharTokenizer` gives every character seen often enough its own id (for Chinese, where a
  character is close to a word piece already) and id 0 to every other character; an unknown
  character decodes as ``"\\ufffd"`` (the replacement character, �). All unknown characters
  share that id, so predicting it is easier than predicting each of them would be: count how
  often it occurs before comparing a loss with a BPE model's.

Train and encode the same way: a language model reads one stream of tokens, so join the
paragraphs with ``"\\n"`` (the newline is then a token like any other) before both.

:func:`random_windows` cuts a batch of training examples out of that stream: inputs ``x`` and
targets ``y``, the same window shifted by one token, so that position t is trained to predict
token t + 1 (what a causal model's position t may see). :func:`consecutive_windows` cuts the
whole stream into windows one after the other, to measure a loss on every token once.

Shape legend: M tokens in the stream, N batch (windows), T ``block_size`` (window length).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Protocol

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from torch import Tensor

__all__ = [
    "BPETokenizer",
    "CharTokenizer",
    "TextTokenizer",
    "consecutive_windows",
    "random_windows",
    "train_bpe",
]


class TextTokenizer(Protocol):
    """What :class:`BPETokenizer` and :class:`CharTokenizer` both offer."""

    @property
    def vocab_size(self) -> int: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int] | Tensor) -> str: ...

    def pieces(self, ids: Sequence[int] | Tensor) -> list[str]: ...


def _texts(texts: Iterable[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a collection of strings, not one string")
    texts = list(texts)
    if not texts or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a non-empty collection of strings")
    return texts


def _ids(ids: Sequence[int] | Tensor, vocab_size: int) -> list[int]:
    """``ids`` as a list of ints, each in [0, vocab_size)."""
    if isinstance(ids, Tensor):
        if ids.dim() != 1 or ids.is_floating_point() or ids.is_complex():
            raise ValueError(
                f"ids must be a 1-D integer tensor; got {ids.dtype} {tuple(ids.shape)}"
            )
        ids = ids.tolist()
    elif isinstance(ids, str) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in ids
    ):
        raise TypeError("ids must be a sequence of ints or a 1-D integer tensor")
    bad = [i for i in ids if not 0 <= i < vocab_size]
    if bad:
        raise ValueError(f"ids must be in [0, {vocab_size}); got {bad[:5]}")
    return list(ids)


class BPETokenizer:
    """A trained byte-level BPE from :func:`train_bpe`, as ``encode``/``decode``/``pieces``.

    Args:
        tokenizer: the Hugging Face ``tokenizers.Tokenizer`` it wraps (``.tokenizer``), e.g. to
            save it with ``tokenizer.save(path)``.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``'s tokens."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string; got {type(text).__name__}")
        return self.tokenizer.encode(text).ids

    def decode(self, ids: Sequence[int] | Tensor) -> str:
        """The text of ``ids`` (a list or a 1-D tensor): the inverse of :meth:`encode`."""
        return self.tokenizer.decode(_ids(ids, self.vocab_size))

    def pieces(self, ids: Sequence[int] | Tensor) -> list[str]:
        """Each token's own text, for display (``" the"``, not GPT-2's ``"Ġthe"``). A token that
        holds part of a character's bytes (often, in Chinese) shows as ``"\\ufffd"``."""
        decoder = self.tokenizer.decoder
        return [decoder.decode([self.tokenizer.id_to_token(i)]) for i in _ids(ids, self.vocab_size)]


def train_bpe(texts: Iterable[str], vocab_size: int) -> BPETokenizer:
    """Learn a byte-level BPE of ``vocab_size`` tokens (at least the 256 bytes) from ``texts``.

    Words are first split as GPT-2 splits them (a space stays at the front of the word after it);
    merges never cross those splits. If the texts run out of pairs to merge, the vocabulary is
    smaller than asked: read ``.vocab_size``.
    """
    texts = _texts(texts)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 256:
        raise ValueError(f"vocab_size must be an int >= 256 (the bytes); got {vocab_size!r}")
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte, seen or not
    )
    tokenizer.train_from_iterator(texts, trainer)
    return BPETokenizer(tokenizer)


class CharTokenizer:
    """One id per known character; id 0 (``unk_id``) for every other character.

    Args:
        chars: the known characters, in the order of their ids 1, 2, ... (use :meth:`fit`).
    """

    unk = "\ufffd"  # what an unknown character decodes to
    unk_id = 0

    def __init__(self, chars: Iterable[str]) -> None:
        chars = list(chars)
        if not all(isinstance(c, str) and len(c) == 1 and c != self.unk for c in chars):
            raise ValueError("chars must be single characters, without the unknown mark \\ufffd")
        if len(set(chars)) != len(chars):
            raise ValueError("chars must not repeat a character")
        self.itos = [self.unk, *chars]
        self.stoi = {c: i for i, c in enumerate(self.itos)}

    @classmethod
    def fit(cls, texts: Iterable[str], min_count: int = 1) -> CharTokenizer:
        """The characters of ``texts`` seen at least ``min_count`` times, most frequent first
        (ties in code point order, so that the same texts always give the same ids)."""
        texts = _texts(texts)
        if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
            raise ValueError(f"min_count must be an int >= 1; got {min_count!r}")
        counts = Counter(c for text in texts for c in text)
        counts.pop(cls.unk, None)
        kept = sorted(
            (c for c, n in counts.items() if n >= min_count), key=lambda c: (-counts[c], c)
        )
        return cls(kept)

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        """One id per character of ``text``; ``unk_id`` for a character not known."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string; got {type(text).__name__}")
        return [self.stoi.get(c, self.unk_id) for c in text]

    def decode(self, ids: Sequence[int] | Tensor) -> str:
        """The characters of ``ids``, unknown ones as ``"\\ufffd"``."""
        return "".join(self.itos[i] for i in _ids(ids, self.vocab_size))

    def pieces(self, ids: Sequence[int] | Tensor) -> list[str]:
        """Each id's character, for display."""
        return [self.itos[i] for i in _ids(ids, self.vocab_size)]


def _check_stream(ids: Tensor, block_size: int) -> None:
    if not isinstance(ids, Tensor):
        raise TypeError(f"ids must be a tensor of token ids; got {type(ids).__name__}")
    if ids.dim() != 1 or ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise ValueError(
            f"ids must be a 1-D integer tensor (M,); got {ids.dtype} {tuple(ids.shape)}"
        )
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an int >= 1; got {block_size!r}")
    if ids.numel() < block_size + 1:
        raise ValueError(
            f"ids holds {ids.numel()} tokens: too short for block_size={block_size} "
            f"(a window needs block_size + 1 tokens)"
        )


def random_windows(
    ids: Tensor, block_size: int, batch_size: int, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """``batch_size`` windows of the stream ``ids`` (M,), each starting at a random token.

    Every start from 0 to M - T - 1 is equally likely (windows may overlap).

    Returns:
        ``(x, y)``, both (N, T) on ``ids``'s device and of its dtype: ``x[i]`` is
        ``ids[s : s + T]`` for the i-th start s, and ``y[i]`` is ``ids[s + 1 : s + T + 1]``.
    """
    _check_stream(ids, block_size)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1; got {batch_size!r}")
    device = generator.device if generator is not None else torch.device("cpu")
    starts = torch.randint(
        ids.numel() - block_size, (batch_size,), generator=generator, device=device
    )  # (N,)
    offsets = torch.arange(block_size + 1, device=ids.device)  # (T + 1,)
    windows = ids[starts.to(ids.device)[:, None] + offsets]  # (N, T + 1)
    return windows[:, :-1], windows[:, 1:]


def consecutive_windows(ids: Tensor, block_size: int) -> tuple[Tensor, Tensor]:
    """The stream cut into windows one after the other, for a loss on every token once.

    Window i covers inputs ``ids[i T : (i + 1) T]`` and targets one token later; the last
    ``(M - 1) % T`` targets, too few for a window, are left out.

    Returns:
        ``(x, y)``, both ((M - 1) // T, T).
    """
    _check_stream(ids, block_size)
    count = (ids.numel() - 1) // block_size
    x = ids[: count * block_size].reshape(count, block_size)  # (N, T)
    y = ids[1 : count * block_size + 1].reshape(count, block_size)  # (N, T)
    return x, y
