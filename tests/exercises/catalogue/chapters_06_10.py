"""Catalogue, chapters 6 to 10: training, reading heads, the cost of attention, approximations."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from attnbook.efficient import chunked_attention, linear_attention, online_softmax_merge
from attnbook.interp.ablation import replace_head
from attnbook.interp.coref_heads import name_action_weight, pronoun_hits
from attnbook.interp.head_stats import head_entropy

from .. import test_ch06_training as t06
from .. import test_ch07_seeing_heads as t07
from .. import test_ch08_what_heads_do as t08
from .. import test_ch09_cost as t09
from .. import test_ch10_approximations as t10
from . import Fact, Mistake, fn, generic, values

MISTAKES: list[Mistake] = []
add = MISTAKES.append
SHAPE = Fact("must return shape")

# ---- chapter 6: the pointer loss -------------------------------------------------------------
for name, (answer, says) in t06.WRONG.items():
    facts = ("got a tuple", "torch.float64", "one loss per sentence")
    add(
        fn(
            "check_pointer_loss",
            name,
            answer,
            Fact(says) if says.startswith(facts) or "float64" in says else says,
        )
    )
add(
    fn(
        "check_pointer_loss",
        "probability, not its log",
        lambda x, t: -x.softmax(-1)[torch.arange(len(t)), t].mean(),
        "not its logarithm",
    )
)
add(
    fn(
        "check_pointer_loss",
        "log of softmax",
        lambda x, t: -x.softmax(-1).log()[torch.arange(len(t)), t].mean(),
        "not finite for large scores",
    )
)
add(
    fn(
        "check_pointer_loss",
        "naive exp",
        lambda x, t: (
            -(x.exp() / x.exp().sum(-1, keepdim=True)).log()[torch.arange(len(t)), t].mean()
        ),
        "not finite for large scores",
    )
)
add(
    fn(
        "check_pointer_loss",
        "twice the gradient",
        lambda x, t: (lambda r: r.detach() + (r - r.detach()) * 2)(t06.book_solution(x, t)),
        "(softmax - one_hot(target)) / N",
    )
)
add(
    fn(
        "check_pointer_loss",
        "the raw scores picked as log-probabilities",
        lambda x, t: -x[torch.arange(len(t)), t].mean(),
        "apply log_softmax first",
    )
)
for name, answer in {
    "nll_loss on the raw scores": lambda x, t: F.nll_loss(x, t),
    "nll_loss does the picking": lambda x, t: F.nll_loss(x.log_softmax(-1), t),
}.items():
    add(fn("check_pointer_loss", name, answer, "without F.cross_entropy or F.nll_loss"))
MISTAKES.extend(generic("check_pointer_loss", t06.book_solution))

# ---- chapter 7 -------------------------------------------------------------------------------
for name, (answer, says) in t07.HITS_WRONG.items():
    add(fn("check_head_hits", name, answer, SHAPE if says == "must return shape" else says))
add(fn("check_head_hits", "the antecedent's row", t07.antecedent_row_hits, None))
add(
    fn(
        "check_head_hits",
        "argmin",
        lambda w, p, a: (w[torch.arange(len(p)), :, p].argmin(-1) == a[:, None]).float().mean(0),
        None,
    )
)
add(
    fn(
        "check_head_hits",
        "one mean over the heads",
        lambda w, p, a: t07.book_hits(w, p, a).mean().expand(w.size(1)),
        None,
    )
)
MISTAKES.extend(generic("check_head_hits", t07.book_hits, library=pronoun_hits))
for name, (answer, says) in t07.BINDING_WRONG.items():
    add(fn("check_binding", name, answer, says))
add(
    fn(
        "check_binding",
        "the maximum, not the mean",
        lambda w, nm, ac: torch.stack(
            [w[n][:, nm[n], ac[n]].amax(-1) for n in range(len(nm))]
        ).amax(0),
        None,
    )
)
MISTAKES.extend(generic("check_binding", t07.book_binding, library=name_action_weight))
for name, (answer, says) in t07.BASELINE_WRONG.items():
    add(
        fn(
            "check_gender_baseline",
            name,
            answer,
            Fact(says) if "return a position" in says else says,
        )
    )
for name, answer, says in [
    ("the other gender", t07.other_gender, "the other gender's names"),
    ("either direction", t07.either_direction, "only names BEFORE the pronoun"),
    ("the answer itself", lambda e: e.antecedent, "the answer itself"),
    ("English only", t07.english_only_gender, "English only"),
    ("the pronoun's own position", lambda e: e.pronoun, None),
    (
        "the library's rule",
        lambda e: e.nearest_preceding_name(same_gender=True),
        "which computes the answer for you",
    ),
    (
        "the library's rule, positionally",
        lambda e: e.nearest_preceding_name(True),
        "which computes the answer for you",
    ),
]:
    add(fn("check_gender_baseline", name, answer, says))
MISTAKES.extend(generic("check_gender_baseline", t07.book_baseline, tensors=False, float64=False))

# ---- chapter 8 -------------------------------------------------------------------------------
for name, (answer, says) in t08.WRONG.items():
    add(fn("check_head_entropy", name, answer, "you used log base 2" if says == "nats" else says))
add(
    fn(
        "check_head_entropy",
        "the entropy of the columns",
        lambda w, m: t08.book_solution(w.transpose(-1, -2), m),
        None,
    )
)
add(
    fn(
        "check_head_entropy",
        "the sum, not the mean",
        lambda w, m: t08.book_solution(w, m) * (~m).sum(),
        None,
    )
)
MISTAKES.extend(
    generic("check_head_entropy", t08.book_solution, library=lambda w, m: head_entropy([w], m)[0])
)
REPLACE_SAYS = {
    "counted from 0": "heads are counted from 0: head h starts at h*D",
    "must return shape": SHAPE,
    "nothing changed": Fact("nothing changed"),
}
for name, (answer, says) in t08.WRONG_REPLACE.items():
    add(fn("check_replace_head", name, answer, REPLACE_SAYS.get(says, says)))


def zeroed(x, head, num_heads, value):
    D = x.size(-1) // num_heads
    out = x.clone()
    out[..., head * D : (head + 1) * D] = 0
    return out


add(fn("check_replace_head", "always zero", zeroed, "set head"))
add(
    fn(
        "check_replace_head",
        "value reversed",
        lambda x, h, H, v: t08.replace_by_view(x, h, H, v.flip(-1) if torch.is_tensor(v) else v),
        "but not to the value passed in",
    )
)
MISTAKES.extend(generic("check_replace_head", t08.replace_by_view, library=replace_head))

# ---- chapter 9: online softmax ---------------------------------------------------------------


def global_max(a, b):
    m = torch.maximum(a[0], b[0])
    top = m.max()
    alpha, beta = torch.exp(a[0] - top), torch.exp(b[0] - top)
    return m, alpha * a[1] + beta * b[1], alpha * a[2] + beta * b[2]


def normalised(a, b):
    m, l, acc = t09.merge_by_hand(a, b)
    return m, torch.ones_like(l), acc / l


def max_from_zero(a, b):
    m = torch.maximum(torch.maximum(a[0], b[0]), torch.zeros_like(a[0]))
    alpha, beta = torch.exp(a[0] - m), torch.exp(b[0] - m)
    return m, alpha * a[1] + beta * b[1], alpha * a[2] + beta * b[2]


for name, answer, says in [
    (
        "adds without rescaling",
        lambda a, b: (torch.maximum(a[0], b[0]), a[1] + b[1], a[2] + b[2]),
        "you add l and acc without rescaling",
    ),
    (
        "rescales acc only",
        lambda a, b: (
            lambda m: (m, a[1] + b[1], a[2] * (a[0] - m).exp() + b[2] * (b[0] - m).exp())
        )(torch.maximum(a[0], b[0])),
        "you add l without rescaling",
    ),
    (
        "rescales l only",
        lambda a, b: (
            lambda m: (m, a[1] * (a[0] - m).exp() + b[1] * (b[0] - m).exp(), a[2] + b[2])
        )(torch.maximum(a[0], b[0])),
        "you add acc without rescaling",
    ),
    ("exp(m - m_block)", t09.reversed_rescaling, "you used exp(m - m_block)"),
    (
        "exponentiates the maximum",
        t09.test_exponentiating_the_maximum_itself_is_named.__code__.co_consts and None,
        None,
    ),
    (
        "NaN for two empty blocks",
        lambda a, b: (
            lambda m: (
                m,
                (a[0] - m).exp() * a[1] + (b[0] - m).exp() * b[1],
                (a[0] - m).exp() * a[2] + (b[0] - m).exp() * b[2],
            )
        )(torch.maximum(a[0], b[0])),
        "two empty blocks gives NaN",
    ),
    ("emptiness decided once", t09.whole_tensor_special_case, "decide per row"),
    ("one maximum for all rows", global_max, "ONE maximum for all rows"),
    ("returns the normalised output as the state", normalised, "not relative to the m you return"),
    (
        "the minimum of the maxima",
        lambda a, b: (torch.minimum(a[0], b[0]), *t09.merge_by_hand(a, b)[1:]),
        "the larger of the two maxima",
    ),
    ("the maximum started at 0", max_from_zero, Fact("must stay empty")),
    ("returns a pair", lambda a, b: t09.merge_by_hand(a, b)[1:], Fact("return a triple")),
]:
    if answer is not None:
        add(fn("check_online_softmax_merge", name, answer, says))


def overflowing(a, b):
    m = torch.maximum(a[0], b[0])
    l = a[1] * torch.exp(a[0]) / torch.exp(m) + b[1] * torch.exp(b[0]) / torch.exp(m)
    acc = a[2] * torch.exp(a[0]) / torch.exp(m) + b[2] * torch.exp(b[0]) / torch.exp(m)
    return m, l, acc


add(
    fn(
        "check_online_softmax_merge",
        "exponentiates the maximum itself",
        overflowing,
        "scores near 1000 overflow",
        "two empty blocks gives NaN",
    )
)
MISTAKES.extend(
    generic("check_online_softmax_merge", t09.merge_by_hand, library=online_softmax_merge)
)

BA = t09.block_attention


def no_max(q, k, v, block):
    q = q / q.size(-1) ** 0.5
    l, acc = torch.zeros(q.size(0), 1), torch.zeros(q.size(0), v.size(-1))
    for s0 in range(0, k.size(0), block):
        p = torch.exp(q @ k[s0 : s0 + block].T)
        l, acc = l + p.sum(-1, keepdim=True), acc + p @ v[s0 : s0 + block]
    return acc / l


def no_rescale(q, k, v, block):
    q = q / 2
    outs = [
        torch.softmax(q @ k[s0 : s0 + block].T, -1) @ v[s0 : s0 + block]
        for s0 in range(0, k.size(0), block)
    ]
    return sum(outs) / len(outs)


def full_blocks_only(q, k, v, block):
    full = k.size(0) - k.size(0) % block or k.size(0)
    return BA(q, k[:full], v[:full], block)


def whole_scores_then_blocks(q, k, v, block):
    s = q @ k.T / q.size(-1) ** 0.5  # (L, S): every score at once
    return torch.softmax(s, -1) @ v


for name, answer, says in [
    ("the maximum started at 0", t09.zero_start, "start the running maximum at -inf"),
    ("no running maximum", no_max, "subtract the running maximum"),
    (
        "no scale",
        lambda q, k, v, b: BA(q * q.size(-1) ** 0.5, k, v, b),
        "multiply the scores by 1 / sqrt(E)",
    ),
    ("scaled by 1/E", lambda q, k, v, b: BA(q / q.size(-1) ** 0.5, k, v, b), "not 1 / E"),
    (
        "scale of the values",
        lambda q, k, v, b: BA(q * q.size(-1) ** 0.5 / v.size(-1) ** 0.5, k, v, b),
        "not of the values",
    ),
    ("blocks averaged, not rescaled", no_rescale, "is every block rescaled"),
    (
        "only the last block",
        lambda q, k, v, b: BA(q, k[(k.size(0) - 1) // b * b :], v[(k.size(0) - 1) // b * b :], b),
        "only the last block counts",
    ),
    ("the last, shorter block skipped", full_blocks_only, "the last, shorter block is missing"),
    ("sizes written in", lambda q, k, v, b: BA(q[:5], k[:11], v[:11], b), None),
    (
        "no blocks: plain softmax",
        lambda q, k, v, b: torch.softmax(q @ k.T / q.size(-1) ** 0.5, -1) @ v,
        "the whole (L, S) score matrix was built",
    ),
    (
        "every score first, then softmax",
        whole_scores_then_blocks,
        "the whole (L, S) score matrix was built",
    ),
]:
    add(fn("check_block_attention", name, answer, says))


def whole_blocks_only(q, k, v, block):
    """A fresh learner's loop bound, range(0, S - block + 1, block): it never runs when the one
    block is larger than S (0 / 0), and skips a shorter last block."""
    return t09.block_loop(q, k, v, block, stop=lambda S, b: S - b + 1)


add(
    fn(
        "check_block_attention",
        "the loop bound range(0, S - block + 1, block)",
        whole_blocks_only,
        "did the loop over the blocks run at all",
        "the last, shorter block is missing",
    )
)
MISTAKES.extend(
    generic(
        "check_block_attention",
        BA,
        library=[
            lambda q, k, v, b: chunked_attention(q, k, v, q_block=b, k_block=b),
            lambda q, k, v, b: F.scaled_dot_product_attention(q, k, v),
        ],
    )
)

for answer, says in [
    ((496, 32, 0.484), "the diagonal tiles are computed too"),
    ((512, 32, 0.5), "not exactly half"),
    ((528, 528, 0.516), "only the tiles on the diagonal"),
    ((528, 32, 51.6), "not a percentage"),
    ((1024, 32, 1.0), Fact("expected 528")),
]:
    add(values("check_causal_tiles", f"{answer}", answer, says))
for answer, says in [
    ((28_377, 3_100_000), "TWO n x n tensors"),
    ((40_132, 3_100_000), "each float32 takes 4 bytes"),
    ((20_066, 786_432), Fact("about 3,14")),
    ((19_364, 3_100_000), "not 24 · 10⁹"),
    ((20_066, 2_927_000), "not 24 · 10⁹"),
    ((20_000, 3_100_000), Fact("expected the largest n")),
]:
    add(values("check_how_long", f"{answer}", answer, says))

root = lambda a, A: math.sqrt(24 * a / A)  # noqa: E731
for name, answer, says, *also in [
    ("24 inputs kept", (lambda s, a, A: 24 * a + s * A, root), "24/s inputs of size a, not 24"),
    ("one layer recomputed", (lambda s, a, A: 24 * a / s + A, root), "s·A, not A"),
    (
        "every segment recomputed",
        (lambda s, a, A: 24 / s * (a + s * A), root),
        "not those of all 24 layers",
    ),
    ("roles swapped", (lambda s, a, A: s * a + 24 * A / s, root), "you swapped the roles"),
    (
        "no square root",
        (lambda s, a, A: 24 * a / s + s * A, lambda a, A: 24 * a / A),
        "you left out the square root",
    ),
    (
        "upside down",
        (lambda s, a, A: 24 * a / s + s * A, lambda a, A: math.sqrt(24 * A / a)),
        "upside down",
    ),
    (
        "24 left out",
        (lambda s, a, A: 24 * a / s + s * A, lambda a, A: math.sqrt(a / A)),
        "belongs under the root",
    ),
    (
        "the example's 4",
        (lambda s, a, A: 24 * a / s + s * A, lambda a, A: 4),
        "whatever a and A are",
    ),
    (
        "the two examples only",
        (lambda s, a, A: 24 * a + A if s == 1 else 6 * a + 4 * A, root),
        Fact("for s = 2"),
    ),
    (
        "rounded the wrong way",
        (lambda s, a, A: 24 * a / s + s * A, lambda a, A: math.floor(math.sqrt(24 * a / A) + 1)),
        Fact("the whole number whose memory is least"),
    ),
    ("a string", (lambda s, a, A: "24a/s + sA", root), Fact("return a number")),
]:
    add(values("check_checkpoint_segments", name, answer, says, *also))

# ---- chapter 10 ------------------------------------------------------------------------------
L10 = t10.linear
for name, answer, says in [
    (
        "the L x S matrix",
        lambda q, k, v: (lambda w: (w / w.sum(-1, keepdim=True)) @ v)(
            (F.elu(q) + 1) @ (F.elu(k) + 1).T
        ),
        "an (L, S) matrix product",
    ),
    (
        "by broadcasting",
        lambda q, k, v: (lambda w: (w[..., None] * v[None]).sum(1) / w.sum(-1, keepdim=True))(
            ((F.elu(q) + 1)[:, None, :] * (F.elu(k) + 1)[None, :, :]).sum(-1)
        ),
        "built by broadcasting",
    ),
    (
        "no normaliser",
        lambda q, k, v: (F.elu(q) + 1) @ ((F.elu(k) + 1).T @ v),
        "divide by the normaliser",
    ),
    (
        "softmax attention",
        lambda q, k, v: torch.softmax(q @ k.T / 2, -1) @ v,
        "that is softmax attention",
    ),
    (
        "elu without + 1",
        lambda q, k, v: t10.factored(F.elu(q), F.elu(k), v, F.elu(k).sum(0)),
        "without the + 1",
    ),
    (
        "scaled by 1/sqrt(E)",
        lambda q, k, v: L10(q / q.size(-1) ** 0.5, k, v),
        "no 1 / sqrt(E) scaling",
    ),
    (
        "exp features",
        lambda q, k, v: t10.factored(q.exp(), k.exp(), v, k.exp().sum(0)),
        "not exp(x)",
    ),
    (
        "mean normaliser",
        lambda q, k, v: t10.factored(F.elu(q) + 1, F.elu(k) + 1, v, (F.elu(k) + 1).mean(0)),
        "not a mean",
    ),
    (
        "relu features",
        lambda q, k, v: t10.factored(F.relu(q), F.relu(k), v, F.relu(k).sum(0)),
        "not relu",
    ),
    (
        "no feature map",
        lambda q, k, v: (q @ (k.T @ v)) / (q @ k.sum(0, keepdim=True).T),
        "apply the feature map",
    ),
    (
        "averages the keys' features",
        lambda q, k, v: (
            t10.factored(F.elu(q) + 1, F.elu(k) + 1, v, (F.elu(k) + 1).sum(0)) / k.size(0)
        ),
        None,
    ),
]:
    add(fn("check_linear_attention", name, answer, says))
MISTAKES.extend(generic("check_linear_attention", L10, library=linear_attention))

for answer, says in [
    ((4 * 2**20, 16_640), "the keys AND the values"),
    ((2 * 2**20, 16_640), "that is the number of floats"),
    ((8 * 2**20, 64 * 64 * 4), "the normaliser z"),
    ((8 * 2**20, 64 * 64 + 64), "that is the number of floats"),
    ((8 * 10**6, 16_640), Fact("expected 2 x 16384 x 64 x 4")),
]:
    add(values("check_state_bytes", f"{answer}", answer, says))
for reach, layers, says in [
    (lambda layers, w: w**layers, 128, "not by a factor w"),
    (lambda layers, w: layers * (2 * w + 1), 128, "at most w positions back per layer"),
    (lambda layers, w: layers * w, 100, Fact("16,384 / 128 = 128 layers")),
    (lambda layers, w: 2 * layers * w, 128, "width of the receptive field"),
    (lambda layers, w: layers * w, 64, "counts 2w positions per layer"),
    (lambda layers, w: layers * (w + 1), 128, "not a step back"),
    (lambda layers, w: w + 2, 128, Fact("for 1 layer of w = 4 expected 4, got 6")),
]:
    add(values("check_window_layers", says, (reach, layers), says))

right = lambda c, P: (2 * c + P + 1) / ((2 * c + P + 1) + (P - 1) * (c + P + 1))  # noqa: E731


def simulated(c, P):
    phi_q = F.elu(c * torch.eye(P, dtype=torch.float64)[0]) + 1
    kernel = (F.elu(torch.eye(P, dtype=torch.float64)) + 1) @ phi_q
    return float(kernel[0] / kernel.sum())


for name, answer, says in [
    ("the limit at every c", lambda c, P: 2 / (P + 1), "the limit only"),
    (
        "no 1s at all",
        lambda c, P: (c + 1) * 2 / ((c + 1) * 2),
        "and so has φ(q) outside coordinate 1",
    ),
    ("no 1s in φ(e_j)", lambda c, P: (c + 1) / ((c + 1) + (P - 1)), "1 in every coordinate but j"),
    ("softmax", lambda c, P: 1 / (1 + (P - 1) * math.exp(-c)), "softmax attention's weight"),
    ("uniform", lambda c, P: 1 / P, "that is uniform weight"),
    ("c instead of c + 1", lambda c, P: right(c - 1, P), "elu(c) + 1 = c + 1"),
    (
        "P other items",
        lambda c, P: (2 * c + P + 1) / ((2 * c + P + 1) + P * (c + P + 1)),
        "P - 1 other items, not P",
    ),
    ("a simulation", simulated, "it computes the weights rather than the formula"),
    ("a string", lambda c, P: "2/(P+1)", Fact("return a number")),
    ("right only for the visible P", lambda c, P: right(c, 4), Fact("for c = 0 and P = 2")),
]:
    add(fn("check_linear_limit", name, answer, says))
MISTAKES.extend(
    generic(
        "check_linear_limit",
        right,
        library=lambda c, P: float(
            linear_attention(c * torch.eye(P)[:1], torch.eye(P), torch.eye(P))[0, 0]
        ),
        tensors=False,
        float64=False,
    )
)
