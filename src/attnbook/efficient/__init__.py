"""Efficient attention: exact attention in linear memory, and three approximations.

* :mod:`~attnbook.efficient.chunked` — exact attention in blocks with the online softmax;
* :mod:`~attnbook.efficient.recompute` — its backward pass in linear memory (FlashAttention's);
* :mod:`~attnbook.efficient.local` — sliding-window attention, as a mask and as a band;
* :mod:`~attnbook.efficient.lowrank` — Linformer-style projection of keys and values;
* :mod:`~attnbook.efficient.linear` — linear attention (elu + 1), parallel and recurrent;
* :mod:`~attnbook.efficient.checkpointing` — gradient checkpointing of any layer;
"""

from attnbook.efficient.checkpointing import Checkpointed
from attnbook.efficient.chunked import chunked_attention, online_softmax_merge
from attnbook.efficient.linear import (
    elu_feature_map,
    linear_attention,
    linear_attention_recurrent,
    linear_attention_weights,
)
from attnbook.efficient.local import local_attention, local_mask
from attnbook.efficient.lowrank import lowrank_attention, pooling_projection, random_projection
from attnbook.efficient.recompute import ChunkedAttention

__all__ = [
    "Checkpointed",
    "ChunkedAttention",
    "chunked_attention",
    "online_softmax_merge",
    "elu_feature_map",
    "linear_attention",
    "linear_attention_recurrent",
    "linear_attention_weights",
    "local_attention",
    "local_mask",
    "lowrank_attention",
    "pooling_projection",
    "random_projection",
]
