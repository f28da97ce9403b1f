"""attnbook: the small, tested attention library behind the book.

Every chapter imports from here; the book never keeps a second copy of this code.

The core — one concept per module, depending on nothing else in the package:
:mod:`~attnbook.attention` (scaled dot-product attention), :mod:`~attnbook.masks`,
:mod:`~attnbook.mha` (multi-head attention), :mod:`~attnbook.positional`,
:mod:`~attnbook.blocks` (encoder and decoder blocks) and :mod:`~attnbook.transformer` (stacks).
Around it: :mod:`~attnbook.interop` (weights to and from PyTorch), :mod:`~attnbook.efficient`,
:mod:`~attnbook.tasks`, :mod:`~attnbook.models`, :mod:`~attnbook.train`,
:mod:`~attnbook.checkpoint`, :mod:`~attnbook.interp`, :mod:`~attnbook.measure`,
:mod:`~attnbook.viz` and :mod:`~attnbook.exercises` (one checker module per chapter).
"""

from attnbook.attention import scaled_dot_product_attention
from attnbook.blocks import DecoderBlock, EncoderBlock
from attnbook.mha import MultiHeadAttention, merge_heads, split_heads
from attnbook.positional import PositionalEncoding, sinusoidal_encoding
from attnbook.transformer import Decoder, Encoder

__all__ = [
    "scaled_dot_product_attention",
    "MultiHeadAttention",
    "split_heads",
    "merge_heads",
    "sinusoidal_encoding",
    "PositionalEncoding",
    "EncoderBlock",
    "DecoderBlock",
    "Encoder",
    "Decoder",
]
__version__ = "0.1.0"
