"""Interpretability: what heads attend to, and what the model loses without them.

* :mod:`~attnbook.interp.head_stats` — per-head statistics of any attention weights: entropy
  (also as a fraction of uniform's), the largest weight, the share on a sink (chapters 8, 19).
* :mod:`~attnbook.interp.coref_heads` — where the detective's heads look: the pronoun's row, the
  antecedent, the token before or after, punctuation (chapters 7-8).
* :mod:`~attnbook.interp.ablation` — switching heads off, one API with two strategies: by the
  model's ``head_mask`` or by forward pre-hooks on ``out_proj`` (zero or mean ablation);
  ``metric(heads)`` for any evaluation; token erasure (chapters 8, 18-19).
* :mod:`~attnbook.interp.redundancy` — needed, redundant or dead: costs alone, in pairs and
  removed together, pruning curves, fresh weights for dead heads (chapters 8, 19).
* :mod:`~attnbook.interp.patching` — activation patching of the residual stream from a
  counterfactual sentence, and attention knockout of chosen edges, by forward hooks (chapter 7).
* :mod:`~attnbook.interp.stream_ablation` — mean ablation of one position's residual stream at
  every depth (chapter 20).
* Part V: :mod:`~attnbook.interp.alignment` — cross-attention against a reference alignment
  (translation); :mod:`~attnbook.interp.image_patches` — a Vision Transformer's attention over
  image patches; :mod:`~attnbook.interp.rollout` — attention rollout.
* :mod:`~attnbook.interp.roles` — head roles of a pretrained model over padded batches ([CLS],
  [SEP] and punctuation sinks, previous/next token, entropy, coreference hits with bootstrap
  intervals), and what switching heads off does to sentence similarity (Part VI).
"""
