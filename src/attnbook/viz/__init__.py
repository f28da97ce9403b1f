"""Figures (pure functions: tensors in, a matplotlib figure out) and the views that wrap them.

* :mod:`~attnbook.viz.charts` — heat-maps, bars, masks, the steps of attention;
* :mod:`~attnbook.viz.head_plots` — one head, a layers x heads grid, a line view;
* :mod:`~attnbook.viz.diagrams` — architecture diagrams: attention, heads, the blocks, the whole
  encoder–decoder (chapters 2–5b);
* :mod:`~attnbook.viz.diagrams_decoding` — one step of the key/value cache, query heads sharing
  key/value heads (chapters 5b and 20);
* :mod:`~attnbook.viz.diagrams_efficient` — exact attention in tiles, with the online softmax's
  running state (chapter 9);
* :mod:`~attnbook.viz.diagrams_vision` — the Vision Transformer's input: patches, class token,
  positions (chapter 15);
* :mod:`~attnbook.viz.diagrams_lookup` — the soft lookup and masks on the scores (chapters 1–2);
* :mod:`~attnbook.viz.diagram_parts` — the canvas, boxes, arrows and role colours of every diagram;
* :mod:`~attnbook.viz.transformer_plots` — positional encodings and gradient norms (chapter 5);
* :mod:`~attnbook.viz.efficient_plots` — scaling plots and tile maps (chapters 9-10);
* :mod:`~attnbook.viz.style` — the book's figure style, alt text, the PNG renderer and the SVG one for
  diagrams;
* :mod:`~attnbook.viz.web` — figure switchers as HTML views (no kernel, no widget manager);
* :mod:`~attnbook.viz.attention_view` — the hover view of attention, drawn in the browser;
* :mod:`~attnbook.viz.explorer` — the head explorer, static and live;
* :mod:`~attnbook.viz.fonts` — a CJK font for Chinese labels;
* :mod:`~attnbook.viz.pointer` — a pointer over sentences (summarisation);
* :mod:`~attnbook.viz.patch_plots` — maps over an image's patches, a position-similarity grid (vision).

The chart functions are also importable from here: ``from attnbook import viz;
viz.heatmap(...)``.
"""

from attnbook.viz.charts import attention_steps, bars, heatmap, mask_image

__all__ = ["heatmap", "bars", "attention_steps", "mask_image"]
