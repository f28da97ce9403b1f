"""One tokenizer and one vocabulary for every task and model in the book.

:func:`tokenize` splits Chinese into characters (老张 is 老 "old" and 张 "Zhang") and English into
words and punctuation marks. :class:`Vocabulary` maps tokens to ids and back, with the padding
token at id 0, and refuses what it does not know rather than guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

import torch
from torch import Tensor

__all__ = ["tokenize", "join_tokens", "Vocabulary", "pad_rows"]

_CJK = re.compile(r"[\u3400-\u9fff]")


def tokenize(text: str) -> list[str]:
    """Characters for text that contains Chinese (spaces dropped); otherwise words and
    punctuation marks, so ``"she ran."`` gives ``["she", "ran", "."]``."""
    text = text.strip()
    if _CJK.search(text):
        return [ch for ch in text if not ch.isspace()]
    return re.findall(r"\w+|[^\w\s]", text)


def join_tokens(tokens: Sequence[str]) -> str:
    """The text of ``tokens``: Chinese characters joined directly, English words with spaces."""
    return ("" if tokens and _CJK.search(tokens[0]) else " ").join(tokens)


class HasTokens(Protocol):
    def all_tokens(self) -> list[str]: ...


class Vocabulary:
    """Token <-> id, with the padding token ``<pad>`` at id 0.

    Args:
        tokens: the tokens, in the order their ids are given (duplicates are ignored).
    """

    pad = "<pad>"

    def __init__(self, tokens: Iterable[str]) -> None:
        self.itos: list[str] = list(dict.fromkeys([self.pad, *tokens]))
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def for_tasks(cls, *tasks: HasTokens) -> Vocabulary:
        """The vocabulary of every token the given tasks can produce (``task.all_tokens()``)."""
        return cls(t for task in tasks for t in task.all_tokens())

    @property
    def pad_id(self) -> int:
        return 0

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Ids of ``tokens``; raises ``ValueError`` naming any token not in the vocabulary."""
        if isinstance(tokens, str):
            raise TypeError(
                "encode takes a sequence of tokens, not a string; split it first "
                "(words for English, characters for Chinese)"
            )
        unknown = [(i, t) for i, t in enumerate(tokens) if t not in self.stoi]
        if unknown:
            where = ", ".join(f"{t!r} at position {i}" for i, t in unknown[:5])
            raise ValueError(f"unknown tokens: {where}; the vocabulary has {len(self)} tokens")
        return [self.stoi[t] for t in tokens]

    def decode(self, ids: Iterable[int] | Tensor) -> list[str]:
        """Tokens of ``ids``; raises ``ValueError`` for an id outside ``[0, len(self))``."""
        ids = [int(i) for i in (ids.tolist() if isinstance(ids, Tensor) else ids)]
        bad = [i for i in ids if not 0 <= i < len(self)]
        if bad:
            raise ValueError(f"ids {bad[:5]} are outside [0, {len(self)})")
        return [self.itos[i] for i in ids]


def pad_rows(rows: list[list[int]], pad_id: int) -> Tensor:
    """Token-id rows of different lengths as one (N, longest) tensor, padded on the right."""
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad_id] * (width - len(r)) for r in rows])  # (N, width)
