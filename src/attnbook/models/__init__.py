"""The book's models, one module per chapter model.

* :mod:`~attnbook.models.handbuilt` — chapter 1: hand-built features, no training;
* :mod:`~attnbook.models.projections` — chapter 1: the same lookup with learned W_Q, W_K, W_V;
* :mod:`~attnbook.models.lookup_model` — chapter 3: one attention layer for the lookup task;
* :mod:`~attnbook.models.seq2seq` — chapter 5 (its last section): a complete encoder-decoder with a key/value cache;
* :mod:`~attnbook.models.detective` — chapters 6-8: the pointer model and its training recipe;
* :mod:`~attnbook.models.toy` — chapter 10: one layer of exact, local or linear attention;
* Part V, attention at work: :mod:`~attnbook.models.gru` — the no-attention GRU encoder-decoder
  baseline for translation; :mod:`~attnbook.models.reader` — a question that reads a story by
  cross-attention, and a GRU baseline; :mod:`~attnbook.models.extractive` — an extractive
  summariser whose pointer is an attention distribution; :mod:`~attnbook.models.vit` — a Vision
  Transformer and its MLP and CNN baselines.
"""
