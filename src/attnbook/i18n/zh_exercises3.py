"""The exercise checkers' words in Chinese, keyed by their English text (see attnbook.i18n.zh), part 3."""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) of a checker → its Chinese.
STRINGS: dict[str, str] = {
    "got NaN: a zero weight gives 0 · log 0 = NaN in floating point; count 0 · log 0 as 0": (
        "得到 NaN：权重为零时，浮点运算中 0 · log 0 = NaN；请把 0 · log 0 当作 0"
    ),
    "you average over padding queries too; average over real query positions only": (
        "你把填充查询也算进了平均；只对真实的查询位置求平均"
    ),
    (
        "you averaged over the padding queries only: key_padding_mask is True on padding "
        "(PyTorch's convention), so the real queries are ~key_padding_mask"
    ): (
        "你只对填充查询求了平均：key_padding_mask 在填充处为 True（"
        "PyTorch 的约定），所以真实查询是 ~key_padding_mask"
    ),
    "the sign is wrong: entropy is MINUS the sum of p log p": (
        "符号反了：熵是 p log p 之和的负值（MINUS）"
    ),
    (
        "you average per sentence first, then over sentences; this exercise takes one mean over "
        "all real queries of all sentences (each query counts once). Both are defensible; they "
        "differ when sentences have different lengths"
    ): (
        "你先对每个句子求平均，再对句子求平均；本练习对所有句子的所有真实查询只取"
        "一次平均（每个查询只算一次）。两种做法都说得通；句子长度不同时二者会有差"
        "别"
    ),
    (
        "every head got the same number, the mean over all heads: keep the heads apart and "
        "average only over sentences and query positions, one value per head"
    ): (
        "每个头得到同一个数，即所有头的平均：请把各头分开，只在句子和查询位置上求平均，每个头一个值"
    ),
    "you used log base 2 (bits); the exercise asks for nats, the natural log": (
        "你用的是以 2 为底的对数（比特）；本练习要求用自然对数（nats）"
    ),
    (
        "only {D_1} of head {head}'s {D} features changed: slice ends are exclusive, so x[..., "
        "h*D:(h+1)*D] is the whole head (h*D:(h+1)*D - 1 leaves out its last feature)"
    ): (
        "头 {head} 的 {D} 个特征中只有 {D_1} 个改变了：切片的"
        "终点不包含在内，所以 x[..., h*D:(h+1)*D] 就是整个头"
        "（h*D:(h+1)*D - 1 漏掉了最后一个特征）"
    ),
    "uniform weights over 4 keys have entropy log 4 = 1.386 nats; got {out_tolist}": (
        "在 4 个键上的均匀权重的熵为 log 4 = 1.386 nats；实际为 {out_tolist}"
    ),
    "you set {words}'s features; heads are counted from 0: head h starts at h*D": (
        "你设置的是{words}的特征；头从 0 开始计数：头 h 从 h*D 开始"
    ),
    "online softmax merge": "在线 softmax 合并",
    "cannot check: wrong for ordinary blocks already (see above)": (
        "无法检查：在普通块上已经不对了（见上）"
    ),
    "the order of the blocks does not matter": "块的顺序无关紧要",
    "stays finite and exact for very large scores": "分数很大时仍有限且精确",
    "empty blocks (all keys masked) are harmless": "空块（所有键都被掩蔽）无害",
    "rows empty in both, one or neither block, side by side": (
        "在两个块、一个块或都不为空的行并排出现"
    ),
    "the output differs from exact attention; is every block rescaled by exp(m_old - m_new)?": (
        "输出与精确注意力不同；每个块都用 exp(m_old - m_new) 重新缩放了吗？"
    ),
    "attention over key blocks": "按键分块的注意力",
    "equals exact attention with blocks of 3 (the last block is shorter)": (
        "块大小为 3 时等于精确注意力（最后一块较短）"
    ),
    "equals exact attention with blocks of 1": "块大小为 1 时等于精确注意力",
    "equals exact attention with one block larger than S": "一个块大于 S 时等于精确注意力",
    "other sizes: 7 queries, 16 keys of 8, values of 5, blocks of 4": (
        "其他大小：7 个查询，16 个大小为 8 的键，大小为 5 的值，块大小为 4"
    ),
    "stays finite when every score is very negative": "所有分数都很负时仍保持有限",
    "half the tiles": "一半的块",
    "tiles computed": "计算的块",
    "tiles that need the mask": "需要掩码的块",
    "fraction of the non-causal work": "占非因果计算量的比例",
    "how long can a sequence be?": "序列能有多长？",
    "naive attention": "朴素注意力",
    "chunked attention (within 2%)": "分块注意力（误差 2% 以内）",
    "acc / l of the merged state is not the softmax over both blocks times the values": (
        "合并后状态的 acc / l 不是两个块上的 softmax 乘以值"
    ),
    "merging (a, b) and (b, a) must give the same output": "合并 (a, b) 与 (b, a) 必须给出相同输出",
    "with all scores shifted by 1000 the output must not change": (
        "所有分数都加上 1000 后，输出不得改变"
    ),
    "the last, shorter block is missing: range(0, S, block) visits it too": (
        "缺少最后较短的那一块：range(0, S, block) 也会访问它"
    ),
    (
        "only the last block counts: the running (m, l, acc) starts afresh at every block. "
        "Is m updated to m_new after each block? If it stays -inf, exp(m_old - m_new) is 0"
    ): (
        "只有最后一块被计入：运行中的 (m, l, acc) 在每一块都重新开始。"
        "每处理完一块，m 有没有更新为 m_new？如果它一直是 -inf，exp(m_old - m_new) 就是 0"
    ),
    (
        "the output is NaN everywhere (0 / 0): did the loop over the blocks run at all? "
        "range(0, S, block) visits every block, also when block > S"
    ): (
        "输出处处是 NaN（0 / 0）：对各块的循环到底有没有执行？"
        "range(0, S, block) 会访问每一块，block > S 时也是如此"
    ),
    (
        "every score here is below -250 and the output is NaN: start the running maximum at "
        "-inf, not 0; with m = 0, exp(s - m) underflows to 0 for every key and acc / l is 0 / 0"
    ): (
        "这里每个分数都低于 -250，输出为 NaN：运行最大值应从 -inf 开"
        "始，而不是 0；m = 0 时 exp(s - m) 对每个键都下溢为 0，"
        "acc / l 变成 0 / 0"
    ),
    "m must be the larger of the two maxima": "m 必须取两个最大值中较大的那个",
    "you add l and acc without rescaling: multiply each block's l and acc by exp(m_block - m)": (
        "你没有重新缩放就把 l 和 acc 相加：请把每个块的 l 和 acc 乘以 exp(m_block - m)"
    ),
    "you add l without rescaling: multiply each block's l by exp(m_block - m), as acc": (
        "你没有重新缩放就把 l 相加：请像 acc 一样把每个块的 l 乘以 exp(m_block - m)"
    ),
    "you add acc without rescaling: multiply each block's acc by exp(m_block - m), as l": (
        "你没有重新缩放就把 acc 相加：请像 l 一样把每个块的 acc 乘以 exp(m_block - m)"
    ),
    (
        "the rescaling factor is exp(m_block - m), at most 1: it shrinks the block whose maximum "
        "is smaller; you used exp(m - m_block)"
    ): (
        "重新缩放系数是 exp(m_block - m)，至多为 1：它缩小最大"
        "值较小的那个块；你用的是 exp(m - m_block)"
    ),
    "cannot check: wrong result (see above)": "无法检查：结果不对（见上）",
    "scores near 1000 overflow: never exponentiate m itself, only differences such as m_a - m": (
        "接近 1000 的分数会溢出：永远不要对 m 本身取指数，只对 m_a - m 这样的差取指数"
    ),
    (
        "merging with an empty block (m = -inf, l = 0, acc = 0) gives NaN; exp(-inf - m) is 0, "
        "but check -inf - (-inf)"
    ): (
        "与空块（m = -inf，l = 0，acc = 0）合并得到 NaN；exp(-inf - m) 为 0，但请检查 -inf - (-inf)"
    ),
    "merging with an empty block must leave the output unchanged": "与空块合并必须保持输出不变",
    "merging two empty blocks gives NaN: when both maxima are -inf, rescale against 0 instead": (
        "合并两个空块得到 NaN：两个最大值都是 -inf 时，改为相对于 0 重新缩放"
    ),
    (
        "a row whose keys are masked in both blocks gives NaN when the other rows are not empty: "
        "decide per row (e.g. torch.where(torch.isneginf(m), 0, m)), not with one if for the "
        "whole tensor"
    ): (
        "在两个块中键都被掩蔽的行，在其他行非空时得到 NaN：请逐行判断（例如 torch.where(torch.isneginf(m), 0, m)）"
        "，而不是对整个张量用一个 if"
    ),
    "a row empty in both blocks must stay empty: m = -inf, l = 0, acc = 0": (
        "在两个块中都为空的行必须保持为空：m = -inf，l = 0，acc = 0"
    ),
    (
        "rows empty in one block only (and ordinary rows next to them) must keep the other "
        "block's result; is the rescaling decided per row?"
    ): ("只在一个块中为空的行（以及旁边的普通行）必须保留另一个块的结果；重新缩放是逐行决定的吗？"),
    "scale the scores by 1 / sqrt(E), not 1 / E": "用 1 / sqrt(E) 缩放分数，而不是 1 / E",
    "E is the size of the queries and keys, not of the values": (
        "E 是查询和键的大小，而不是值的大小"
    ),
    "large scores overflow: subtract the running maximum before exponentiating": (
        "大分数会溢出：取指数前先减去运行最大值"
    ),
    "cannot check: wrong at ordinary scores already (see above)": (
        "无法检查：在普通分数上已经不对了（见上）"
    ),
    (
        "every score here is below -250 and exp underflows to 0, giving 0 / 0: subtract the "
        "running maximum before exponentiating"
    ): ("这里每个分数都低于 -250，exp 下溢为 0，得到 0 / 0：取指数前先减去运行最大值"),
    "the diagonal tiles are computed too (with the mask inside): T(T+1)/2": (
        "对角线上的块也要计算（在块内使用掩码）：T(T+1)/2"
    ),
    "not exactly half: the T tiles on the diagonal are computed as well": (
        "不是恰好一半：对角线上的 T 个块也要计算"
    ),
    "give the fraction as a number between 0 and 1, not a percentage": (
        "请把比例作为 0 到 1 之间的数给出，而不是百分数"
    ),
    "the peak holds TWO n x n tensors per head-batch: the scores and the weights": (
        "峰值时每个头批量保存两个（TWO）n x n 张量：分数和权重"
    ),
    "each float32 takes 4 bytes": "每个 float32 占 4 字节",
    "24 GiB is 24 · 2³⁰ bytes, not 24 · 10⁹ (that would be 24 GB)": (
        "24 GiB 是 24 · 2³⁰ 字节，而不是 24 · 10⁹（那是 24 GB）"
    ),
    "return a triple (m, l, acc); got {out_type}": "请返回三元组 (m, l, acc)；实际为 {out_type}",
    "with T = n / b = {T} blocks per side, expected {want}, got {got}": (
        "每边 T = n / b = {T} 个块时，应为 {want}，实际为 {got}"
    ),
    "only the tiles on the diagonal cross it: expected {true_masked}, got {masked}": (
        "只有对角线上的块与对角线相交：应为 {true_masked}，实际为 {masked}"
    ),
    "expected {true_computed}/{T_T} = {expected:.4f}, got {fraction}": (
        "应为 {true_computed}/{T_T} = {expected:.4f}，实际为 {fraction}"
    ),
    "expected the largest n with 2 · 8 · n² · 4 bytes ≤ 24 GiB, {expected:,}; got {got:,}": (
        "应为满足 2 · 8 · n² · 4 字节 ≤ 24 GiB 的最大 n，即 {expected:,}；实际为 {got:,}"
    ),
    (
        "four tensors of 8 x n x 64 floats of 4 bytes, plus 16 MiB of tiles: about {expected:,}; "
        "got {chunked_max_tokens:,}"
    ): (
        "四个 8 x n x 64 的张量，每个浮点数 4 字节，外加 16 MiB 的"
        "块：约为 {expected:,}；实际为 {chunked_max_tokens:,}"
    ),
    "multiply the scores by 1 / sqrt(E) (E = {E} here)": "分数乘以 1 / sqrt(E)（这里 E = {E}）",
    "the merged {name}": "合并后的 {name}",
    "linear attention": "线性注意力",
    "equals the library's linear attention": "等于库中的线性注意力",
    "other sizes: 3 queries, 12 keys of 8, values of 5": (
        "其他大小：3 个查询，12 个大小为 8 的键，大小为 5 的值"
    ),
    "costs O(n): no (L, S) intermediate for L = S = 1024": (
        "代价为 O(n)：L = S = 1024 时没有 (L, S) 中间结果"
    ),
    "the state of a linear-attention RNN": "线性注意力 RNN 的状态",
    "KV cache bytes per head": "每个头的 KV 缓存字节数",
    "linear-attention state bytes per head": "每个头的线性注意力状态字节数",
    "how far can a window see?": "窗口能看多远？",
    "ℓ layers reach ℓ · w positions": "ℓ 层能到达 ℓ · w 个位置",
    "layers of w = 128 for 16,384 tokens": "16,384 个词元需要多少层 w = 128 的窗口",
    "the output differs from phi(Q) (phi(K)^T V) / (phi(Q) phi(K)^T 1)": (
        "输出与 phi(Q) (phi(K)^T V) / (phi(Q) phi(K)^T 1) 不同"
    ),
    "cannot check the cost: the output is wrong already (see above)": (
        "无法检查代价：输出已经不对了（见上）"
    ),
    "wrong on a long sequence": "在长序列上不对",
    (
        "half the expected: the cache keeps the keys AND the values (2 x n x d numbers), each "
        "float32 taking 4 bytes; did you count one of them, or 2 bytes a number?"
    ): (
        "只有预期的一半：缓存同时保存键和（AND）值（2 x n x d 个数）"
        "，每个 float32 占 4 字节；你是只数了其中一个，还是每个数算了"
        " 2 字节？"
    ),
    "that is the number of floats; each float32 takes 4 bytes": (
        "这是浮点数的个数；每个 float32 占 4 字节"
    ),
    "the normaliser z (d numbers) is part of the state too": "归一化项 z（d 个数）也是状态的一部分",
    "divide by the normaliser phi(q) . sum_j phi(k_j)": "请除以归一化项 phi(q) . sum_j phi(k_j)",
    (
        "the normaliser is phi(q) . sum_j phi(k_j), a sum over the keys, not a mean: the weights "
        "must add up to 1"
    ): ("归一化项是 phi(q) . sum_j phi(k_j)，是对键求和而不是求平均：权重之和必须为 1"),
    "the feature map is elu(x) + 1: without the + 1 it can be negative": (
        "特征映射是 elu(x) + 1：没有 + 1 就可能为负"
    ),
    (
        "linear attention has no 1 / sqrt(E) scaling (that belongs to softmax attention): apply "
        "phi to the queries as they are"
    ): ("线性注意力没有 1 / sqrt(E) 缩放（那属于 softmax 注意力）：直接对查询应用 phi"),
    "the feature map is elu(x) + 1, not exp(x) (exp(q) . exp(k) is not exp(q . k) either)": (
        "特征映射是 elu(x) + 1，而不是 exp(x)（exp(q) . exp(k) 也不等于 exp(q . k)）"
    ),
    "apply the feature map phi(x) = elu(x) + 1 to queries and keys first": (
        "先对查询和键应用特征映射 phi(x) = elu(x) + 1"
    ),
    "the feature map is elu(x) + 1 (always positive), not relu": (
        "特征映射是 elu(x) + 1（总是正的），而不是 relu"
    ),
    "that is softmax attention; linear attention replaces exp(q . k) by phi(q) . phi(k)": (
        "这是 softmax 注意力；线性注意力用 phi(q) . phi(k) 代替 exp(q . k)"
    ),
    "expected 2 x {n} x {d} x 4 = {true_cache:,} bytes, got {kv_cache:,}": (
        "应为 2 x {n} x {d} x 4 = {true_cache:,} 字节，实际为 {kv_cache:,}"
    ),
    "expected (64 x 64 + 64) x 4 = {true_state:,} bytes, got {state:,}": (
        "应为 (64 x 64 + 64) x 4 = {true_state:,} 字节，实际为 {state:,}"
    ),
    "the reach grows by w per layer (a sum), not by a factor w (a product)": (
        "每层的可达范围增加 w（相加），而不是乘以 w（相乘）"
    ),
    "a window of half-width w moves information at most w positions back per layer": (
        "半宽为 w 的窗口每层最多把信息往回传 w 个位置"
    ),
    (
        "2ℓw is the width of the receptive field, w to each side; the question is how far back "
        "information travels: w positions per layer"
    ): ("2ℓw 是感受野的宽度，每侧 w；问题是信息能往回传多远：每层 w 个位置"),
    "the query's own position is not a step back: w positions per layer": (
        "查询自身的位置不算往回一步：每层 w 个位置"
    ),
    "layers": "层",
    "16,384 / 128 = {expected} layers; got {layers_needed}": (
        "16,384 / 128 = {expected} 层；实际为 {layers_needed}"
    ),
    (
        "{value:,} FLOPs for L = S = {n}: an (L, S) matrix product is still in there; compute "
        "phi(K)^T V and the normaliser phi(K)^T 1 first, then multiply phi(Q) by them"
    ): (
        "L = S = {n} 时有 {value:,} FLOPs：里面仍有一"
        "个 (L, S) 矩阵乘积；请先计算 phi(K)^T V 和归一化项 phi(K)^T 1，"
        "再用 phi(Q) 乘它们"
    ),
    (
        "an intermediate tensor has {sizes_largest:,} elements for L = S = {n}: an L x S matrix "
        "built by broadcasting is still quadratic; sum over the keys first"
    ): (
        "L = S = {n} 时有一个 {sizes_largest:,} 个"
        "元素的中间张量：通过广播构造的 L x S 矩阵仍是二次的；请先对键求和"
    ),
    "for {layers} {noun} of w = {w} expected {layers_w}, got {answer}": (
        "{layers} {noun}、w = {w} 时应为 {layers_w}，实际为 {answer}"
    ),
    (
        "that counts 2w positions per layer, the receptive field's width; to reach a token "
        "16,384 positions back, information moves w = 128 per layer: {expected} layers"
    ): (
        "这是每层数了 2w 个位置，即感受野的宽度；要到达往回 16,384 个"
        "位置的词元，信息每层移动 w = 128：需要 {expected} 层"
    ),
    "attention backward from O and the log-sum-exp": "由 O 和 log-sum-exp 做注意力的反向传播",
    "5 queries, 7 keys of 4, values of 3": "5 个查询，7 个大小为 4 的键，大小为 3 的值",
    "9 queries, 4 keys of 8, values of 6": "9 个查询，4 个大小为 8 的键，大小为 6 的值",
    "one query, one key": "一个查询，一个键",
    ("dS = P (dP - D): the term D_i = sum_k dO_ik O_ik, which the softmax subtracts, is missing"): (
        "dS = P (dP - D)：缺少 softmax 要减去的那一项 D_i = sum_k dO_ik O_ik"
    ),
    (
        "D_i is the P-weighted sum of dP's row, sum_j P_ij dP_ij (= sum_k dO_ik O_ik), not its "
        "plain sum"
    ): ("D_i 是 dP 那一行按 P 加权的和 sum_j P_ij dP_ij（= sum_k dO_ik O_ik），而不是简单求和"),
    "the scores were scaled by 1/√E, so dQ = (1/√E) dS K (and dK = (1/√E) dSᵀ Q)": (
        "分数被 1/√E 缩放过，所以 dQ = (1/√E) dS K（且 dK = (1/√E) dSᵀ Q）"
    ),
    "dK = (1/√E) dSᵀ Q: transpose dS (keys index its columns)": (
        "dK = (1/√E) dSᵀ Q：请转置 dS（键是它的列）"
    ),
    "dV = Pᵀ dO, of shape (S, Ev)": "dV = Pᵀ dO，形状为 (S, Ev)",
    "return a triple (d_query, d_key, d_value); got {answer_type}": (
        "请返回三元组 (d_query, d_key, d_value)；实际为 {answer_type}"
    ),
    "numbers in Chinese": "数字的中文读法",
    "expected {expected!r}, got {got!r}": "应为 {expected!r}，实际为 {got!r}",
    (
        "got {got!r}; this book writes 二 everywhere, its simplification, though speech often "
        "says 两 before 千, 万 or 百 (expected {expected!r})"
    ): (
        "实际为 {got!r}；本书处处写作二，这是其简化写法，尽管口语中在千、"
        "万或百之前常说两（应为 {expected!r}）"
    ),
    "got {got!r}; a number that starts with ten drops the 一: {expected!r}": (
        "实际为 {got!r}；以十开头的数省略一：{expected!r}"
    ),
    "got {got!r}; inside a number, ten keeps its 一: {expected!r}": (
        "实际为 {got!r}；在数的中间，十保留它的一：{expected!r}"
    ),
    (
        "got {got!r}; zeros inside a number are read as one 零 per run (also before a group of "
        "four digits that starts with zeros): {expected!r}"
    ): ("实际为 {got!r}；数中间的零每一串读一个零（在以零开头的四位一组之前也是）：{expected!r}"),
    (
        "got {got!r}; one 零 per run of zeros, and none for zeros at the end of a group: "
        "{expected!r}"
    ): ("实际为 {got!r}；每一串零读一个零，一组末尾的零不读：{expected!r}"),
    "my_number_to_chinese must return a str; got {got_type}": (
        "my_number_to_chinese 必须返回 str；实际为 {got_type}"
    ),
    "last place mentioned": "提到的最后一个地点",
    "200 generated stories": "200 个生成的故事",
    "supporting share": "支持句的占比",
    "a hand example: 0.6 on sentences 0 and 2": "手工例子：句子 0 和 2 上共 0.6",
    "a row with weight on padding and one supporting sentence": "一行权重落在填充和一个支持句上",
    "both supporting columns name the same sentence": "两个支持列指向同一个句子",
    "8 padded stories": "8 个填充过的故事",
    "13 padded stories": "13 个填充过的故事",
    (
        "you counted the first supporting sentence only; a two-fact question has two (the second "
        "column, -1 when there is none)"
    ): ("你只数了第一个支持句；两事实问题有两个（第二列，没有时为 -1）"),
    "you averaged the weights of the supporting tokens; the share is their SUM": (
        "你对支持词元的权重求了平均；占比是它们的和（SUM）"
    ),
    "expected {expected!r}, got {out!r}": "应为 {expected!r}，实际为 {out!r}",
}
