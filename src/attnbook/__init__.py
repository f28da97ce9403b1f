"""attnbook: the small, tested attention library behind the book.

Every chapter imports from here; the book never keeps a second copy of this code.
"""

from attnbook.attention import scaled_dot_product_attention
from attnbook.mha import MultiHeadAttention
from attnbook.positional import PositionalEncoding, sinusoidal_encoding
from attnbook.transformer import Decoder, DecoderBlock, Encoder, EncoderBlock

__all__ = [
    "scaled_dot_product_attention",
    "MultiHeadAttention",
    "sinusoidal_encoding",
    "PositionalEncoding",
    "EncoderBlock",
    "DecoderBlock",
    "Encoder",
    "Decoder",
]
__version__ = "0.1.0"
