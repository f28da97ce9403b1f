"""The chapter-6 detective on the static site: the reader types a sentence, the browser runs it.

:func:`live_panel` writes a closed ``<details>`` panel ("Type your own sentence"). When a reader
opens it, its script (``static/detective.js``) fetches the committed checkpoint itself —
``book/checkpoints/detective.safetensors``, copied to ``_static/models/`` by the book's Sphinx
extension ``book/_ext/live_models.py`` — and reads it as safetensors (8-byte header length, JSON
header, raw little-endian float32). It tokenises the sentence as
:func:`attnbook.tasks.vocab.tokenize` does, runs :meth:`attnbook.models.detective.Detective.forward`
with plain loops (23,520 parameters, two layers: no runtime library needed), and draws every head
of every layer with the hover view of :mod:`attnbook.viz.attention_view` (built by the same
JavaScript function, ``attnbookViews1.attention``, with the same data schema), the pointer's
probability for every token and the answer. ``tests/site/test_live.py`` compares the browser's
weights and probabilities with PyTorch's.

The vocabulary travels in the panel's data, not in the checkpoint: the checkpoint's metadata holds
the model's class and config only, and the vocabulary is defined by the tasks
(:meth:`attnbook.tasks.vocab.Vocabulary.for_tasks`) — the same call that trained the model. It
is 133 short tokens (about 1 KB), checked here against the checkpoint's ``vocab_size``.

In JupyterLab there is no site to serve the model file: the panel says so and points to the
kernel-driven :func:`attnbook.viz.explorer.live_explorer`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

from attnbook.i18n import N_, tr
from attnbook.tasks.coref import CorefTask
from attnbook.tasks.coref_lexicon import LEXICON
from attnbook.tasks.vocab import Vocabulary, tokenize
from attnbook.viz.attention_view import HEAD_COLORS, ROW_PX, default_names, view_text
from attnbook.viz.web import HTMLView, asset, element_id

__all__ = [
    "EXAMPLES",
    "MODEL_FILE",
    "OFFSITE",
    "LIVE_TEXT",
    "detective_vocabulary",
    "known_tokens",
    "live_panel",
]

#: The file name of the model under the site's ``_static/models/`` (and ``book/checkpoints/``).
MODEL_FILE = "detective.safetensors"

#: The label of the panel's text box.
SENTENCE_LABEL = N_(
    "Your sentence (English or Chinese, made of the words the detective knows, with a pronoun)"
)

#: The sentences the panel offers, English (filled in) and Chinese.
EXAMPLES = (
    "Anna cried and Tom ran . later she dried the tears .",
    "王芳哭了，张伟跑了。后来她擦了擦眼泪。",
)

#: What the panel says where no model file is served (in JupyterLab, say).
OFFSITE = N_(
    "This panel runs the model in your browser on the book's website, which serves the model "
    "file with the page. In a notebook, use the kernel-driven explorer instead: "
    "attnbook.viz.explorer.live_explorer(model, vocab, sentences)."
)

_LANGUAGES = {"en": N_("English"), "zh": N_("Chinese")}

#: What the panel's script says, in English; the data carries it in the panel's language
#: (with the attention view's words, :data:`attnbook.viz.attention_view.VIEW_TEXT`).
LIVE_TEXT = {
    "offsite": OFFSITE,
    "empty": N_("Type a sentence first."),
    "unknown": N_("The detective does not know {tokens}."),
    "unknown token": N_("'{token}' (token {i})"),
    "too long": N_("The sentence has {n} tokens; the model reads at most {max}."),
    "no pronoun": N_(
        "The sentence needs a pronoun (he, she, 他 or 她) for the detective to resolve."
    ),
    "pointer": N_("Where the pointer from '{token}' (token {i}) goes, probability per token:"),
    "loading": N_("Loading the model ({model})…"),
    "ran": N_("Ran the model on {n} tokens."),
    "failed": N_("The model could not be loaded ({error})."),
    "knows": N_(" It knows these tokens ({language}): {groups}."),
}


def detective_vocabulary() -> Vocabulary:
    """The vocabulary the book's detectives were trained with (English and Chinese tasks)."""
    return Vocabulary.for_tasks(CorefTask("en"), CorefTask("zh"))


def known_tokens(language: str, lang: str | None = None) -> dict:
    """The tokens of ``language``'s sentences, grouped for the unknown-word message.

    Returns:
        ``{"language": "English", "groups": [{"name": "names", "tokens": [...]}, ...]}`` with
        the groups names, pronouns and other words (names and pronouns in the lexicon's order,
        other words sorted).
    """
    if language not in _LANGUAGES:
        raise ValueError(f"language must be one of {sorted(_LANGUAGES)}; got {language!r}")
    lex = LEXICON[language]
    names = list(lex.get("surnames", [])) + lex["male"] + lex["female"]
    pronouns = list(lex["pronoun"].values())
    taken = set(names) | set(pronouns)
    other = sorted(t for t in CorefTask(language).all_tokens() if t not in taken)
    groups = [(N_("names"), names), (N_("pronouns"), pronouns), (N_("other words"), other)]
    if language == "zh":
        groups[0] = (N_("surnames and given names (one character each)"), names)
    return {
        "language": tr(_LANGUAGES[language], lang),
        "groups": [{"name": tr(name, lang), "tokens": tokens} for name, tokens in groups],
    }


def _check_examples(examples: Sequence[str], vocab: Vocabulary) -> list[str]:
    if not examples:
        raise ValueError("examples must hold at least one sentence")
    for text in examples:
        unknown = [t for t in tokenize(text) if t not in vocab]
        if unknown:
            raise ValueError(f"example {text!r} has tokens outside the vocabulary: {unknown}")
    return [str(text) for text in examples]


def _is_chinese(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" for ch in text)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def live_panel(
    vocab: Vocabulary | None = None,
    *,
    examples: Sequence[str] = EXAMPLES,
    model_file: str = MODEL_FILE,
    checkpoint: str | Path | None = None,
    summary: str = N_("Type your own sentence"),
    lang: str | None = None,
) -> HTMLView:
    """A closed panel in which the reader types a sentence and the browser runs the detective.

    Nothing is downloaded until the panel is opened; then the model file is fetched from the
    site's ``_static/models/`` (the page's ``data-content_root`` says where the site's root is)
    and the sentence in the box is run.

    Args:
        vocab: the model's vocabulary (default :func:`detective_vocabulary`).
        examples: sentences offered as buttons; the first fills the text box.
        model_file: the checkpoint's file name under ``_static/models/``.
        checkpoint: a local copy of that file, to check that its ``vocab_size`` is
            ``len(vocab)`` (default: not checked here; the browser checks it too).
        summary: the text of the panel's toggle.
        lang: the language of the panel's words ("en" or "zh"; default: the current language).

    Raises:
        ValueError: an example with a token outside ``vocab``; a checkpoint whose vocabulary
            size differs from ``len(vocab)``.
    """
    vocab = detective_vocabulary() if vocab is None else vocab
    examples = _check_examples(examples, vocab)
    if checkpoint is not None:
        from attnbook.checkpoint import load_checkpoint

        config = load_checkpoint(checkpoint).config
        if config.vocab_size != len(vocab):
            raise ValueError(
                f"checkpoint {checkpoint} has vocab_size {config.vocab_size}; the vocabulary "
                f"has {len(vocab)} tokens"
            )
        layers, heads = config.num_layers, config.nhead
    else:
        layers, heads = 2, 2  # only names the buttons; the browser reads the file's config
    uid = element_id("live", model_file, examples)
    data = {
        "model": model_file,
        "vocab": vocab.itos,
        "examples": examples,
        "known": [known_tokens("en", lang), known_tokens("zh", lang)],
        "offsite": tr(OFFSITE, lang),
        "layers": default_names(layers, "layer", lang),
        "heads": default_names(heads, "head", lang),
        "text": {**view_text(lang), **{k: tr(v, lang) for k, v in LIVE_TEXT.items()}},
        "colors": [HEAD_COLORS[h % len(HEAD_COLORS)] for h in range(heads)],
        "row": ROW_PX,
    }
    buttons = "".join(
        f'<button type="button" data-example="{i}" lang="{"zh" if _is_chinese(text) else "en"}">'
        f"{_esc(text)}</button>"
        for i, text in enumerate(examples)
    )
    run, examples_label = tr("Run", lang), tr("Examples:", lang)
    body = (
        f'<details class="attnbook-live"><summary>{_esc(tr(summary, lang))}</summary>'
        '<form class="attnbook-live-form">'
        f'<label for="{uid}-text">{_esc(tr(SENTENCE_LABEL, lang))}</label>'
        f'<input type="text" id="{uid}-text" class="attnbook-live-text" '
        f'value="{_esc(examples[0])}" autocomplete="off" spellcheck="false" size="48">'
        f'<button type="submit">{_esc(run)}</button>'
        f'<div class="attnbook-live-examples"><span id="{uid}-ex">{_esc(examples_label)}</span>'
        f'<div role="group" aria-labelledby="{uid}-ex">{buttons}</div></div>'
        "</form>"
        '<p class="attnbook-live-message" role="status" aria-live="polite"></p>'
        '<p class="attnbook-live-answer" aria-live="polite"></p>'
        '<div class="attnbook-live-probs"></div>'
        '<div class="attnbook-live-drawing"></div>'
        "</details>"
    )
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    # Not an .attnbook-view: the hover view it draws is one, built in the browser by
    # attnbookViews1.attention (attnview.js, called from detective.js) from the "layers",
    # "heads", "colors" and "row" above and the run's tokens and weights; the views' style and
    # script come along for it.
    html_text = (
        '<div class="attnbook-live-panel mathjax_ignore tex2jax_ignore" data-kind="live">'
        f'<style class="attnbook-css">{asset("attnview.css")}</style>'
        f'<style class="attnbook-live-css">{_CSS}</style>'
        f'<script type="application/json" class="attnbook-live-data">{payload}</script>'
        f"{body}"
        f'<script class="attnbook-js">{asset("attnview.js")}</script>'
        f'<script class="attnbook-live-js">{asset("detective.js")}</script>'
        "</div>"
    )
    return HTMLView(
        html_text,
        f"live panel: the detective ({model_file}) runs in the browser on the book's site",
    )


_FONT = '"WenQuanYi Micro Hei","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",sans-serif'
_CSS = (
    ".attnbook-live-panel{max-width:100%;margin:.5em 0;font-size:14px;line-height:1.4;"
    f"font-family:system-ui,-apple-system,'Segoe UI',Roboto,{_FONT}}}"
    ".attnbook-live-panel button{font:inherit;padding:.1em .6em;border:1px solid #767676;"
    "border-radius:4px;background:#fff;color:#111;cursor:pointer}"
    ".attnbook-live-panel button:focus-visible,.attnbook-live-panel input:focus-visible,"
    ".attnbook-live-panel summary:focus-visible{outline:3px solid #D55E00;outline-offset:1px}"
    ".attnbook-live summary{cursor:pointer;font-weight:600}"
    ".attnbook-live-form{display:flex;flex-wrap:wrap;gap:.4em;align-items:center;margin:.5em 0}"
    ".attnbook-live-form label{flex-basis:100%}"
    ".attnbook-live-text{font:inherit;min-width:0;max-width:100%;flex:1 1 16em;padding:.15em .4em;"
    "border:1px solid #767676;border-radius:4px}"
    ".attnbook-live-examples{display:flex;flex-wrap:wrap;gap:.3em;align-items:center;flex-basis:100%}"
    ".attnbook-live-examples [role=group]{display:flex;flex-wrap:wrap;gap:.3em}"
    ".attnbook-live-message.is-error{color:#a4161a}"
    ".attnbook-live-answer{font-weight:700;font-size:1.1em;margin:.3em 0}"
    ".attnbook-live-list{display:flex;flex-wrap:wrap;gap:3px;list-style:none;margin:0 0 .5em;padding:0}"
    ".attnbook-live-list li{display:flex;flex-direction:column;align-items:center;min-width:2.4em;"
    "padding:.1em .3em;border:1px solid #ddd;border-radius:3px;margin:0}"
    ".attnbook-live-list li.is-answer{outline:2px solid #D55E00}"
    ".attnbook-live-p{font-size:.85em}"
)
