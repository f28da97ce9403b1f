"""Chapter 16's checkers: a BERT's parameter count, sentence-embedding pooling, word pieces.

* ``bert_param_count(vocab_size, hidden_size, num_layers, intermediate_size, max_positions,
  type_vocab_size)``: the parameters of :class:`~attnbook.pretrained.bert.BertEncoder` with those
  sizes (embeddings and encoder, no pooler), by formula; an int.
* ``my_mean_pool(hidden, attention_mask)``: hidden (N, L, E), attention_mask (N, L) with 1 on
  real tokens and 0 on padding; the mean over each sentence's real tokens, L2-normalised, (N, E).
* ``tokens``: the predicted word pieces of ``PREDICT_SENTENCE``, a list of strings.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attnbook.exercises.report import (
    LearnerError,
    Report,
    as_int,
    call,
    changed_inputs,
    expect_tensor,
    library,
)
from attnbook.i18n import N_, tr
from attnbook.pretrained.bert import BertConfig, BertEncoder

__all__ = [
    "PREDICT_SENTENCE",
    "check_bert_param_count",
    "check_mean_pool",
    "check_predicted_tokens",
]

#: The sentence whose word pieces the reader predicts.
PREDICT_SENTENCE = "Old Zhang (老张) interrogated the witness."
ATOL = 1e-5


def _reference_count(V: int, E: int, layers: int, F: int, P: int, T: int) -> int:
    """The true count: a real encoder built on the meta device (no memory, no time)."""
    config = BertConfig(V, E, layers, 1, F, P, T)
    with torch.device("meta"):
        model = BertEncoder(config)
    return sum(p.numel() for p in model.parameters())


def _count_slips(V: int, E: int, layers: int, F: int, P: int, T: int) -> list[tuple[str, int]]:
    """What each usual slip counts for these sizes, with what it gets wrong."""
    right = _reference_count(V, E, layers, F, P, T)
    attention, ff, norms = 4 * E * E + 4 * E, 2 * E * F + F + E, 2 * 2 * E
    embeddings = (V + P + T) * E + 2 * E
    linear_biases = layers * (4 * E + F + E)
    return [
        (
            N_(
                "you added BERT's pooler (an E x E layer with its bias, for the [CLS] vector); the "
                "encoder here, like all-MiniLM-L6-v2's file, has none"
            ),
            right + E * E + E,
        ),
        (
            N_("the biases of the six linear layers per block are missing (4E + F + E per block)"),
            right - linear_biases,
        ),
        (
            N_("the layer norms are missing: two per block and one after the embeddings, each 2E"),
            right - layers * norms - 2 * E,
        ),
        (N_("the layer norm after the embeddings (2E) is missing"), right - 2 * E),
        (
            N_(
                "4E per block is missing: either the two layer norms of each block (2E each: a "
                "weight and a bias) or the four attention biases (E each: query, key, value, output)"
            ),
            right - layers * norms,
        ),
        (
            N_(
                "one layer norm per block is missing (2E each): a post-LN block has two, one after "
                "the attention and one after the feed-forward"
            ),
            right - layers * 2 * E,
        ),
        (
            N_("the learned positions (P x E) and the segment embedding (T x E) are missing"),
            right - (P + T) * E,
        ),
        (N_("the segment (token type) embedding, T x E, is missing"), right - T * E),
        (N_("the learned position embedding, P x E, is missing"), right - P * E),
        (
            N_("you counted the blocks only; the embeddings (V + P + T) x E + 2E are missing"),
            right - embeddings,
        ),
        (
            N_(
                "the attention's output projection (E x E + E per block) is missing: 4E² + 4E, not 3"
            ),
            right - layers * (E * E + E),
        ),
        (
            N_("that is one block; multiply by num_layers and add the embeddings"),
            attention + ff + norms,
        ),
        (N_("the feed-forward biases (F + E per block) are missing"), right - layers * (F + E)),
    ]


def check_bert_param_count(bert_param_count: Callable[..., int]) -> Report:
    """Chapter 16: the parameters of a BERT encoder (no pooler) by formula, for any sizes.

    The three sizes run first; a slip is named only when it gives all three counts (with two
    segments, 2E is both the segment embedding and a layer norm: only the third size, with
    three, tells them apart)."""
    report = Report("bert_param_count")
    sizes = {
        N_("all-MiniLM-L6-v2: 22,565,376"): (30522, 384, 6, 1536, 512, 2),
        N_("BERT-base (V 30,522, E 768, 12 layers, F 3,072)"): (30522, 768, 12, 3072, 512, 2),
        N_("a small odd one (V 100, E 8, 3 layers, F 20, 16 positions, 3 segments)"): (
            100,
            8,
            3,
            20,
            16,
            3,
        ),
    }
    given: dict[str, object] = {}
    with report.refusing():
        for description, size in sizes.items():
            try:
                given[description] = call(bert_param_count, *size)
            except LearnerError as exc:
                given[description] = exc

    def whole(value: object) -> int | None:
        answer = as_int(value)
        if answer is None and isinstance(value, float) and value.is_integer():
            answer = int(value)  # 22565376.0 is the right number too
        return answer

    answers = {d: whole(g) for d, g in given.items() if not isinstance(g, LearnerError)}
    slips = {d: _count_slips(*size) for d, size in sizes.items()}
    named = [
        i
        for i in range(len(slips[next(iter(sizes))]))
        if len(answers) == len(sizes)
        and all(answers[d] == slips[d][i][1] for d in sizes)
        and any(slips[d][i][1] != _reference_count(*sizes[d]) for d in sizes)
    ]

    def case(description: str) -> Callable[[], str | None]:
        def run() -> str | None:
            got = given[description]
            if isinstance(got, LearnerError):
                raise got
            answer = whole(got)
            if answer is None:
                return tr("return an integer; got {given_type} {given!r}").format(
                    given_type=type(got).__name__, given=got
                )
            right = _reference_count(*sizes[description])
            if answer == right:
                return None
            if len(named) == 1:
                return tr(slips[description][named[0]][0])
            return tr("expected {right:,}, got {answer:,}").format(right=right, answer=answer)

        return run

    for description in sizes:
        report.run(description, case(description))
    return report


def reference_mean_pool(hidden: Tensor, attention_mask: Tensor) -> Tensor:
    """The mean over real tokens, L2-normalised, as :meth:`~attnbook.pretrained.MiniLM.embed`."""
    real = attention_mask.unsqueeze(-1).to(hidden.dtype)  # (N, L, 1)
    mean = (hidden * real).sum(1) / real.sum(1).clamp(min=1e-9)  # (N, E)
    return torch.nn.functional.normalize(mean, dim=-1)


def _pool_case(seed: int, N: int = 4, L: int = 7, E: int = 6) -> tuple[Tensor, Tensor]:
    """Hidden states whose padding positions are large, so that averaging over them shows."""
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(N, L, E, generator=g) + 0.5
    lengths = torch.tensor([L] + [int(x) for x in torch.randint(2, L, (N - 1,), generator=g)])
    mask = (torch.arange(L)[None] < lengths[:, None]).long()  # (N, L), 1 = real
    hidden = hidden + 5.0 * (1 - mask)[..., None] * torch.randn(N, L, E, generator=g)
    return hidden, mask


def _pool_mistake(out: Tensor, hidden: Tensor, mask: Tensor) -> str:
    normalize = torch.nn.functional.normalize
    real = mask.unsqueeze(-1).float()
    mean = (hidden * real).sum(1) / real.sum(1)
    if torch.allclose(out, normalize(hidden.mean(1), dim=-1), atol=ATOL):
        return tr(
            "you averaged over the padding too (hidden.mean(1)); multiply by the mask and divide "
            "by the number of real tokens"
        )
    if torch.allclose(out, mean, atol=ATOL):
        return tr(
            "the mean over real tokens is right, but not normalised: divide each row by its L2 norm"
        )
    if torch.allclose(
        out, normalize(normalize(hidden, dim=-1).mul(real).sum(1), dim=-1), atol=ATOL
    ):
        return tr("you normalised each token before pooling; pool first, then normalise the mean")
    if torch.allclose(out, reference_mean_pool(hidden, 1 - mask), atol=ATOL):
        return tr(
            "you averaged over the padding only: attention_mask is 1 on REAL tokens (Hugging "
            "Face's convention)"
        )
    if torch.allclose(out, normalize(mean, dim=0), atol=ATOL):
        return tr(
            "you normalised along the wrong dimension (dim=0, across sentences): each sentence's "
            "vector must have length 1, so normalise along the features, dim=-1"
        )
    if torch.allclose(out, normalize(hidden[:, 0], dim=-1), atol=ATOL):
        return tr(
            "that is the first ([CLS]) token's vector; this model's embedding is the MEAN over "
            "real tokens"
        )
    expected = [round(x, 4) for x in reference_mean_pool(hidden, mask)[1].tolist()]
    return tr("expected row 1 to be {expected}, got {value}").format(
        expected=expected, value=[round(x, 4) for x in out[1].tolist()]
    )


def check_mean_pool(my_mean_pool: Callable[[Tensor, Tensor], Tensor]) -> Report:
    """Chapter 16: mean pooling over real tokens, then L2 normalisation."""
    report = Report(N_("mean pooling"), refused=library(reference_mean_pool))

    def case(seed: int, as_bool: bool = False) -> Callable[[], str | None]:
        def run() -> str | None:
            hidden, mask = _pool_case(seed)
            given_mask = mask.bool() if as_bool else mask
            out = call(my_mean_pool, hidden, given_mask)
            problem = expect_tensor(out, (hidden.size(0), hidden.size(2)), what="my_mean_pool")
            if problem is not None:
                return problem
            if torch.allclose(out, reference_mean_pool(hidden, mask), atol=ATOL):
                return None
            return _pool_mistake(out, hidden, mask)

        return run

    report.run("4 sentences of different lengths, padding with large values", case(0))
    report.run("another batch", case(1))
    report.run("a boolean mask (True = real token) works too", case(2, as_bool=True))
    hidden, mask = _pool_case(3)
    report.run(
        "does not modify its inputs",
        lambda: changed_inputs(my_mean_pool, ("hidden", "attention_mask"), hidden, mask),
    )
    return report


def _expected_tokens() -> list[str]:
    # Imported here: reading the tokenizer needs the model package, not every checker does.
    from tokenizers import Tokenizer

    from attnbook.pretrained import minilm_dir

    tokenizer = Tokenizer.from_file(str(minilm_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    return tokenizer.encode(PREDICT_SENTENCE).tokens


def _tokens_mistake(given: list[str], expected: list[str]) -> str:
    if given[:1] != ["[CLS]"] or given[-1:] != ["[SEP]"]:
        return tr("the tokenizer adds [CLS] at the start and [SEP] at the end")
    if any(t != t.lower() for t in given if t not in ("[CLS]", "[SEP]", "[UNK]")):
        return tr("this model's tokenizer lower-cases everything first ('Old' -> 'old')")
    if any(t in given for t in ("老", "张", "老张")):
        return tr(
            "老 and 张 are not in this English vocabulary: each Chinese character becomes [UNK]"
        )
    if given.count("[UNK]") == 1 and expected.count("[UNK]") == 2:
        return tr("Chinese characters are split one by one, so 老张 is two tokens, each [UNK]")
    if "interrogate" in given:
        return tr(
            "'interrogate' is not in the vocabulary either: word pieces are taken greedily, the "
            "longest vocabulary entry from the start of the word first ('inter'), then the rest"
        )
    if "interrogated" in given:
        return tr(
            "'interrogated' is not in the vocabulary: it is split into 'inter' and '##rogated'"
        )
    if "rogated" in given:
        return tr("a piece that continues a word is written with '##': '##rogated'")
    if any(t.endswith(("(", ")", ".")) and len(t) > 1 for t in given):
        return tr("punctuation is split off as a token of its own: '(' , ')' and '.'")
    for i, (g, e) in enumerate(zip(given, expected)):
        if g != e:
            return tr("token {i} differs: expected {e!r}, got {g!r}").format(i=i, e=e, g=g)
    return tr("expected {len_expected} tokens, got {len_given}").format(
        len_expected=len(expected), len_given=len(given)
    )


def check_predicted_tokens(tokens: list[str]) -> Report:
    """Chapter 16: the predicted word pieces of *Old Zhang (老张) interrogated the witness.*"""
    report = Report(N_("predicted word pieces"))

    def run() -> str | None:
        if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
            return tr("give a list of strings; got {tokens_type}").format(
                tokens_type=type(tokens).__name__
            )
        expected = _expected_tokens()
        return None if list(tokens) == expected else _tokens_mistake(list(tokens), expected)

    report.run(
        tr("the word pieces of {PREDICT_SENTENCE!r}").format(PREDICT_SENTENCE=PREDICT_SENTENCE), run
    )
    return report
