"""The exercise checkers' words in Chinese, keyed by their English text (see attnbook.i18n.zh), part 5."""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) of a checker → its Chinese.
STRINGS: dict[str, str] = {
    (
        "a head uniform over the 4 real keys of 6 must score exactly 1.0 and a one-hot head 0.0; "
        "got {value}"
    ): ("在 6 个键中的 4 个真实键上均匀的头得分必须恰好为 1.0，one-hot 的头为 0.0；实际为 {value}"),
    "(your verdict, the right one) per head: {wrong}": "每个头的（你的判断，正确的判断）：{wrong}",
    "my_verdicts must return a dict {{(layer, head): verdict}}; got {out_type}": (
        "my_verdicts 必须返回 dict {{(layer, head): verdict}}；实际为 {out_type}"
    ),
    "expected a verdict for each of the heads {sorted_expected}; got keys {sorted_out}": (
        "应对每个头 {sorted_expected} 给出判断；实际的键为 {sorted_out}"
    ),
    (
        "you called harmless heads redundant because a pair of them with a NEEDED head costs a "
        "lot: that cost is the needed head's; only pairs of two harmless heads tell redundancy "
        "(wrong: {wrong})"
    ): (
        "你把无害的头判为冗余，是因为它们与一个必需（NEEDED）的头成对时代价"
        "很大：那是必需头的代价；只有两个无害头组成的对才能说明冗余（错误：{wrong}）"
    ),
    (
        "you compared the EXCESS (cost together minus the two costs alone) with 0.02; the rule "
        "compares the cost of the pair together (wrong: {wrong})"
    ): (
        "你比较的是超额部分（EXCESS，合计代价减去两个单独代价）与 0.02；"
        "规则比较的是这一对合计的代价（错误：{wrong}）"
    ),
    "your function raised KeyError {exc___cause}: {PAIR_ORDER}": (
        "你的函数抛出了 KeyError {exc___cause}：{PAIR_ORDER}"
    ),
    "one sequence of 5 positions, head size 8": "一个 5 个位置的序列，头大小为 8",
    "batch and heads in front: (2, 3, 12, 16)": "批量和头在前面：(2, 3, 12, 16)",
    "relative: the score of rotated q and k depends only on their distance": (
        "相对性：旋转后的 q 与 k 的分数只取决于它们的距离"
    ),
    "the rotated features differ from rotate(x)": "旋转后的特征与 rotate(x) 不同",
    "my_rotate must return a (6, 8) tensor for a (6, 8) input": (
        "my_rotate 对 (6, 8) 的输入必须返回 (6, 8) 张量"
    ),
    "nothing was rotated: position p turns pair i by the angle p·θ_i": (
        "什么都没旋转：位置 p 把第 i 对旋转角度 p·θ_i"
    ),
    "positions count from 0 (the first row is not rotated); you started at 1": (
        "位置从 0 开始计数（第一行不旋转）；你从 1 开始了"
    ),
    "the rotation turns the wrong way: (a, b) -> (a cos - b sin, a sin + b cos)": (
        "旋转方向反了：(a, b) -> (a cos - b sin, a sin + b cos)"
    ),
    "θ_i = 10000**(-2i/D) for pair i; you used 10000**(-i/D)": (
        "第 i 对的 θ_i = 10000**(-2i/D)；你用的是 10000**(-i/D)"
    ),
    (
        "the rotated values are right but in the wrong order: you concatenated all the new first "
        "members, then all the second ones; interleave them so that pair i lands back on "
        "features (2i, 2i+1) (torch.stack(..., dim=-1).flatten(-2))"
    ): (
        "旋转后的值是对的，但顺序不对：你先拼接了所有新的第一个成员，再拼接所有第"
        "二个；请交错排列，让第 i 对回到特征 (2i, 2i+1) 上（torch.stack(..., dim=-1).flatten(-2)）"
    ),
    (
        "you paired feature i with i + D/2 (the layout of GPT-NeoX and many libraries); this "
        "book's rotate() pairs neighbours (2i, 2i+1) — the same idea, a different order of "
        "features"
    ): (
        "你把特征 i 与 i + D/2 配对（GPT-NeoX 和许多库的布局"
        "）；本书的 rotate() 把相邻的 (2i, 2i+1) 配对——思"
        "路相同，特征顺序不同"
    ),
    "the query first": "先缩放查询",
    "the product after": "乘积之后再缩放",
    "q·k at distance 2 changes with the position: {value}": "距离为 2 时的 q·k 随位置变化：{value}",
    (
        "you gave 65504·sqrt(head_dim) whether or not the query is scaled first; when the scale "
        "multiplies after the product, q·k itself must fit in float16 — the scale comes too late "
        "to help"
    ): (
        "无论是否先缩放查询，你都给出 65504·sqrt(head_dim)；"
        "缩放在乘积之后进行时，q·k 本身必须放得进 float16——缩放来得"
        "太晚，帮不上忙"
    ),
    "expected {expected:.6g}; got {value:.6g}": "应为 {expected:.6g}；实际为 {value:.6g}",
    "head size {d}, scale on {where}": "头大小 {d}，{where}",
    "the bytes of a key/value cache": "键/值缓存的字节数",
    (
        "the output should be phi(q) . S / (phi(q) . z), with S and z after the update and "
        "phi(x) = elu(x) + 1"
    ): ("输出应为 phi(q) . S / (phi(q) . z)，其中 S 和 z 取更新之后的值，phi(x) = elu(x) + 1"),
    "one step of linear attention": "线性注意力的一步",
    "one step, E = 4, Ev = 6": "一步，E = 4，Ev = 6",
    "one step, E = 8, Ev = 2": "一步，E = 8，Ev = 2",
    "12 steps from zero equal linear_attention(..., is_causal=True)": (
        "从零开始的 12 步等于 linear_attention(..., is_causal=True)"
    ),
    (
        "the output uses the state BEFORE the new key and value are added: a causal query sees "
        "its own position too; update the state first"
    ): ("输出用的是加入新键和值之前（BEFORE）的状态：因果查询也能看到自己的位置；请先更新状态"),
    "divide by the normaliser phi(q) . z, or the weights do not add up to 1": (
        "请除以归一化项 phi(q) . z，否则权重之和不为 1"
    ),
    "apply the feature map to the key before adding it: phi(k) = elu(k) + 1": (
        "把键加入之前先对它应用特征映射：phi(k) = elu(k) + 1"
    ),
    "apply the feature map to the query too: phi(q) = elu(q) + 1": (
        "也要对查询应用特征映射：phi(q) = elu(q) + 1"
    ),
    "the feature map is elu(x) + 1; without the + 1 it can be negative": (
        "特征映射是 elu(x) + 1；没有 + 1 就可能为负"
    ),
    (
        "the new state should be state + phi(k) v^T, an (E, Ev) outer product, with the feature "
        "map phi(x) = elu(x) + 1"
    ): ("新状态应为 state + phi(k) v^T，一个 (E, Ev) 的外积，特征映射为 phi(x) = elu(x) + 1"),
    "the new normaliser should be z + phi(k), with phi(x) = elu(x) + 1": (
        "新的归一化项应为 z + phi(k)，其中 phi(x) = elu(x) + 1"
    ),
    "run from a zero state over 12 positions, the outputs differ from causal linear attention": (
        "从零状态运行 12 个位置后，输出与因果线性注意力不同"
    ),
    "the cache holds the keys AND the values (a factor 2)": "缓存同时保存键和（AND）值（因子 2）",
    "multiply by the number of key/value heads too": "还要乘以键/值头的个数",
    "multiply the number of values by the bytes per value": "把值的个数乘以每个值的字节数",
    "every layer has its own cache: multiply by the number of layers": (
        "每层都有自己的缓存：乘以层数"
    ),
    "every sequence of the batch has its own cache: multiply by the batch": (
        "批量中的每个序列都有自己的缓存：乘以批量大小"
    ),
    "each cached key and value has head_dim numbers": "每个缓存的键和值都有 head_dim 个数",
    "expected {right:,} bytes, got {answer:,}": "应为 {right:,} 字节，实际为 {answer:,}",
    "return a whole number of bytes (an int)": "请返回整数的字节数（int）",
    "return three things: (output, new state, new z)": "请返回三样东西：（输出、新的状态、新的 z）",
    (
        "only the {K} key/value head(s) are cached, not all {H} query heads, nor {K} times the "
        "group size H/K = {H_K} (the query heads of a group share them)"
    ): (
        "只缓存 {K} 个键/值头，而不是全部 {H} 个查询头，也不是 {K} 乘"
        "以组大小 H/K = {H_K}（同一组的查询头共享它们）"
    ),
    "{b} bytes per value here, not 4": "这里每个值 {b} 字节，而不是 4",
    "expected {right:,}, got {answer:,}: ": "应为 {right:,}，实际为 {answer:,}：",
    " (a scalar: reduce with .mean())": "（标量：用 .mean() 归约）",
    "all checks passed": "全部通过",
    "not yet": "还没有通过",
    (
        "your function changed its input {names} in place (for example with x /= ... or x[...] = "
        "...); compute a new tensor instead, the caller may still need it"
    ): (
        "你的函数原地修改了输入 {names}（例如用 x /= ... 或 x[...] = ...）"
        "；请计算一个新张量，调用者可能还需要原来的输入"
    ),
    "{what} must return a tensor of shape {expected}; got {kind}": (
        "{what} 必须返回形状为 {expected} 的张量；实际为 {kind}"
    ),
    "{what} must return shape {expected}{scalar}; got {shape}": (
        "{what} 必须返回形状 {expected}{scalar}；实际为 {shape}"
    ),
    (
        "{what} must return {dtype}, the dtype of its inputs; got {got} (a tensor made with "
        "torch.tensor(...) or an integer division can change it)"
    ): (
        "{what} 必须返回 {dtype}，即输入的 dtype；实际为 {got}（"
        "用 torch.tensor(...) 创建的张量或整数除法可能改变 dtype）"
    ),
    "{exercise}: {verdict}": "{exercise}：{verdict}",
    "{what} must return one tensor of shape {expected}; got a {kind} ({kinds})": (
        "{what} 必须返回一个形状为 {expected} 的张量；实际为一个 {kind}（{kinds}）"
    ),
    "{description}: {problem}": "{description}：{problem}",
    "your function raised {error}": "你的函数抛出了 {error}",
    (
        "the checker could not use your answer ({kind}: {error}); check that it returns what the "
        "exercise asks for"
    ): ("检查程序无法使用你的答案（{kind}: {error}）；请确认它返回了练习要求的东西"),
    "the four projections": "四个投影",
    "the attention core": "注意力核心",
    "per-head weights": "每个头的权重",
    (
        "you put all the sines first and all the cosines after (as some codebases do); the paper "
        "interleaves them: sine in even columns 2i, cosine in odd columns 2i+1"
    ): (
        "你把所有正弦放在前面，所有余弦放在后面（有些代码库这样做）；论文是交错排"
        "列的：正弦在偶数列 2i，余弦在奇数列 2i+1"
    ),
    "sine and cosine are swapped: even columns (2i) take the sine, odd columns the cosine": (
        "正弦和余弦弄反了：偶数列 (2i) 取正弦，奇数列取余弦"
    ),
    (
        "columns 2i and 2i+1 must share one frequency, 1 / 10000**(2i/E); you gave every column "
        "j its own, 1 / 10000**(j/E)"
    ): (
        "列 2i 和 2i+1 必须共用一个频率 1 / 10000**(2i/E)；你给每一列 j 各自的频率 1 / 10000**(j/E)"
    ),
    (
        "the exponent is 2i/E where 2i is the even column index (0, 2, 4, ...); you used 2 * "
        "(2i) / E, so the wavelengths grow too fast"
    ): (
        "指数是 2i/E，其中 2i 是偶数列的下标 (0, 2, 4, ...)；"
        "你用的是 2 * (2i) / E，所以波长增长得太快"
    ),
    "positions start at 0, so row 0 is sin(0) = 0, cos(0) = 1; your rows start at position 1": (
        "位置从 0 开始，所以第 0 行是 sin(0) = 0，cos(0) = 1；你的行从位置 1 开始"
    ),
    (
        "this is post-LN: you normalise after adding the residual; in pre-LN each sublayer reads "
        "norm(x) and its output is added to the un-normalised x"
    ): (
        "这是 post-LN：你在加上残差之后才归一化；在 pre-LN 中，每"
        "个子层读取 norm(x)，其输出加到未归一化的 x 上"
    ),
    (
        "the residual must carry the un-normalised x: you added the sublayer's output to norm(x) "
        "instead of to x"
    ): ("残差必须携带未归一化的 x：你把子层的输出加到了 norm(x) 上，而不是 x 上"),
    "the feed-forward sublayer is missing (x = x + ff(norm2(x)))": (
        "缺少前馈子层（x = x + ff(norm2(x))）"
    ),
    "the attention sublayer is missing (x = x + self_attn(norm1(x)))": (
        "缺少注意力子层（x = x + self_attn(norm1(x))）"
    ),
    (
        "you applied a final layer norm inside the block; in a pre-LN stack it comes once, after "
        "the last block"
    ): ("你在块内加了最终的层归一化；在 pre-LN 堆叠中它只在最后一个块之后出现一次"),
    "you swapped the norms: norm1 belongs to the attention, norm2 to the feed-forward": (
        "你把两个归一化弄反了：norm1 属于注意力，norm2 属于前馈网络"
    ),
    (
        "dropout belongs to the sublayer's output before the residual addition (x + "
        "dropout(sublayer(norm(x)))), not to the sum"
    ): (
        "dropout 作用于子层的输出，在残差相加之前（x + dropout(sublayer(norm(x)))），而不是作用于和"
    ),
    "dropout1 and dropout2 are not applied (in training they must be)": (
        "没有应用 dropout1 和 dropout2（训练时必须应用）"
    ),
    "dropout1 goes with the attention sublayer, dropout2 with the feed-forward": (
        "dropout1 配注意力子层，dropout2 配前馈网络"
    ),
    "dropout acts on the sublayer's OUTPUT, not on its input": (
        "dropout 作用于子层的输出（OUTPUT），而不是输入"
    ),
    (
        "the warm-up term is step * warmup_steps**-1.5 (so that both terms meet at step = "
        "warmup_steps); you used warmup_steps**-0.5"
    ): (
        "预热项是 step * warmup_steps**-1.5（使两项在 step = warmup_steps 处"
        "相等）；你用的是 warmup_steps**-0.5"
    ),
    "the whole rate is scaled by d_model**-0.5; that factor is missing": (
        "整个学习率要乘以 d_model**-0.5；缺少这个因子"
    ),
    (
        "take the MINIMUM of the two terms: the linear one while warming up, the decaying one after"
    ): ("取两项中的最小值（MINIMUM）：预热时取线性项，之后取衰减项"),
    "steps count from 1 here; you used step + 1 (a 0-based step counter)": (
        "这里步数从 1 开始；你用的是 step + 1（从 0 开始的步数计数器）"
    ),
    (
        "at step t the uncached decoder projects the t positions so far, not all T: 1 + 2 + ... "
        "+ T = T(T + 1)/2 rows, not T*T"
    ): (
        "在第 t 步，无缓存的解码器投影到目前为止的 t 个位置，而不是全部 T 个"
        "：1 + 2 + ... + T = T(T + 1)/2 行，而不是 T*T"
    ),
    (
        "at step t the uncached decoder projects all t positions so far, the newest included: 1 "
        "+ 2 + ... + T = T(T + 1)/2 rows, not T(T - 1)/2"
    ): (
        "在第 t 步，无缓存的解码器投影到目前为止的全部 t 个位置，包括最新的"
        "一个：1 + 2 + ... + T = T(T + 1)/2 行，而不"
        "是 T(T - 1)/2"
    ),
    (
        "the cross-attention keys count too: S rows of the memory per layer (once with the "
        "cache, at every step without)"
    ): ("交叉注意力的键也要算：每层 S 行记忆（有缓存时一次，无缓存时每步一次）"),
    (
        "the cache also keeps the cross-attention keys: the memory is projected once, not at "
        "every step"
    ): ("缓存也保存交叉注意力的键：记忆只投影一次，而不是每步一次"),
    (
        "without the cache the decoder projects the memory again at every step: T*S rows per "
        "layer, not S"
    ): ("没有缓存时，解码器每一步都要重新投影记忆：每层 T*S 行，而不是 S"),
    "every one of the num_layers decoder layers has its own projections": (
        "num_layers 个解码器层中的每一层都有自己的投影"
    ),
    "T counts the generated tokens; <s> is the first step's input, not one more step": (
        "T 数的是生成的词元；<s> 是第一步的输入，不是多出的一步"
    ),
    (
        "count the key projections only: the value projections see the same rows, so counting "
        "both doubles the answer"
    ): ("只数键投影：值投影看到的是同样的行，两者都数会使答案加倍"),
    (
        "you read the pronoun's column (who attends TO it); read its row: weights[n, h, "
        "pronoun[n], :] is where the pronoun looks"
    ): ("你读的是代词的列（谁关注它）；请读它的行：weights[n, h, pronoun[n], :] 是代词关注的地方"),
    "you average the weight on the antecedent; count how often it is the LARGEST weight": (
        "你对先行词上的权重求了平均；应数它是最大（LARGEST）权重的次数"
    ),
    (
        "you count weights above 0.5; the antecedent can be the largest weight of its row with "
        "less than half of it (head 1 here: 0.4): compare with the row's argmax"
    ): (
        "你数的是大于 0.5 的权重；先行词可以不到一半就是该行的最大权重（这里"
        "的头 1：0.4）：请与该行的 argmax 比较"
    ),
    "you count the hits; divide by the number of sentences to get a fraction": (
        "你数了命中次数；请除以句子数得到比例"
    ),
    (
        "weights[:, :, pronoun] takes every sentence's row at every sentence's pronoun position; "
        "pair them: weights[torch.arange(N), :, pronoun]"
    ): (
        "weights[:, :, pronoun] 在每个句子的每个代词位置都"
        "取了每个句子的行；请一一配对：weights[torch.arange(N), :, pronoun]"
    ),
    "you read the action's row (where it looks); read each NAME's row": (
        "你读的是动作的行（它关注哪里）；请读每个名字（NAME）的行"
    ),
    (
        "you average every name's weight on every action; take each name's weight on its OWN "
        "action only (the diagonal)"
    ): (
        "你对每个名字在每个动作上的权重求了平均；只取每个名字在它自己（OWN）的"
        "动作上的权重（对角线）"
    ),
    "you sum; take the mean over people and sentences": "你求的是和；请在人和句子上取平均",
    (
        "you read each name's weight on the NEXT token; the action is at actions[n, p], and an "
        "adverb can stand in between"
    ): ("你读的是每个名字在下一个（NEXT）词元上的权重；动作在 actions[n, p]，中间可能隔着一个副词"),
    (
        "you return example.antecedent, the answer itself; the baseline must find the name from "
        "the pronoun's gender and the names' positions alone"
    ): ("你返回了 example.antecedent，也就是答案本身；基线必须仅凭代词的性别和名字的位置找出名字"),
    "you ignore gender: only names of the pronoun's gender count": (
        "你忽略了性别：只有与代词性别相同的名字才算"
    ),
    (
        "you take the other gender's names: read the pronoun's gender in its own language (他 is "
        "male)"
    ): ("你取的是另一性别的名字：请用代词自己的语言读出它的性别（他是男性）"),
    (
        "you read the gender in English only (tokens[pronoun] == 'he'); read it in the "
        'sentence\'s own language, LEXICON[language]["pronoun"] (他 is male)'
    ): (
        "你只用英语读性别（tokens[pronoun] == 'he'）；请用"
        '句子自己的语言读，LEXICON[language]["pronoun"]（'
        "他是男性）"
    ),
    "you take the FIRST name of the right gender; take the nearest one": (
        "你取的是性别正确的第一个（FIRST）名字；应取最近的那个"
    ),
    (
        "return the name's POSITION in the sentence (an index into tokens), not its index among "
        "the candidates"
    ): ("请返回名字在句子中的位置（POSITION，tokens 的下标），而不是它在候选中的下标"),
    "only names BEFORE the pronoun count": "只有代词之前（BEFORE）的名字才算",
    "6 sentences, 3 heads, one peaking at 0.4": "6 个句子，3 个头，其中一个峰值为 0.4",
    "1 sentence, 4 heads": "1 个句子，4 个头",
    "6 sentences, 3 heads, 3 people": "6 个句子，3 个头，3 个人",
    "4 sentences, 2 heads, 5 people": "4 个句子，2 个头，5 个人",
}
