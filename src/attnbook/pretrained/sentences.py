"""A pretrained encoder's view of a reader's sentences: word pieces, attention, vocabulary.

:func:`sentence_attention` runs a batch of sentences through the model once and returns, for each
sentence, its word pieces (the special tokens ``[CLS]`` and ``[SEP]`` named as such) and every
layer's attention cut to the sentence's own length: exactly the entries that
:func:`attnbook.viz.attention_view.attention_views` takes, so a reader can look at their own
sentence in a live kernel with two lines. :func:`character_coverage` says which characters of a
text the tokenizer's vocabulary knows, and :func:`cjk_vocabulary` lists its Chinese characters.
:func:`segments` cuts running text into inputs of one exact length, as BERT's pre-training did.

Shape legend: N sentences, H heads, L word pieces of one sentence (special tokens included).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tokenizers import Tokenizer
from torch import Tensor, nn

__all__ = [
    "cjk_vocabulary",
    "character_coverage",
    "is_cjk",
    "segments",
    "sentence_attention",
]


@torch.no_grad()
def sentence_attention(
    model: nn.Module,
    sentences: str | Sequence[str],
    *,
    query: str | Sequence[str] | None = None,
) -> dict[str, dict]:
    """Each sentence's word pieces and attention weights, padding removed, ready for a view.

    The sentences are tokenized once and run as one padded batch; each sentence's weights are
    then cut to its own L real tokens (the padding keys have weight 0, so nothing is lost).

    Args:
        model: a :class:`~attnbook.pretrained.minilm_l6.MiniLM` (anything with ``tokenize``,
            ``tokenizer`` and ``model(input_ids, attention_mask, need_weights=True)``).
        sentences: a string or a sequence of strings; each becomes one entry, keyed by its text
            (a repeated sentence appears once).
        query: a word piece, or several, to show first: the first token of a sentence that
            equals one of them (after the tokenizer's lower-casing) becomes the view's default
            query. ``None``, or no match, means ``[CLS]`` (position 0).

    Returns:
        ``{sentence: entry}`` in the order given, where each entry is
        ``{"tokens": ..., "weights": ..., "query": ...}``: the L word pieces, a list with one
        (H, L, L) tensor per layer, and the default query's position.

    Raises:
        TypeError: if ``sentences`` or ``query`` is not text.
    """
    if isinstance(sentences, str):
        sentences = [sentences]
    if not isinstance(sentences, Sequence) or not all(isinstance(s, str) for s in sentences):
        raise TypeError("sentences must be a string or a sequence of strings")
    wanted = [query] if isinstance(query, str) else list(query or [])
    if not all(isinstance(q, str) for q in wanted):
        raise TypeError(f"query must be a word piece or a sequence of them; got {query!r}")
    wanted = {q.lower() for q in wanted}
    input_ids, attention_mask = model.tokenize(list(sentences))  # (N, L_max) each
    _, weights = model(
        input_ids, attention_mask, need_weights=True
    )  # layers x (N, H, L_max, L_max)
    views = {}
    for n, sentence in enumerate(sentences):
        L = int(attention_mask[n].sum())
        tokens = [model.tokenizer.id_to_token(int(i)) for i in input_ids[n, :L]]
        first = next((i for i, t in enumerate(tokens) if t in wanted), 0)
        views[sentence] = {
            "tokens": tokens,
            "weights": [w[n, :, :L, :L].clone() for w in weights],  # layers x (H, L, L)
            "query": first,
        }
    return views


def segments(
    tokenizer: Tokenizer, texts: Sequence[str], length: int, count: int
) -> tuple[Tensor, Tensor]:
    """The first ``count`` windows of exactly ``length`` word pieces, ``[CLS] ... [SEP]`` each.

    The texts are tokenized without special tokens and joined into one stream, which is cut
    into consecutive windows of ``length - 2`` pieces: a window may start or end mid-sentence.

    Args:
        tokenizer: the model's ``tokenizers.Tokenizer`` (with ``[CLS]`` and ``[SEP]``).
        texts: running text, e.g. paragraphs.
        length: the length of each window, special tokens included (at least 3).
        count: how many windows.

    Returns:
        ``(input_ids, attention_mask)``, both (count, length) int64; the mask is all ones.

    Raises:
        ValueError: if ``length`` < 3, ``count`` < 1, or the texts are too short for ``count``
            windows (naming how many they hold).
    """
    if not isinstance(length, int) or length < 3:
        raise ValueError(f"length must be an int of at least 3; got {length!r}")
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a positive int; got {count!r}")
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of strings")
    stream = [
        i for e in tokenizer.encode_batch(list(texts), add_special_tokens=False) for i in e.ids
    ]
    body = length - 2
    if len(stream) < count * body:
        raise ValueError(
            f"the texts hold {len(stream) // body} windows of length {length}; asked for {count}"
        )
    ids = torch.tensor(stream[: count * body]).view(count, body)  # (count, length - 2)
    cls = torch.full((count, 1), tokenizer.token_to_id("[CLS]"))
    sep = torch.full((count, 1), tokenizer.token_to_id("[SEP]"))
    input_ids = torch.cat([cls, ids, sep], dim=1)  # (count, length)
    return input_ids, torch.ones_like(input_ids)


def is_cjk(character: str) -> bool:
    """Whether a single character is a CJK ideograph (the Unified Ideographs and Extension A)."""
    if not isinstance(character, str) or len(character) != 1:
        raise ValueError(f"character must be one character; got {character!r}")
    return "\u3400" <= character <= "\u4dbf" or "\u4e00" <= character <= "\u9fff"


def cjk_vocabulary(tokenizer: Tokenizer) -> list[str]:
    """The CJK ideographs that are word pieces of their own in ``tokenizer``'s vocabulary, sorted.

    (BERT's vocabulary also holds each of them once more as a continuation piece, ``##字``;
    those are not counted, since a BERT tokenizer splits Chinese text into single characters.)
    """
    return sorted(w for w in tokenizer.get_vocab() if len(w) == 1 and is_cjk(w))


def character_coverage(tokenizer: Tokenizer, text: str) -> dict[str, bool]:
    """For each distinct non-space character of ``text``: does the tokenizer know it alone?

    A character is known if, tokenized on its own, it gives a word piece other than the unknown
    token (``[UNK]``); the special tokens the tokenizer adds around it are ignored.

    Returns:
        ``{character: known}``, in order of first appearance.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string; got {type(text).__name__}")
    characters = list(dict.fromkeys(c for c in text if not c.isspace()))
    if not characters:
        return {}
    added = {token.content for token in tokenizer.get_added_tokens_decoder().values()}
    unknown = _unknown_token(tokenizer)
    coverage = {}
    for character, encoding in zip(characters, tokenizer.encode_batch(characters)):
        pieces = [t for t in encoding.tokens if t not in added or t == unknown]
        coverage[character] = bool(pieces) and unknown not in pieces
    return coverage


def _unknown_token(tokenizer: Tokenizer) -> str:
    """The tokenizer's unknown token (``[UNK]`` for BERT)."""
    model = tokenizer.model
    token = getattr(model, "unk_token", None)
    if not token:
        raise ValueError("the tokenizer's model has no unknown token")
    return token
