"""The exercise checkers' words in Chinese, keyed by their English text (see attnbook.i18n.zh)."""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) of a checker → its Chinese.
STRINGS: dict[str, str] = {
    "equals the reference at temperature 1": "温度为 1 时与参考实现相等",
    "temperature 0.5 divides the scores (sharper)": "温度 0.5 除分数（更尖锐）",
    "temperature 3 divides the scores (flatter)": "温度 3 除分数（更平缓）",
    "other sizes: 7 keys of size 2, values of size 5": "其他大小：7 个大小为 2 的键，大小为 5 的值",
    "the weights sum to one": "权重之和为 1",
    "temperature → 0 gives the hard lookup": "温度 → 0 时得到硬查找",
    "stays finite for very large scores": "分数很大时仍保持有限",
    "does not modify its inputs": "不修改输入",
    "a new suspect": "一个新嫌疑人",
    "王 is in the lexicon with one value per feature": "王在词典中，每个特征一个值",
    "every other token keeps its features": "其他词元的特征保持不变",
    "in 老王说他很累, 他 puts its largest weight on 王": (
        "在“老王说他很累”中，他把最大的权重放在王上"
    ),
    "a two-way lookup": "双向查找",
    "two (6, 6) matrices": "两个 (6, 6) 矩阵",
    "W_Q and W_K differ": "W_Q 与 W_K 不同",
    "every pronoun puts its largest weight on its antecedent": (
        "每个代词都把最大的权重放在其先行词上"
    ),
    "every antecedent puts its largest weight on its pronoun": (
        "每个先行词都把最大的权重放在其代词上"
    ),
    (
        "the output contains NaN or inf: exp() of a large score overflows (inf / inf = NaN); use "
        "torch.softmax, which subtracts the largest score first"
    ): (
        "输出含有 NaN 或 inf：大分数的 exp() 溢出（inf / inf = NaN）"
        "；请用 torch.softmax，它会先减去最大分数"
    ),
    "you also divide by √d: a soft lookup divides the scores by the temperature only": (
        "你还除以了 √d：软查找只用温度除分数"
    ),
    "you multiply the scores by the temperature; divide them by it instead": (
        "你把分数乘以了温度；应该除以温度"
    ),
    "the temperature is ignored: divide the scores by it before the softmax": (
        "温度被忽略了：在 softmax 之前用它除分数"
    ),
    "you return the plain average of the values: the weights ignore the query": (
        "你返回的是值的简单平均：权重忽略了查询"
    ),
    "you weight the values by the raw scores; apply softmax to them first": (
        "你用原始分数给值加权；请先对分数做 softmax"
    ),
    "you average the keys; the output is the weighted average of the VALUES": (
        "你对键求了平均；输出应是值（VALUES）的加权平均"
    ),
    "at a tiny temperature the lookup should return the value of the best-matching key": (
        "温度极小时，查找应返回最匹配的键所对应的值"
    ),
    "large scores overflow exp(); subtract the largest score before exponentiating": (
        "大分数会使 exp() 溢出；取指数前先减去最大分数"
    ),
    "expected {value}, got {value2}": "应为 {value}，实际为 {value2}",
    "cannot check: the result is not a tensor of shape (3,) (see above)": (
        "无法检查：结果不是形状为 (3,) 的张量（见上）"
    ),
    "王 is not in your lexicon: add lexicon['王'] = (...six features...)": (
        "王不在你的词典中：添加 lexicon['王'] = (...六个特征...)"
    ),
    "cannot check: add 王 first (see above)": "无法检查：请先添加王（见上）",
    "王 has the features of a woman: 他 looks for a male person": (
        "王具有女性的特征：他要找的是男性"
    ),
    "王 is marked as a pronoun: 他 looks for a person who is NOT a pronoun": (
        "王被标为代词：他要找的是不是代词的人"
    ),
    "王 is not marked as a person": "王没有被标为人",
    "cannot check: pass two (6, 6) tensors first (see above)": (
        "无法检查：请先传入两个 (6, 6) 张量（见上）"
    ),
    (
        "w_q equals w_k: then 他 scores 张 exactly as 张 scores 他, and by Cauchy–Schwarz they "
        "cannot both prefer the other to themselves; make the two matrices differ"
    ): (
        "w_q 等于 w_k：这样他给张的分数与张给他的分数完全相同，由柯西–施"
        "瓦茨不等式，二者不可能都更偏向对方而非自己；请让两个矩阵不同"
    ),
    "他 puts most of its weight on {best} ({float_row_max:.2f}), not on 王": (
        "他把大部分权重放在 {best} 上（{float_row_max:.2f}），而不是王"
    ),
    (
        "the antecedent's query must seek the pronoun feature, more than the features it shares "
        "with itself"
    ): ("先行词的查询必须寻找代词特征，且胜过它与自身共有的特征"),
    "check that the pronoun still seeks a person of its gender, more than it seeks itself": (
        "检查代词是否仍在寻找与其性别相同的人，且胜过寻找自己"
    ),
    "with every value equal to 1 the output must be 1 (weights sum to one); got {out_tolist}": (
        "所有值都为 1 时输出必须为 1（权重之和为 1）；实际为 {out_tolist}"
    ),
    "pass the lexicon, a dict from token to features; got {lexicon_type}": (
        "请传入词典，即从词元到特征的 dict；实际为 {lexicon_type}"
    ),
    "王 needs one number per feature {FEATURES}; got {len_row} numbers": (
        "王需要每个特征 {FEATURES} 一个数；实际有 {len_row} 个数"
    ),
    "王's features must be numbers, one per feature {FEATURES}; got {list_row}": (
        "王的特征必须是数，每个特征 {FEATURES} 一个；实际为 {list_row}"
    ),
    "start from a copy of WORD_FEATURES: {join_missing_6}... are missing": (
        "请从 WORD_FEATURES 的副本开始：缺少 {join_missing_6}..."
    ),
    "only add 王; you changed {changed_4}": "只添加王；你改动了 {changed_4}",
    "pass a pair (w_q, w_k); got {matrices_type}": "请传入一对 (w_q, w_k)；实际为 {matrices_type}",
    (
        "fails in {len_misses} of {total} sentences, e.g. {sentence}: {query} puts its largest "
        "weight on {best}; {hint}"
    ): (
        "在 {total} 个句子中有 {len_misses} 个失败，例如 {sentence}："
        "{query} 把最大的权重放在 {best} 上；{hint}"
    ),
    "{name} must be a floating-point tensor; got {kind}": "{name} 必须是浮点张量；实际为 {kind}",
    (
        "{name} must have shape ({d}, {d}) (one row per query/key feature, one column per input "
        "feature {FEATURES}); got {m_shape}"
    ): (
        "{name} 的形状必须为 ({d}, {d})（每个查询/键特征一行，"
        "每个输入特征 {FEATURES} 一列）；实际为 {m_shape}"
    ),
    " (query ({d},), keys ({n}, {d}), values ({n}, {dv}))": (
        "（查询 ({d},)，键 ({n}, {d})，值 ({n}, {dv})）"
    ),
    "returns (output, weights) of shapes (N, L, Ev) and (N, L, S)": (
        "返回 (output, weights)，形状分别为 (N, L, Ev) 和 (N, L, S)"
    ),
    "weights are non-negative and each query's weights sum to 1": (
        "权重非负，且每个查询的权重之和为 1"
    ),
    "without a mask, equals softmax(Q·Kᵀ/√d_k)·V": "无掩码时等于 softmax(Q·Kᵀ/√d_k)·V",
    "a bool mask: True = may attend, False = weight 0": (
        "布尔掩码：True = 可以关注，False = 权重为 0"
    ),
    "inputs (N, H, L, E) with a causal (L, S) mask": "输入 (N, H, L, E) 配合 (L, S) 因果掩码",
    "a query with no allowed key gets output 0 and weights 0": (
        "没有可关注键的查询得到输出 0 和权重 0"
    ),
    "gradients reach query, key and value and are finite": "梯度能到达查询、键和值，且是有限的",
    "padding mask for F.scaled_dot_product_attention": "F.scaled_dot_product_attention 的填充掩码",
    "the same keys are ignored as with nn.MultiheadAttention": (
        "忽略的键与 nn.MultiheadAttention 相同"
    ),
    "does not modify the padding mask": "不修改填充掩码",
    "the output is right but the weights returned are not the ones applied to value": (
        "输出正确，但返回的权重不是作用于值的那些权重"
    ),
    "softmax must run over the keys (dim=-1), not over the queries (dim=-2)": (
        "softmax 必须在键上进行（dim=-1），而不是在查询上（dim=-2）"
    ),
    "the output contains NaN or inf where softmax(Q·Kᵀ/√d_k)·V is finite": (
        "softmax(Q·Kᵀ/√d_k)·V 有限之处，输出却含有 NaN 或 inf"
    ),
    "the weights of each query must sum to 1: apply softmax over the last dimension": (
        "每个查询的权重之和必须为 1：在最后一维上做 softmax"
    ),
    "some allowed keys are wrong; each sequence's padded keys (and only those) must be False": (
        "有些允许的键不对；每个序列中被填充的键（且只有它们）必须为 False"
    ),
    "the second value returned must be the weights softmax(scores), not the scores": (
        "返回的第二个值必须是权重 softmax(scores)，而不是分数"
    ),
    (
        "the mask convention is inverted: True must mean the key MAY be attended (as in "
        "F.scaled_dot_product_attention), not that it is masked out"
    ): (
        "掩码约定反了：True 必须表示该键可以被关注（与 F.scaled_dot_product_attention 相"
        "同），而不是被掩蔽"
    ),
    "the mask is ignored: keys where the mask is False must get weight 0": (
        "掩码被忽略了：掩码为 False 的键必须得到权重 0"
    ),
    (
        "mask the scores before the softmax, not the weights after: zeroing weights after the "
        "softmax leaves rows that no longer sum to 1"
    ): (
        "要在 softmax 之前掩蔽分数，而不是之后掩蔽权重：softmax 之后将权重置零，各行之和就不再为 1"
    ),
    "keys where the mask is False still get some weight; they must get exactly 0": (
        "掩码为 False 的键仍得到了一些权重；它们必须恰好为 0"
    ),
    "the output differs from softmax(Q·Kᵀ/√d_k)·V by up to {worst:.3g}": (
        "输出与 softmax(Q·Kᵀ/√d_k)·V 最多相差 {worst:.3g}"
    ),
    "cannot check: the weights have the wrong shape (see above)": (
        "无法检查：权重的形状不对（见上）"
    ),
    "cannot check: the output or the weights have the wrong shape (see above)": (
        "无法检查：输出或权重的形状不对（见上）"
    ),
    (
        "a query with no allowed key gives NaN (softmax of a row of -inf); give such rows output "
        "0 and weights 0"
    ): ("没有可关注键的查询得到 NaN（一整行 -inf 的 softmax）；请让这样的行输出 0、权重 0"),
    (
        "a query with no allowed key gets the average of all values (the masked_fill(-1e9) "
        "trap); give it output 0 and weights 0"
    ): ("没有可关注键的查询得到了所有值的平均（masked_fill(-1e9) 陷阱）；请让它输出 0、权重 0"),
    "a query with no allowed key must get output 0 and weights 0": (
        "没有可关注键的查询必须得到输出 0 和权重 0"
    ),
    "cannot check: the output is not a tensor (see above)": "无法检查：输出不是张量（见上）",
    "the output is detached from the inputs: no gradient can reach them": (
        "输出与输入断开了：梯度无法到达输入"
    ),
    "a float mask must be 0 where a key is allowed and -inf on padding": (
        "浮点掩码在允许的键处必须为 0，在填充处为 -inf"
    ),
    (
        "the convention is inverted: for F.scaled_dot_product_attention True means MAY attend, "
        "for nn.MultiheadAttention True means padding; invert it with ~"
    ): (
        "约定反了：对 F.scaled_dot_product_attention，"
        "True 表示可以关注；对 nn.MultiheadAttention，"
        "True 表示填充；用 ~ 取反"
    ),
    (
        "return a pair (output, weights), as attnbook.scaled_dot_product_attention does; got "
        "{result_type}"
    ): (
        "请返回一对 (output, weights)，与 attnbook.scaled_dot_product_attention 一"
        "样；实际为 {result_type}"
    ),
    "output and weights must be tensors; got {output_type} and {weights_type}": (
        "output 和 weights 必须是张量；实际为 {output_type} 和 {weights_type}"
    ),
    (
        "return tensors of the inputs' dtype {query_dtype}; got output {output_dtype} and "
        "weights {weights_dtype} (a tensor made with torch.tensor(...) can change it)"
    ): (
        "请返回与输入相同 dtype {query_dtype} 的张量；实际 output 为"
        " {output_dtype}，weights 为 {weights_dtype}（"
        "用 torch.tensor(...) 创建的张量可能改变 dtype）"
    ),
    "the output should have shape {expected_shape}; got {output_shape}": (
        "输出的形状应为 {expected_shape}；实际为 {output_shape}"
    ),
    "some weights are negative": "有些权重为负",
    "the same mistake (see above)": "同一个错误（见上）",
    (
        "output has shape {output_shape}: multiply the weights by value (Ev = {EV} features), "
        "not by key"
    ): ("输出形状为 {output_shape}：权重应乘以值（Ev = {EV} 个特征），而不是键"),
    "output should have shape (N, L, Ev) = {N_L_EV}; got {output_shape}": (
        "输出形状应为 (N, L, Ev) = {N_L_EV}；实际为 {output_shape}"
    ),
    "weights should have shape (N, L, S) = {N_L_S}; got {weights_shape}": (
        "权重形状应为 (N, L, S) = {N_L_S}；实际为 {weights_shape}"
    ),
    "the fully masked row is right, but not the others: {problem}": (
        "完全被掩蔽的行正确，但其他行不对：{problem}"
    ),
    "no gradient reaches {join_missing}": "没有梯度到达 {join_missing}",
    (
        "the gradient of {join_bad} contains NaN or inf (often from a fully masked row); mask "
        "the scores with masked_fill or torch.where before softmax"
    ): (
        "{join_bad} 的梯度含有 NaN 或 inf（常因某行被完全掩蔽"
        "）；请在 softmax 之前用 masked_fill 或 torch.where 掩"
        "蔽分数"
    ),
    "return a tensor mask; got {mask_type}": "请返回一个张量掩码；实际为 {mask_type}",
    (
        "return a bool mask (True = may attend); F.scaled_dot_product_attention refuses a mask "
        "of dtype {mask_dtype}"
    ): (
        "请返回布尔掩码（True = 可以关注）；F.scaled_dot_product_attention 不"
        "接受 dtype 为 {mask_dtype} 的掩码"
    ),
    (
        "your function raised {exc} (with inputs of shape (N, H, L, E), transpose the last two "
        "dims: key.transpose(-2, -1))"
    ): (
        "你的函数抛出了 {exc}（输入形状为 (N, H, L, E) 时，请转置最后两维：key.transpose(-2, -1)）"
    ),
    (
        "a mask of shape {mask_shape} does not broadcast to the scores (N, H, L, S) = "
        "{Nb_Hb_Lb_Sb}: add the head and query dimensions, key_padding_mask[:, None, None, :]"
    ): (
        "形状为 {mask_shape} 的掩码无法广播到分数 (N, H, L, S) = {Nb_Hb_Lb_Sb}："
        "请添加头和查询两个维度，key_padding_mask[:, None, None, :]"
    ),
    "F.scaled_dot_product_attention refuses this mask: {exc}": (
        "F.scaled_dot_product_attention 不接受这个掩码：{exc}"
    ),
    "scaling for other variances": "其他方差下的缩放",
    "Var(q · k) for σ = 2, d_k = 64": "σ = 2、d_k = 64 时的 Var(q · k)",
    "the divisor that gives variance 1": "使方差为 1 的除数",
    "the largest temperature that gives 张 0.9": "使张得到 0.9 的最大温度",
    "the largest T with weight ≥ 0.9 on 张": "使张的权重 ≥ 0.9 的最大 T",
    "where BERT-base spends its attention FLOPs and memory": (
        "BERT-base 的注意力把 FLOPs 和内存花在哪里"
    ),
    "the length where the core catches up in FLOPs": "核心部分在 FLOPs 上追平时的长度",
    "the length where the weights outgrow Q, K, V and the output": (
        "权重超过 Q、K、V 和输出时的长度"
    ),
    "each term q_i k_i has variance E[q_i²] E[k_i²] = σ² · σ² = σ⁴, not σ²": (
        "每一项 q_i k_i 的方差为 E[q_i²] E[k_i²] = σ² · σ² = σ⁴，而不是 σ²"
    ),
    "that is the variance for σ = 1; here σ = 2": "这是 σ = 1 时的方差；这里 σ = 2",
    "√d_k alone is right only for σ = 1: divide by σ²√d_k": (
        "只有 σ = 1 时单独用 √d_k 才对：应除以 σ²√d_k"
    ),
    (
        "σ√d_k is the square root of d_k σ², but each term q_i k_i has variance σ⁴: the standard "
        "deviation of q · k is √(d_k σ⁴) = σ²√d_k"
    ): (
        "σ√d_k 是 d_k σ² 的平方根，但每一项 q_i k_i 的方差"
        "是 σ⁴：q · k 的标准差是 √(d_k σ⁴) = σ²√d_k"
    ),
    "divide by the standard deviation (the square root of the variance)": (
        "除以标准差（方差的平方根）"
    ),
    "the scores are divided by T, not multiplied: your answer is 1/T": (
        "分数是除以 T，而不是乘以 T：你的答案是 1/T"
    ),
    (
        "that threshold leaves out the division by √d_k (chapter 1's scale=1); this chapter's "
        "scores are Q·Kᵀ/√d_k, then divided by T"
    ): ("这个阈值漏掉了除以 √d_k（第 1 章的 scale=1）；本章的分数是 Q·Kᵀ/√d_k，再除以 T"),
    "the core (4n²E) equals the projections (8nE²) at n = 2E, not n = E": (
        "核心部分 (4n²E) 在 n = 2E 而不是 n = E 时等于投影 (8nE²)"
    ),
    (
        "n = 1.5E is where the core catches up with three projections (6nE²); with the output "
        "projection there are four (8nE²), so n = 2E"
    ): ("n = 1.5E 是核心部分追平三个投影 (6nE²) 的地方；加上输出投影共有四个 (8nE²)，所以 n = 2E"),
    "missing: pass the fourth answer, memory_crossover, to have it checked": (
        "缺失：请传入第四个答案 memory_crossover 以便检查"
    ),
    "the weights are H·n² numbers, one n × n matrix per head: divide by H": (
        "权重是 H·n² 个数，每个头一个 n × n 矩阵：请除以 H"
    ),
    "Q, K, V and the output are four n × E tensors: 4·n·E numbers, not n·E": (
        "Q、K、V 和输出是四个 n × E 张量：4·n·E 个数，而不是 n·E"
    ),
    "that is the FLOP crossover; memory compares H·n² weights with 4·n·E numbers": (
        "这是 FLOPs 的交叉点；内存比较的是 H·n² 个权重与 4·n·E 个数"
    ),
    "expected d_k σ⁴ = {d_sigma2_2:g}, got {variance}": (
        "应为 d_k σ⁴ = {d_sigma2_2:g}，实际为 {variance}"
    ),
    "expected σ²√d_k = {sigma2_d_0_5:g}, got {divisor}": (
        "应为 σ²√d_k = {sigma2_d_0_5:g}，实际为 {divisor}"
    ),
    (
        "at T = {T:g} 张 gets {weight:.3f} ≥ {TARGET}, but a larger temperature still does: find "
        "the largest one (to three decimals)"
    ): (
        "T = {T:g} 时张得到 {weight:.3f} ≥ {TARGET}，"
        "但更大的温度也能做到：请找出最大的那个（精确到三位小数）"
    ),
    (
        "that is three projections (Q, K, V); the output projection W_O is the fourth: 4 · 2nE² "
        "= 8nE² FLOPs"
    ): ("这是三个投影 (Q, K, V)；输出投影 W_O 是第四个：4 · 2nE² = 8nE² FLOPs"),
    (
        "half the expected: did you count multiply-adds (each is 2 FLOPs), or leave out half of "
        "the products (Q·Kᵀ and weights·V; four projections, not two)?"
    ): (
        "只有预期的一半：你是否数的是乘加次数（每次乘加是 2 FLOPs），或漏"
        "掉了一半的乘积（Q·Kᵀ 和 weights·V；四个投影，而不是两个）"
        "？"
    ),
    "expected n = {expected}, got {crossover}": "应为 n = {expected}，实际为 {crossover}",
    "expected n = 4E/H = {expected}, got {memory_crossover}": (
        "应为 n = 4E/H = {expected}，实际为 {memory_crossover}"
    ),
    "answer with a number; got {temperature_type}": "请用一个数作答；实际为 {temperature_type}",
}
