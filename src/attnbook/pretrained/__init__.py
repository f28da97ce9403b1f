"""Pretrained models rebuilt from the book's blocks, loaded offline with their hashes checked.

:mod:`~attnbook.pretrained.bert` is a BERT encoder made of :class:`attnbook.blocks.EncoderBlock`;
:mod:`~attnbook.pretrained.minilm_l6` loads all-MiniLM-L6-v2 into it from an installed package.
"""

from attnbook.pretrained.bert import BertConfig, BertEmbeddings, BertEncoder, load_bert_state
from attnbook.pretrained.minilm_l6 import (
    MINILM_MAX_LENGTH,
    MINILM_SHA256,
    MiniLM,
    minilm,
    minilm_dir,
    sha256,
)

__all__ = [
    "BertConfig",
    "BertEmbeddings",
    "BertEncoder",
    "load_bert_state",
    "MINILM_SHA256",
    "MINILM_MAX_LENGTH",
    "MiniLM",
    "minilm",
    "minilm_dir",
    "sha256",
]
