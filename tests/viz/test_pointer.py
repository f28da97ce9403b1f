"""The pointer figure: one bar per sentence, the key marked, alt text from the data."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
import torch

from attnbook.viz.pointer import pointer_panels
from attnbook.viz.style import alt_text


def test_one_panel_per_paragraph_and_alt_text_names_the_choice():
    panels = [
        (["a b .", "c d ."], torch.tensor([0.2, 0.8]), 1, "first"),
        (["e .", "f .", "g ."], torch.tensor([0.5, 0.3, 0.2]), 2, "second"),
    ]
    fig = pointer_panels(panels)
    assert len(fig.axes) == 2
    text = alt_text(fig)
    assert "first: weights 0.20, 0.80" in text and "not the key" in text
    plt.close(fig)


def test_bad_panels_are_rejected():
    with pytest.raises(ValueError, match="one entry per sentence"):
        pointer_panels([(["a", "b"], torch.ones(3), 0, "")])
    with pytest.raises(ValueError, match="key"):
        pointer_panels([(["a", "b"], torch.ones(2), 2, "")])
    with pytest.raises(ValueError, match="at least one"):
        pointer_panels([])
