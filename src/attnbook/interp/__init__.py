"""Interpretability: what heads attend to, and what the model loses without them.

* :mod:`~attnbook.interp.heads` — per-head roles, entropy, antecedent hits, importance by
  ``head_mask``, pruning curves (chapters 7-8).
* :mod:`~attnbook.interp.patching` — activation patching of the residual stream from a
  counterfactual sentence, and attention knockout of chosen edges, by forward hooks (chapter 7).
* :mod:`~attnbook.interp.ablation` — zero, mean and joint ablation of heads by forward pre-hooks
  on ``out_proj``; greedy joint removal and needed / redundant / dead verdicts; token erasure
  (chapter 8).
* Part V: :mod:`~attnbook.interp.alignment` — cross-attention against a reference alignment
  (translation); :mod:`~attnbook.interp.patches` — a Vision Transformer's attention over image
  patches; :mod:`~attnbook.interp.rollout` — attention rollout;
* :mod:`~attnbook.interp.roles` — head roles of a pretrained model over padded batches ([CLS],
  [SEP] and punctuation sinks, previous/next token, entropy, coreference hits with bootstrap
  intervals), and what switching heads off does to sentence similarity (Part VI).
"""
