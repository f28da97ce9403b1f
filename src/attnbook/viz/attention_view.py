"""A hover view of attention, drawn in the browser from the weights (in the style of bertviz).

Two columns of tokens, queries left and keys right. Pointing at, focusing or tapping a query
draws its lines to every key, with opacity in proportion to the weight, and shades the keys;
a click (or Enter) locks the query. Buttons choose the layer and the head ("all" draws every
head in its own colour); a live line of text says where the query looks; "SVG" and "PNG"
download the drawing. The weights travel in the page as data (rounded to 4 decimals), so the
view needs no kernel; see :mod:`attnbook.viz.web` for how a view is put together.

Python writes only the data and a static fallback (titles, sentence text, the default query's
strongest key per head) for readers without scripts; the script ``static/attnview.js`` builds the
view from the data with ``window.attnbookViews1.attention(container, data)`` — the one builder,
which the live panel (:mod:`attnbook.viz.live`) calls too. The data::

    {"id": element id, "description": label of the sentence selector,
     "layers": [layer names], "heads": [head names], "colors": [one CSS colour per head],
     "row": ROW_PX, "text": {key: the view's words in its language (VIEW_TEXT)},
     "sentences": [{"label": str, "title": str, "queries": [L tokens],
     "keys": [S tokens], "query": default query index, "weights": (layers, H, L, S) lists}]}

Shape legend: H heads, L queries, S keys.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal

import torch
from torch import Tensor

from attnbook.i18n import N_, tr
from attnbook.viz.head_plots import HEAD_COLORS
from attnbook.viz.web import HTMLView, element_id, view_html

__all__ = [
    "attention_view",
    "attention_views",
    "peak",
    "summary",
    "HEAD_COLORS",
    "ROW_PX",
    "VIEW_TEXT",
    "view_text",
    "default_names",
]

#: Height of one token row in CSS pixels (the script's ``row``; attnview.css's ``--attnbook-row``).
ROW_PX = 24

#: The view's words, in English; the data carries them in the view's language (``{name}``
#: fields are filled in by Python here and by the script in the browser).
VIEW_TEXT = {
    "sentence": N_("sentence"),
    "all": N_("all"),
    "all heads": N_("all heads"),
    "mean": N_("mean {value}"),
    "evenly": N_("spreads its weight evenly over all {n} keys ({value} each)"),
    "most": N_("attends most to {listed} ({value})"),
    "most, tied": N_("attends most to {listed} ({value} each)"),
    "quoted": N_("'{token}'"),
    "list": N_("{first} and {last}"),
    "list sep": N_(", "),
    "per head": "{name} {peak}",
    "sep": "; ",
    "status": N_("{layer}, {head}: '{query}' {peak}"),
    "lines": N_(
        "attention lines of {layer} from the query '{query}' to the keys; per head: {tops}"
    ),
    "download": N_("download the drawing as {kind}"),
    "query button": N_("query {i}: {token}"),
    "lines label": N_("attention lines"),
    "summary": N_("In {layer}, for the query '{query}': {parts}."),
    "queries and keys": N_("queries: {queries}; keys: {keys}"),
    "note": N_(
        "A view of attention that responds to the pointer where scripts run (the book's site, "
        "a trusted notebook); here, the default query's strongest keys."
    ),
}


def view_text(lang: str | None = None) -> dict[str, str]:
    """:data:`VIEW_TEXT` in ``lang`` (default: the current language)."""
    return {key: tr(text, lang) for key, text in VIEW_TEXT.items()}


def _fixed(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals, ties away from zero — as JavaScript's ``toFixed``."""
    return str(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def _layers(weights: Tensor | Sequence[Tensor], label: str) -> list[Tensor]:
    """Check and split ``weights`` into a list of per-layer (H, L, S) float tensors."""
    where = f" (sentence {label!r})" if label else ""
    if not isinstance(weights, (list, tuple)):  # one tensor or array
        weights = torch.as_tensor(weights)
        if weights.dim() == 3:
            layers = [weights]
        elif weights.dim() == 4:
            layers = list(weights)
        else:
            raise ValueError(
                f"weights{where} must be one (H, L, S) tensor, a sequence of per-layer (H, L, S) "
                f"tensors or a (layers, H, L, S) tensor; got shape {tuple(weights.shape)}"
            )
    else:
        layers = [torch.as_tensor(w) for w in weights]
        if not layers:
            raise ValueError(f"weights{where} is an empty sequence: give at least one layer")
        for i, w in enumerate(layers):
            if w.dim() != 3:
                raise ValueError(
                    f"weights{where}[{i}] must be an (H, L, S) tensor; got shape {tuple(w.shape)}"
                )
    first = tuple(layers[0].shape)
    for i, w in enumerate(layers):
        if tuple(w.shape) != first:
            raise ValueError(
                f"mismatched layers in weights{where}: layer {i} has shape {tuple(w.shape)}, "
                f"layer 0 has {first}"
            )
    layers = [w.detach().to("cpu", torch.float64) for w in layers]
    if not all(torch.isfinite(w).all() for w in layers):
        raise ValueError(f"weights{where} contain NaN or infinite values")
    return layers


def _sentence(label: str, spec: Mapping) -> dict:
    """One sentence's data: tokens, default query and weights rounded to 4 decimals."""
    unknown = set(spec) - {"weights", "tokens", "key_tokens", "query", "title"}
    missing = {"weights", "tokens"} - set(spec)
    if unknown or missing:
        raise ValueError(
            f"sentence {label!r} needs entries weights and tokens (and may have key_tokens, "
            f"query, title); missing {sorted(missing)}, unknown {sorted(unknown)}"
        )
    layers = _layers(spec["weights"], label)
    H, L, S = layers[0].shape
    tokens = [str(t) for t in spec["tokens"]]
    keys = tokens if spec.get("key_tokens") is None else [str(t) for t in spec["key_tokens"]]
    shape = f"weights have shape (layers={len(layers)}, H={H}, L={L}, S={S})"
    if len(tokens) != L:
        raise ValueError(f"tokens has {len(tokens)} entries but {shape}: need L = {L}")
    if len(keys) != S:
        name = "key_tokens" if spec.get("key_tokens") is not None else "tokens (used as keys)"
        raise ValueError(f"{name} has {len(keys)} entries but {shape}: need S = {S}")
    query = 0 if spec.get("query") is None else int(spec["query"])
    if not 0 <= query < L:
        raise ValueError(f"query must be in [0, L) = [0, {L}); got {query}")
    return {
        "label": label,
        "title": str(spec.get("title") or ""),
        "queries": tokens,
        "keys": keys,
        "query": query,
        "weights": [
            [[[round(x, 4) for x in row] for row in head] for head in w.tolist()] for w in layers
        ],
    }


def default_names(n: int, what: str, lang: str | None = None) -> list[str]:
    """The buttons' default names for ``n`` layers (``what="layer"``: "layer 0", ... or 第 0 层, ...)
    or heads (``what="head"``: "head 0", ... or 头 0, ...), in ``lang``."""
    template = tr({"layer": N_("layer {i}"), "head": N_("head {i}")}[what], lang)
    return [template.format(i=i) for i in range(n)]


def _names(names: Sequence[str] | None, n: int, what: str, lang: str | None) -> list[str]:
    if names is None:
        return default_names(n, what, lang)
    names = [str(x) for x in names]
    if len(names) != n:
        raise ValueError(f"{what}_names has {len(names)} entries; the weights have {n} {what}s")
    return names


def attention_views(
    sentences: Mapping[str, Mapping],
    *,
    layer_names: Sequence[str] | None = None,
    head_names: Sequence[str] | None = None,
    description: str = "sentence",
    lang: str | None = None,
) -> HTMLView:
    """Several sentences' attention in one view, with a selector for the sentence.

    Args:
        sentences: label -> ``dict(weights=..., tokens=..., key_tokens=None, query=None,
            title="")``, each entry as in :func:`attention_view`. Every sentence must have the
            same number of layers and heads (the layer and head buttons are shared).
        layer_names: names shown on the layer buttons (default ``"layer 0"``, ``"layer 1"``, ...).
        head_names: names shown on the head buttons (default ``"head 0"``, ``"head 1"``, ...).
        description: label of the sentence selector.
        lang: the language of the view's words ("en" or "zh"; default: the current language).
    """
    if not sentences:
        raise ValueError("attention_views needs at least one sentence")
    data = [_sentence(label, spec) for label, spec in sentences.items()]
    n_layers, n_heads = len(data[0]["weights"]), len(data[0]["weights"][0])
    for d in data[1:]:
        if (len(d["weights"]), len(d["weights"][0])) != (n_layers, n_heads):
            raise ValueError(
                f"sentence {d['label']!r} has {len(d['weights'])} layers x "
                f"{len(d['weights'][0])} heads, sentence {data[0]['label']!r} has {n_layers} x "
                f"{n_heads}: the layer and head buttons are shared"
            )
    layers = _names(layer_names, n_layers, "layer", lang)
    heads = _names(head_names, n_heads, "head", lang)
    text = view_text(lang)
    colors = [HEAD_COLORS[h % len(HEAD_COLORS)] for h in range(n_heads)]
    uid = element_id("attention", [(d["label"], d["queries"], d["keys"]) for d in data])
    view = {
        "id": uid,
        "description": tr(str(description), lang),
        "layers": layers,
        "heads": heads,
        "colors": colors,
        "row": ROW_PX,
        "text": text,
        "sentences": data,
    }
    body = "".join(_fallback(d, layers[0], heads, text, many=len(data) > 1) for d in data)
    body = (
        f'<div class="attnbook-fallback"><p class="attnbook-note">{html.escape(text["note"], quote=False)}</p>'
        f"{body}</div>"
    )
    count = f"{len(data)} sentence{'s' if len(data) != 1 else ''}"
    return HTMLView(
        view_html("attention", view, body),
        f"attention view: {count}, {n_layers} layer{'s' if n_layers != 1 else ''} x "
        f"{n_heads} head{'s' if n_heads != 1 else ''}",
    )


def attention_view(
    weights: Tensor | Sequence[Tensor],
    tokens: Sequence[str],
    *,
    key_tokens: Sequence[str] | None = None,
    query: int | None = None,
    title: str = "",
    layer_names: Sequence[str] | None = None,
    head_names: Sequence[str] | None = None,
    lang: str | None = None,
) -> HTMLView:
    """The attention of one sentence: point at a query token to see where each head looks.

    Args:
        weights: one layer's (H, L, S) weights, a sequence of per-layer (H, L, S) tensors, or
            a (layers, H, L, S) tensor.
        tokens: the L query tokens.
        key_tokens: the S key tokens (default: ``tokens``; different for cross-attention).
        query: the query shown before any interaction (default 0).
        title: a line above the tokens.
        layer_names: names shown on the layer buttons (default ``"layer 0"``, ``"layer 1"``, ...).
        head_names: names shown on the head buttons (default ``"head 0"``, ``"head 1"``, ...).
        lang: the language of the view's words ("en" or "zh"; default: the current language).

    Raises:
        ValueError: weights not 3-D/4-D or layers of different shapes; a token count that is
            not L (or S); ``query`` outside [0, L); names of the wrong length.
    """
    spec = dict(weights=weights, tokens=tokens, key_tokens=key_tokens, query=query, title=title)
    return attention_views({title: spec}, layer_names=layer_names, head_names=head_names, lang=lang)


def _text(tokens: Sequence[str]) -> str:
    """Tokens as a line of text: Chinese characters run together, other tokens spaced."""
    cjk = any("\u3400" <= ch <= "\u9fff" for t in tokens for ch in t)
    return ("" if cjk else " ").join(tokens)


def peak(row: Sequence[float], keys: Sequence[str], text: Mapping[str, str] | None = None) -> str:
    """Where one row of weights peaks, as shown (2 decimals): ``attends most to 'Mary' (0.83)``,
    every key that ties with the largest named (``'Zhang', 'Mary' and 'he' (0.21 each)``), or
    ``spreads its weight evenly over all 9 keys (0.11 each)``. The view's script uses the same
    rule for its status line. ``text``: the view's words (:func:`view_text`; default English)."""
    t = text or VIEW_TEXT
    shown = [_fixed(x, 2) for x in row]
    best = max(shown, key=float)
    tied = [t["quoted"].format(token=k) for k, x in zip(keys, shown) if x == best]
    if len(tied) == len(keys) > 1:
        return t["evenly"].format(n=len(keys), value=best)
    if len(tied) == 1:
        return t["most"].format(listed=tied[0], value=best)
    listed = t["list"].format(first=t["list sep"].join(tied[:-1]), last=tied[-1])
    return t["most, tied"].format(listed=listed, value=best)


def summary(
    d: dict,
    layer: int,
    layer_name: str,
    heads: Sequence[str],
    text: Mapping[str, str] | None = None,
) -> str:
    """The fallback's sentence: where the default query attends in every head, e.g.
    ``In layer 0, for the query 'she': head 0 attends most to 'Mary' (0.83); head 1 attends most
    to 'Tom' (0.51).`` (:func:`peak`; weights to 2 decimals, ties away from zero as the script's
    ``toFixed``)."""
    t = text or VIEW_TEXT
    q = d["query"]
    parts = [
        t["per head"].format(name=name, peak=peak(d["weights"][layer][h][q], d["keys"], t))
        for h, name in enumerate(heads)
    ]
    return t["summary"].format(layer=layer_name, query=d["queries"][q], parts=t["sep"].join(parts))


def _fallback(
    d: dict, layer_name: str, heads: Sequence[str], t: Mapping[str, str], *, many: bool
) -> str:
    """One sentence for readers without scripts: its title, text and :func:`summary`."""
    title = ": ".join(x for x in (d["label"] if many else "", d["title"]) if x)
    text = _text(d["queries"])
    if d["keys"] != d["queries"]:
        text = t["queries and keys"].format(queries=text, keys=_text(d["keys"]))
    parts = [("title", title)] if title else []
    parts += [("text", text), ("summary", summary(d, 0, layer_name, heads, t))]
    return "".join(
        f'<p class="attnbook-{cls}">{html.escape(x, quote=False)}</p>' for cls, x in parts
    )
