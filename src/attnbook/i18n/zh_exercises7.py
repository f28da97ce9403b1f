"""The exercise checkers' words in Chinese, keyed by their English text (see attnbook.i18n.zh), part 7:
a refused call, and the second pass over the checkers of chapters 1 to 10 (issue 38)."""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) of a checker → its Chinese.
STRINGS: dict[str, str] = {
    # -- the harness: a refused call ------------------------------------------------------
    (
        "your function calls {names}, which computes the answer for you (the checker compares "
        "with it, so calling it proves nothing): write the computation yourself"
    ): (
        "你的函数调用了 {names}，它替你算出了答案（检查器正是拿它来比对的，"
        "所以调用它什么也证明不了）：请自己写出这个计算"
    ),
    "your function calls {names} (see above)": "你的函数调用了 {names}（见上）",
    # -- chapter 1: sharper or softer -------------------------------------------------------
    "sharper or softer?": "更尖锐还是更平缓？",
    "the weight of 张 when W_q is doubled": "W_q 加倍时张的权重",
    "the temperature with the same effect": "效果相同的温度",
    'answer "up" or "down"; got {direction!r}': '请回答 "up" 或 "down"；实际为 {direction!r}',
    (
        "doubling W_q doubles every score (the scores are linear in the query), and the softmax "
        "of larger scores is sharper: the largest score, 张's, takes weight from the others, so "
        "it goes up"
    ): (
        "W_q 加倍会让每个分数都加倍（分数对查询是线性的），而更大分数的 softmax "
        "更尖锐：最大的分数，也就是张的分数，会从其他词元那里夺走权重，所以它上升"
    ),
    (
        "dividing the scores by T = 2 halves them and flattens the weights; doubling them is "
        "dividing by T = 1/2"
    ): "把分数除以 T = 2 是把它们减半，权重变得更平缓；把分数加倍相当于除以 T = 1/2",
    (
        "the scores are linear in W_q: doubling it doubles each score once, so T = 1/2, not 1/4"
    ): "分数对 W_q 是线性的：W_q 加倍只让每个分数加倍一次，所以 T = 1/2，而不是 1/4",
    "the scores are linear in W_q: doubling it doubles each score, not by √2, so T = 1/2": (
        "分数对 W_q 是线性的：W_q 加倍让每个分数加倍，而不是乘以 √2，所以 T = 1/2"
    ),
    (
        "a temperature above 1 divides the scores by more than 1 and flattens them; doubling "
        "W_q sharpens: T = 1/2"
    ): "大于 1 的温度把分数除以一个大于 1 的数，使权重更平缓；W_q 加倍则使其更尖锐：T = 1/2",
    "softmax(2s) = softmax(s / T) for T = 1/2; got {T:g}": (
        "T = 1/2 时 softmax(2s) = softmax(s / T)；实际为 {T:g}"
    ),
    # -- chapter 1: the lexicon -------------------------------------------------------------
    "cannot check: pass the lexicon as a dict first (see above)": (
        "无法检查：请先把词典作为 dict 传入（见上）"
    ),
    "cannot check: keep every other token's features first (see above)": (
        "无法检查：请先保留其他每个词元的特征（见上）"
    ),
    # -- chapter 2: attention -------------------------------------------------------------
    (
        "your function gives different results for the same inputs: dropout (or something else "
        "random) is on; this attention has no dropout, so leave it out (dropout_p=0.0)"
    ): (
        "同样的输入，你的函数给出了不同的结果：暂退法（或别的随机操作）开着；"
        "这里的注意力没有暂退法，请去掉它（dropout_p=0.0）"
    ),
    (
        "you divided by √d_k after the softmax, so each row of weights sums to 1/√d_k; divide "
        "the scores Q·Kᵀ by √d_k before the softmax"
    ): (
        "你在 softmax 之后才除以 √d_k，于是每行权重之和为 1/√d_k；"
        "请在 softmax 之前把分数 Q·Kᵀ 除以 √d_k"
    ),
    (
        "every row of weights sums to {total:.4g}, not 1: do not scale the weights after the "
        "softmax; scale the scores before it"
    ): "每行权重之和为 {total:.4g}，而不是 1：不要在 softmax 之后缩放权重，请在它之前缩放分数",
    " (use key.transpose(-2, -1), not key.T or transpose(1, 2))": (
        "（请用 key.transpose(-2, -1)，而不是 key.T 或 transpose(1, 2)）"
    ),
    (
        "with inputs of shape (N, H, L, E) = {q} the output should have shape {want}; got "
        "{got}{hint}"
    ): "输入形状为 (N, H, L, E) = {q} 时，输出形状应为 {want}；实际为 {got}{hint}",
    "cannot check the gradients: the output is not finite already (see above)": (
        "无法检查梯度：输出本身已经不是有限值（见上）"
    ),
    (
        "the backward pass through your function fails ({error}); an in-place edit of a tensor "
        "autograd needs (x /= ..., x[...] = ...) is the usual cause"
    ): (
        "经过你的函数的反向传播失败了（{error}）；常见原因是原地修改了 autograd "
        "还要用到的张量（x /= ...、x[...] = ...）"
    ),
    # -- chapter 4: the padding mask ------------------------------------------------------
    (
        "a mask of shape {mask_shape} does not broadcast to the scores (N, H, L, S) = "
        "{Nb_Hb_Lb_Sb}; the padding mask is (N, S) = {padding_shape}: keep N first and S last"
    ): (
        "形状为 {mask_shape} 的掩码无法广播到分数的形状 (N, H, L, S) = {Nb_Hb_Lb_Sb}；"
        "填充掩码是 (N, S) = {padding_shape}：请让 N 在最前、S 在最后"
    ),
    # -- section 5.12: the schedule -------------------------------------------------------
    (
        "your rate is {value:.6g} at every step; it must rise linearly during the warm-up and "
        "then decay like step**-0.5"
    ): "你的学习率在每一步都是 {value:.6g}；它应当在预热期间线性上升，之后按 step**-0.5 衰减",
    # -- chapter 6: the pointer loss ------------------------------------------------------
    "cannot check: the loss is not a scalar tensor (see above)": (
        "无法检查：损失不是标量张量（见上）"
    ),
    "cannot check the gradient: the loss is wrong already (see above)": (
        "无法检查梯度：损失本身已经不对（见上）"
    ),
    # -- chapter 8: replace one head ------------------------------------------------------
    (
        "only head {head}'s features changed, but all to one number: a (D,) value gives each of "
        "the head's D features its own number, the same at every position (broadcast it over N "
        "and S)"
    ): (
        "只有头 {head} 的特征变了，但全都变成了同一个数：形状为 (D,) 的值给该头的 D "
        "个特征各自一个数，在每个位置上都相同（把它沿 N 和 S 广播）"
    ),
    (
        "you set head {head}'s features to 0; set them to the value passed in (0 for zero "
        "ablation, the head's mean for mean ablation)"
    ): "你把头 {head} 的特征设成了 0；请设为传入的值（零消融传 0，均值消融传该头的均值）",
    "only head {head}'s features changed, but not to the value passed in": (
        "只有头 {head} 的特征变了，但没有变成传入的值"
    ),
    # -- chapter 9: merge -------------------------------------------------------------------
    "acc / l equals the softmax over both blocks; l and acc match the m": (
        "acc / l 等于两块上的 softmax；l 和 acc 与 m 相符"
    ),
    "three blocks merged in a row, either way round": "连续合并三块，两种顺序都试",
    (
        "acc / l is right, but you rescaled every row against ONE maximum for all rows "
        "(m.max()): l and acc must be relative to each row's own m, the one you return, because "
        "the next merge rescales them by exp(m - m_new) row by row"
    ): (
        "acc / l 是对的，但你让所有行都相对于同一个最大值（m.max()）重新缩放："
        "l 和 acc 必须相对于每一行自己的 m，也就是你返回的那个 m，"
        "因为下一次合并会逐行用 exp(m - m_new) 重新缩放它们"
    ),
    (
        "acc / l is right, but l and acc are not relative to the m you return: l must be the "
        "sum of exp(s - m) over the row's keys, with that row's m, because the next merge "
        "rescales them by exp(m - m_new)"
    ): (
        "acc / l 是对的，但 l 和 acc 并不是相对于你返回的 m：l 必须是该行各键上 "
        "exp(s - m) 之和，用的是该行的 m，因为下一次合并会用 exp(m - m_new) 重新缩放它们"
    ),
    (
        "one merge is right, but merging three blocks in a row is off by up to {worst:.3g}: the "
        "state a merge returns must be usable by the next merge"
    ): (
        "合并一次是对的，但连续合并三块最多偏差 {worst:.3g}：一次合并返回的状态必须能供下一次合并使用"
    ),
    "a row empty in both blocks gives NaN here too (see the empty blocks above)": (
        "在两块中都为空的行在这里同样给出 NaN（见上面的空块）"
    ),
    # -- chapter 9: block attention -------------------------------------------------------
    "never builds the (L, S) scores: 32 queries, 2048 keys, blocks of 64": (
        "从不构造 (L, S) 分数：32 个查询，2048 个键，块大小 64"
    ),
    "cannot check: wrong on {S} keys (see the cases above)": (
        "无法检查：在 {S} 个键上已经不对（见上面的用例）"
    ),
    (
        "a tensor of {largest:,} elements for {L} queries and {S} keys in blocks of {size}: the "
        "whole (L, S) score matrix was built. Compute the scores of one block of keys at a time "
        "(L x block) and carry the running (m, l, acc) from block to block"
    ): (
        "{L} 个查询、{S} 个键、块大小 {size} 时出现了一个有 {largest:,} 个元素的张量："
        "整个 (L, S) 分数矩阵被构造了出来。请一次只计算一块键的分数（L x block），"
        "并把运行中的 (m, l, acc) 从一块带到下一块"
    ),
    (
        "with every score multiplied by 500 the output differs from exact attention by up to "
        "{worst:.3g}"
    ): "所有分数乘以 500 时，输出与精确注意力最多相差 {worst:.3g}",
    "with every score below -250 the output differs from exact attention by up to {worst:.3g}": (
        "所有分数都低于 -250 时，输出与精确注意力最多相差 {worst:.3g}"
    ),
    # -- chapter 9: where to put the checkpoints ------------------------------------------
    "where to put the checkpoints": "检查点放在哪里",
    "memory(s, a, A) for segments of 1 to 24 layers": "段长 1 到 24 层时的 memory(s, a, A)",
    "the best segment length for several a and A": "几组 a 和 A 下的最佳段长",
    "only the input of each segment is kept: 24/s inputs of size a, not 24": (
        "只保存每段的输入：24/s 个大小为 a 的输入，而不是 24 个"
    ),
    (
        "the segment being recomputed holds the activations of all its s layers at once: s·A, not A"
    ): "正在重算的那一段同时持有它全部 s 层的激活：s·A，而不是 A",
    (
        "only one segment is recomputed at a time: its s layers' activations, s·A, not those of "
        "all 24 layers"
    ): "一次只重算一段：它那 s 层的激活，s·A，而不是全部 24 层的激活",
    (
        "you swapped the roles: segments of s layers keep 24/s inputs and recompute s layers, "
        "24a/s + s·A"
    ): "你把两者的角色弄反了：s 层一段时保存 24/s 个输入、重算 s 层，即 24a/s + s·A",
    "for s = {s}, a = {a:g}, A = {A:g}: expected 24a/s + s·A = {expected:g}, got {value:g}": (
        "s = {s}、a = {a:g}、A = {A:g} 时：应为 24a/s + s·A = {expected:g}，实际为 {value:g}"
    ),
    (
        "the optimum is where the derivative -24a/s² + A is 0: s² = 24a/A, so s = √(24a/A) (you "
        "left out the square root)"
    ): "最优点在导数 -24a/s² + A 为 0 处：s² = 24a/A，所以 s = √(24a/A)（你漏了平方根）",
    (
        "s = √(24a/A): many inputs (large a) call for longer segments, large activations for "
        "shorter ones; you have it upside down"
    ): "s = √(24a/A)：输入大（a 大）时段应更长，激活大时段应更短；你把它颠倒了",
    "s = √(24a/A): the number of layers, 24, belongs under the root": (
        "s = √(24a/A)：层数 24 应在根号里面"
    ),
    "you gave s = {s:g} whatever a and A are; the best segment depends on them: √(24a/A)": (
        "无论 a 和 A 是多少，你都给出 s = {s:g}；最佳段长取决于它们：√(24a/A)"
    ),
    (
        "for a = {a:g}, A = {A:g}: 24a/s + s·A is smallest at s = √(24a/A) = {best:.4g}; got {s:g}"
    ): "a = {a:g}、A = {A:g} 时：24a/s + s·A 在 s = √(24a/A) = {best:.4g} 处最小；实际为 {s:g}",
    # -- chapter 10: the limit 2 / (P + 1) ------------------------------------------------
    "the limit 2 / (P + 1)": "极限 2 / (P + 1)",
    "the weight on item 1 for c from 0 to 1000 and P = 2, 4, 16": (
        "c 从 0 到 1000、P = 2、4、16 时条目 1 上的权重"
    ),
    "tends to 2/(P + 1) as c grows": "c 增大时趋于 2/(P + 1)",
    "a formula in c and P, not a computation over P items": "是关于 c 和 P 的公式，而不是对 P 个条目的计算",
    (
        "that is 2/(P + 1) at every c, the limit only: φ(c·e_1) = elu(c·e_1) + 1 has 1 in every "
        "other coordinate too, so φ(q)·φ(e_j) = (c + 1) + 2 + (P - 2) for j ≠ 1"
    ): (
        "这在每个 c 上都是 2/(P + 1)，只是极限：φ(c·e_1) = elu(c·e_1) + 1 在其他每个坐标上也是 1，"
        "所以 j ≠ 1 时 φ(q)·φ(e_j) = (c + 1) + 2 + (P - 2)"
    ),
    (
        "φ(e_j) = elu(e_j) + 1 has 2 in coordinate j and 1 in every other one, and so has φ(q) "
        "outside coordinate 1: you left out those 1s"
    ): (
        "φ(e_j) = elu(e_j) + 1 在坐标 j 上是 2，在其他每个坐标上是 1，"
        "φ(q) 在坐标 1 之外也是 1：你漏掉了这些 1"
    ),
    (
        "φ(e_j) = elu(e_j) + 1 has 1 in every coordinate but j (where it has 2): you left out "
        "those 1s"
    ): "φ(e_j) = elu(e_j) + 1 除坐标 j（那里是 2）外每个坐标都是 1：你漏掉了这些 1",
    (
        "that is softmax attention's weight, exp(c) / (exp(c) + P - 1); linear attention "
        "replaces exp(q·k) by φ(q)·φ(k)"
    ): (
        "这是 softmax 注意力的权重 exp(c) / (exp(c) + P - 1)；线性注意力用 φ(q)·φ(k) 代替 exp(q·k)"
    ),
    (
        "that is uniform weight, 1/P; the weight on item 1 grows with c (and tends to 2/(P + 1))"
    ): "这是均匀权重 1/P；条目 1 上的权重随 c 增大（并趋于 2/(P + 1)）",
    "elu(c) + 1 = c + 1 for c ≥ 0 (not c)": "c ≥ 0 时 elu(c) + 1 = c + 1（而不是 c）",
    "there are P - 1 other items, not P": "其他条目有 P - 1 个，而不是 P 个",
    (
        "for c = {c:g} and P = {P}, φ gives item 1 the weight {expected:.6g}; your formula gives "
        "{value:.6g}"
    ): "c = {c:g}、P = {P} 时，φ 给条目 1 的权重是 {expected:.6g}；你的公式给出 {value:.6g}",
    "cannot check: wrong at finite c already (see above)": "无法检查：在有限的 c 上已经不对（见上）",
    "for P = {P} and c = 10⁹ expected about 2/(P + 1) = {limit:.6g}; got {value:.6g}": (
        "P = {P}、c = 10⁹ 时应约为 2/(P + 1) = {limit:.6g}；实际为 {value:.6g}"
    ),
    (
        "for P = {P} your function makes a tensor of {largest:,} numbers: it computes the "
        "weights rather than the formula; write the weight as an expression in c and P"
    ): (
        "P = {P} 时你的函数构造了一个有 {largest:,} 个数的张量：它是在计算权重，而不是用公式；"
        "请把权重写成关于 c 和 P 的表达式"
    ),
    (
        "the output contains NaN or inf although every score here is small (|s / T| < 10), so "
        "exp() cannot overflow: look for a log, a root or a power of a negative number, or a "
        "division by zero"
    ): (
        "虽然这里每个分数都很小（|s / T| < 10），exp() 不可能溢出，输出却含有 NaN 或 inf："
        "请检查对负数取对数、开方或求幂，以及除以零的地方"
    ),
    "the output is NaN or inf already for ordinary scores (see above)": (
        "对普通的分数，输出就已经是 NaN 或 inf（见上）"
    ),
    (
        "rows whose scores lie far below the largest score of all rows give NaN: one running "
        "maximum shared by every query makes their exp() underflow to 0 / 0; keep one maximum per "
        "query, of shape (L, 1)"
    ): (
        "分数远低于所有行中最大分数的那些行给出了 NaN：所有查询共用一个运行中的最大值，"
        "使这些行的 exp() 下溢，得到 0 / 0；请为每个查询各保留一个最大值，形状为 (L, 1)"
    ),
    (
        "for a = {a:g}, A = {A:g}: s = {s:g} gives 24a/s + s·A = {mine:.4g}, but s = {n} gives "
        "{least:.4g}; the best is √(24a/A) = {best:.4g}, or the whole number whose memory is least"
    ): (
        "a = {a:g}、A = {A:g} 时：s = {s:g} 给出 24a/s + s·A = {mine:.4g}，而 s = {n} 给出 "
        "{least:.4g}；最佳值是 √(24a/A) = {best:.4g}，或者内存最小的那个整数"
    ),
    (
        "for P = {P:,} your function fails ({error}): it computes over the P items; write the "
        "weight as an expression in c and P"
    ): (
        "P = {P:,} 时你的函数失败了（{error}）：它是在对 P 个条目做计算；请把权重写成关于 c 和 P 的表达式"
    ),
    "for P = {P:,} your formula gives {value:.6g}, not {expected:.6g}": (
        "P = {P:,} 时你的公式给出 {value:.6g}，而不是 {expected:.6g}"
    ),
}
