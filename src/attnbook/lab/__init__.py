"""The lab: a small Transformer with Part VII's switches, and the tasks its experiments use.

:mod:`~attnbook.lab.lab_model` (the model and its loss; its attention is the core
:class:`attnbook.mha.MultiHeadAttention` with rotary/ALiBi positions, per-head windows, grouped
key/value heads, query-key normalisation and a configurable scale),
:mod:`~attnbook.lab.lab_tasks` (synthetic sequence tasks), :mod:`~attnbook.lab.tuning`
(distillation, attention transfer, head diversity and supervision) and
:mod:`~attnbook.lab.decoding` (decoding with a key/value cache, grouped heads, a window and sinks).

For a language model on real text: :mod:`~attnbook.lab.text` (a byte-level BPE or a character
tokenizer learned from the text, and windows of the token stream to train on) and
:mod:`~attnbook.lab.ngram` (the counting baselines it must beat: unigram, and n-grams with
interpolated Kneser-Ney smoothing).
"""
