"""The diagnosis kit: measurements a reader runs on their own model when attention misbehaves.

:mod:`~attnbook.diagnose.heads` (how spread out each head's weights are, how much goes to one
key, how much to a sink), :mod:`~attnbook.diagnose.ablation` (dead and redundant heads, by
switching heads off alone and together) and :mod:`~attnbook.diagnose.monitors` (gradient norms
and attention-logit growth during training).
"""
