"""Catalogue, chapters 1 to 5: the soft lookup to the complete Transformer."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

import attnbook
from attnbook import mha
from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.ch03_many_heads import mha_param_count_reference
from attnbook.masks import mha_to_sdpa_mask
from attnbook.models.handbuilt import WORD_FEATURES
from attnbook.positional import sinusoidal_encoding
from attnbook.train import lr_factor

from .. import test_ch01_detective as t01
from .. import test_ch02_attention as t02
from .. import test_ch03_many_heads as t03
from .. import test_ch04_building_mha as t04
from .. import test_ch05_transformer as t05
from . import IN_PLACE, Fact, Mistake, fn, generic, values

MISTAKES: list[Mistake] = []
add = MISTAKES.append

# ---- chapter 1 -------------------------------------------------------------------------------
for args, says, *also in [
    (("down", 0.5), "so it goes up"),
    (("up", 2.0), "dividing the scores by T = 2"),
    (("up", 0.25), "not 1/4"),
    (("up", 2**-0.5), "not by √2"),
    (("up", 1.5), "a temperature above 1"),
    (("up", 0.3), "softmax(2s) = softmax(s / T)"),
    (("higher", 0.5), 'answer "up" or "down"'),
    (("up", "0.5"), "answer with a number"),
    (("down", 2.0), "so it goes up", "dividing the scores by T = 2"),
]:
    add(values("check_sharpen", f"{args}", args, says, *also))

for name, (answer, says) in t01.LOOKUP_WRONG.items():
    add(fn("check_soft_lookup", name, answer, None if name == "averages the keys" else says))
add(
    fn(
        "check_soft_lookup",
        "divides by √d too",
        lambda q, k, v, t: t01.book_solution(q, k, v, t * q.numel() ** 0.5),
        "also divide by √d",
    )
)
add(
    fn(
        "check_soft_lookup",
        "weights of the keys, not the values",
        lambda q, k, v, t: torch.softmax(k @ q / t, -1),
        None,
    )
)
MISTAKES.extend(
    generic(
        "check_soft_lookup",
        t01.book_solution,
        library=[
            lambda q, k, v, t: scaled_dot_product_attention(
                q[None], k, v, scale=1.0, temperature=t
            )[0][0],
            lambda q, k, v, t: F.scaled_dot_product_attention(q[None] / t, k, v, scale=1.0)[0],
        ],
    )
)

for name, (lexicon, says) in t01.SUSPECT_WRONG.items():
    add(values("check_new_suspect", name, (lexicon,), says))
add(
    values(
        "check_new_suspect",
        "a list of pairs",
        (list(t01.with_wang(WORD_FEATURES["张"]).items()),),
        "pass the lexicon",
    )
)
add(
    values(
        "check_new_suspect",
        "features as words",
        (t01.with_wang(("person",) * 6),),
        "must be numbers",
    )
)
add(
    values(
        "check_new_suspect",
        "张 changed as well",
        (dict(t01.with_wang(WORD_FEATURES["张"]), 张=(0.0,) * 6),),
        "only add 王",
    )
)

SEEK_PRONOUN = "the antecedent's query must seek the pronoun feature"
SEEK_GENDER = "check that the pronoun still seeks a person of its gender"
for name, says, *also in [
    ("the chapter's W_q unchanged", SEEK_PRONOUN),
    ("tied matrices", "w_q equals w_k", SEEK_PRONOUN, SEEK_GENDER),
    ("so strong that the pronoun looks at itself", SEEK_GENDER),
    ("an entry that makes names avoid pronouns", SEEK_PRONOUN),
    ("one matrix, not a pair", "pass a pair (w_q, w_k)"),
    ("wrong shape", "w_k must have shape (6, 6)"),
    ("integer matrices", "floating-point tensor"),
]:
    add(values("check_two_way_lookup", name, (t01.TWO_WAY_WRONG[name][0],), says, *also))
add(
    values(
        "check_two_way_lookup", "three matrices", ((torch.eye(6),) * 3,), "pass a pair (w_q, w_k)"
    )
)

# ---- chapter 2 -------------------------------------------------------------------------------
A = t02.attention
attention_mistakes = {
    "no scaling": (lambda q, k, v, m=None: A(q, k, v, m, scale=1.0), "forgot to divide the scores"),
    "divides by d": (lambda q, k, v, m=None: A(q, k, v, m, scale=1 / q.size(-1)), "not by d_k"),
    "scale of the values": (
        lambda q, k, v, m=None: A(q, k, v, m, scale=v.size(-1) ** -0.5),
        "not of the values",
    ),
    "softmax over the queries": (
        lambda q, k, v, m=None: A(q, k, v, m, dim=-2),
        "not over the queries",
    ),
    "mask inverted": (
        lambda q, k, v, m=None: A(q, k, v, m, invert=True),
        "mask convention is inverted",
    ),
    "mask ignored": (lambda q, k, v, m=None: A(q, k, v, None), "the mask is ignored"),
    "NaN for a fully masked row": (
        lambda q, k, v, m=None: A(q, k, v, m, zero_empty=False),
        "gives NaN",
    ),
    "-1e9 fill": (
        lambda q, k, v, m=None: A(q, k, v, m, fill=-1e9, zero_empty=False),
        "masked_fill(-1e9) trap",
    ),
    "multiplies by key": (lambda q, k, v, m=None: A(q, k, k, m), "not by key"),
    "softmax over the queries with a mask": (
        lambda q, k, v, m=None: A(q, k, v, m, dim=-2, zero_empty=False),
        "not over the queries",
    ),
    "returns the output only": (lambda q, k, v, m=None: A(q, k, v, m)[0], "return a pair"),
    "returns the scores": (
        lambda q, k, v, m=None: (A(q, k, v, m)[0], q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))),
        "not the scores",
    ),
    "dropout left on": (
        lambda q, k, v, m=None: (lambda o, w: (F.dropout(w, 0.1) @ v, F.dropout(w, 0.1)))(
            *A(q, k, v, m)
        ),
        "dropout",
    ),
    "scaled after the softmax": (
        lambda q, k, v, m=None: (
            lambda o, w: (w / math.sqrt(q.size(-1)) @ v, w / math.sqrt(q.size(-1)))
        )(*A(q, k, v, m, scale=1.0)),
        "you divided by √d_k after the softmax",
    ),
    "detached from the inputs": (
        lambda q, k, v, m=None: tuple(t.detach() for t in A(q, k, v, m)),
        "detached from the inputs",
    ),
}


def key_T(q, k, v, m=None):
    scores = q @ k.mT / math.sqrt(q.size(-1)) if q.dim() == 3 else q @ k.transpose(1, 2)
    if m is not None:
        scores = scores.masked_fill(~m, float("-inf"))
    w = torch.softmax(scores, -1).nan_to_num()
    return w @ v, w


def masked_after(q, k, v, m=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
    weights = weights if m is None else weights * m
    return weights @ v, weights


def nan_grad(q, k, v, m=None):
    out, w = A(q, k, v, m, zero_empty=False)
    return torch.nan_to_num(out), torch.nan_to_num(w)


attention_mistakes["key.T on 4-D inputs"] = (key_T, "key.transpose(-2, -1)")
attention_mistakes["weights zeroed after the softmax"] = (
    masked_after,
    "mask the scores before the softmax",
)
attention_mistakes["NaN gradient"] = (
    nan_grad,
    "contains NaN or inf (often from a fully masked row)",
)
attention_mistakes["output from the unmasked weights"] = (
    lambda q, k, v, m=None: (
        torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), -1) @ v,
        A(q, k, v, m)[1],
    ),
    "the weights are right but the output is not weights @ value",
)
for name, (answer, says) in attention_mistakes.items():
    add(fn("check_attention", name, answer, says))
add(
    fn(
        "check_attention",
        "two mistakes",
        lambda q, k, v, m=None: A(q, k, v, m, fill=-1e9, zero_empty=False, scale=1.0),
        "forgot to divide the scores",
        "masked_fill(-1e9) trap",
    )
)
HARD = "hard-coded to the first example"
MISTAKES.extend(
    m if m.name != HARD else fn(m.checker, HARD, m.answer[0], None, "detached from the inputs")
    for m in generic(
        "check_attention",
        A,
        library=[
            lambda q, k, v, m=None: attnbook.scaled_dot_product_attention(q, k, v, m),
            lambda q, k, v, m=None: (
                F.scaled_dot_product_attention(q, k, v, attn_mask=m).nan_to_num(),
                torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), -1),
            ),
        ],
    )
)

for name, (answer, says) in t02.PADDING_WRONG.items():
    says = "add the head and query dimensions" if says == "does not broadcast" else says
    add(fn("check_padding_to_sdpa", name, answer, says))
add(
    fn(
        "check_padding_to_sdpa",
        "the query dimension only",
        lambda kpm: ~kpm[:, None, :],
        "add the head and query dimensions",
    )
)
add(
    fn(
        "check_padding_to_sdpa",
        "integers",
        lambda kpm: (~kpm).long()[:, None, None, :],
        "refuses a mask of dtype",
    )
)
add(
    fn(
        "check_padding_to_sdpa",
        "transposed",
        lambda kpm: ~kpm.T[:, None, None, :],
        "keep N first and S last",
    )
)
MISTAKES.extend(
    generic(
        "check_padding_to_sdpa",
        lambda kpm: ~kpm[:, None, None, :],
        library=lambda kpm: mha_to_sdpa_mask(None, kpm, 4, torch.float32),
        float64=False,
        hard_coded=False,
    )
)

for args, says, *also in [
    ((256, 32), "σ⁴, not σ²"),
    ((64, 8), "that is the variance for σ = 1", "divide by σ²√d_k"),
    ((1024, 8), "divide by σ²√d_k"),
    ((1024, 16), "√(d_k σ⁴) = σ²√d_k"),
    ((1024, 1024), "divide by the standard deviation"),
    ((1000, 32), "expected d_k σ⁴ = 1024"),
    ((1024, 4), "expected σ²√d_k = 32"),
]:
    add(values("check_variance", f"{args}", args, says, *also))

for answer, says in [
    ((1_207_959_552, 805_306_368, 1536, 256), "did you count multiply-adds"),
    ((2_415_919_104, 805_306_368, 768, 256), "n = 2E, not n = E"),
    ((6 * 512 * 768**2, 805_306_368, 1536, 256), "that is three projections"),
    ((2_415_919_104, 805_306_368, 1152, 256), "three projections (6nE²)"),
    ((2_415_919_104, 805_306_368, 1536, 4 * 768), "divide by H"),
    ((2_415_919_104, 805_306_368, 1536, 64), "4·n·E numbers, not n·E"),
    ((2_415_919_104, 805_306_368, 1536, 1536), "that is the FLOP crossover"),
    ((2_415_919_104, 805_306_368, 1536), "missing: pass the fourth answer"),
    ((2_415_919_104, 12 * 805_306_368, 1536, 256), "expected 805,306,368"),
]:
    add(values("check_bert_cost", f"{answer}", answer, says))

from attnbook.exercises.ch02_numbers import largest_temperature  # noqa: E402

for answer, says in [
    (2.0, "a temperature above 1 flattens"),
    (1 / largest_temperature(), "divided by T, not multiplied"),
    (largest_temperature(scale=1.0), "leaves out the division by √d_k"),
    (0.25, "a larger temperature still does"),
    (0.261, "the answer is smaller"),
    (largest_temperature() + 1e-4, "round down"),
    (0.0, "must be a positive number"),
    (float("nan"), "must be a positive number"),
    ("0.257", "answer with a number"),
    (True, "answer with a number"),
]:
    add(values("check_largest_temperature", f"{answer!r}", (answer,), says))

# ---- chapter 3 -------------------------------------------------------------------------------
INTEGER = Fact("return the count as an integer")
for name, (answer, says) in t03.WRONG.items():
    add(fn("check_param_count", name, answer, INTEGER if "int" in says or "got" in says else says))
add(
    fn(
        "check_param_count",
        "no output projection",
        lambda E, H, bias=True, kdim=None, vdim=None: (
            t03.book_solution(E, H, bias, kdim, vdim) - E * E - (E if bias else 0)
        ),
        "the output projection (E x E",
        "786,432",
    )
)
add(
    fn(
        "check_param_count",
        "biases even without bias",
        lambda E, H, bias=True, kdim=None, vdim=None: t03.book_solution(E, H, True, kdim, vdim),
        "no biases to count",
    )
)
add(
    fn(
        "check_param_count",
        "kdim and vdim swapped in",
        lambda E, H, bias=True, kdim=None, vdim=None: (
            4 * E * E + (4 * E if bias else 0) + (0 if kdim is None else 1)
        ),
        None,
    )
)
MISTAKES.extend(
    generic(
        "check_param_count",
        t03.book_solution,
        library=lambda E, H, bias=True, kdim=None, vdim=None: mha_param_count_reference(
            E, H, bias, kdim, vdim
        ),
        tensors=False,
        float64=False,
    )
)
for name, (counts, says) in t03.FIXED_WRONG.items():
    says = Fact("give a dict with one count for each H") if "one count" in says else says
    add(values("check_fixed_head_size", name, (counts,), says))
add(
    values(
        "check_fixed_head_size",
        "a list",
        ([16_640, 66_048, 263_168, 1_050_624, 4_198_400],),
        Fact("give a dict with one count for each H"),
    )
)
add(
    values(
        "check_fixed_head_size",
        "strings",
        ({H: str(16_384 * H * H + 256 * H) for H in (1, 2, 4, 8, 16)},),
        Fact("give the count as an integer"),
    )
)

# ---- chapter 4 -------------------------------------------------------------------------------
SHAPE = Fact("must return shape")
for name, (answer, says) in t04.SPLIT_WRONG.items():
    add(fn("check_split_heads", name, answer, SHAPE if says == "must return shape" else says))
add(
    fn(
        "check_split_heads",
        "transpose(1, 3)",
        lambda x, H: x.view(x.size(0), x.size(1), H, -1).transpose(1, 3),
        SHAPE,
    )
)
MISTAKES.extend(
    generic("check_split_heads", t04.book_split, library=lambda x, H: mha.split_heads(x, H))
)
for name, (answer, says) in t04.MERGE_WRONG.items():
    add(fn("check_merge_heads", name, answer, SHAPE if says == "must return shape" else says))
add(
    fn(
        "check_merge_heads",
        "merged along the heads only",
        lambda x: x.permute(0, 2, 3, 1).reshape(x.size(0), x.size(2), -1),
        "position i must hold head 0's features",
    )
)
MISTAKES.extend(generic("check_merge_heads", t04.book_merge, library=attnbook.merge_heads))
for name, (answer, says) in t04.ADAPTER_WRONG.items():
    add(fn("check_article_mask", name, answer, says))
add(
    fn(
        "check_article_mask",
        "triu for causal",
        lambda kpm, causal=False: (
            (t04.book_article_mask(kpm) & torch.ones(5, 5, dtype=torch.bool).triu())
            if causal
            else t04.book_article_mask(kpm)
        ),
        "triu keeps the future",
    )
)
add(
    fn(
        "check_article_mask",
        "padding part inverted",
        lambda kpm, causal=False: (
            kpm[:, None, None, :] & (torch.ones(5, 5, dtype=torch.bool).tril() if causal else True)
        ),
        "padding part is inverted",
        "the mask is inverted",
    )
)
add(
    fn(
        "check_article_mask",
        "returns a list",
        lambda kpm, causal=False: t04.book_article_mask(kpm, causal).tolist(),
        "return a tensor the article can compare",
    )
)
MISTAKES.extend(
    generic("check_article_mask", t04.book_article_mask, float64=False, hard_coded=False)
)
for args, says in [
    (((12, 8), (1, 6, 8), (1, 2, 6, 5), 352), "weight (out, in) = (8, 12)"),
    (((8, 12), (1, 5, 8), (1, 2, 6, 5), 352), "one row per QUERY"),
    (((8, 12), (1, 6, 8), (1, 6, 5), 352), "one (L, S) = (6, 5) matrix per head"),
    (((8, 12), (1, 6, 8), (1, 2, 6, 5), 288), "weights are 8 x 12, not 8 x 8"),
    (((8, 12), (1, 6, 8), (1, 2, 6, 5), 320), "the four biases (8 each) are missing"),
    (((8, 12), (1, 6, 8), (1, 2, 6, 5), 352 - 72), "out_proj is missing"),
    (((8, 12), (1, 6, 8), (1, 2, 6, 5), 256), "out_proj and the biases are missing"),
    (((8, 12), (1, 6, 12), (1, 2, 6, 5), 352), "one row per QUERY"),
]:
    add(values("check_kdim_shapes", f"{args}", args, says))

# ---- chapter 5 -------------------------------------------------------------------------------
for answer, says in [
    (t05.concatenated_halves, "all the sines first"),
    (t05.swapped_sin_cos, "sine and cosine are swapped"),
    (t05.frequency_per_column, "must share one frequency"),
    (t05.exponent_doubled, "wavelengths grow too fast"),
    (t05.from_position_one, "your rows start at position 1"),
    (lambda L, E: t05.sinusoidal(L, E).T, Fact("the table must be (10, 6); got (6, 10)")),
    (lambda L, E: t05.sinusoidal(L, E).long(), Fact("must be floating point")),
    (lambda L, E: t05.sinusoidal(L, E) * 1.01, Fact("entry (position")),
    (lambda L, E: t05.sinusoidal(L, E)[:, torch.arange(E).flip(0)], None),
    (lambda L, E: t05.sinusoidal(E, L), None),
]:
    add(fn("check_sinusoidal_encoding", getattr(answer, "__name__", says or "other"), answer, says))
MISTAKES.extend(
    generic(
        "check_sinusoidal_encoding",
        t05.sinusoidal,
        library=sinusoidal_encoding,
        tensors=False,
        float64=False,
    )
)
for answer, says, *also in [
    (t05.post_ln, "this is post-LN"),
    (t05.residual_of_normalised, "the residual must carry the un-normalised x"),
    (t05.no_feed_forward, "the feed-forward sublayer is missing"),
    (lambda b, x: x + b.ff(b.norm2(x)), "the attention sublayer is missing"),
    (t05.extra_final_norm, "final layer norm inside the block"),
    (t05.swapped_norms, "you swapped the norms"),
    (t05.in_place, IN_PLACE, "dropout1 and dropout2 are not applied"),
    (t05.dropout_over_the_sum, "not to the sum"),
    (t05.no_dropout, "dropout1 and dropout2 are not applied"),
    (t05.swapped_dropouts, "dropout1 goes with the attention"),
    (lambda b, x: t05.pre_ln(b, x)[:, :1], Fact("return the same shape")),
    (lambda b, x: t05.pre_ln(b, x) + 0.1, Fact("differs from the pre-LN block by up to 0.1")),
    (lambda b, x: b(x)[0], "you called the block itself"),
    (lambda b, x: b.forward(x)[0], "you called the block itself"),
]:
    add(fn("check_pre_ln_block", getattr(answer, "__name__", says), answer, says, *also))
MISTAKES.extend(generic("check_pre_ln_block", t05.pre_ln, float64=False))
for total, attention, says in [
    (4_204_032, 1_050_624, "TWO attention layers"),
    (4_204_032, 2 * 4 * 512 * 512, "4 x 512 biases"),
    (4_204_032 - 3 * 1024, 2_101_248, "three layer norms"),
    (4_204_032 - 1024, 2_101_248, "three layer norms, one per sublayer"),
    (4_204_032 - 2_099_712, 2_101_248, "feed-forward network (512 x 2048"),
    (4_204_032 - 2048 - 512, 2_101_248, "feed-forward network's biases"),
]:
    add(values("check_decoder_count", f"{total}, {attention}", (total, attention), says))

lr = t05.transformer_lr
for name, answer, says in [
    (
        "warmup_steps**-0.5",
        lambda s, d, w: d**-0.5 * min(s**-0.5, s * w**-0.5),
        "warmup_steps**-1.5",
    ),
    ("no d_model factor", lambda s, d, w: min(s**-0.5, s * w**-1.5), "d_model**-0.5"),
    ("max", lambda s, d, w: d**-0.5 * max(s**-0.5, s * w**-1.5), "MINIMUM"),
    ("0-based", lambda s, d, w: lr(s + 1, d, w), "0-based"),
    ("a constant (d·w)^-0.5", lambda s, d, w: (d * w) ** -0.5, "at every step"),
    ("a constant", lambda s, d, w: 1e-3, "at every step"),
    ("a string", lambda s, d, w: "fast", Fact("return a number")),
    ("warm-up only", lambda s, d, w: d**-0.5 * s * w**-1.5, None),
    ("decay only", lambda s, d, w: d**-0.5 * s**-0.5, None),
    (
        "wrong at one step",
        lambda s, d, w: lr(s, d, w) * (1.01 if s == 1 else 1),
        Fact("at step 1 the rate should be"),
    ),
]:
    add(fn("check_transformer_schedule", name, answer, says))
MISTAKES.extend(
    m if m.name != HARD else fn(m.checker, HARD, m.answer[0], "at every step")
    for m in generic(
        "check_transformer_schedule",
        lr,
        library=lambda s, d, w: (d * w) ** -0.5 * lr_factor(s, w, 10**9, "inverse_sqrt"),
        tensors=False,
        float64=False,
    )
)
kv = t05.kv_rows
for name, answer, says, *also in [
    ("T*T", lambda T, S, n, c: kv(T, S, n, c) if c else n * (T * T + T * S), "rows, not T*T"),
    (
        "no cross-attention",
        lambda T, S, n, c: n * T if c else n * T * (T + 1) // 2,
        "cross-attention keys count",
    ),
    (
        "memory at every step with the cache",
        lambda T, S, n, c: n * (T + T * S) if c else kv(T, S, n, c),
        "projected once",
    ),
    ("one layer", lambda T, S, n, c: kv(T, S, 1, c), "num_layers", "memory again at every step"),
    (
        "keys and values",
        lambda T, S, n, c: 2 * kv(T, S, n, c),
        "value projections see the same rows",
    ),
    ("<s> counted", lambda T, S, n, c: kv(T + 1, S, n, c), "<s> is the first step's input"),
    (
        "T(T-1)/2",
        lambda T, S, n, c: kv(T, S, n, c) if c else n * (T * (T - 1) // 2 + T * S),
        "not T(T - 1)/2",
    ),
    ("a constant", lambda T, S, n, c: 7, Fact("expected 18 rows; got 7")),
    ("a fraction", lambda T, S, n, c: 2.5, Fact("whole number of rows")),
]:
    add(fn("check_kv_rows", name, answer, says, *also))
add(
    fn(
        "check_kv_rows",
        "memory once without the cache",
        t05.memory_once,
        "memory again at every step",
        "num_layers",
    )
)
MISTAKES.extend(generic("check_kv_rows", kv, tensors=False, float64=False))
