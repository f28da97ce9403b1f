"""What attention costs: floating-point operations and the memory of the weights.

Counting convention (the one :class:`torch.utils.flop_counter.FlopCounterMode` uses): a matrix
product of an (m, k) by a (k, n) matrix is ``m * k * n`` multiply-adds, counted as
``2 * m * k * n`` FLOPs. Only the matrix products are counted; the scaling, the softmax, the
biases and the masks add work proportional to the size of their tensors, which is small next to
the products for any realistic size.

Multi-head attention has two parts with different costs:

* the **projections** (query, key, value and output, four ``nn.Linear`` layers) cost
  ``O(n * E**2)``: linear in the sequence length n;
* the **attention core** (``Q K^T`` and ``weights @ V`` in every head) costs ``O(n**2 * E)``:
  quadratic in n, and it forms one (L, S) weight matrix per head.

For self-attention with L = S = n the core catches up with the projections at n = 2E; below
that the projections dominate. :func:`crossover_length` finds this point from the two formulas.

A third cost is **memory traffic**: the numbers moved between a large slow memory (a GPU's HBM,
a CPU's main memory) and a fast one of limited size M (on-chip SRAM, a cache). In the IO model
of Dao et al. (2022), standard attention moves Theta(n d + n**2) numbers per head and tiled
attention (FlashAttention) Theta(n**2 d**2 / M). :func:`naive_attention_traffic` and
:func:`tiled_attention_traffic` count them for the two algorithms of that paper (the tiled count
leaves out the writes that initialise the output and the statistics), and
:func:`cpu_cache_sizes` reads this CPU's caches, the fast memories a CPU has.

Shape legend: N batch, L target (query) length, S source (key) length, E embedding size,
H heads, D = E / H head size.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

__all__ = [
    "counted_flops",
    "counted_rows",
    "attention_flops",
    "projection_flops",
    "attention_weights_bytes",
    "crossover_length",
    "naive_attention_traffic",
    "tiled_attention_traffic",
    "cpu_cache_sizes",
]


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")


def _check_heads(embed_dim: int, num_heads: int) -> None:
    _check_positive(embed_dim=embed_dim, num_heads=num_heads)
    if embed_dim % num_heads != 0:
        raise ValueError(
            f"embed_dim must be a multiple of num_heads; got embed_dim={embed_dim} "
            f"and num_heads={num_heads}"
        )


def attention_flops(n_query: int, n_key: int, embed_dim: int, num_heads: int = 1) -> int:
    """FLOPs of the attention core for one sequence: ``Q K^T`` and ``weights @ V``, all heads.

    Each head multiplies an (L, D) by a (D, S) matrix and an (L, S) by an (S, D) matrix:
    ``2 * L * S * D`` multiply-adds, ``4 * L * S * D`` FLOPs. Over H heads with D = E / H that is
    ``4 * L * S * E``, whatever the number of heads.

    Args:
        n_query: L, the number of queries.
        n_key: S, the number of keys (and values).
        embed_dim: E, the model size, split over the heads.
        num_heads: H; must divide ``embed_dim``.

    Returns:
        the FLOP count (multiply-adds counted as 2).
    """
    _check_positive(n_query=n_query, n_key=n_key)
    _check_heads(embed_dim, num_heads)
    head_dim = embed_dim // num_heads
    per_head = 2 * n_query * head_dim * n_key + 2 * n_query * n_key * head_dim
    return num_heads * per_head


def projection_flops(
    n_query: int,
    n_key: int,
    embed_dim: int,
    kdim: int | None = None,
    vdim: int | None = None,
) -> int:
    """FLOPs of the four projections of multi-head attention for one sequence.

    The query and output projections map L vectors E -> E; the key and value projections map
    S vectors kdim -> E and vdim -> E. For self-attention (L = S = n, kdim = vdim = E) this is
    ``8 * n * E**2``. The number of heads does not enter: the heads share these four layers.

    Args:
        n_query: L.
        n_key: S.
        embed_dim: E.
        kdim: feature size of the keys before projection; defaults to ``embed_dim``.
        vdim: feature size of the values before projection; defaults to ``embed_dim``.

    Returns:
        the FLOP count (multiply-adds counted as 2; biases not counted).
    """
    kdim = embed_dim if kdim is None else kdim
    vdim = embed_dim if vdim is None else vdim
    _check_positive(n_query=n_query, n_key=n_key, embed_dim=embed_dim, kdim=kdim, vdim=vdim)
    query_and_output = 2 * (2 * n_query * embed_dim * embed_dim)
    key_and_value = 2 * n_key * kdim * embed_dim + 2 * n_key * vdim * embed_dim
    return query_and_output + key_and_value


def attention_weights_bytes(
    n_query: int,
    n_key: int,
    num_heads: int = 1,
    batch_size: int = 1,
    dtype: torch.dtype = torch.float32,
) -> int:
    """Bytes needed to hold the attention weights: one (L, S) matrix per head and sequence.

    This is the memory that grows as ``n**2``; an implementation that materialises the
    weights (and autograd, which keeps them for the backward pass) needs at least this much.

    Args:
        n_query: L.
        n_key: S.
        num_heads: H.
        batch_size: N.
        dtype: element type of the weights.

    Returns:
        ``N * H * L * S * bytes_per_element``.
    """
    _check_positive(n_query=n_query, n_key=n_key, num_heads=num_heads, batch_size=batch_size)
    element = torch.empty((), dtype=dtype).element_size()
    return batch_size * num_heads * n_query * n_key * element


def crossover_length(embed_dim: int, num_heads: int = 1) -> int:
    """The shortest self-attention length n at which the core costs at least the projections.

    Found by bisection on :func:`attention_flops` and :func:`projection_flops` (L = S = n), so it
    follows the formulas rather than restating their algebra (which gives n = 2E).

    Args:
        embed_dim: E.
        num_heads: H; must divide ``embed_dim`` (it does not change the answer).

    Returns:
        the smallest n with ``attention_flops(n, n, E, H) >= projection_flops(n, n, E)``.
    """
    _check_heads(embed_dim, num_heads)

    def core_wins(n: int) -> bool:
        return attention_flops(n, n, embed_dim, num_heads) >= projection_flops(n, n, embed_dim)

    low, high = 1, 1
    while not core_wins(high):
        low, high = high, 2 * high
    while low < high:  # invariant: core_wins(high); the answer lies in [low, high]
        middle = (low + high) // 2
        if core_wins(middle):
            high = middle
        else:
            low = middle + 1
    return high


def counted_flops(fn: Callable[[], object]) -> int:
    """The FLOPs of the matrix products that ``fn()`` runs, counted by PyTorch as they happen.

    Unlike a clock, the count is the same on every machine, so a notebook can assert on it.
    It sees only operations run in the calling thread (run multi-threaded code with one worker)
    and only those that :class:`~torch.utils.flop_counter.FlopCounterMode` knows: PyTorch's
    fused CPU kernel for ``scaled_dot_product_attention``, for example, counts as 0.
    """
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def counted_rows(
    modules: Mapping[str, list[nn.Module]], fn: Callable[[], object]
) -> dict[str, int]:
    """How many rows (vectors) each group of ``modules`` received while ``fn()`` ran.

    A forward hook adds the number of vectors in every call's first input, ``N * L`` for an
    (N, L, E) input, to its group's total. Counting the rows a projection sees tells caching
    from recomputing, on every machine alike (unlike a clock).

    Args:
        modules: group name -> the modules counted together (e.g. every layer's ``k_proj``).
        fn: the work to count; its result is discarded.

    Returns:
        group name -> rows.
    """
    rows = dict.fromkeys(modules, 0)

    def counter(name: str) -> Callable[..., None]:
        def hook(module: nn.Module, inputs: tuple, output: object) -> None:
            rows[name] += inputs[0].shape[:-1].numel()  # N * L vectors of size E

        return hook

    handles = [m.register_forward_hook(counter(name)) for name, ms in modules.items() for m in ms]
    try:
        fn()
    finally:
        for handle in handles:
            handle.remove()
    return rows


def _element_size(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def naive_attention_traffic(n: int, head_dim: int, dtype: torch.dtype = torch.float32) -> int:
    """Bytes that standard attention moves between slow and fast memory, for one head-batch.

    Standard attention (Algorithm 0 of Dao et al. 2022) reads Q and K and writes the (n, n)
    scores S; reads S and writes the weights P; reads P and V and writes the (n, d) output:
    ``4 n d + 4 n**2`` numbers, Theta(n d + n**2) whatever the size of the fast memory.

    Args:
        n: sequence length (queries = keys).
        head_dim: d, the size of a query, key and value vector.
        dtype: element type of every tensor moved.

    Returns:
        the bytes read and written.
    """
    _check_positive(n=n, head_dim=head_dim)
    return (4 * n * head_dim + 4 * n * n) * _element_size(dtype)


def tiled_attention_traffic(
    n: int, head_dim: int, fast_memory: int, dtype: torch.dtype = torch.float32
) -> int:
    """Bytes that tiled attention (FlashAttention) moves between slow and fast memory, one
    head-batch, when the fast memory holds ``fast_memory`` bytes.

    FlashAttention's forward pass (Algorithm 1 of Dao et al. 2022) keeps a block of
    ``Bc = M / (4 d)`` keys and values in fast memory (M in numbers; rounded down here, so that
    four blocks of ``Bc`` rows fit) and, for each of the ``Tc = ceil(n / Bc)`` such blocks, streams
    every query block through: it reads Q and the running output O, l and m (one number each per
    query) and writes O, l and m back. K and V are read once:
    ``2 n d + Tc (3 n d + 4 n)`` numbers, Theta(n**2 d**2 / M) (the paper's Theorem 2). The
    query block size does not change the count. Not counted: the ``n d + 2 n`` numbers that
    initialise O, l and m in slow memory before the loop (line 2 of Algorithm 1); they add a
    term linear in n and change no order of growth.

    With ``M >= 4 d**2`` numbers (so ``Bc >= d``) this is at most
    :func:`naive_attention_traffic` for every ``n >= d + 2`` (for ``d >= 8``); at ``n = d + 1``
    with ``M = 4 d**2``, two passes over Q and O cost slightly more than the standard algorithm.

    Args:
        n: sequence length (queries = keys).
        head_dim: d.
        fast_memory: M in bytes, the size of the fast memory; it must hold at least four rows
            of d numbers.
        dtype: element type of every tensor moved.

    Returns:
        the bytes read and written.

    Raises:
        ValueError: a non-positive argument, or ``fast_memory`` too small for one block.
    """
    _check_positive(n=n, head_dim=head_dim, fast_memory=fast_memory)
    element = _element_size(dtype)
    key_block = fast_memory // element // (4 * head_dim)  # Bc: rows of K, V, Q, O that fit
    if key_block < 1:
        raise ValueError(
            f"fast_memory must hold four rows of head_dim={head_dim} numbers of {element} bytes "
            f"({4 * head_dim * element} bytes); got fast_memory={fast_memory}"
        )
    passes = -(-n // key_block)  # Tc = ceil(n / Bc): each pass streams Q, O, l and m through
    return (2 * n * head_dim + passes * (3 * n * head_dim + 4 * n)) * element


_CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache"
_SIZE_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}


def cpu_cache_sizes(cache_dir: str | os.PathLike[str] = _CACHE_DIR) -> dict[str, int]:
    """The caches of the first CPU core as Linux reports them: name -> size in bytes.

    Names are ``"L1d"``, ``"L1i"`` (data and instruction), ``"L2"``, ``"L3"``; a cache shared by
    several cores (usually L3; on a virtual machine possibly with other machines' cores) is
    reported at its full size. Read at run time, so the answer belongs to the machine that runs
    it; an empty dict where Linux's ``/sys`` does not describe the caches.

    Args:
        cache_dir: the directory holding one ``index*`` folder per cache (a fake one in tests).
    """
    sizes: dict[str, int] = {}
    for index in sorted(Path(cache_dir).glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        unit = _SIZE_UNITS.get(size[-1:].upper(), 1)
        digits = size[:-1] if size[-1:].upper() in _SIZE_UNITS else size
        if not digits.isdigit() or not level.isdigit():
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        sizes[f"L{level}{suffix}"] = int(digits) * unit
    return sizes
