"""The exercise checkers' words in Chinese, keyed by their English text (see attnbook.i18n.zh), part 8:
the second pass over the checkers of chapters 11 to 20 (issue 38)."""

from __future__ import annotations

__all__ = ["STRINGS"]

#: English string (or ``str.format`` template) of a checker → its Chinese.
STRINGS: dict[str, str] = {
    # -- chapter 11: the backward ---------------------------------------------------------
    (
        "your function uses autograd ({names}): the exercise asks for the gradients written out. "
        "Recompute P = exp(Q Kᵀ/√E - lse), then dV = Pᵀ dO, dP = dO Vᵀ, D = rowsum(dO ∘ O), "
        "dS = P ∘ (dP - D), dQ = dS K/√E and dK = dSᵀ Q/√E"
    ): (
        "你的函数用了 autograd（{names}）：本练习要求把梯度亲手写出来。"
        "请重算 P = exp(Q Kᵀ/√E - lse)，再求 dV = Pᵀ dO、dP = dO Vᵀ、D = rowsum(dO ∘ O)、"
        "dS = P ∘ (dP - D)、dQ = dS K/√E 和 dK = dSᵀ Q/√E"
    ),
    "dS = P (dP - D): subtract D_i, do not add it": "dS = P (dP - D)：要减去 D_i，而不是加上",
    "the scores were scaled by 1/√E, so dK = (1/√E) dSᵀ Q (and dQ = (1/√E) dS K)": (
        "分数乘过 1/√E，所以 dK = (1/√E) dSᵀ Q（dQ = (1/√E) dS K 也一样）"
    ),
    "the scores were scaled by 1/√E, so both dQ = (1/√E) dS K and dK = (1/√E) dSᵀ Q": (
        "分数乘过 1/√E，所以 dQ = (1/√E) dS K 和 dK = (1/√E) dSᵀ Q 都要乘"
    ),
    (
        "P = exp(Q Kᵀ / √E - lse): lse belongs to the scaled scores, so scale them before you "
        "subtract it"
    ): "P = exp(Q Kᵀ / √E - lse)：lse 属于缩放后的分数，所以要先缩放再减去它",
    "these gradients differ from autograd's: {names}": "这些梯度与 autograd 的不同：{names}",
    # -- chapter 11: the memory of the recomputing backward -------------------------------
    "the memory of the recomputing backward": "重算式反向传播的内存",
    "the bytes of Q, K, V and O": "Q、K、V 和 O 的字节数",
    "the bytes of the log-sum-exp": "log-sum-exp 的字节数",
    "answer with a number of bytes; got {kind}": "请用字节数回答；实际为 {kind}",
    (
        "that is Q, K and V; the output O is kept too: the backward reads it for D = rowsum(dO ∘ O)"
    ): "这是 Q、K 和 V；输出 O 也要保存：反向传播计算 D = rowsum(dO ∘ O) 时要读它",
    "that is one of the four tensors; Q, K, V and O take 4 times as much": (
        "这是四个张量中的一个；Q、K、V 和 O 共占 4 倍"
    ),
    "that is one head-batch; each of the 8 has its own Q, K, V and O": (
        "这是一个头批量的量；8 个头批量各有自己的 Q、K、V 和 O"
    ),
    "give Q, K, V and O here, and the log-sum-exp apart": "这里给出 Q、K、V 和 O，log-sum-exp 单独给",
    (
        "the three gradients dQ, dK, dV are not kept from the forward: they are made by the "
        "backward; count Q, K, V and O only"
    ): "三个梯度 dQ、dK、dV 并不是从前向传播保存下来的：它们由反向传播产生；只数 Q、K、V 和 O",
    "that is in MiB; the question asks for bytes (1 MiB = 2²⁰)": (
        "这是以 MiB 为单位的；题目要的是字节数（1 MiB = 2²⁰）"
    ),
    (
        "that is in millions of bytes; the question asks for bytes (and 1 MiB = 2²⁰ bytes, not 10⁶)"
    ): "这是以百万字节为单位的；题目要的是字节数（而且 1 MiB = 2²⁰ 字节，不是 10⁶）",
    "expected 4 tensors of 8 x 16,384 x 64 float32 = {expected:,} bytes, got {got}": (
        "应为 4 个 8 x 16,384 x 64 的 float32 张量 = {expected:,} 字节，实际为 {got}"
    ),
    "that is one head-batch; each of the 8 has its own log-sum-exp": (
        "这是一个头批量的量；8 个头批量各有自己的 log-sum-exp"
    ),
    (
        "the log-sum-exp is one number per query (per head-batch), not d of them: 8 x 16,384 floats"
    ): "log-sum-exp 是每个查询（每个头批量）一个数，而不是 d 个：8 x 16,384 个浮点数",
    (
        "expected one float32 per query and head-batch, 8 x 16,384 x 4 = {expected:,} bytes, got "
        "{got}"
    ): "应为每个查询、每个头批量一个 float32，8 x 16,384 x 4 = {expected:,} 字节，实际为 {got}",
    # -- chapter 12: numbers in Chinese ---------------------------------------------------
    "32 more numbers, drawn by the checker": "另外 32 个由检查器抽取的数",
    "{n:,}: {problem}": "{n:,}：{problem}",
    (
        "got {got!r}; inside a number, zero is written 零; 〇 is for digits read one by one, as "
        "in the year 二〇二四 (expected {expected!r})"
    ): (
        "实际为 {got!r}；数字内部的零写作“零”；“〇”用于逐位读出的数字，"
        "例如年份二〇二四（应为 {expected!r}）"
    ),
    (
        "got {got!r}; the 万 is missing: from 10,000 on, a number is read in two groups of four "
        "digits, the upper one followed by 万: {expected!r}"
    ): "实际为 {got!r}；缺了“万”：从 10,000 起，数按四位一组分成两组读，高位一组后面跟“万”：{expected!r}",
    (
        "got {got!r}, the reading of the last four digits only; the group above them is read "
        "too, followed by 万: {expected!r}"
    ): "实际为 {got!r}，只读了最后四位；它们上面的一组也要读，后面跟“万”：{expected!r}",
    "got {got!r}; the group after 万 is missing: read the last four digits too: {expected!r}": (
        "实际为 {got!r}；“万”后面的一组缺了：最后四位也要读：{expected!r}"
    ),
    # -- chapter 13: the supporting share -------------------------------------------------
    (
        "you averaged the weights of the supporting tokens (the share is their SUM), and "
        "counted the padding token, whose sentence index -1 matches the 'no second sentence' "
        "placeholder (mask the -1 in `supporting`)"
    ): (
        "你对支持句词元的权重取了平均（比例是它们的和），并且把填充词元也算了进去，"
        "它的句子下标 -1 与“没有第二个句子”的占位符相同（请掩蔽 `supporting` 中的 -1）"
    ),
    (
        "you counted the sentence AFTER each supporting one: `sentence` and `supporting` both "
        "count sentences from 0, so compare them as they are"
    ): "你数的是每个支持句的后一句：`sentence` 和 `supporting` 都从 0 开始给句子编号，请直接比较",
    (
        "you counted the sentence BEFORE each supporting one: `sentence` and `supporting` both "
        "count sentences from 0, so compare them as they are"
    ): "你数的是每个支持句的前一句：`sentence` 和 `supporting` 都从 0 开始给句子编号，请直接比较",
    # -- chapter 14: the most central sentence --------------------------------------------
    "ties go to the EARLIEST sentence; you return the latest of them": (
        "并列时取最早的句子；你返回的是其中最晚的一句"
    ),
    "return a sentence index in [0, {n}); got {raw!r}": "请返回 [0, {n}) 中的句子下标；实际为 {raw!r}",
    # -- chapter 19: uniformity and verdicts ----------------------------------------------
    "causal rows: the keys after the query get 0 but are real keys": (
        "因果的行：查询之后的键得到 0，但它们是真实的键"
    ),
    "a sentence with a single real token scores 0 there": "只有一个真实词元的句子在那里得 0",
    (
        "a one-hot row has one key with weight, log 1 = 0, and 0 / 0 is nan: you divided by the "
        "log of the number of keys with non-zero weight; divide by the log of the number of REAL "
        "keys of the sentence, whatever weight they get"
    ): (
        "独热的行只有一个键有权重，log 1 = 0，而 0 / 0 是 nan：你除以的是权重非零的键数的对数；"
        "请除以句子中真实键数的对数，不管它们得到多少权重"
    ),
    (
        "a sentence with one real key has one-hot rows that must score 0 (one key), but log 1 = "
        "0 and 0 / 0 is nan: guard the division (the log of at least 2 keys, as the library "
        "does)"
    ): (
        "只有一个真实键的句子，其各行是独热的，必须得 0（一个键），但 log 1 = 0，"
        "而 0 / 0 是 nan：请防护这次除法（像库里那样，至少取 2 个键的对数）"
    ),
    (
        "you divided by the log of the number of keys with non-zero weight; the yardstick is the "
        "number of REAL keys of the sentence, whatever weight they get (here the keys after each "
        "query get 0, yet they are real)"
    ): (
        "你除以的是权重非零的键数的对数；标尺是句子中真实键的个数，不管它们得到多少权重"
        "（这里每个查询之后的键都得到 0，但它们是真实的）"
    ),
    (
        'a verdict is one of the strings "needed", "redundant" or "dead", in lower case; got '
        "{unknown}"
    ): '判定是字符串 "needed"、"redundant" 或 "dead" 之一，全部小写；实际为 {unknown}',
    (
        "the thresholds include their ends: a head that costs exactly 0.005 alone is needed "
        "(0.005 or more); use >=, not > (wrong: {wrong})"
    ): "阈值包含端点：单独代价恰为 0.005 的头是必需的（0.005 或更多）；请用 >=，而不是 >（错误：{wrong}）",
    (
        "the thresholds include their ends: a pair that costs exactly 0.02 makes its heads "
        "redundant (0.02 or more); use >=, not > (wrong: {wrong})"
    ): (
        "阈值包含端点：一起的代价恰为 0.02 的一对头是冗余的（0.02 或更多）；"
        "请用 >=，而不是 >（错误：{wrong}）"
    ),
    (
        "the thresholds include their ends: a head that costs exactly 0.005 alone is needed and "
        "a pair that costs exactly 0.02 makes its heads redundant; use >=, not > (wrong: {wrong})"
    ): (
        "阈值包含端点：单独代价恰为 0.005 的头是必需的，一起的代价恰为 0.02 的一对头是冗余的；"
        "请用 >=，而不是 >（错误：{wrong}）"
    ),
    (
        "no head is redundant in your answer where it should be: a head that costs nothing "
        "alone is dead only if it also costs nothing with every other harmless head (wrong: "
        "{wrong})"
    ): (
        "你的答案里该冗余的头没有一个被判为冗余：单独去掉没有代价的头，"
        "只有在和其他每个无害的头一起去掉也没有代价时才是无用的（错误：{wrong}）"
    ),
    # -- chapter 19b: the largest dot product ---------------------------------------------
    (
        "you gave 65504 whether or not the query is scaled first; scaling the query first stores "
        "q·k / sqrt(head_dim), so q·k itself may be sqrt(head_dim) times larger"
    ): (
        "无论是否先缩放查询，你都给出 65504；先缩放查询时存下的是 q·k / sqrt(head_dim)，"
        "所以 q·k 本身可以大 sqrt(head_dim) 倍"
    ),
    # -- chapter 20: one step of linear attention -----------------------------------------
    "cannot check: one step is wrong already (see above)": "无法检查：单步已经不对（见上）",
    "the output": "输出",
    "the state": "状态",
    "the z": "归一化项 z",
    # -- found by a fresh learner's attempts ----------------------------------------------
    (
        "the weights are right but the output is not weights @ value: compute the output "
        "from the weights you return (after the mask)"
    ): "权重是对的，但输出不是 weights @ value：请用你返回的（加过掩码的）权重来计算输出",
    "a head whose removal helps (cost -0.01 alone): harmless, not needed": (
        "去掉后反而更好的头（单独代价为 -0.01）：无害，而不是必需"
    ),
    "got {got!r}; zero itself is read 零: 0 needs a case of its own": (
        "得到的是 {got!r}；零本身读作“零”：0 需要单独处理"
    ),
}
