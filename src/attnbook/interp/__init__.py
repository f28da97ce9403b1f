"""Interpretability: what heads attend to, and what the model loses without them.

* :mod:`~attnbook.interp.heads` — per-head roles, entropy, antecedent hits, importance by
  ``head_mask``, pruning curves (chapters 7-8).
"""
