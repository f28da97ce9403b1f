"""The library's strings in Chinese, keyed by their English text (terms as in d2l-zh).

A key with ``{name}`` fields is a ``str.format`` template; its Chinese keeps the same fields.
"""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) → its Chinese, for figures, views and checkers.
STRINGS: dict[str, str] = {
    # heat-maps and masks (attnbook.viz.charts, attnbook.viz.head_plots)
    "key (attended to)": "键（被关注的位置）",
    "query (attending)": "查询（发出关注的位置）",
    "weight": "权重",
    "value": "值",
    "score": "分数",
    "feature": "特征",
    "key token": "键词元",
    "query: {query!r}": "查询：{query!r}",
    "1. scores = q·k": "1. 分数 = q·k",
    "2. weights = softmax(scores)": "2. 权重 = softmax(分数)",
    "3. output = Σ weight · v": "3. 输出 = Σ 权重 · v",
    "layer {layer}, head {head}": "第 {layer} 层，第 {head} 个头",
    " (panel l.h: layer l, head h)": "（子图 l.h：第 l 层，第 h 个头）",
    "Every head of every layer": "每一层的每一个头",
    "head {h}": "头 {h}",
    "query": "查询",
    "key": "键",
    "layer {layer}": "第 {layer} 层",
    "layer {i}": "第 {i} 层",
    "head {i}": "头 {i}",
    # efficient attention (attnbook.viz.efficient_plots)
    "sequence length n": "序列长度 n",
    "slope": "斜率",
    "key position": "键的位置",
    "query position": "查询的位置",
    "Tiles of {q} queries × {k} keys": "{q} 个查询 × {k} 个键的瓦片",
    " (causal)": "（因果）",
    "computed": "完整计算",
    "masked inside": "块内加掩码",
    "skipped": "跳过",
    # image patches (attnbook.viz.patch_plots)
    "image": "图像",
    "max": "最大",
    "row {i}": "第 {i} 行",
    "column {i}": "第 {i} 列",
    "cosine similarity": "余弦相似度",
    # pointers (attnbook.viz.pointer)
    "attention of the summary query": "摘要查询的注意力",
    # positions and depth (attnbook.viz.transformer_plots)
    "dimension (column of the table)": "维度（表的列）",
    "position": "位置",
    "position p": "位置 p",
    "position q": "位置 q",
    "offset q − p": "偏移 q − p",
    "Dot products of position {p} with every position": "位置 {p} 与每个位置的点积",
    "layer (1 = nearest the input)": "层（1 = 最靠近输入）",
    "number of layers L": "层数 L",
    # the hover view (attnbook.viz.attention_view.VIEW_TEXT); quotes are Chinese ones
    "sentence": "句子",
    "all": "全部",
    "all heads": "所有头",
    "mean {value}": "平均 {value}",
    "spreads its weight evenly over all {n} keys ({value} each)": "把权重平均分给全部 {n} 个键（各 {value}）",
    "attends most to {listed} ({value})": "最关注{listed}（{value}）",
    "attends most to {listed} ({value} each)": "最关注{listed}（各 {value}）",
    "'{token}'": "“{token}”",
    "{first} and {last}": "{first}和{last}",
    ", ": "、",
    "; ": "；",
    "{layer}, {head}: '{query}' {peak}": "{layer}，{head}：“{query}”{peak}",
    "attention lines of {layer} from the query '{query}' to the keys; per head: {tops}": (
        "{layer}从查询“{query}”到各个键的注意力连线；各头：{tops}"
    ),
    "download the drawing as {kind}": "把图下载为 {kind}",
    "query {i}: {token}": "查询 {i}：{token}",
    "attention lines": "注意力连线",
    "In {layer}, for the query '{query}': {parts}.": "在{layer}，查询“{query}”：{parts}。",
    "queries: {queries}; keys: {keys}": "查询：{queries}；键：{keys}",
    (
        "A view of attention that responds to the pointer where scripts run (the book's site, "
        "a trusted notebook); here, the default query's strongest keys."
    ): "这个注意力视图在能运行脚本的地方（本书网站、受信任的笔记本）会随指针变化；这里只列出默认查询最关注的键。",
    "figure": "图",
    "layer": "层",
    "head": "头",
    "view": "视图",
    "query token": "查询词元",
    # the live panel (attnbook.viz.live.LIVE_TEXT)
    "Type your own sentence": "输入你自己的句子",
    (
        "Your sentence (English or Chinese, made of the words the detective knows, with a pronoun)"
    ): "你的句子（英文或中文，只用侦探认识的词，并包含一个代词）",
    "Run": "运行",
    "Examples:": "示例：",
    "English": "英文",
    "Chinese": "中文",
    "names": "人名",
    "pronouns": "代词",
    "other words": "其他词",
    "surnames and given names (one character each)": "姓和名（各一个字）",
    (
        "This panel runs the model in your browser on the book's website, which serves the model "
        "file with the page. In a notebook, use the kernel-driven explorer instead: "
        "attnbook.viz.explorer.live_explorer(model, vocab, sentences)."
    ): (
        "这个面板在本书网站上、在你的浏览器里运行模型（网站随页面提供模型文件）。在笔记本里，请改用由内核驱动的"
        "探索器：attnbook.viz.explorer.live_explorer(model, vocab, sentences)。"
    ),
    "Type a sentence first.": "请先输入一个句子。",
    "The detective does not know {tokens}.": "侦探不认识{tokens}。",
    "'{token}' (token {i})": "“{token}”（第 {i} 个词元）",
    "The sentence has {n} tokens; the model reads at most {max}.": "这个句子有 {n} 个词元；模型最多读 {max} 个。",
    "The sentence needs a pronoun (he, she, 他 or 她) for the detective to resolve.": (
        "句子里需要一个代词（he、she、他或她），侦探才有东西可解。"
    ),
    "Where the pointer from '{token}' (token {i}) goes, probability per token:": (
        "从“{token}”（第 {i} 个词元）出发的指针指向哪里，每个词元的概率："
    ),
    "Loading the model ({model})…": "正在加载模型（{model}）……",
    "Ran the model on {n} tokens.": "已在 {n} 个词元上运行模型。",
    "The model could not be loaded ({error}).": "无法加载模型（{error}）。",
    " It knows these tokens ({language}): {groups}.": "它认识这些词元（{language}）：{groups}。",
    # architecture diagrams (attnbook.viz.diagrams); view, transpose, reshape and norm1 are code
    "mask (optional)": "掩码（可选）",
    "softmax over S": "对 S 做 softmax",
    "scores (L, S)": "分数 (L, S)",
    "weights (L, S)": "权重 (L, S)",
    "weights · V": "权重 · V",
    "output (L, Ev)": "输出 (L, Ev)",
    "output (N, L, E)": "输出 (N, L, E)",
    "project {w}": "投影 {w}",
    "attention": "注意力",
    "split into H heads of D = E/H:\nview → (N, L, H, D), transpose → (N, H, L, D)": (
        "切分成 H 个头，每头 D = E/H：\nview → (N, L, H, D)，transpose → (N, H, L, D)"
    ),
    "merge the heads (concatenate):\ntranspose → (N, L, H, D), reshape → (N, L, E)": (
        "合并各个头（拼接）：\ntranspose → (N, L, H, D)，reshape → (N, L, E)"
    ),
    "output projection W_O → (N, L, E)": "输出投影 W_O → (N, L, E)",
    "multi-head self-attention": "多头自注意力",
    "masked multi-head self-attention": "掩码多头自注意力",
    "cross-attention": "交叉注意力",
    "feed-forward": "前馈网络",
    "residual": "残差",
    "LayerNorm (norm{n})": "层归一化 (norm{n})",
    "memory\n(N, S, E)": "记忆\n(N, S, E)",
    "post-LN: norm_first=False": "后置层归一化：\nnorm_first=False",
    "pre-LN: norm_first=True": "前置层归一化：\nnorm_first=True",
    "Flow chart of scaled dot-product attention, top to bottom.": "缩放点积注意力的流程图，自上而下。",
    (
        "Queries Q (L, E) and keys K (S, E) are multiplied into Q Kᵀ, the scores of shape "
        "(L, S), which are divided by √E."
    ): "查询 Q (L, E) 与键 K (S, E) 相乘得到 Q Kᵀ，即形状为 (L, S) 的分数，再除以 √E。",
    "An optional mask, drawn dashed, acts on the scores (L, S).": "可选的掩码画成虚线，作用在分数 (L, S) 上。",
    (
        "A softmax over the S keys turns each row into weights (L, S); the weights multiply "
        "the values V (S, Ev), giving the output (L, Ev)."
    ): "对 S 个键做 softmax，把每一行变成权重 (L, S)；权重乘以值 V (S, Ev)，得到输出 (L, Ev)。",
    "Flow chart of multi-head attention, top to bottom.": "多头注意力的流程图，自上而下。",
    "The input X (N, L, E) goes through three projections, W_Q, W_K and W_V, each giving (N, L, E).": (
        "输入 X (N, L, E) 经过 W_Q、W_K、W_V 三个投影，各得到 (N, L, E)。"
    ),
    (
        "Each is split into H heads of D = E/H features: view to (N, L, H, D), then "
        "transpose to (N, H, L, D)."
    ): "每个结果切分成 H 个头，每头 D = E/H 个特征：先 view 成 (N, L, H, D)，再 transpose 成 (N, H, L, D)。",
    "The heads attend side by side, {n} boxes in a row.": "各个头并排做注意力，一行画了 {n} 个框。",
    (
        "Their outputs are merged: transpose back to (N, L, H, D) and reshape to (N, L, E), "
        "which is the concatenation of the heads; the output projection W_O gives (N, L, E)."
    ): (
        "各头的输出再合并：transpose 回 (N, L, H, D)，reshape 成 (N, L, E)，这就是把各个头拼接起来；"
        "输出投影 W_O 给出 (N, L, E)。"
    ),
    "Diagram of the encoder block, top to bottom: {n} sublayers ({names}).": (
        "编码器块的示意图，自上而下：{n} 个子层（{names}）。"
    ),
    "Diagram of the decoder block, top to bottom: {n} sublayers ({names}).": (
        "解码器块的示意图，自上而下：{n} 个子层（{names}）。"
    ),
    (
        "Pre-LN (norm_first=True): each sublayer reads a LayerNorm of its input, and its "
        "output is added to the input on the residual path, which no norm interrupts."
    ): (
        "前置层归一化（norm_first=True）：每个子层读取其输入经层归一化后的结果，"
        "子层的输出沿残差路径加回输入，这条路径上没有任何归一化。"
    ),
    (
        "Post-LN (norm_first=False): each sublayer's output is added to its input (the "
        "residual path on the right), then a LayerNorm follows the addition."
    ): (
        "后置层归一化（norm_first=False）：每个子层的输出加到它的输入上（右侧的残差路径），"
        "相加之后再做层归一化。"
    ),
    (
        "The cross-attention takes its queries from the decoder and its keys and values from "
        "the memory, the encoder's output (N, S, E)."
    ): "交叉注意力的查询来自解码器，键和值来自记忆，即编码器的输出 (N, S, E)。",
    "Every arrow of the main path carries (N, L, E).": "主路径上的每个箭头传递的都是 (N, L, E)。",
    # diagrams (issue 40): the strings of viz.diagrams_lookup, in one block to move into the
    # gettext catalogue at merge.
    "keys": "键",
    "values": "值",
    "output": "输出",
    "weights": "权重",
    "scores": "分数",
    "compared with every key": "与每个键比较",
    "add up": "相加",
    "weights: positive, sum to 1": "权重：都为正，总和为 1",
    "Diagram of the soft lookup, with {n} keys.": "软查找的示意图，共 {n} 个键。",
    (
        "A query q, at the top, is compared with every key k by a dot product, giving one "
        "score s = q · k per key."
    ): "顶部的查询 q 用点积与每个键 k 比较，每个键得到一个分数 s = q · k。",
    (
        "A softmax turns the scores into weights w, drawn as bars: positive, summing to 1, the "
        "longest for the best-matching key."
    ): "softmax 把分数变成权重 w，画成横条：权重都为正，总和为 1，与查询最匹配的键横条最长。",
    (
        "Each value v is scaled by its weight, and the scaled values are added up into the "
        "output Σ w v."
    ): "每个值 v 乘上自己的权重，加权后的值相加，就是输出 Σ w v。",
    "padding mask": "填充掩码",
    "causal mask": "因果掩码",
    "keys (S)": "键 (S)",
    "queries (L)": "查询 (L)",
    "softmax\nover each row": "对每一行\n做 softmax",
    "masked pair (mask False): score {inf}, weight 0; each row's weights still sum to 1": (
        "被遮住的位置（掩码为 False）：分数 {inf}，权重 0；每行权重之和仍为 1"
    ),
    (
        "Two masks on the grid of scores, queries (L) down and keys (S) across, above the "
        "weights that the softmax gives."
    ): "分数网格上的两种掩码：纵向是查询 (L)，横向是键 (S)；下方是 softmax 之后得到的权重。",
    (
        "Left, a padding mask: the last two keys are padding, so every query's scores for "
        "them are set to −∞ and their weights are 0."
    ): "左边是填充掩码：最后两个键是填充，所以每个查询对它们的分数都设为 −∞，权重为 0。",
    (
        "Right, a causal mask: query i may attend to keys 0 to i only, so the scores above "
        "the diagonal are −∞ and the weights are lower-triangular."
    ): "右边是因果掩码：查询 i 只能关注键 0 到 i，所以对角线以上的分数都是 −∞，权重呈下三角。",
    "In every row the remaining weights still sum to 1.": "每一行剩下的权重加起来仍然是 1。",
}
