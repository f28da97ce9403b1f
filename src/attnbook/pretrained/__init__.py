"""Pretrained models rebuilt from the book's blocks, loaded offline with their hashes checked.

:mod:`~attnbook.pretrained.bert` is a BERT encoder made of :class:`attnbook.blocks.EncoderBlock`;
:mod:`~attnbook.pretrained.minilm_l6` loads all-MiniLM-L6-v2 into it from an installed package;
:mod:`~attnbook.pretrained.sentences` turns a reader's sentences into word pieces and attention
for a view, and says which characters the vocabulary knows.
"""

from attnbook.pretrained.bert import BertConfig, BertEmbeddings, BertEncoder, load_bert_state
from attnbook.pretrained.minilm_l6 import (
    MINILM_FILES,
    MINILM_MAX_LENGTH,
    MINILM_SHA256,
    MiniLM,
    minilm,
    minilm_dir,
    sha256,
)
from attnbook.pretrained.sentences import (
    character_coverage,
    cjk_vocabulary,
    is_cjk,
    segments,
    sentence_attention,
)

__all__ = [
    "BertConfig",
    "BertEmbeddings",
    "BertEncoder",
    "load_bert_state",
    "MINILM_SHA256",
    "MINILM_FILES",
    "MINILM_MAX_LENGTH",
    "MiniLM",
    "minilm",
    "minilm_dir",
    "sha256",
    "sentence_attention",
    "character_coverage",
    "cjk_vocabulary",
    "is_cjk",
    "segments",
]
