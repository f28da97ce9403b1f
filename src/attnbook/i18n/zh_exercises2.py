"""The exercise checkers' words in Chinese, keyed by their English text (see attnbook.i18n.zh), part 2."""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) of a checker → its Chinese.
STRINGS: dict[str, str] = {
    "a temperature must be a positive number; got {temperature}": (
        "温度必须是正数；实际为 {temperature}"
    ),
    (
        "at T = {T:g} 张 gets {weight_on_key_T:.4f}, just under {TARGET}: the largest T lies "
        "below your answer; round down to three decimals, not up or to the nearest"
    ): (
        "T = {T:g} 时张得到 {weight_on_key_T:.4f}，"
        "略低于 {TARGET}：最大的 T 小于你的答案；请向下取到三位小数，"
        "而不是向上取或四舍五入"
    ),
    (
        "at T = {T:g} 张 gets {weight_on_key_T:.2f}: a temperature above 1 flattens the weights; "
        "to sharpen them, T must be below 1"
    ): (
        "T = {T:g} 时张得到 {weight_on_key_T:.2f}："
        "大于 1 的温度会使权重更平缓；要让它们更尖锐，T 必须小于 1"
    ),
    "at T = {T:g} 张 gets only {weight:.4f} < {TARGET}: the answer is smaller": (
        "T = {T:g} 时张只得到 {weight:.4f} < {TARGET}：答案应更小"
    ),
    "expected {expected:,}, got {answer:,}": "应为 {expected:,}，实际为 {answer:,}",
    "d_model = 512, 8 heads: 1,050,624 parameters": "d_model = 512，8 个头：1,050,624 个参数",
    "bias=False: 1,048,576 parameters": "bias=False：1,048,576 个参数",
    "the same count for 1, 2 and 16 heads": "1、2 和 16 个头的计数相同",
    "a small module: embed_dim 12, 3 heads": "一个小模块：embed_dim 12，3 个头",
    "keys and values of other sizes: kdim = 32, vdim = 16": (
        "键和值的大小不同：kdim = 32，vdim = 16"
    ),
    "kdim and vdim without biases": "无偏置的 kdim 和 vdim",
    "parameters with a fixed head size": "头大小固定时的参数量",
    "E = 64 H: the count grows like H²": "E = 64 H：计数随 H² 增长",
    "you counted the weights but not the biases (each of the four projections has E)": (
        "你数了权重但没数偏置（四个投影各有 E 个）"
    ),
    "the output projection (E x E) is missing": "缺少输出投影（E x E）",
    "each head does not get full E x E matrices: it uses a slice of E/H rows of each": (
        "每个头并不拥有完整的 E x E 矩阵：它只用每个矩阵中 E/H 行的一片"
    ),
    "k_proj maps kdim features to E (weight E x kdim), v_proj maps vdim to E": (
        "k_proj 把 kdim 个特征映射到 E（权重 E x kdim），v_proj 把 vdim 映射到 E"
    ),
    "with bias=False there are no biases to count": "bias=False 时没有偏置可数",
    "the output projection and the biases are missing": "缺少输出投影和偏置",
    "the output projection is missing": "缺少输出投影",
    "the output projection (E x E, plus E biases) is missing": (
        "缺少输出投影（E x E，外加 E 个偏置）"
    ),
    "expected {value:,}, got {answer:,}": "应为 {value:,}，实际为 {answer:,}",
    (
        "this is 3·E², the source article's count (786,432 for E = 512): only the Q, K and V "
        "weights; {missing}"
    ): ("这是 3·E²，即原文章的计数（E = 512 时为 786,432）：只有 Q、K 和 V 的权重；{missing}"),
    "give a dict with one count for each H in {heads}; got keys {got}": (
        "请给出一个 dict，对 {heads} 中的每个 H 各有一个计数；实际的键为 {got}"
    ),
    "H = {H} (E = {E}): expected {expected:,}, got {answer:,}": (
        "H = {H}（E = {E}）：应为 {expected:,}，实际为 {answer:,}"
    ),
    (
        "return the count as an integer (a number of parameters is whole); got {given_type} "
        "{given!r}"
    ): ("请把计数作为整数返回（参数的个数是整数）；实际为 {given_type} {given!r}"),
    "with {heads} heads: {problem}": "{heads} 个头时：{problem}",
    "H = {H}: give the count as an integer; got {type_counts_H___name}": (
        "H = {H}：请把计数作为整数给出；实际为 {type_counts_H___name}"
    ),
    "H = {H}: that is the count for E = 512; here E = 64 H = {E}": (
        "H = {H}：这是 E = 512 时的计数；这里 E = 64 H = {E}"
    ),
    "H = {H}: the four biases of E = {E} are missing": "H = {H}：缺少 E = {E} 的四个偏置",
    "head h at position i must hold x[:, i, h*D:(h+1)*D]": (
        "位置 i 上的头 h 必须保存 x[:, i, h*D:(h+1)*D]"
    ),
    "an x that is not contiguous in memory": "内存中不连续的 x",
    "does not modify its input": "不修改输入",
    "undoes split_heads exactly, on heads made contiguous as attention does": (
        "在像注意力那样变为连续的头上，精确还原 split_heads"
    ),
    "padding only: padded keys dropped, the rest kept": "仅填充：丢弃被填充的键，保留其余的",
    "padding and causal: also no key after the query": "填充加因果：查询之后的键也不可见",
    "cross-attention between widths": "不同宽度之间的交叉注意力",
    "the parameter count": "参数量",
    (
        "reshaping straight to (N, H, L, D) cuts the sequence, not the features; view as (N, L, "
        "H, D), then transpose(1, 2)"
    ): (
        "直接 reshape 成 (N, H, L, D) 切分的是序列而不是特"
        "征；先 view 成 (N, L, H, D)，再 transpose(1, 2)"
    ),
    (
        "your heads take every H-th feature; head h must get the block of features h*D to "
        "(h+1)*D: view as (N, L, H, D), not (N, L, D, H)"
    ): (
        "你的头取的是每隔 H 个的特征；头 h 必须得到第 h*D 到 (h+1)*D 个"
        "特征这一块：view 成 (N, L, H, D)，而不是 (N, L, D, H)"
    ),
    "position i must hold head 0's features, then head 1's, ... for that position": (
        "位置 i 必须先保存头 0 的特征，然后是头 1 的……（都是该位置的）"
    ),
    "merge_heads(split_heads(x)) should give back x": "merge_heads(split_heads(x)) 应还原出 x",
    "cannot check: view fails on this input too (see above)": (
        "无法检查：view 在这个输入上也失败了（见上）"
    ),
    "some kept (or dropped) scores are wrong; compare with ~key_padding_mask": (
        "有些保留（或丢弃）的分数不对；与 ~key_padding_mask 对比"
    ),
    "a Linear from 12 to 8 features has weight (out, in) = (8, 12)": (
        "从 12 到 8 个特征的 Linear，其权重为 (out, in) = (8, 12)"
    ),
    "one row per QUERY, in the query's width: (N, L, E) = (1, 6, 8)": (
        "每个查询（QUERY）一行，宽度与查询相同：(N, L, E) = (1, 6, 8)"
    ),
    "one (L, S) = (6, 5) matrix per head: (N, H, L, S)": (
        "每个头一个 (L, S) = (6, 5) 矩阵：(N, H, L, S)"
    ),
    "k_proj and v_proj map 12 features to 8: their weights are 8 x 12, not 8 x 8": (
        "k_proj 和 v_proj 把 12 个特征映射到 8：它们的权重是 8 x 12，而不是 8 x 8"
    ),
    "the four biases (8 each) are missing": "缺少四个偏置（各 8 个）",
    (
        "out_proj is missing: there are four projections, q, k and v and the output projection "
        "out_proj (8 x 8 weights and 8 biases, 72 parameters)"
    ): (
        "缺少 out_proj：共有四个投影，q、k、v 以及输出投影 out_proj（"
        "8 x 8 权重和 8 个偏置，共 72 个参数）"
    ),
    "out_proj and the biases are missing: four projections, each with a bias": (
        "缺少 out_proj 和偏置：四个投影，每个都有偏置"
    ),
    (
        "view cannot merge the heads after transpose(1, 2): heads stored contiguously, as "
        "attention returns them, are no longer contiguous once transposed; use reshape, or "
        ".contiguous().view(...)"
    ): (
        "transpose(1, 2) 之后 view 无法合并头：像注意力返回"
        "的那样连续存储的头，一经转置就不再连续；请用 reshape，或 .contiguous().view(...)"
    ),
    (
        "reshaping (N, H, L, D) straight to (N, L, E) mixes positions; first transpose(1, 2) to "
        "(N, L, H, D)"
    ): ("把 (N, H, L, D) 直接 reshape 成 (N, L, E) 会混淆位置；先 transpose(1, 2) 成 (N, L, H, D)"),
    "the mask is inverted: the article KEEPS scores where the mask is nonzero": (
        "掩码反了：文章在掩码非零之处保留（KEEPS）分数"
    ),
    "the padding part is inverted: padding (True) must become 0 (dropped)": (
        "填充部分反了：填充（True）必须变为 0（丢弃）"
    ),
    "expected {count}, got {parameters}": "应为 {count}，实际为 {parameters}",
    "x of shape {N_L_H_D} into {H} heads of {D}": (
        "把形状为 {N_L_H_D} 的 x 分成 {H} 个大小为 {D} 的头"
    ),
    "view fails here too (see above)": "这里 view 也失败了（见上）",
    "x of shape {N_H_L_D} back to {N_L_H_D}": "把形状为 {N_H_L_D} 的 x 还原为 {N_L_H_D}",
    "return a tensor the article can compare with 0; got {out_type}": (
        "请返回一个文章能与 0 比较的张量；实际为 {out_type}"
    ),
    "causal=True must also hide the keys after each query": (
        "causal=True 还必须隐藏每个查询之后的键"
    ),
    "the shape of {name}": "{name} 的形状",
    (
        "the article compares your mask with scores of shape (N, H, L, S) = {value}; shape "
        "{out_shape} does not broadcast to it (add the head and query dimensions: "
        "key_padding_mask[:, None, None, :])"
    ): (
        "文章拿你的掩码与形状为 (N, H, L, S) = {value} 的"
        "分数比较；形状 {out_shape} 无法广播过去（请添加头和查询两个"
        "维度：key_padding_mask[:, None, None, :]）"
    ),
    "a query must also see itself: use tril(), not tril(-1)": (
        "查询也必须能看到自己：用 tril()，而不是 tril(-1)"
    ),
    "that lets each query see the NEXT token too: tril(), not tril(1)": (
        "这会让每个查询也看到下一个（NEXT）词元：用 tril()，而不是 tril(1)"
    ),
    "triu keeps the future; a causal mask keeps the past: use tril()": (
        "triu 保留的是未来；因果掩码保留的是过去：用 tril()"
    ),
    "split_heads(x of {N_L_H_D}, {H})": "split_heads(形状为 {N_L_H_D} 的 x, {H})",
    "merge_heads(x of {N_H_L_D})": "merge_heads(形状为 {N_H_L_D} 的 x)",
    "expected {e}, got {a}: {h}": "应为 {e}，实际为 {a}：{h}",
    "returns a floating (length, embed_dim) table": "返回一个浮点的 (length, embed_dim) 表",
    "row 0 is sin(0), cos(0), sin(0), cos(0), ...": "第 0 行是 sin(0), cos(0), sin(0), cos(0), ...",
    "equals the paper's formula for 50 positions, embed_dim 16": (
        "50 个位置、embed_dim 16 时等于论文的公式"
    ),
    "equals the paper's formula for 7 positions, embed_dim 64": (
        "7 个位置、embed_dim 64 时等于论文的公式"
    ),
    "one sequence of 5 tokens": "一个 5 个词元的序列",
    "a batch of 3 sequences of 7 tokens": "一个批量：3 个 7 个词元的序列",
    "dropout1 and dropout2 in their places (marked with fixed factors)": (
        "dropout1 和 dropout2 各就其位（用固定系数标出）"
    ),
    "decoder block parameters": "解码器块的参数",
    "the two attention layers": "两个注意力层",
    "the whole block": "整个块",
    "with dropout1 = x0.5 and dropout2 = x0.25 the output differs from the pre-LN block": (
        "dropout1 = x0.5、dropout2 = x0.25 时，输出与 pre-LN 块不同"
    ),
    "cannot check: the table has the wrong shape (see above)": "无法检查：表的形状不对（见上）",
    "a decoder block has TWO attention layers: self-attention and cross-attention": (
        "解码器块有两个（TWO）注意力层：自注意力和交叉注意力"
    ),
    "each attention layer also has 4 x 512 biases": "每个注意力层还有 4 x 512 个偏置",
    "the three layer norms (a weight and a bias of 512 each) are missing": (
        "缺少三个层归一化（各有 512 个权重和 512 个偏置）"
    ),
    "a decoder block has three layer norms, one per sublayer": (
        "解码器块有三个层归一化，每个子层一个"
    ),
    "the feed-forward network (512 x 2048 and 2048 x 512, with biases) is missing": (
        "缺少前馈网络（512 x 2048 和 2048 x 512，含偏置）"
    ),
    "the feed-forward network's biases (2048 and 512) are missing": (
        "缺少前馈网络的偏置（2048 和 512）"
    ),
    "position 0 must be [0, 1, 0, 1, ...] (sin 0, cos 0, ...); got {row_tolist}": (
        "位置 0 必须是 [0, 1, 0, 1, ...]（sin 0, cos 0, ...）；实际为 {row_tolist}"
    ),
    "wrong shape (see above)": "形状不对（见上）",
    "cannot check: wrong output (see above)": "无法检查：输出不对（见上）",
    "expected {true_attention:,}, got {attention:,}": (
        "应为 {true_attention:,}，实际为 {attention:,}"
    ),
    "expected {true_total:,}, got {total:,}": "应为 {true_total:,}，实际为 {total:,}",
    "for length 10 and embed_dim 6 the table must be (10, 6); got {table_shape}": (
        "长度 10、embed_dim 6 时表必须是 (10, 6)；实际为 {table_shape}"
    ),
    "the table must be floating point; got dtype {table_dtype}": (
        "表必须是浮点型；实际 dtype 为 {table_dtype}"
    ),
    "entry (position {pos}, column {col}) should be {value:.6f}; got {table_pos_col_item:.6f}": (
        "条目（位置 {pos}，列 {col}）应为 {value:.6f}；实际为 {table_pos_col_item:.6f}"
    ),
    "differs from the pre-LN block by up to {error:.3g}": "与 pre-LN 块最多相差 {error:.3g}",
    "return the table as a tensor; got {table_type}": "请把表作为张量返回；实际为 {table_type}",
    "return the block's output tensor; got {output_type}": (
        "请返回块的输出张量；实际为 {output_type}"
    ),
    "for x of shape {N_L_16} return the same shape; got {output_shape}": (
        "对形状为 {N_L_16} 的 x 请返回相同形状；实际为 {output_shape}"
    ),
    "the paper's setting: d_model 512, 4000 warm-up steps": (
        "论文的设置：d_model 512，4000 个预热步"
    ),
    "a small model: d_model 64, 100 warm-up steps": "一个小模型：d_model 64，100 个预热步",
    "T = {T}, S = {S}, {n} layers, with the cache": "T = {T}，S = {S}，{n} 层，有缓存",
    "T = {T}, S = {S}, {n} layers, without the cache": "T = {T}，S = {S}，{n} 层，无缓存",
    "expected {expected:,} rows; got {got:,}": "应为 {expected:,} 行；实际为 {got:,}",
    "at step {step} the rate should be {expected:.6g}; got {value:.6g}": (
        "第 {step} 步的学习率应为 {expected:.6g}；实际为 {value:.6g}"
    ),
    "return a whole number of rows; got {got!r}": "请返回整数的行数；实际为 {got!r}",
    "; or ": "；或者",
    "return a number; got {got_type}": "请返回一个数；实际为 {got_type}",
    "pointer loss": "指针损失",
    "equals F.cross_entropy on finite scores": "在有限分数上等于 F.cross_entropy",
    "handles -inf on padding positions": "能处理填充位置上的 -inf",
    "another batch: 7 sentences of 9 positions": "另一个批量：7 个句子，每句 9 个位置",
    "its gradient trains the scores": "它的梯度能训练分数",
    (
        "the value is right but carries no gradient, so training could not use it: do not call "
        ".item(), .detach() or torch.tensor(...) on the loss; return the tensor that log_softmax "
        "and indexing compute"
    ): (
        "值是对的，但不带梯度，训练无法使用它：不要对损失调用 .item()、.detach() 或"
        " torch.tensor(...)；请返回 log_softmax 和"
        "索引算出的张量"
    ),
    "the gradient is not finite (NaN or inf); use log_softmax and pick by indexing": (
        "梯度不是有限的（NaN 或 inf）；请用 log_softmax，并通过索引选取"
    ),
    "the gradient at the -inf (padding) positions must be exactly 0": (
        "-inf（填充）位置上的梯度必须恰好为 0"
    ),
    (
        "the exercise asks you to write the loss without F.cross_entropy or F.nll_loss "
        "(or nn.CrossEntropyLoss, nn.NLLLoss): use log_softmax and pick the target's entry"
    ): (
        "本练习要求不用 F.cross_entropy 或 F.nll_loss（也不用 nn.CrossEntropyLoss、nn.NLLLoss）"
        "写出损失：用 log_softmax 并选取目标那一项"
    ),
    (
        "the gradient with respect to the logits should be (softmax - one_hot(target)) / N; it "
        "differs by up to {value:.2e}"
    ): ("对 logits 的梯度应为 (softmax - one_hot(target)) / N；最多相差 {value:.2e}"),
    (
        "not finite for large scores: exp() overflows, or log(softmax(x)) underflows to log(0); "
        "use log_softmax, which never forms the probabilities"
    ): (
        "大分数时不是有限的：exp() 溢出，或 log(softmax(x)) 下"
        "溢为 log(0)；请用 log_softmax，它从不显式求出概率"
    ),
    "the sign is wrong: the loss is MINUS the log-probability of the target": (
        "符号反了：损失是目标对数概率的负值（MINUS）"
    ),
    "you sum over sentences; take the mean": "你对句子求和了；应取平均",
    "you use the raw scores as log-probabilities; apply log_softmax first": (
        "你把原始分数当作对数概率；请先做 log_softmax"
    ),
    "you take the probability, not its logarithm: use log_softmax": (
        "你取的是概率而不是其对数：请用 log_softmax"
    ),
    (
        "you normalise over dim 0, the sentences; each sentence's softmax runs over its "
        "positions, the last dimension: log_softmax(dim=-1)"
    ): (
        "你在第 0 维（句子）上做了归一化；每个句子的 softmax 在其位置"
        "上进行，即最后一维：log_softmax(dim=-1)"
    ),
    (
        "return the MEAN over sentences, a scalar of shape (); you returned one loss per "
        "sentence, shape {out_shape}: add .mean()"
    ): (
        "请返回对句子的平均（MEAN），一个形状为 () 的标量；你返回的是每个"
        "句子一个损失，形状为 {out_shape}：加上 .mean()"
    ),
    "expected {expected:.5f}, got {out:.5f}": "应为 {expected:.5f}，实际为 {out:.5f}",
    (
        "got NaN {what}: 0 · log(0) = 0 · (-inf) is NaN; pick the target's log-probability with "
        "indexing or gather instead of multiplying by a one-hot"
    ): (
        "{what}得到 NaN：0 · log(0) = 0 · (-inf) 是"
        " NaN；请用索引或 gather 选取目标的对数概率，而不是乘以 one-hot"
    ),
    "head hits": "头的命中率",
    "binding head": "绑定头",
    "gender-aware baseline": "考虑性别的基线",
    "that is not the nearest preceding name of the pronoun's gender": (
        "这不是代词之前最近的、性别相同的名字"
    ),
    "{why} — in {e_text!r} expected position {expected_n}, got {answers_n}": (
        "{why}——在 {e_text!r} 中应为位置 {expected_n}，实际为 {answers_n}"
    ),
    "return a position (an integer); got {a_type} {a!r}": (
        "请返回一个位置（整数）；实际为 {a_type} {a!r}"
    ),
    "head entropy": "头的熵",
    "6 sentences of different lengths, 3 heads": "6 个长度不同的句子，3 个头",
    "9 sentences, 2 heads, 10 positions": "9 个句子，2 个头，10 个位置",
    "uniform attention over 4 keys gives log 4": "在 4 个键上的均匀注意力得到 log 4",
    "replace one head": "替换一个头",
    "zero ablation of head 1 of 4 (D = 3)": "把 4 个头中的头 1 置零（D = 3）",
    "a mean (D,) into head 0 of 2 (D = 5)": "把 (D,) 均值写入 2 个头中的头 0（D = 5）",
    "a mean into the last head, 3 of 4 (D = 2)": "把均值写入最后一个头，4 个中的第 3 个（D = 2）",
    (
        "you set every H-th feature (x[..., head::num_heads]); the heads sit side by side, as "
        "merge_heads puts them: head h is the block of features h*D to (h+1)*D - 1"
    ): (
        "你设置的是每隔 H 个的特征（x[..., head::num_heads]）"
        "；头是并排放置的，与 merge_heads 的排列一致：头 h 是第 h*D 到"
        " (h+1)*D - 1 个特征这一块"
    ),
    "you set every feature; only head h's D features change, the other heads stay": (
        "你设置了所有特征；只有头 h 的 D 个特征改变，其他头保持不变"
    ),
    (
        "nothing changed: return the new tensor with head h's features set (an empty slice? head "
        "h of num_heads is x[..., h*D:(h+1)*D], heads counted from 0)"
    ): (
        "什么都没改变：请返回设置了头 h 特征的新张量（切片为空？num_heads 个"
        "头中的头 h 是 x[..., h*D:(h+1)*D]，头从 0 开始"
        "计数）"
    ),
    "the next head": "下一个头",
    "the previous head": "上一个头",
    (
        "set the features, don't scale or shift them: head h's features become the value itself "
        "(x[..., h*D:(h+1)*D] = value), whatever they held before"
    ): (
        "是设置特征，而不是缩放或平移它们：无论原来是什么，头 h 的特征都变成该"
        "值本身（x[..., h*D:(h+1)*D] = value）"
    ),
    "head {head} of {H} is features {head_D} to {head_1_D_1}; other features changed": (
        "{H} 个头中的头 {head} 是第 {head_D} 到 {head_1_D_1} 个特征；其他特征被改变了"
    ),
}
