"""Architecture diagrams: boxes and arrows for attention, multi-head attention and the blocks.

Pure functions: arguments in, a matplotlib figure out, with its alt text set (in the figure's
language). Each figure is drawn on one axes whose data units are inches, so boxes and text keep
their size whatever the figure's height. Colours keep one role each, as in every figure of the
book: queries vermilion, keys blue, values bluish green, masks reddish purple.

Shape legend: N batch, L target (query) length, S source (key) length, E embedding size, Ev value
size, H heads, D = E/H head size.
"""

from __future__ import annotations

import matplotlib as mpl
from matplotlib.figure import Figure
from matplotlib.patches import Circle

from attnbook.i18n import N_, resolve, tr
from attnbook.viz.diagram_parts import GREY as _GREY
from attnbook.viz.diagram_parts import ROLE_COLORS  # noqa: F401 (also diagrams.ROLE_COLORS)
from attnbook.viz.diagram_parts import arrow as _arrow
from attnbook.viz.diagram_parts import box as _box
from attnbook.viz.diagram_parts import canvas as _canvas
from attnbook.viz.diagram_parts import describe as _alt

__all__ = ["sdpa_flow", "heads_split_merge", "encoder_block", "decoder_block", "encoder_decoder"]

_GAP = 0.34  # vertical room for an arrow between two boxes
_QKT = r"$\mathrm{Q\,K^{T}}$"  # mathtext: CJK fonts lack the superscript T
_DOTS = "…"


def _check_flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool; got {type(value).__name__}")
    return value


def sdpa_flow(*, mask: bool = True, lang: str | None = None) -> Figure:
    """The data flow of scaled dot-product attention, with the shape on every arrow.

    Q (L, E) and K (S, E) meet in Q Kᵀ (L, S), divided by √E; an optional mask (dashed) acts on
    the scores; a softmax over S gives the weights (L, S), which multiply V (S, Ev) into the
    output (L, Ev).

    Args:
        mask: draw the optional mask step (dashed).
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    _check_flag(mask, "mask")
    steps = [(_QKT, "attention", False), ("÷ √E", "attention", False)]
    if mask:
        steps.append((tr("mask (optional)", lang), "mask", True))
    steps += [
        (tr("softmax over S", lang), "attention", False),
        (tr("weights · V", lang), "value", False),
    ]
    cx, w, h = 2.6, 2.3, 0.4
    height = 0.2 + h + (len(steps) + 1) * (_GAP + h)
    fig, ax = _canvas(height)
    top = height - 0.1 - h / 2
    _box(ax, cx - 0.85, top, 1.35, h, "Q  (L, E)", "query")
    _box(ax, cx + 0.85, top, 1.35, h, "K  (S, E)", "key")
    y = top - h - _GAP
    _arrow(ax, (cx - 0.85, top - h / 2), (cx - 0.35, y + h / 2))
    _arrow(ax, (cx + 0.85, top - h / 2), (cx + 0.35, y + h / 2))
    labels = {
        _QKT: tr("scores (L, S)", lang), "÷ √E": "(L, S)",
        tr("mask (optional)", lang): "(L, S)",
        tr("softmax over S", lang): tr("weights (L, S)", lang),
        tr("weights · V", lang): "(L, Ev)",
    }  # fmt: skip
    for text, role, dashed in steps:
        _box(ax, cx, y, w, h, text, role, dashed=dashed)
        if role == "value":
            vx = cx + 2.55
            _box(ax, vx, y, 1.4, h, "V  (S, Ev)", "value")
            _arrow(ax, (vx - 0.7, y), (cx + w / 2, y))
        nxt = y - h - _GAP
        _arrow(ax, (cx, y - h / 2), (cx, nxt + h / 2), labels[text], dashed=dashed)
        y = nxt
    _box(ax, cx, y, w, h, tr("output (L, Ev)", lang), "plain")
    sentences = [
        tr("Flow chart of scaled dot-product attention, top to bottom.", lang),
        tr("Queries Q (L, E) and keys K (S, E) are multiplied into Q Kᵀ, the scores of shape "
           "(L, S), which are divided by √E.", lang),
    ]  # fmt: skip
    if mask:
        sentences.append(tr("An optional mask, drawn dashed, acts on the scores (L, S).", lang))
    sentences.append(
        tr("A softmax over the S keys turns each row into weights (L, S); the weights multiply "
           "the values V (S, Ev), giving the output (L, Ev).", lang)
    )  # fmt: skip
    return _alt(fig, sentences, lang)


def _check_heads(num_heads: object) -> int | None:
    if num_heads is None:
        return None
    if isinstance(num_heads, bool) or not isinstance(num_heads, int):
        raise TypeError(f"num_heads must be an int or None; got {type(num_heads).__name__}")
    if num_heads < 1:
        raise ValueError(f"num_heads must be at least 1; got {num_heads}")
    return num_heads


def heads_split_merge(*, num_heads: int | None = None, lang: str | None = None) -> Figure:
    """Multi-head attention: project, split into H heads, attend in each, merge, project.

    X (N, L, E) → three projections → view (N, L, H, D) → transpose (N, H, L, D) → H attentions
    side by side → transpose and reshape back to (N, L, E) → output projection W_O.

    Args:
        num_heads: the number of heads drawn, labelled 1..H; None draws head 1, head 2, …, head H.
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    H = _check_heads(num_heads)
    if H is None:
        names = [tr("head {h}", lang).format(h=1), tr("head {h}", lang).format(h=2), _DOTS,
                 tr("head {h}", lang).format(h="H")]  # fmt: skip
    elif H <= 4:
        names = [tr("head {h}", lang).format(h=h) for h in range(1, H + 1)]
    else:
        names = [tr("head {h}", lang).format(h=1), tr("head {h}", lang).format(h=2), _DOTS,
                 tr("head {h}", lang).format(h=H)]  # fmt: skip
    h, tall, size, grey = 0.4, 0.55, mpl.rcParams["font.size"], _GREY
    height = 0.2 + 3 * h + 3 * tall + 5 * _GAP
    fig, ax = _canvas(height)
    cx, wide = 3.0, 5.4
    y = height - 0.1 - h / 2
    _box(ax, cx, y, 1.6, h, "X  (N, L, E)", "plain")
    projections = [("W_Q", "query", cx - 1.9), ("W_K", "key", cx), ("W_V", "value", cx + 1.9)]
    y_proj = y - h - _GAP
    for name, role, x in projections:
        _arrow(ax, (cx + (x - cx) * 0.3, y - h / 2), (x, y_proj + h / 2))
        _box(ax, x, y_proj, 1.6, h, tr("project {w}", lang).format(w=name), role)
    y_split = y_proj - h / 2 - _GAP - tall / 2
    for _, _, x in projections:
        _arrow(ax, (x, y_proj - h / 2), (x, y_split + tall / 2),
               "(N, L, E)" if x > cx else "")  # fmt: skip
    _box(ax, cx, y_split, wide, tall,
         tr("split into H heads of D = E/H:\nview → (N, L, H, D), transpose → (N, H, L, D)", lang),
         "plain")  # fmt: skip
    y_heads = y_split - tall - _GAP
    y_merge = y_heads - tall - _GAP
    slot = wide / len(names)
    for i, name in enumerate(names):
        x = cx - wide / 2 + slot * (i + 0.5)
        if name == _DOTS:
            ax.text(x, y_heads, _DOTS, ha="center", va="center", fontsize=size)
            continue
        _box(ax, x, y_heads, slot - 0.2, tall, name + "\n" + tr("attention", lang), "attention")
        last = i == len(names) - 1
        _arrow(ax, (x, y_split - tall / 2), (x, y_heads + tall / 2))
        _arrow(ax, (x, y_heads - tall / 2), (x, y_merge + tall / 2), "(N, H, L, D)" if last else "")
    _box(ax, cx, y_merge, wide, tall,
         tr("merge the heads (concatenate):\ntranspose → (N, L, H, D), reshape → (N, L, E)", lang),
         "plain")  # fmt: skip
    y_out = y_merge - tall / 2 - _GAP - h / 2
    _arrow(ax, (cx, y_merge - tall / 2), (cx, y_out + h / 2), "(N, L, E)")
    _box(ax, cx, y_out, 3.4, h, tr("output projection W_O → (N, L, E)", lang), "linear")
    del grey
    sentences = [
        tr("Flow chart of multi-head attention, top to bottom.", lang),
        tr("The input X (N, L, E) goes through three projections, W_Q, W_K and W_V, each giving "
           "(N, L, E).", lang),
        tr("Each is split into H heads of D = E/H features: view to (N, L, H, D), then "
           "transpose to (N, H, L, D).", lang),
        tr("The heads attend side by side, {n} boxes in a row.", lang).format(
            n=len([n for n in names if n != _DOTS])),
        tr("Their outputs are merged: transpose back to (N, L, H, D) and reshape to (N, L, E), "
           "which is the concatenation of the heads; the output projection W_O gives (N, L, E).",
           lang),
    ]  # fmt: skip
    return _alt(fig, sentences, lang)


#: The first sentence of a block diagram's alt text, whole for each kind of block.
_BLOCK_ALT = {
    "encoder": N_("Diagram of the encoder block, top to bottom: {n} sublayers ({names})."),
    "decoder": N_("Diagram of the decoder block, top to bottom: {n} sublayers ({names})."),
}


def _block(kind: str, norm_first: object, lang: str | None) -> Figure:
    lang = resolve(lang)
    pre = _check_flag(norm_first, "norm_first")
    if kind == "encoder":
        sublayers = [(N_("multi-head self-attention"), "attention"), (N_("feed-forward"), "linear")]
    else:
        sublayers = [(N_("masked multi-head self-attention"), "mask"), (N_("cross-attention"), "attention"),
                     (N_("feed-forward"), "linear")]  # fmt: skip
    h, r, cx, w = 0.4, 0.15, 3.4, 2.6
    rx = cx + w / 2 + 0.35  # the residual path
    height = 0.1 + h + len(sublayers) * (3 * _GAP + 2 * h + 2 * r) + _GAP + h + 0.1
    fig, ax = _canvas(height)
    size, grey = mpl.rcParams["font.size"], _GREY
    y = height - 0.1
    name = "src" if kind == "encoder" else "tgt"
    _box(ax, cx, y - h / 2, 1.8, h, f"{name}  (N, L, E)", "plain")
    placement = (
        tr("pre-LN: norm_first=True", lang) if pre else tr("post-LN: norm_first=False", lang)
    )
    ax.text(0.1, y - h / 2, placement, va="center", fontsize=size, color=grey)
    y -= h
    first = True
    for n, (text, role) in enumerate(sublayers, 1):
        order = ["norm", "sub", "add"] if pre else ["sub", "add", "norm"]
        y_branch = y - 0.4 * _GAP
        for part in order:
            tall = 2 * r if part == "add" else h
            top = y - _GAP
            _arrow(ax, (cx, y), (cx, top), "(N, L, E)" if first else "", side="left")
            first = False
            mid = top - tall / 2
            if part == "add":
                ax.add_patch(Circle((cx, mid), r, facecolor="white", edgecolor="black", lw=1.2))
                ax.text(cx, mid, "+", ha="center", va="center", fontsize=size)
                ax.plot([cx, rx, rx], [y_branch, y_branch, mid], color=grey, lw=1.2)
                _arrow(ax, (rx, mid), (cx + r, mid), color=grey)
                ax.text(rx + 0.1, (y_branch + mid) / 2, tr("residual", lang), va="center",
                        fontsize=size, color=grey)  # fmt: skip
            elif part == "norm":
                _box(ax, cx, mid, w, h, tr("LayerNorm (norm{n})", lang).format(n=n), "norm")
            else:
                _box(ax, cx, mid, w, h, tr(text, lang), role)
                if text == "cross-attention":
                    _box(ax, 0.9, mid, 1.5, 0.62, tr("memory\n(N, S, E)", lang), "key")
                    _arrow(ax, (1.65, mid), (cx - w / 2, mid))
                    ax.text((1.65 + cx - w / 2) / 2, mid + 0.05, "K, V", ha="center",
                            va="bottom", fontsize=size, color=grey)  # fmt: skip
            y = top - tall
    _arrow(ax, (cx, y), (cx, y - _GAP))
    _box(ax, cx, y - _GAP - h / 2, 2.6, h, tr("output (N, L, E)", lang), "plain")
    names = ", ".join(tr(text, lang) for text, _ in sublayers)
    how = (N_("Pre-LN (norm_first=True): each sublayer reads a LayerNorm of its input, and its "
              "output is added to the input on the residual path, which no norm interrupts.")
           if pre else
           N_("Post-LN (norm_first=False): each sublayer's output is added to its input (the "
              "residual path on the right), then a LayerNorm follows the addition."))  # fmt: skip
    sentences = [
        tr(_BLOCK_ALT[kind], lang).format(n=len(sublayers), names=names),
        tr(how, lang),
    ]
    if kind == "decoder":
        sentences.append(
            tr(
                "The cross-attention takes its queries from the decoder and its keys "
                "and values from the memory, the encoder's output (N, S, E).",
                lang,
            )
        )
    sentences.append(tr("Every arrow of the main path carries (N, L, E).", lang))
    return _alt(fig, sentences, lang)


def encoder_block(*, norm_first: bool = False, lang: str | None = None) -> Figure:
    """The encoder block as :class:`~attnbook.blocks.EncoderBlock` computes it: self-attention and a
    feed-forward network, each with a residual connection and a LayerNorm.

    Args:
        norm_first: pre-LN (a LayerNorm before each sublayer) if True; post-LN (sublayer, add
            the residual, then LayerNorm; the original Transformer and the default) if False.
        lang: "en" or "zh"; None means the current language.
    """
    return _block("encoder", norm_first, lang)


def decoder_block(*, norm_first: bool = False, lang: str | None = None) -> Figure:
    """The decoder block as :class:`~attnbook.blocks.DecoderBlock` computes it: masked self-attention,
    cross-attention to the encoder's output (the memory, (N, S, E)) and a feed-forward network,
    each with a residual connection and a LayerNorm.

    Args:
        norm_first: pre-LN if True, post-LN (the default) if False, as in :func:`encoder_block`.
        lang: "en" or "zh"; None means the current language.
    """
    return _block("decoder", norm_first, lang)


def encoder_decoder(*, lang: str | None = None) -> Figure:
    """The complete encoder–decoder of chapter 5b (:class:`~attnbook.models.seq2seq.Seq2SeqTransformer`).

    Each side embeds its tokens and adds learned positions; num_layers encoder blocks read the
    source (N, S) into the memory (N, S, E); num_layers decoder blocks read the target shifted
    right (N, T), and the cross-attention of every decoder block takes its keys and values from the memory; a linear
    output layer gives one logit per vocabulary token, (N, T, V).

    Args:
        lang: "en" or "zh"; None means the current language.
    """
    lang = resolve(lang)
    size, grey = mpl.rcParams["font.size"], _GREY
    h, tall = 0.42, 1.25
    height = 0.1 + 4 * h + tall + 4 * _GAP + 0.1
    fig, ax = _canvas(height)
    xe, xd, w = 1.5, 4.75, 2.5
    y = height - 0.1 - h / 2
    _box(ax, xe, y, w, h, tr("source tokens (N, S)", lang))
    _box(ax, xd, y, w, h, tr("target, shifted right (N, T)", lang))
    y_emb = y - h - _GAP
    for x in (xe, xd):
        _arrow(ax, (x, y - h / 2), (x, y_emb + h / 2))
        _box(ax, x, y_emb, w, h, tr("embedding + positions", lang), "linear")
    y_blocks = y_emb - h / 2 - _GAP - tall / 2
    for x in (xe, xd):
        _arrow(ax, (x, y_emb - h / 2), (x, y_blocks + tall / 2),
               "(N, S, E)" if x == xe else "(N, T, E)", side="left" if x == xe else "right")  # fmt: skip
    _box(ax, xe, y_blocks, w, tall, tr("encoder block × num_layers\n\nself-attention\nfeed-forward", lang),
         "attention")  # fmt: skip
    _box(ax, xd, y_blocks, w, tall,
         tr("decoder block × num_layers\n\nmasked self-attention\ncross-attention\nfeed-forward", lang),
         "attention")  # fmt: skip
    y_mem = y_blocks - tall / 2 - _GAP - h / 2
    _arrow(ax, (xe, y_blocks - tall / 2), (xe, y_mem + h / 2))
    _box(ax, xe, y_mem, w, h, tr("memory (N, S, E)", lang), "key")
    # the memory feeds the cross-attention of every decoder block
    ax.plot([xe + w / 2, 3.0, 3.0], [y_mem, y_mem, y_blocks - 0.2], color=grey, lw=1.2)
    _arrow(ax, (3.0, y_blocks - 0.2), (xd - w / 2, y_blocks - 0.2), color=grey)
    ax.text(3.07, y_blocks - 0.14, "K, V", va="bottom", fontsize=size, color=grey)
    y_out = y_mem
    _arrow(ax, (xd, y_blocks - tall / 2), (xd, y_out + h / 2))
    _box(ax, xd, y_out, w, h, tr("output layer (linear)", lang), "linear")
    y_logit = y_out - h - _GAP
    _arrow(ax, (xd, y_out - h / 2), (xd, y_logit + h / 2))
    _box(ax, xd, y_logit, w, h, tr("logits (N, T, V)", lang))
    ax.text(xe, y_logit, tr("encoder: runs once", lang), ha="center", va="center",
            fontsize=size, color=grey)  # fmt: skip
    sentences = [
        tr("Diagram of the complete encoder–decoder, encoder on the left, decoder on the right, "
           "top to bottom.", lang),
        tr("The source tokens (N, S) get a token embedding plus positions and go through "
           "num_layers encoder blocks, giving the memory (N, S, E).", lang),
        tr("The target, shifted right (N, T), gets its own embedding plus positions and goes "
           "through num_layers decoder blocks; the cross-attention of every decoder block takes "
           "its keys and values from the memory.", lang),
        tr("A linear output layer turns the decoder's output into logits (N, T, V), one score "
           "per vocabulary token.", lang),
    ]  # fmt: skip
    return _alt(fig, sentences, lang)
