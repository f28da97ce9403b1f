"""Catalogue, chapters 11 to 20: training in linear memory to the outlook."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from attnbook.attention import scaled_dot_product_attention
from attnbook.exercises.ch16_pretrained import reference_mean_pool
from attnbook.interp.head_stats import head_entropy
from attnbook.interp.redundancy import dead_heads
from attnbook.interp.roles import candidate_choice, hit_rate, offset_weight
from attnbook.interp.rollout import attention_rollout
from attnbook.lab.decoding import kv_cache_bytes
from attnbook.lab.tuning import distillation_loss, head_diversity_penalty
from attnbook.models.vit import patchify
from attnbook.positional import rotate
from attnbook.tasks.stories import PLACES, last_place_rule, supporting_share
from attnbook.tasks.summaries import STOPWORDS, central_sentence
from attnbook.tasks.translation import number_to_chinese

from .. import test_ch11_training as t11
from .. import test_ch12_translation as t12
from .. import test_ch13_reading as t13
from .. import test_ch14_summarising as t14
from .. import test_ch15_vision as t15
from .. import test_ch16_pretrained as t16
from .. import test_ch17_real_heads as t17
from ..test_chinese import solution
from . import Fact, Mistake, fn, generic, values

MISTAKES: list[Mistake] = []
add = MISTAKES.append
SHAPE = Fact("must return shape")

# ---- chapter 11 ------------------------------------------------------------------------------
B = t11.book_solution


def with_slip(*, no_d=False, d_added=False, p_unscaled=False, dq=1.0, dk=1.0, dv_scale=1.0):
    def answer(query, key, value, output, lse, grad_output):
        scale = query.size(-1) ** -0.5
        p = torch.exp(query @ key.T * (1.0 if p_unscaled else scale) - lse)
        d = 0.0 if no_d else (grad_output * output).sum(-1, keepdim=True)
        ds = p * (grad_output @ value.T + d) if d_added else p * (grad_output @ value.T - d)
        return dq * scale * ds @ key, dk * scale * ds.T @ query, dv_scale * p.T @ grad_output

    return answer


def autograd_answer(query, key, value, output, lse, grad_output):
    q, k, v = (t.clone().requires_grad_() for t in (query, key, value))
    out, _ = scaled_dot_product_attention(q, k, v)
    out.backward(grad_output)
    return q.grad, k.grad, v.grad


def vjp_answer(query, key, value, output, lse, grad_output):
    _, vjp = torch.func.vjp(
        lambda a, b, c: scaled_dot_product_attention(a, b, c)[0], query, key, value
    )
    return vjp(grad_output)


def grad_answer(query, key, value, output, lse, grad_output):
    q, k, v = (t.clone().requires_grad_() for t in (query, key, value))
    p = torch.softmax(q @ k.T / q.size(-1) ** 0.5, -1)
    return torch.autograd.grad(p @ v, (q, k, v), grad_output)


for name, answer, says in [
    ("D missing", with_slip(no_d=True), "the term D_i"),
    ("D as a plain row sum", t11.plain_row_sum, "not its plain sum"),
    ("D added", with_slip(d_added=True), "subtract D_i, do not add it"),
    ("dQ unscaled", with_slip(dq=math.sqrt(4)) if False else t11.no_scale, "so dQ = (1/√E) dS K"),
    ("P from unscaled scores", with_slip(p_unscaled=True), "lse belongs to the scaled scores"),
    ("dV doubled", with_slip(dv_scale=2.0), "these gradients differ from autograd's: d_value"),
    ("a pair", lambda *a: B(*a)[:2], Fact("return a triple")),
    ("edits an input", t11.edits_output, "in place"),
    ("backward()", autograd_answer, "uses autograd"),
    ("torch.func.vjp", vjp_answer, "uses autograd"),
    ("torch.autograd.grad", grad_answer, "uses autograd"),
    ("dQ and dK swapped", lambda *a: (lambda g: (g[1], g[0], g[2]))(B(*a)), None),
]:
    add(fn("check_attention_backward", name, answer, says))


def dk_unscaled(query, key, value, output, lse, grad_output):
    dq, dk, dv = B(query, key, value, output, lse, grad_output)
    return dq, dk * query.size(-1) ** 0.5, dv


add(fn("check_attention_backward", "dK unscaled", dk_unscaled, "so dK = (1/√E) dSᵀ Q"))
MISTAKES.extend(generic("check_attention_backward", B, float64=True))

MiB = 2**20
for answer, says, *also in [
    ((96 * MiB, MiB // 2), "the output O is kept too"),
    ((32 * MiB, MiB // 2), "that is one of the four tensors", "that is the number of floats"),
    ((32 * MiB, MiB // 8), "that is the number of floats", "that is one of the four tensors"),
    ((16 * MiB, MiB // 16), "that is one head-batch"),
    ((128 * MiB + MiB // 2, MiB // 2), "and the log-sum-exp apart"),
    ((224 * MiB, MiB // 2), "the three gradients"),
    ((128, 0.5), "that is in MiB"),
    ((134.217728, MiB // 2), "millions of bytes"),
    ((128 * MiB, 32 * MiB), "one number per query"),
    ((128 * MiB, "0.5 MiB"), Fact("answer with a number of bytes")),
    ((128 * 10**6, MiB // 2), Fact("expected 4 tensors")),
]:
    add(values("check_backward_memory", f"{answer}", answer, says, *also))

# ---- chapter 12 ------------------------------------------------------------------------------
H = t12.by_hand
for name, answer, says in [
    ("两", lambda n: H(n).replace("二", "两"), "this book writes 二 everywhere"),
    (
        "一十 at the start",
        lambda n: "一" + H(n) if H(n).startswith("十") else H(n),
        "starts with ten drops the 一",
    ),
    ("十 inside", lambda n: H(n)[0] + H(n)[1:].replace("一十", "十"), "ten keeps its 一"),
    ("no 零", lambda n: H(n).replace("零", "") or "零", "one 零 per run (also before"),
    ("a 零 per zero digit", lambda n: H(n).replace("零", "零零"), "none for zeros at the end"),
    ("〇", lambda n: H(n).replace("零", "〇"), "〇 is for digits read one by one"),
    ("no 万", lambda n: H(n).replace("万", ""), "the 万 is missing"),
    (
        "the last four digits only",
        lambda n: H(n % 10_000) if n % 10_000 else "零",
        "last four digits only",
    ),
    (
        "the group after 万 dropped",
        lambda n: H(n).split("万")[0] + "万" if "万" in H(n) else H(n),
        "the group after 万 is missing",
    ),
    ("digits one by one", lambda n: "".join("零一二三四五六七八九"[int(d)] for d in str(n)), None),
    (
        "a lookup table of the rules",
        lambda n: {x: H(x) for x in (0, 2, 7, 10, 11, 20, 22)}[n],
        None,
    ),
    ("an int", lambda n: n, Fact("must return a str")),
    ("zero forgotten", lambda n: H(n) if n else "", "zero itself is read 零"),
    ("the library", number_to_chinese, "which computes the answer for you"),
    (
        "the library in a lambda",
        lambda n: number_to_chinese(n),
        "which computes the answer for you",
    ),
]:
    add(fn("check_number_to_chinese", name, answer, says))
MISTAKES.extend(generic("check_number_to_chinese", H, tensors=False, float64=False))

# ---- chapter 13 ------------------------------------------------------------------------------


def first_place(story):
    return next((t for s in story.sentences for t in s if t in PLACES), None)


for name, answer, says in [
    (
        "the last word of the last sentence",
        lambda story: story.sentences[-1][-2],
        "a take sentence names an object",
    ),
    ("the first place", first_place, None),
    (
        "an empty string for no place",
        lambda story: t13.last_place(story) or "",
        Fact("so the answer is None"),
    ),
    ("the story's answer", lambda story: story.answer, None),
]:
    add(fn("check_last_place", name, answer, says))
MISTAKES.extend(
    generic(
        "check_last_place", t13.last_place, library=last_place_rule, tensors=False, float64=False
    )
)
S13 = t13.share
for name, answer, says in [
    (
        "the first supporting sentence only",
        lambda w, s, sup: S13(w, s, sup[:, :1]),
        "the first supporting sentence only",
    ),
    (
        "the mean, not the sum",
        lambda w, s, sup: (lambda hit: (w * hit).sum(-1) / hit.sum(-1).clamp_min(1))(
            ((s[:, :, None] == sup[:, None, :]) & (sup >= 0)[:, None, :]).any(-1).float()
        ),
        "the share is their SUM",
    ),
    (
        "the padding counted",
        lambda w, s, sup: (w * (s[:, :, None] == sup[:, None, :]).any(-1)).sum(-1),
        "you counted the padding token",
    ),
    (
        "a sentence counted twice",
        lambda w, s, sup: (
            w[:, :, None] * ((s[:, :, None] == sup[:, None, :]) & (sup >= 0)[:, None, :])
        ).sum((1, 2)),
        "counted sentence 2 twice",
    ),
    (
        "one sentence off",
        lambda w, s, sup: S13(w, s, torch.where(sup >= 0, sup + 1, sup)),
        "the sentence AFTER each supporting one",
    ),
    ("a scalar", lambda w, s, sup: S13(w, s, sup).mean(), SHAPE),
]:
    add(fn("check_supporting_share", name, answer, says))
MISTAKES.extend(generic("check_supporting_share", S13, library=supporting_share))

# ---- chapter 14 ------------------------------------------------------------------------------


def central(**kind):
    def answer(sentences):
        s = t14._scores(sentences, **kind)
        return s.index(max(s))

    return answer


def latest(sentences):
    s = t14._scores(sentences)
    return len(s) - 1 - s[::-1].index(max(s))


def repeats(sentences):
    words = [[w for w in s if w not in STOPWORDS] for s in sentences]
    s = [
        sum(sum(1 for x in w if x in set(o)) for j, o in enumerate(words) if j != i)
        for i, w in enumerate(words)
    ]
    return s.index(max(s))


def by_length(sentences):
    words = [set(s) - STOPWORDS for s in sentences]
    s = [
        sum(len(w & o) for j, o in enumerate(words) if j != i) / max(1, len(w))
        for i, w in enumerate(words)
    ]
    return s.index(max(s))


for name, answer, says in [
    ("stop words counted", central(stop=False), "count the stop words too?"),
    ("itself counted", central(self_too=True), None),
    ("ties to the latest", latest, "ties go to the EARLIEST sentence"),
    ("repeats counted", repeats, "count repeated words more than once?"),
    ("divided by the length", by_length, "divide by the sentence's length?"),
    ("the first sentence", lambda sentences: 0, None),
    (
        "the longest sentence",
        lambda sentences: max(range(len(sentences)), key=lambda i: len(sentences[i])),
        None,
    ),
    ("a string", lambda sentences: "0", Fact("return a sentence index")),
]:
    add(fn("check_central_sentence", name, answer, says))
MISTAKES.extend(
    generic(
        "check_central_sentence", central(), library=central_sentence, tensors=False, float64=False
    )
)

# ---- chapter 15 ------------------------------------------------------------------------------
for name, answer, says in [
    ("reshape without permute", lambda x, p: x.reshape(x.size(0), -1, p * p), "strips"),
    ("columns first", t15.columns_first, "down the columns first"),
    ("pixels transposed", t15.pixels_transposed, "column by column"),
    ("too few pixels", lambda x, p: t15.book_patchify(x, p)[:, :, :2], SHAPE),
    ("edits the images", t15.in_place, "in place"),
    (
        "the image transposed",
        lambda x, p: (
            t15.book_patchify(x.transpose(1, 2), p)
            if x.size(1) == x.size(2)
            else t15.book_patchify(x, p)
        ),
        None,
    ),
]:
    add(fn("check_patchify", name, answer, says))
MISTAKES.extend(generic("check_patchify", t15.book_patchify, library=patchify))
R = t15.rollout_with
for name, answer, says in [
    ("the wrong order", R(lambda w, eye: 0.5 * w.mean(1) + 0.5 * eye, "right"), "wrong order"),
    ("no identity", R(lambda w, eye: w.mean(1)), "left out the identity"),
    ("one head", R(lambda w, eye: 0.5 * w[:, 0] + 0.5 * eye), "average the weights over the heads"),
    ("W + I", R(lambda w, eye: w.mean(1) + eye), "sum to 2"),
    (
        "the maximum over heads",
        R(lambda w, eye: 0.5 * w.max(1).values + 0.5 * eye),
        "maximum over the heads",
    ),
    ("each head rolled out", t15.per_head_rollout, "each head separately"),
    ("the identity once", t15.residual_once, "added once, after multiplying"),
    (
        "transposed",
        lambda weights: t15.book_rollout([w.transpose(-1, -2) for w in weights]),
        "weights are transposed",
    ),
    ("one row", lambda weights: t15.book_rollout(weights)[:, 0], SHAPE),
    (
        "the last layer only",
        lambda weights: 0.5 * weights[-1].mean(1) + 0.5 * torch.eye(weights[-1].size(-1)),
        None,
    ),
]:
    add(fn("check_rollout", name, answer, says))
MISTAKES.extend(
    generic(
        "check_rollout",
        t15.book_rollout,
        library=lambda weights: attention_rollout(weights, residual=0.5),
    )
)

# ---- chapter 16 ------------------------------------------------------------------------------
BERT_SAYS = {
    "embeddings": "you counted the blocks only",
    "layer norms": "the layer norms are missing",
    "biases": "the biases of the six linear layers",
    "attention biases": "4E per block is missing",
    "integer": Fact("return an integer"),
    "output projection": "output projection (E x E + E per block)",
}
for name, (answer, says) in t16.WRONG_COUNTS.items():
    add(fn("check_bert_param_count", name, answer, BERT_SAYS.get(says, says)))
add(
    fn(
        "check_bert_param_count",
        "no segment embedding",
        lambda V, E, n, Fd, P, T: t16.count(V, E, n, Fd, P, T) - T * E,
        "the segment (token type) embedding",
    )
)
add(
    fn(
        "check_bert_param_count",
        "no position embedding",
        lambda V, E, n, Fd, P, T: t16.count(V, E, n, Fd, P, T) - P * E,
        "the learned position embedding",
    )
)
add(
    fn(
        "check_bert_param_count",
        "one block",
        lambda V, E, n, Fd, P, T: 4 * E * E + 4 * E + 2 * E * Fd + Fd + E + 4 * E,
        "that is one block",
    )
)
MISTAKES.extend(generic("check_bert_param_count", t16.count, tensors=False, float64=False))
for name, (answer, says) in t16.WRONG_POOLS.items():
    add(fn("check_mean_pool", name, answer, says))
add(
    fn(
        "check_mean_pool",
        "the sum, normalised per token",
        lambda h, m: F.normalize(F.normalize(h, dim=-1).mul(m.unsqueeze(-1)).sum(1), dim=-1),
        "normalised each token before pooling",
    )
)
add(
    fn(
        "check_mean_pool",
        "divided by L",
        lambda h, m: (h * m.unsqueeze(-1)).sum(1) / h.size(1),
        None,
    )
)
MISTAKES.extend(generic("check_mean_pool", solution("ch16-ex-pool"), library=reference_mean_pool))
for name, edit, says in [
    ("no [CLS] and [SEP]", lambda t: t[1:-1], "[CLS] at the start"),
    ("capitals kept", lambda t: [t[0], "Old", "Zhang", *t[3:]], "lower-cases"),
    (
        "Chinese characters kept",
        lambda t: [*t[:4], "老", "张", *t[6:]],
        "not in this English vocabulary",
    ),
    ("one [UNK]", lambda t: [*t[:4], "[UNK]", *t[6:]], "two tokens, each [UNK]"),
    ("a whole word", lambda t: [*t[:7], "interrogated", *t[9:]], "'inter' and '##rogated'"),
    ("no ##", lambda t: [*t[:8], "rogated", *t[9:]], "written with '##'"),
    ("the wrong split", lambda t: [*t[:7], "interrogate", "##d", *t[9:]], "greedily"),
    ("punctuation attached", lambda t: [*t[:10], "witness.", t[-1]], "punctuation is split off"),
    ("a string", lambda t: "old zhang", Fact("give a list of strings")),
    ("a token missing", lambda t: t[:-2] + t[-1:], Fact("token 11 differs")),
]:
    add(values("check_predicted_tokens", name, (edit(list(t16.RIGHT_TOKENS)),), says))

# ---- chapter 17 ------------------------------------------------------------------------------
P17 = t17.previous
for name, answer, says in [
    ("the mask read as True = padding", t17.previous_mask_inverted, "wrong way round"),
    ("the next token", t17.previous_next_token, "the NEXT token"),
    (
        "the mask ignored",
        lambda w, m: torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).mean((0, 2)),
        "padding queries too",
    ),
    (
        "[CLS] counted",
        lambda w, m: (
            lambda q: (
                (
                    torch.cat([torch.zeros(*w.shape[:2], 1), torch.diagonal(w, -1, -2, -1)], -1) * q
                ).sum((0, 2))
                / q.sum((0, 2))
            )
        )(m.float()[:, None, :]),
        "[CLS] as a query too",
    ),
    (
        "per sentence first",
        lambda w, m: (lambda q: ((torch.diagonal(w, -1, -2, -1) * q).sum(-1) / q.sum(-1)).mean(0))(
            (m.bool()[:, 1:] & m.bool()[:, :-1]).float()[:, None, :]
        ),
        "per sentence first",
    ),
    (
        "the diagonal",
        lambda w, m: P17(torch.diagonal(w, 0, -2, -1).diag_embed().roll(-1, -1), m),
        None,
    ),
]:
    add(fn("check_previous_weight", name, answer, says))
MISTAKES.extend(
    generic("check_previous_weight", P17, library=lambda w, m: offset_weight([w], m, -1)[0])
)
HITS = t17.hits
for name, answer, says in [
    ("over half", t17.hits_over_half, "more than half"),
    ("the column", lambda w, p, c, a: HITS(w.transpose(-1, -2), p, c, a), "COLUMN"),
    ("the first name", lambda w, p, c, a: HITS(w, p, c, torch.zeros_like(a)), "FIRST name"),
    ("the other name", lambda w, p, c, a: 1 - HITS(w, p, c, a), "the other name's wins"),
    (
        "the mean weight",
        lambda w, p, c, a: w[torch.arange(len(p)), :, p, c[torch.arange(len(p)), a]].mean(0),
        "the mean weight on the antecedent",
    ),
    (
        "the argmax of the row",
        lambda w, p, c, a: (
            (w[torch.arange(len(p)), :, p].argmax(-1) == c[torch.arange(len(p)), a][:, None])
            .float()
            .mean(0)
        ),
        "argmax over the whole row",
    ),
]:
    add(fn("check_candidate_hits", name, answer, says))
MISTAKES.extend(
    generic(
        "check_candidate_hits",
        HITS,
        library=lambda w, p, c, a: hit_rate(candidate_choice(w[None], p, c), a)[0],
    )
)

# ---- chapter 18 ------------------------------------------------------------------------------
SOFT = solution("ch18-ex-soft")


def soft(
    student,
    teacher,
    targets,
    T,
    *,
    reverse=False,
    t_soft=True,
    s_soft=True,
    reduce="mean",
    power=2,
    every=False,
    ce=False,
):
    scored = torch.ones_like(targets, dtype=torch.bool) if every else targets != -100
    log_s = F.log_softmax(student[scored] / (T if s_soft else 1.0), -1)
    log_t = F.log_softmax(teacher[scored] / (T if t_soft else 1.0), -1)
    p, q = (log_s, log_t) if reverse else (log_t, log_s)
    kl = (p.exp() * (p - q)).sum(-1)
    value = {"mean": kl.mean(), "sum": kl.sum(), "batch": kl.sum() / student.size(0)}[reduce]
    value = value * T**power
    if ce:
        value = value + F.cross_entropy(student[targets != -100], targets[targets != -100])
    return value


for name, kwargs, says in [
    ("no T²", dict(power=0), "you left out the T² factor"),
    ("T, not T²", dict(power=1), "the factor is T², not T"),
    ("KL reversed", dict(reverse=True), "your KL runs the wrong way"),
    ("teacher not softened", dict(t_soft=False), "divide the teacher's logits by T too"),
    ("student not softened", dict(s_soft=False), "divide the student's logits by T too"),
    ("every position", dict(every=True), "the unscored ones too"),
    ("summed over positions", dict(reduce="sum"), "you summed over the scored positions: average"),
    ("divided by N", dict(reduce="batch"), "divided by N, the number of sequences"),
    ("with cross-entropy", dict(ce=True), "you added the cross-entropy with the targets"),
]:
    add(fn("check_soft_loss", name, lambda s, t, y, T, kw=kwargs: soft(s, t, y, T, **kw), says))
add(
    fn(
        "check_soft_loss",
        "soft cross-entropy",
        lambda s, t, y, T: (
            lambda sc: (
                -(F.softmax(t[sc] / T, -1) * F.log_softmax(s[sc] / T, -1)).sum(-1).mean() * T * T
            )
        )(y != -100),
        "not the KL",
    )
)
add(
    fn(
        "check_soft_loss",
        "mean over the classes",
        lambda s, t, y, T: (
            lambda sc: (lambda lt, ls: (lt.exp() * (lt - ls)).mean() * T * T)(
                F.log_softmax(t[sc] / T, -1), F.log_softmax(s[sc] / T, -1)
            )
        )(y != -100),
        "averaged over the classes too",
    )
)
add(
    fn(
        "check_soft_loss",
        "no gradient",
        lambda s, t, y, T: torch.tensor(SOFT(s, t, y, T).item()),
        "carries no gradient",
    )
)
MISTAKES.extend(
    generic(
        "check_soft_loss", SOFT, library=lambda s, t, y, T: distillation_loss(s, t, y, T, alpha=1.0)
    )
)
DIV = solution("ch18-ex-diversity")


def diversity(weights, *, dim=-1, diagonal=False, dot=False, whole=False, reduce="mean"):
    H = weights.shape[1]
    if whole:
        unit = F.normalize(weights.flatten(2), dim=-1)
        cos = torch.einsum("nax,nbx->ab", unit, unit) / weights.size(0)
    else:
        unit = weights if dot else F.normalize(weights, dim=dim)
        cos = torch.einsum("nals,nbls->ab", unit, unit) / (weights.size(0) * weights.size(2))
    off = torch.ones(H, H, dtype=torch.bool) if diagonal else ~torch.eye(H, dtype=torch.bool)
    return {"mean": cos[off].mean(), "sum": cos[off].sum(), "H2": cos[off].sum() / (H * H)}[reduce]


for name, kwargs, says in [
    ("normalised over the queries", dict(dim=-2), "you normalised along the queries"),
    ("the diagonal included", dict(diagonal=True), "similarity with itself"),
    ("dot products", dict(dot=True), "plain dot products"),
    ("the whole map", dict(whole=True), "whole (L, S) map as one vector"),
    ("summed over pairs", dict(reduce="sum"), "you summed over the pairs of heads"),
    ("divided by H²", dict(reduce="H2"), "by H²"),
]:
    add(fn("check_diversity", name, lambda w, kw=kwargs: diversity(w, **kw), says))
add(fn("check_diversity", "one minus", lambda w: 1 - DIV(w), "1 - similarity (a distance)"))
MISTAKES.extend(generic("check_diversity", DIV, library=head_diversity_penalty))

# ---- chapter 19 ------------------------------------------------------------------------------
UNI = solution("ch19-ex-uniformity")


def uniformity(w, m, *, divide="real", guard=True, queries="real", clamp=True, per_sentence=False):
    real = ~m
    entropy = -(w * (w.clamp_min(1e-12) if clamp else w).log()).sum(-1)  # (N, H, L)
    count = {
        "real": real.sum(-1).float()[:, None, None],
        "all": torch.full((1, 1, 1), float(w.size(-1))),
        "nonzero": (w > 0).sum(-1).float(),
        "none": None,
    }[divide]
    if count is not None:
        entropy = entropy / (count.clamp_min(2) if guard else count).log()
    keep = {"real": real, "all": torch.ones_like(real), "padding": m}[queries].float()[:, None, :]
    if per_sentence:
        return ((entropy * keep).sum(-1) / keep.sum(-1)).mean(0)
    return (entropy * keep).sum((0, 2)) / keep.sum((0, 2))


for name, kwargs, says in [
    ("log(L)", dict(divide="all"), "you divided by log(L)"),
    ("in nats", dict(divide="none"), "that is the entropy in nats"),
    ("padding rows counted", dict(queries="all"), "you averaged over the padding queries too"),
    ("padding rows only", dict(queries="padding"), "you kept the padding rows only"),
    ("per sentence first", dict(per_sentence=True), "you averaged per sentence first"),
    ("0 log 0", dict(clamp=False), "0 * log 0 = 0 * (-inf) = nan"),
    ("one real key unguarded", dict(guard=False), "a sentence with one real key"),
    (
        "non-zero weights unguarded",
        dict(divide="nonzero", guard=False),
        "a one-hot row has one key with weight",
    ),
    ("non-zero weights", dict(divide="nonzero"), "keys with non-zero weight; the yardstick"),
]:
    add(fn("check_uniformity", name, lambda w, m, kw=kwargs: uniformity(w, m, **kw), says))
MISTAKES.extend(
    generic("check_uniformity", UNI, library=lambda w, m: head_entropy([w], m, normalise=True)[0])
)
VER = solution("ch19-ex-verdicts")


def verdicts(
    single,
    pairs,
    *,
    needed=lambda c: c >= 0.005,
    covers=lambda c: c >= 0.02,
    partners="harmless",
    excess=False,
    pairs_ignored=False,
):
    layers, H = single.shape
    heads = [(layer, h) for layer in range(layers) for h in range(H)]
    harmless = [x for x in heads if not needed(float(single[x]))]
    out = {}
    for x in heads:
        if x not in harmless:
            out[x] = "needed"
            continue
        others = harmless if partners == "harmless" else heads
        costs = [
            pairs.get((x, y), pairs.get((y, x)))
            - (float(single[x]) + float(single[y]) if excess else 0)
            for y in others
            if y != x
        ]
        out[x] = "redundant" if not pairs_ignored and any(covers(c) for c in costs) else "dead"
    return out


for name, kwargs, says in [
    (
        "> 0.005",
        dict(needed=lambda c: c > 0.005),
        "costs exactly 0.005 alone is needed (0.005 or more); use >=",
    ),
    (
        "> 0.02",
        dict(covers=lambda c: c > 0.02),
        "a pair that costs exactly 0.02 makes its heads redundant (0.02 or more); use >=",
    ),
    (
        "both strict",
        dict(needed=lambda c: c > 0.005, covers=lambda c: c > 0.02),
        "is needed and a pair that costs exactly 0.02",
    ),
    ("pairs ignored", dict(pairs_ignored=True), "no head is redundant in your answer"),
    ("any partner", dict(partners="all"), "a pair of them with a NEEDED head"),
    ("the excess", dict(excess=True), "you compared the EXCESS"),
]:
    add(fn("check_verdicts", name, lambda s, p, kw=kwargs: verdicts(s, p, **kw), says))
for name, answer, says in [
    (
        "capitalised",
        lambda s, p: {k: v.capitalize() for k, v in VER(s, p).items()},
        "in lower case",
    ),
    (
        "every head needed",
        lambda s, p: {k: "needed" for k in VER(s, p)},
        Fact("(your verdict, the right one) per head"),
    ),
    (
        "pairs read one way only",
        lambda s, p: (lambda get: VER(s, get))(
            type("P", (dict,), {"get": lambda self, k, d=None: self[k]})(p)
        ),
        "Look a pair up in both orders",
    ),
    ("a list", lambda s, p: list(VER(s, p).values()), Fact("must return a dict")),
    (
        "1-based heads",
        lambda s, p: {(a + 1, b + 1): v for (a, b), v in VER(s, p).items()},
        Fact("expected a verdict for each of the heads"),
    ),
    (  # a fresh learner's slip: a head whose removal helps called needed
        "harmless by the absolute cost",
        lambda s, p: VER(s.abs(), p),
        Fact("(your verdict, the right one) per head"),
    ),
]:
    add(fn("check_verdicts", name, answer, says))
MISTAKES.extend(
    generic(
        "check_verdicts",
        VER,
        library=lambda s, p: dead_heads(s, {k: (v, 0.0) for k, v in p.items()}),
        float64=False,
    )
)

# ---- chapter 19b -----------------------------------------------------------------------------
for name, answer, says in [
    ("swapped", lambda d, f: 65504.0 if f else 65504.0 * math.sqrt(d), "the two cases are swapped"),
    ("65504 for both", lambda d, f: 65504.0, "you gave 65504 whether or not"),
    (
        "65504·√d for both",
        lambda d, f: 65504.0 * math.sqrt(d),
        "you gave 65504·sqrt(head_dim) whether or not",
    ),
    ("1/d", lambda d, f: 65504.0 * d if f else 65504.0, "not 1/head_dim"),
    ("smaller", lambda d, f: 65504.0 / math.sqrt(d) if f else 65504.0, "LARGER, not smaller"),
    ("65536", lambda d, f: 65536.0 * (math.sqrt(d) if f else 1.0), "65536 is already infinity"),
    (
        "float32",
        lambda d, f: float(torch.finfo(torch.float32).max) * (math.sqrt(d) if f else 1.0),
        "float32's largest value",
    ),
    ("the square of the scale", lambda d, f: 65504.0 * (d if f else 1) ** 0.25, None),
    ("a word", lambda d, f: "sixty-five thousand", Fact("return a number")),
    ("a numeral string", lambda d, f: "65504", "you gave 65504 whether or not"),
    # a fresh learner's slips: right only where head_dim is a perfect square
    ("integer square root", lambda d, f: 65504.0 * math.isqrt(d) if f else 65504.0, None),
    ("int of the root", lambda d, f: 65504.0 * int(d**0.5) if f else 65504.0, None),
]:
    add(fn("check_largest_dot", name, answer, says))
MISTAKES.extend(
    m
    if m.name != "hard-coded to the first example"
    else fn(m.checker, m.name, m.answer[0], "you gave 65504 whether or not")
    for m in generic(
        "check_largest_dot", solution("ch19b-ex-largest"), tensors=False, float64=False
    )
)
ROT = solution("ch19b-ex-rotate")


def rotate_with(*, start=0, sign=1.0, exponent=2, layout="pairs"):
    def answer(x):
        L, D = x.shape[-2], x.shape[-1]
        theta = 10000.0 ** (-exponent * torch.arange(0, D // 2, dtype=torch.float64) / D)
        angle = torch.arange(start, start + L, dtype=torch.float64)[:, None] * theta
        cos, sin = angle.cos().to(x.dtype), sign * angle.sin().to(x.dtype)
        if layout == "halves":
            a, b = x[..., : D // 2], x[..., D // 2 :]
            return torch.cat((a * cos - b * sin, a * sin + b * cos), -1)
        a, b = x[..., 0::2], x[..., 1::2]
        if layout == "concatenated":
            return torch.cat((a * cos - b * sin, a * sin + b * cos), -1)
        return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)

    return answer


for name, answer, says in [
    ("nothing rotated", lambda x: x.clone(), "nothing was rotated"),
    ("positions from 1", rotate_with(start=1), "you started at 1"),
    ("the other way", rotate_with(sign=-1.0), "turns the wrong way"),
    ("10000**(-i/D)", rotate_with(exponent=1), "you used 10000**(-i/D)"),
    ("concatenated", rotate_with(layout="concatenated"), "interleave them"),
    ("GPT-NeoX halves", rotate_with(layout="halves"), "the layout of GPT-NeoX"),
    (
        "a 2-D input only",
        lambda x: ROT(x) if x.dim() == 2 else ROT(x.reshape(-1, x.size(-1))).reshape(x.shape),
        None,
    ),
]:
    add(fn("check_rotate", name, answer, says))
MISTAKES.extend(generic("check_rotate", ROT, library=rotate))

# ---- chapter 20 ------------------------------------------------------------------------------
CACHE = solution("ch20-ex-cache")
for name, answer, says, *also in [
    (
        "keys only",
        lambda *a: CACHE(*a) // 2,
        "the keys AND the values",
        "multiply the number of values by the bytes",
    ),
    ("every query head", lambda lay, H, K, D, L, N, b: CACHE(lay, H, H, D, L, N, b), "not all"),
    (
        "no key/value heads",
        lambda lay, H, K, D, L, N, b: CACHE(lay, H, 1, D, L, N, b),
        "multiply by the number of key/value heads too",
    ),
    (
        "values, not bytes",
        lambda lay, H, K, D, L, N, b: CACHE(lay, H, K, D, L, N, 1),
        "multiply the number of values by the bytes",
        "the keys AND the values",
    ),
    (
        "4 bytes always",
        lambda lay, H, K, D, L, N, b: CACHE(lay, H, K, D, L, N, 4),
        "bytes per value here, not 4",
    ),
    (
        "one layer",
        lambda lay, H, K, D, L, N, b: CACHE(1, H, K, D, L, N, b),
        "every layer has its own cache",
    ),
    (
        "one sequence",
        lambda lay, H, K, D, L, N, b: CACHE(lay, H, K, D, L, 1, b),
        "every sequence of the batch",
    ),
    ("no head_dim", lambda lay, H, K, D, L, N, b: CACHE(lay, H, K, 1, L, N, b), "head_dim numbers"),
    ("a float", lambda *a: CACHE(*a) / 1.0, Fact("return a whole number of bytes")),
]:
    add(fn("check_cache_bytes", name, answer, says, *also))
MISTAKES.extend(
    generic(
        "check_cache_bytes",
        CACHE,
        library=lambda lay, H, K, D, L, N, b: kv_cache_bytes(lay, K, D, L, N, b),
        tensors=False,
        float64=False,
    )
)
STEP = solution("ch20-ex-step")


def step_with(*, before=False, normalise=True, phi_k=True, phi_q=True, plus_one=True):
    def answer(state, z, q, k, v):
        def phi(x, on):
            return (F.elu(x) + (1 if plus_one else 0)) if on else x

        fq, fk = phi(q, phi_q), phi(k, phi_k)
        new_state, new_z = state + fk[:, None] * v[None, :], z + fk
        s, zz = (state, z) if before else (new_state, new_z)
        out = (fq @ s) / (fq @ zz + 1e-6) if normalise else fq @ s
        return out, new_state, new_z

    return answer


for name, answer, says in [
    (
        "the state before the update",
        step_with(before=True),
        "the state BEFORE the new key and value",
    ),
    ("no normaliser", step_with(normalise=False), "divide by the normaliser"),
    ("no feature map on the key", step_with(phi_k=False), "apply the feature map to the key"),
    ("no feature map on the query", step_with(phi_q=False), "to the query too"),
    ("elu without + 1", step_with(plus_one=False), "without the + 1"),
    ("a pair", lambda *a: STEP(*a)[:2], Fact("return three things")),
]:
    add(fn("check_linear_step", name, answer, says))
MISTAKES.extend(generic("check_linear_step", STEP))
