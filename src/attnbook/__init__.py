"""attnbook: the small, tested attention library behind the book.

Every chapter imports from here; the book never keeps a second copy of this code.
"""

from attnbook.attention import scaled_dot_product_attention
from attnbook.mha import MultiHeadAttention

__all__ = ["scaled_dot_product_attention", "MultiHeadAttention"]
__version__ = "0.1.0"
