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
}
