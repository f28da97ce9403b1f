"""A pointer over sentences drawn as one bar per sentence, the sentence written on its bar.

Used by the summarisation chapter: a summary query's attention over a paragraph's sentences,
with the correct sentence marked (orange, hatched and outlined, never by colour alone).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnbook.i18n import tr
from attnbook.viz.layout import MAX_WIDTH, OKABE_ITO, describe, palette

__all__ = ["pointer_panels"]


def pointer_panels(
    panels: Sequence[tuple[Sequence[str], torch.Tensor, int, str]],
    *,
    lang: str | None = None,
) -> Figure:
    """One panel per paragraph: a horizontal bar per sentence, as long as its weight.

    Args:
        panels: ``(sentences, weights, key, title)`` per panel: the sentences' text, their
            weights (M,) (e.g. a pointer's attention), the index of the correct sentence, and
            the panel's title.
    """
    if not panels:
        raise ValueError("pointer_panels needs at least one panel")
    for sentences, weights, key, _ in panels:
        if torch.as_tensor(weights).shape != (len(sentences),):
            raise ValueError(
                f"weights must have one entry per sentence ({len(sentences)}); got "
                f"{tuple(torch.as_tensor(weights).shape)}"
            )
        if not 0 <= key < len(sentences):
            raise ValueError(f"key must index a sentence in [0, {len(sentences)}); got {key}")
    heights = [len(p[0]) + 1.2 for p in panels]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(MAX_WIDTH, 0.36 * sum(heights) + 0.2),
        gridspec_kw={"height_ratios": heights}, layout="constrained", squeeze=False,
    )  # fmt: skip
    alt = []
    for ax, (sentences, weights, key, title) in zip(axes[:, 0], panels):
        w = torch.as_tensor(weights).detach().float().cpu()
        rows = range(len(sentences))
        drawn = ax.barh(rows, w.numpy(), height=0.8, color=palette("sky blue"))
        drawn[key].set(facecolor=OKABE_ITO["orange"], edgecolor="black", hatch="//")
        for i, (text, value) in enumerate(zip(sentences, w.tolist())):
            ax.text(
                0.005, i, f"{value:.2f}  {text}", va="center", ha="left",
                bbox=dict(boxstyle="square,pad=0.1", facecolor="white", alpha=0.85, linewidth=0),
            )  # fmt: skip
        ax.set_xlim(0, 1)
        ax.set_ylim(len(sentences) - 0.5, -0.5)
        ax.set_yticks([])
        ax.set_title(tr(title, lang), loc="left")
        chosen = int(w.argmax())
        alt.append(
            f"{title}: weights {', '.join(f'{v:.2f}' for v in w.tolist())}; the largest on "
            f"sentence {chosen + 1} ({'the key' if chosen == key else 'not the key'}, which "
            f"is sentence {key + 1}, orange and hatched)"
        )
    axes[-1, 0].set_xlabel(tr("attention of the summary query", lang))
    describe(fig, True, "Horizontal bars, one per sentence. " + "; ".join(alt) + ".")
    return fig
