"""The exercise checkers' words in Chinese, keyed by their English text (see attnbook.i18n.zh), part 6."""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) of a checker → its Chinese.
STRINGS: dict[str, str] = {
    "English sentences, test split": "英文句子，测试集",
    "Chinese sentences, held-out pairs": "中文句子，留出的句对",
    "six-person sentences": "六个人的句子",
    "a name after the pronoun does not count": "代词之后的名字不算",
    "a story that ends with a move": "以移动结尾的故事",
    "a story that ends with a take": "以拿取结尾的故事",
    "a story that mentions no place": "没有提到地点的故事",
    (
        "you counted the padding token: its sentence index is -1, and so is the 'no second "
        "sentence' placeholder. Mask the -1 in `supporting` (it is not a sentence); a softmax "
        "row has no weight there, but this row does"
    ): (
        "你把填充词元也算了进去：它的句子下标是 -1，“没有第二个句子”的占位符"
        "也是。请掩蔽 `supporting` 中的 -1（它不是句子）；softmax 的"
        "行在那里没有权重，但这一行有"
    ),
    (
        "you counted sentence 2 twice (once per column): a token is on a supporting sentence or "
        "not; combine the columns with `any`, not a sum"
    ): (
        "你把句子 2 数了两次（每列一次）：一个词元要么在支持句上，要么不在；请"
        "用 `any` 合并两列，而不是求和"
    ),
    "no T²": "没有 T²",
    "divided by T": "除以 T",
    "with cross-entropy": "加上交叉熵",
    "teacher not softened": "教师未软化",
    "student not softened": "学生未软化",
    "mean over classes": "对类别求平均",
    "every position": "所有位置",
    "batchmean on (N, L, C)": "在 (N, L, C) 上用 batchmean",
    "divided by N": "除以 N",
    "summed over positions": "对位置求和",
    "soft cross-entropy": "软交叉熵",
    "probabilities as log-target": "把概率当作 log-target",
    "over queries": "沿查询归一化",
    "whole map": "整张图",
    "one minus": "一减",
    "divided by H²": "除以 H²",
    "summed over pairs": "对组合求和",
    "summed over unordered pairs": "对无序组合求和",
    (
        "the two cases are swapped: scaling the query FIRST keeps the product small, so it is "
        "the case that allows the larger q·k"
    ): ("两种情况弄反了：先缩放查询（FIRST）使乘积保持较小，所以是这种情况允许更大的 q·k"),
    "the scale is 1/sqrt(head_dim), not 1/head_dim": (
        "缩放系数是 1/sqrt(head_dim)，而不是 1/head_dim"
    ),
    "scaling the query first lets q·k be sqrt(head_dim) times LARGER, not smaller": (
        "先缩放查询能让 q·k 大 sqrt(head_dim) 倍（LARGER），而不是更小"
    ),
    "float16's largest finite value is 65504 (2**16 = 65536 is already infinity)": (
        "float16 最大的有限值是 65504（2**16 = 65536 已经是无穷大）"
    ),
    "that is float32's largest value; the question is about float16": (
        "这是 float32 的最大值；问题问的是 float16"
    ),
    "32 layers, 32 query and 8 key/value heads of 128, 8192 tokens, float16": (
        "32 层，32 个查询头和 8 个大小为 128 的键/值头，8192 个词元，float16"
    ),
    "3 layers, 4 query heads and 1 key/value head, a batch of 5, float32": (
        "3 层，4 个查询头和 1 个键/值头，批量大小 5，float32"
    ),
    "6 layers of 12 ordinary heads, a batch of 3, float16": (
        "6 层，每层 12 个普通头，批量大小 3，float16"
    ),
    "your function": "你的函数",
    "layer": "层",
    "on finite scores": "在有限分数上",
    "with -inf on padding": "在填充处为 -inf 时",
    "on 7 x 9": "在 7 x 9 上",
    "for large scores": "在大分数上",
    "you forgot to divide the scores Q·Kᵀ by √d_k (the result equals the unscaled one)": (
        "你忘了用 √d_k 除分数 Q·Kᵀ（结果等于未缩放的版本）"
    ),
    "divide the scores by √d_k, not by d_k": "用 √d_k 除分数，而不是 d_k",
    "d_k is the size of the queries and keys, not of the values": (
        "d_k 是查询和键的大小，而不是值的大小"
    ),
    (
        "write the block from its parts (norm1, self_attn, ff, norm2, dropout1, dropout2): you "
        "called the block itself (block(x) or block.forward), which runs the library's forward, "
        "not yours"
    ): (
        "请用块的各部分（norm1、self_attn、ff、norm2、dropout1、"
        "dropout2）写出这个块：你调用了块本身（block(x) 或 block.forward）"
        "，运行的是库的 forward，而不是你的"
    ),
    "count the stop words too?": "也数了停用词？",
    (
        "Leave STOPWORDS out: 'the' and '.' are shared by every sentence and say nothing about "
        "the topic."
    ): ("请去掉 STOPWORDS：'the' 和 '.' 为每个句子所共有，对主题毫无信息。"),
    "compare a sentence with itself too?": "也拿句子和自己比较了？",
    "Sum over the OTHER sentences only.": "只对其他（OTHER）句子求和。",
    "count repeated words more than once?": "重复的词数了不止一次？",
    "Count DISTINCT shared words (sets).": "数不同的（DISTINCT）共有词（用集合）。",
    "divide by the sentence's length?": "除以了句子长度？",
    "Sum the shared words and do not normalise: a sentence that shares more is more central.": (
        "对共有词求和，不要归一化：共有词越多的句子越核心。"
    ),
    (
        "you left out the T² factor: softening by T shrinks the gradients by 1/T², and "
        "multiplying by T² gives them back their size (Hinton et al. 2015)"
    ): ("你漏掉了 T² 因子：用 T 软化会使梯度缩小为 1/T²，乘以 T² 能恢复其大小（Hinton 等，2015）"),
    "the factor is T², not T": "因子是 T²，而不是 T",
    (
        "you added the cross-entropy with the targets: this exercise asks for the soft term only "
        "(distillation_loss with alpha = 1)"
    ): ("你加上了与目标的交叉熵：本练习只要求软项（alpha = 1 时的 distillation_loss）"),
    (
        "your KL runs the wrong way: KL(student ‖ teacher). The teacher's distribution is the "
        "target, so it weights the log-ratio: sum over classes of p_teacher · (log p_teacher - "
        "log p_student). (F.kl_div(input, target) expects the STUDENT's log-probabilities as "
        "input and the teacher's as target.)"
    ): (
        "你的 KL 方向反了：KL(student ‖ teacher)。教师的"
        "分布是目标，所以由它给对数比加权：对类别求和 p_teacher · (log p_teacher - log p_student)。"
        "（F.kl_div(input, target) 期望 input 是学"
        "生（STUDENT）的对数概率，target 是教师的。）"
    ),
    "divide the teacher's logits by T too, not only the student's": (
        "教师的 logits 也要除以 T，而不只是学生的"
    ),
    "divide the student's logits by T too, not only the teacher's": (
        "学生的 logits 也要除以 T，而不只是教师的"
    ),
    (
        "you averaged over the classes too (F.kl_div's reduction='mean' does that): sum over the "
        "classes, then average over the positions"
    ): (
        "你也对类别求了平均（F.kl_div 的 reduction='mean' 就是这样）：应对类别求和，再对位置求平均"
    ),
    (
        "you applied F.kl_div(..., reduction='batchmean') to the (N, L, C) tensors: it sums over "
        "every position, the unscored ones too, and divides by N only. Select the scored "
        "positions first, (P, C), then 'batchmean' divides by P"
    ): (
        "你对 (N, L, C) 张量用了 F.kl_div(..., reduction='batchmean')："
        "它对所有位置求和，包括不计分的位置，且只除以 N。请先选出计分位置 (P, C)，"
        "这样 'batchmean' 就除以 P"
    ),
    (
        "you summed over the scored positions and divided by N, the number of sequences: divide "
        "by the number of scored positions instead (a mean over them)"
    ): ("你对计分位置求和后除以了 N（序列数）：应除以计分位置的个数（对它们求平均）"),
    (
        "you summed over the scored positions: average over them instead, so the loss does not "
        "grow with the number of answers"
    ): ("你对计分位置求了和：应对它们求平均，这样损失不会随答案的个数增长"),
    (
        "you computed the cross-entropy with the teacher's distribution, not the KL: they differ "
        "by the teacher's entropy, which is why a student equal to its teacher does not cost 0. "
        "Use sum p_teacher · (log p_teacher - log p_student)"
    ): (
        "你算的是与教师分布的交叉熵，而不是 KL：二者相差教师分布的熵，所以与教"
        "师相同的学生损失不为 0。请用 sum p_teacher · (log p_teacher - log p_student)"
    ),
    (
        "you passed the teacher's probabilities to F.kl_div with log_target=True, which expects "
        "log-probabilities: pass log_softmax(teacher / T), or softmax with log_target=False"
    ): (
        "你把教师的概率传给了 log_target=True 的 F.kl_div，"
        "而它期望对数概率：请传入 log_softmax(teacher / T)，"
        "或传入 softmax 并设 log_target=False"
    ),
    (
        "you normalised along the queries (dim -2); a row is one query's weights over the keys: "
        "normalise along the last dimension"
    ): ("你沿查询维度（dim -2）做了归一化；一行是一个查询在各键上的权重：请沿最后一维归一化"),
    (
        "you included each head's similarity with itself (always 1); average over pairs of "
        "DIFFERENT heads only"
    ): ("你把每个头与自身的相似度（总是 1）也算了进去；只对不同（DIFFERENT）头的组合求平均"),
    (
        "you used plain dot products; divide each row by its length first (cosine similarity), "
        "or two sharp heads on different keys and two flat heads on the same keys score alike"
    ): (
        "你用的是普通点积；请先把每行除以其长度（余弦相似度），否则两个关注不同键"
        "的尖锐头与两个关注相同键的平缓头得分相近"
    ),
    (
        "you compared each head's whole (L, S) map as one vector; compare row by row (one query "
        "at a time) and average the cosines"
    ): ("你把每个头整张 (L, S) 图当作一个向量比较；请逐行比较（一次一个查询）并对余弦求平均"),
    (
        "you returned 1 - similarity (a distance): the penalty is the similarity itself, high "
        "when heads look alike"
    ): ("你返回的是 1 - similarity（距离）：惩罚项就是相似度本身，头越相似越高"),
    (
        "you divided the sum over pairs of different heads by H², which counts the H pairs of a "
        "head with itself too: divide by H · (H - 1), the number of pairs of different heads"
    ): (
        "你把不同头组合上的和除以了 H²，这还算上了 H 个头与自身的组合：请除"
        "以 H · (H - 1)，即不同头的组合数"
    ),
    (
        "you summed over the pairs of heads: average over them, so the penalty stays in [0, 1] "
        "whatever the number of heads"
    ): ("你对头的组合求了和：请求平均，这样无论头有多少，惩罚都保持在 [0, 1] 之内"),
    (
        "you averaged over every position, the unscored ones too: keep only the positions whose "
        "target is not {IGNORE}"
    ): ("你对所有位置求了平均，包括不计分的位置：只保留目标不为 {IGNORE} 的位置"),
    (
        "your answer has nan: a weight of exactly 0 gives 0 * log 0 = 0 * (-inf) = nan; take the "
        "log of weights.clamp_min(1e-12) (the weight in front is still 0, so the term is 0)"
    ): (
        "你的答案含有 nan：权重恰好为 0 时 0 * log 0 = 0 * (-inf) = nan；"
        "请对 weights.clamp_min(1e-12) 取对数（前面的权"
        "重仍为 0，所以这一项为 0）"
    ),
    (
        "each pair is stored once, with the lower (layer, head) first: pairs[(a, b)] with a < b. "
        "Look a pair up in both orders, e.g. pairs.get((x, y), pairs.get((y, x)))"
    ): (
        "每个组合只存一次，(layer, head) 较小的在前：pairs[(a, b)] 且"
        " a < b。请按两种顺序查找，例如 pairs.get((x, y), pairs.get((y, x)))"
    ),
}
