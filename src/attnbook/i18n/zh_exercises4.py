"""The exercise checkers' words in Chinese, keyed by their English text (see attnbook.i18n.zh), part 4."""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) of a checker → its Chinese.
STRINGS: dict[str, str] = {
    "no sentence names a place, so the answer is None; got {out!r}": (
        "没有句子提到地点，所以答案是 None；实际为 {out!r}"
    ),
    (
        "you returned {out!r}, a word of the last sentence; a take sentence names an object, not "
        "a place: go back to the last sentence that names a place"
    ): (
        "你返回了 {out!r}，这是最后一句中的词；拿取（take）句提到的是"
        "物品而不是地点：请回到最后一个提到地点的句子"
    ),
    "on the story\n{s_text}\nexpected {last_place_rule_s!r}, got {out!r}": (
        "在故事\n{s_text}\n中应为 {last_place_rule_s!r}，实际为 {out!r}"
    ),
    "most central sentence": "最核心的句子",
    "a three-way tie goes to the first sentence": "三方平局时取第一个句子",
    "a repeated word counts once, a short sentence gets no bonus": "重复的词只算一次，短句没有加分",
    "20 training paragraphs": "20 个训练段落",
    "20 long paragraphs (8 sentences)": "20 个长段落（8 个句子）",
    "a tie: several sentences share the most words; return the EARLIEST of them": (
        "平局：几个句子共有的词一样多；请返回其中最早（EARLIEST）的那个"
    ),
    (
        "sentence {answer} shares {scores_answer:g} words with the others; the best shares {best:g}"
    ): ("句子 {answer} 与其他句子共有 {scores_answer:g} 个词；最多的共有 {best:g} 个"),
    "your answer matches another score: did you {questions} {advice}": (
        "你的答案与另一种算分一致：你是否{questions}{advice}"
    ),
    "for the paragraph {text!r}: ": "对段落 {text!r}：",
    "one numbered 4x4 image, 2x2 patches": "一张编号的 4x4 图像，2x2 的块",
    "three numbered 8x8 images, 2x2 patches": "三张编号的 8x8 图像，2x2 的块",
    "two numbered 8x8 images, 4x4 patches": "两张编号的 8x8 图像，4x4 的块",
    "a wide 4x6 image, 2x2 patches": "一张宽的 4x6 图像，2x2 的块",
    "attention rollout": "注意力展开（rollout）",
    "every token attends to itself: the identity": "每个词元只关注自己：单位矩阵",
    "one layer": "一层",
    "two layers, 2 heads": "两层，2 个头",
    "three layers, 4 heads, 7 tokens": "三层，4 个头，7 个词元",
    (
        "you reshaped without permuting: that cuts each image into strips of p*p consecutive "
        "pixels, not p x p squares; reshape to (N, H/p, p, W/p, p), then permute so that the two "
        "patch axes come before the two pixel axes"
    ): (
        "你 reshape 时没有 permute：这会把每张图像切成 p*p 个"
        "连续像素的条带，而不是 p x p 的方块；请 reshape 成 (N, H/p, p, W/p, p)，"
        "再 permute，使两个块轴排在两个像素轴之前"
    ),
    (
        "your patches go down the columns first; number them row by row: patch i * (W/p) + j is "
        "in patch row i, column j"
    ): ("你的块先沿列往下排；请逐行编号：块 i * (W/p) + j 位于第 i 行、第 j 列"),
    "the pixels inside each patch are read column by column; flatten them row by row": (
        "每个块内的像素是逐列读取的；请逐行展平"
    ),
    (
        "the layers are multiplied in the wrong order: each new layer goes on the LEFT, rollout "
        "= mixed @ rollout, so that the result is A_L ... A_2 A_1"
    ): (
        "层相乘的顺序反了：每个新层放在左边（LEFT），rollout = mixed @ rollout，"
        "使结果为 A_L ... A_2 A_1"
    ),
    "you left out the identity: mix each layer as 0.5 * mean weights + 0.5 * I": (
        "你漏掉了单位矩阵：每层混合为 0.5 * 平均权重 + 0.5 * I"
    ),
    "average the weights over the heads (dim 1) before mixing with the identity": (
        "在与单位矩阵混合之前，先对头（dim 1）求权重的平均"
    ),
    (
        "W + I has rows that sum to 2, and the product grows layer by layer; use 0.5 * W + 0.5 * "
        "I (or renormalise the rows)"
    ): ("W + I 的各行之和为 2，乘积会逐层增长；请用 0.5 * W + 0.5 * I（或重新归一化各行）"),
    (
        "you took the maximum over the heads: its rows no longer sum to 1; average the heads "
        "(w.mean(1)) before mixing with the identity"
    ): ("你对头取了最大值：其各行之和不再为 1；在与单位矩阵混合之前先对头求平均（w.mean(1)）"),
    (
        "you rolled out each head separately and averaged at the end; average the heads of each "
        "layer first, then multiply the layers"
    ): ("你对每个头分别做了展开，最后才求平均；请先对每层的头求平均，再把各层相乘"),
    (
        "the identity was added once, after multiplying; it stands for the residual connection "
        "of every layer, so mix each layer as 0.5 * W + 0.5 * I before multiplying"
    ): (
        "单位矩阵只在相乘之后加了一次；它代表每一层的残差连接，所以在相乘之前把每"
        "层混合为 0.5 * W + 0.5 * I"
    ),
    (
        "the weights are transposed: row i of a layer's weights (N, H, S, S) is what position i "
        "takes from every position; do not transpose them or the result"
    ): (
        "权重被转置了：某层权重 (N, H, S, S) 的第 i 行是位置 i 从"
        "每个位置取得的东西；不要转置它们或结果"
    ),
    "when every token attends only to itself, rollout must be the identity": (
        "每个词元只关注自己时，rollout 必须是单位矩阵"
    ),
    "patch 1 of the first image should be {first}; got {out_0_1_tolist}": (
        "第一张图像的块 1 应为 {first}；实际为 {out_0_1_tolist}"
    ),
    "the first image's row 0 should be {value}; got {value2}": (
        "第一张图像的第 0 行应为 {value}；实际为 {value2}"
    ),
    "all-MiniLM-L6-v2: 22,565,376": "all-MiniLM-L6-v2：22,565,376",
    "BERT-base (V 30,522, E 768, 12 layers, F 3,072)": (
        "BERT-base（V 30,522，E 768，12 层，F 3,072）"
    ),
    "a small odd one (V 100, E 8, 3 layers, F 20, 16 positions, 3 segments)": (
        "一个小而奇特的模型（V 100，E 8，3 层，F 20，16 个位置，3 种片段）"
    ),
    "mean pooling": "平均池化",
    "4 sentences of different lengths, padding with large values": (
        "4 个长度不同的句子，用很大的值填充"
    ),
    "another batch": "另一个批量",
    "a boolean mask (True = real token) works too": "布尔掩码（True = 真实词元）也可以",
    "predicted word pieces": "预测的词片",
    (
        "you added BERT's pooler (an E x E layer with its bias, for the [CLS] vector); the "
        "encoder here, like all-MiniLM-L6-v2's file, has none"
    ): (
        "你加上了 BERT 的池化层（一个 E x E 的层及其偏置，用于 [CLS] 向"
        "量）；这里的编码器与 all-MiniLM-L6-v2 的文件一样，没有"
        "池化层"
    ),
    "the biases of the six linear layers per block are missing (4E + F + E per block)": (
        "缺少每块六个线性层的偏置（每块 4E + F + E）"
    ),
    "the layer norms are missing: two per block and one after the embeddings, each 2E": (
        "缺少层归一化：每块两个，嵌入之后一个，各 2E"
    ),
    "the layer norm after the embeddings (2E) is missing": "缺少嵌入之后的层归一化（2E）",
    (
        "4E per block is missing: either the two layer norms of each block (2E each: a weight "
        "and a bias) or the four attention biases (E each: query, key, value, output)"
    ): (
        "每块缺少 4E：要么是每块的两个层归一化（各 2E：一个权重和一个偏置）"
        "，要么是注意力的四个偏置（各 E：查询、键、值、输出）"
    ),
    (
        "one layer norm per block is missing (2E each): a post-LN block has two, one after the "
        "attention and one after the feed-forward"
    ): ("每块缺少一个层归一化（各 2E）：post-LN 块有两个，一个在注意力之后，一个在前馈网络之后"),
    "the learned positions (P x E) and the segment embedding (T x E) are missing": (
        "缺少学习的位置嵌入（P x E）和片段嵌入（T x E）"
    ),
    "the segment (token type) embedding, T x E, is missing": "缺少片段（token type）嵌入 T x E",
    "the learned position embedding, P x E, is missing": "缺少学习的位置嵌入 P x E",
    "you counted the blocks only; the embeddings (V + P + T) x E + 2E are missing": (
        "你只数了块；缺少嵌入 (V + P + T) x E + 2E"
    ),
    "the attention's output projection (E x E + E per block) is missing: 4E² + 4E, not 3": (
        "缺少注意力的输出投影（每块 E x E + E）：是 4E² + 4E，而不是 3"
    ),
    "that is one block; multiply by num_layers and add the embeddings": (
        "这是一个块；请乘以 num_layers 并加上嵌入"
    ),
    "the feed-forward biases (F + E per block) are missing": "缺少前馈网络的偏置（每块 F + E）",
    (
        "you averaged over the padding too (hidden.mean(1)); multiply by the mask and divide by "
        "the number of real tokens"
    ): ("你把填充也算进了平均（hidden.mean(1)）；请乘以掩码，再除以真实词元的个数"),
    "the mean over real tokens is right, but not normalised: divide each row by its L2 norm": (
        "对真实词元的平均是对的，但没有归一化：请把每行除以其 L2 范数"
    ),
    "you normalised each token before pooling; pool first, then normalise the mean": (
        "你在池化之前对每个词元做了归一化；请先池化，再对平均值归一化"
    ),
    (
        "you averaged over the padding only: attention_mask is 1 on REAL tokens (Hugging Face's "
        "convention)"
    ): ("你只对填充求了平均：attention_mask 在真实（REAL）词元上为 1（Hugging Face 的约定）"),
    (
        "you normalised along the wrong dimension (dim=0, across sentences): each sentence's "
        "vector must have length 1, so normalise along the features, dim=-1"
    ): (
        "你在错误的维度上做了归一化（dim=0，跨句子）：每个句子的向量长度必须"
        "为 1，所以要沿特征维度 dim=-1 归一化"
    ),
    (
        "that is the first ([CLS]) token's vector; this model's embedding is the MEAN over real "
        "tokens"
    ): ("这是第一个（[CLS]）词元的向量；这个模型的嵌入是对真实词元的平均（MEAN）"),
    "the tokenizer adds [CLS] at the start and [SEP] at the end": (
        "分词器在开头加 [CLS]，在末尾加 [SEP]"
    ),
    "this model's tokenizer lower-cases everything first ('Old' -> 'old')": (
        "这个模型的分词器会先把所有字母转为小写（'Old' -> 'old'）"
    ),
    "老 and 张 are not in this English vocabulary: each Chinese character becomes [UNK]": (
        "老和张不在这个英文词表中：每个汉字都变成 [UNK]"
    ),
    "Chinese characters are split one by one, so 老张 is two tokens, each [UNK]": (
        "汉字被逐个切分，所以老张是两个词元，各为 [UNK]"
    ),
    (
        "'interrogate' is not in the vocabulary either: word pieces are taken greedily, the "
        "longest vocabulary entry from the start of the word first ('inter'), then the rest"
    ): (
        "'interrogate' 也不在词表中：词片是贪心切分的，先从词首取最"
        "长的词表条目（'inter'），再处理其余部分"
    ),
    "'interrogated' is not in the vocabulary: it is split into 'inter' and '##rogated'": (
        "'interrogated' 不在词表中：它被切分为 'inter' 和 '##rogated'"
    ),
    "a piece that continues a word is written with '##': '##rogated'": (
        "接续一个词的词片要写上 '##'：'##rogated'"
    ),
    "punctuation is split off as a token of its own: '(' , ')' and '.'": (
        "标点符号被单独切分为词元：'(' 、 ')' 和 '.'"
    ),
    "expected {right:,}, got {answer:,}": "应为 {right:,}，实际为 {answer:,}",
    "expected row 1 to be {expected}, got {value}": "第 1 行应为 {expected}，实际为 {value}",
    "expected {len_expected} tokens, got {len_given}": (
        "应有 {len_expected} 个词元，实际有 {len_given} 个"
    ),
    "the word pieces of {PREDICT_SENTENCE!r}": "{PREDICT_SENTENCE!r} 的词片",
    "token {i} differs: expected {e!r}, got {g!r}": "词元 {i} 不同：应为 {e!r}，实际为 {g!r}",
    "give a list of strings; got {tokens_type}": "请给出一个字符串列表；实际为 {tokens_type}",
    "return an integer; got {given_type} {given!r}": "请返回整数；实际为 {given_type} {given!r}",
    "previous-token weight": "前一词元权重",
    "a pure previous-token head scores 1.0": "纯粹的前一词元头得分为 1.0",
    "6 padded sentences, 3 heads": "6 个填充过的句子，3 个头",
    "9 padded sentences, 2 heads": "9 个填充过的句子，2 个头",
    "candidate hits": "候选命中率",
    "40 padded sentences, 3 heads": "40 个填充过的句子，3 个头",
    "40 padded sentences, 2 heads": "40 个填充过的句子，2 个头",
    "you measured the NEXT token (key i + 1); the previous token of query i is key i - 1": (
        "你衡量的是下一个（NEXT）词元（键 i + 1）；查询 i 的前一个词元是键 i - 1"
    ),
    (
        "you count [CLS] as a query too: it has no previous token, so it cannot score; average "
        "over the real queries 1, 2, ... only"
    ): ("你把 [CLS] 也当作查询：它没有前一个词元，无法得分；只对真实查询 1, 2, ... 求平均"),
    (
        "you average over padding queries too; their rows are not the model's: keep only queries "
        "where attention_mask is 1 (and whose previous token is real)"
    ): (
        "你把填充查询也算进了平均；这些行不属于模型：只保留 attention_mask 为"
        " 1（且前一个词元是真实词元）的查询"
    ),
    (
        "you read the mask the wrong way round and kept the padding queries only: attention_mask "
        "is 1 on REAL tokens (Hugging Face's convention), not True on padding like PyTorch's "
        "key_padding_mask"
    ): (
        "你把掩码读反了，只保留了填充查询：attention_mask 在真实（"
        "REAL）词元上为 1（Hugging Face 的约定），而不像 PyTorch 的"
        " key_padding_mask 那样在填充处为 True"
    ),
    (
        "you average per sentence first; this exercise takes one mean over all queries of all "
        "sentences (each query counts once)"
    ): ("你先对每个句子求平均；本练习对所有句子的所有查询只取一次平均（每个查询只算一次）"),
    (
        "you read the pronoun's COLUMN (how much the names attend to the pronoun); the pronoun's "
        "row is weights[n, :, pronoun[n], :], the query's row"
    ): (
        "你读的是代词的列（COLUMN）（名字对代词的关注有多少）；代词的行是 weights[n, :, pronoun[n], :]，"
        "即查询所在的行"
    ),
    (
        "you took the argmax over the whole row: [CLS] or another token often wins; compare only "
        "the two names' weights"
    ): ("你在整行上取了 argmax：[CLS] 或其他词元常常胜出；只比较两个名字的权重"),
    (
        "you counted the sentences in which the antecedent gets more than half of the row; "
        "compare it with the OTHER name's weight, not with 0.5 ([CLS] often takes most of the "
        "row)"
    ): (
        "你数的是先行词得到整行一半以上权重的句子；应与另一个（OTHER）名字的"
        "权重比较，而不是与 0.5 比较（[CLS] 常常占据一行的大部分）"
    ),
    (
        "that is the mean weight on the antecedent; the exercise asks for the share of sentences "
        "in which the antecedent gets more weight than the other name"
    ): ("这是先行词上的平均权重；本练习要求的是先行词得到的权重多于另一个名字的句子所占的比例"),
    "you counted how often the FIRST name wins; count how often the antecedent wins": (
        "你数的是第一个（FIRST）名字胜出的次数；应数先行词胜出的次数"
    ),
    (
        "you counted the other name's wins: antecedent 0 means candidates[:, 0], 1 means "
        "candidates[:, 1]"
    ): ("你数的是另一个名字胜出的次数：先行词 0 表示 candidates[:, 0]，1 表示 candidates[:, 1]"),
    (
        "with no padding at all your function got {value}, and 1.0 when every token is marked 0: "
        "the mask is read the wrong way round; attention_mask is 1 on REAL tokens, not True on "
        "padding like PyTorch's key_padding_mask"
    ): (
        "完全没有填充时你的函数得到 {value}，而每个词元都标为 0 时得到"
        " 1.0：掩码读反了；attention_mask 在真实（REAL）词"
        "元上为 1，而不像 PyTorch 的 key_padding_mask 那"
        "样在填充处为 True"
    ),
    (
        "a head whose every row (but [CLS]'s) is one-hot on the previous token must score "
        "exactly 1.0; got {value}"
    ): (
        "一个每行（[CLS] 那行除外）都在前一词元上为 one-hot 的头，"
        "得分必须恰好为 1.0；实际为 {value}"
    ),
    "softened distillation loss": "软化的蒸馏损失",
    "a student equal to its teacher costs 0": "与教师相同的学生损失为 0",
    "temperature 2": "温度 2",
    "temperature 4": "温度 4",
    "temperature 1 (no softening)": "温度 1（不软化）",
    "the loss has a gradient": "损失有梯度",
    "head diversity penalty": "头多样性惩罚",
    "hand-built heads: apart 0, copies 1": "手工构造的头：互不相同为 0，相同为 1",
    "3 random heads": "3 个随机头",
    "4 random heads": "4 个随机头",
    "the result carries no gradient: compute it with torch operations, not .item()": (
        "结果不带梯度：请用 torch 运算计算，而不是 .item()"
    ),
    (
        "a student equal to its teacher must cost 0; got {got:.5f}: the two distributions must "
        "be the same, so soften both logits by the same T"
    ): (
        "与教师相同的学生损失必须为 0；实际为 {got:.5f}：两个分布必须"
        "相同，所以要用同一个 T 软化两边的 logits"
    ),
    "never share a key": "从不共享一个键",
    "are copies": "完全相同",
    "expected {expected:.5f}, got {got:.5f}": "应为 {expected:.5f}，实际为 {got:.5f}",
    (
        "a student equal to its teacher must cost 0; got {got:.5f}, the cross-entropy with the "
        "targets: this term is the soft one only"
    ): ("与教师相同的学生损失必须为 0；实际为 {got:.5f}，这是与目标的交叉熵：此项只是软项"),
    "two heads that {what} must score {value}; got {got:.4f}": (
        "两个{what}的头得分必须为 {value}；实际为 {got:.4f}"
    ),
    "a student equal to its teacher must cost 0; got {got:.5f}: ": (
        "与教师相同的学生损失必须为 0；实际为 {got:.5f}："
    ),
    "two heads that {what} must score {value}; {hint}": "两个{what}的头得分必须为 {value}；{hint}",
    "uniformity with padding": "有填充时的均匀度",
    "uniform over the real keys scores 1, one-hot 0": "在真实键上均匀得 1，one-hot 得 0",
    "dead or redundant": "无用还是冗余",
    "two needed heads, a redundant pair, the rest dead": "两个必需的头，一对冗余的头，其余无用",
    "a pair that costs 0.021 together": "一对合计代价为 0.021 的头",
    "a third table": "第三张表",
    "costs exactly at the thresholds, 0.005 alone and 0.02 together": (
        "代价恰好在阈值上：单独 0.005，合计 0.02"
    ),
    (
        "you divided by log(L), the uniform entropy over ALL keys; padding keys get no weight, "
        "so divide by the log of the number of real keys of each sentence"
    ): (
        "你除以了 log(L)，即在所有（ALL）键上均匀分布的熵；填充键没有权"
        "重，所以应除以每个句子真实键个数的对数"
    ),
    "that is the entropy in nats; divide each row's entropy by log(number of real keys)": (
        "这是以 nats 为单位的熵；请把每行的熵除以 log(真实键的个数)"
    ),
    "you averaged over the padding queries too; keep only rows whose query is real": (
        "你把填充查询也算进了平均；只保留查询为真实词元的行"
    ),
    (
        "you kept the padding rows only: key_padding_mask is True on PADDING (PyTorch's "
        "convention), so the real queries are ~key_padding_mask"
    ): (
        "你只保留了填充行：key_padding_mask 在填充（PADDING）"
        "处为 True（PyTorch 的约定），所以真实查询是 ~key_padding_mask"
    ),
    "you averaged per sentence first; take one mean over all real queries": (
        "你先对每个句子求了平均；请对所有真实查询只取一次平均"
    ),
}
