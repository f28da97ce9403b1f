"""The lab: a small Transformer with Part VII's switches, and the tasks its experiments use.

:mod:`~attnbook.lab.attention` (self-attention with rotary/ALiBi positions, per-head windows,
grouped key/value heads, query-key normalisation, a configurable scale), :mod:`~attnbook.lab.model`
(the model and its loss) and :mod:`~attnbook.lab.tasks` (synthetic sequence tasks).
"""
