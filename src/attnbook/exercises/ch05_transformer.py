"""Checkers for chapter 5's exercises: the sinusoidal table, a pre-LN encoder block, and a
decoder block's parameters.

* ``sinusoidal(length, embed_dim) -> (L, E)``, compared with
  :func:`attnbook.positional.sinusoidal_encoding`;
* ``pre_ln_forward(block, x) -> (N, L, E)``, the forward pass of a pre-LN encoder block written
  from the parts of an :class:`~attnbook.blocks.EncoderBlock`, compared with the block itself
  (calling the block's own ``forward`` is refused);
* ``check_decoder_count(total, attention)``, a decoder block's parameters counted by hand.

The checkers of the chapter's last section, the complete Transformer (``transformer_lr`` and
``kv_rows``), live in :mod:`attnbook.exercises.ch05b_complete`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from attnbook.blocks import DecoderBlock, EncoderBlock
from attnbook.exercises.report import LearnerError, Report, call, changed_inputs, library
from attnbook.i18n import N_, tr
from attnbook.positional import sinusoidal_encoding

__all__ = [
    "check_sinusoidal_encoding",
    "check_pre_ln_block",
    "check_decoder_count",
]

Sinusoidal = Callable[[int, int], Tensor]
BlockForward = Callable[[EncoderBlock, Tensor], Tensor]


def _sinusoidal_mistakes(length: int, E: int) -> dict[str, Tensor]:
    """Tables that typical wrong answers produce, each with the sentence that explains it."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]  # (L, 1)
    pairs = torch.arange(0, E, 2, dtype=torch.float64)  # (E/2,) the values 2i
    columns = torch.arange(E, dtype=torch.float64)  # (E,) every column index j
    right = sinusoidal_encoding(length, E, dtype=torch.float64)
    swapped = torch.empty_like(right)
    swapped[:, 0::2], swapped[:, 1::2] = right[:, 1::2], right[:, 0::2]
    every_column = pos / 10000 ** (columns / E)  # (L, E) a frequency per column, not per pair
    per_column = torch.where(columns.long() % 2 == 0, every_column.sin(), every_column.cos())
    double = pos / 10000 ** (2 * pairs / E)  # (L, E/2) exponent 4i/E: frequencies fall too fast
    too_fast = torch.empty_like(right)
    too_fast[:, 0::2], too_fast[:, 1::2] = double.sin(), double.cos()
    halves = torch.cat([right[:, 0::2], right[:, 1::2]], dim=1)  # (L, E)
    from_one = sinusoidal_encoding(length + 1, E, dtype=torch.float64)[1:]
    return {
        N_(
            "you put all the sines first and all the cosines after (as some codebases do); the "
            "paper interleaves them: sine in even columns 2i, cosine in odd columns 2i+1"
        ): halves,
        N_(
            "sine and cosine are swapped: even columns (2i) take the sine, odd columns the cosine"
        ): swapped,
        N_(
            "columns 2i and 2i+1 must share one frequency, 1 / 10000**(2i/E); you gave every "
            "column j its own, 1 / 10000**(j/E)"
        ): per_column,
        N_(
            "the exponent is 2i/E where 2i is the even column index (0, 2, 4, ...); you used "
            "2 * (2i) / E, so the wavelengths grow too fast"
        ): too_fast,
        N_(
            "positions start at 0, so row 0 is sin(0) = 0, cos(0) = 1; your rows start at "
            "position 1"
        ): from_one,
    }


def check_sinusoidal_encoding(sinusoidal: Sinusoidal) -> Report:
    """Run the reader's ``sinusoidal(length, embed_dim)`` and say what is right and wrong."""
    report = Report("sinusoidal", refused=library(sinusoidal_encoding))

    def shape() -> str | None:
        table = call(sinusoidal, 10, 6)
        try:  # nested lists of numbers are a table too
            table = torch.as_tensor(table)
        except (TypeError, ValueError, RuntimeError):
            return tr("return the table as a tensor; got {table_type}").format(
                table_type=type(table).__name__
            )
        if table.shape != (10, 6):
            return tr(
                "for length 10 and embed_dim 6 the table must be (10, 6); got {table_shape}"
            ).format(table_shape=tuple(table.shape))
        if not table.dtype.is_floating_point:
            return tr("the table must be floating point; got dtype {table_dtype}").format(
                table_dtype=table.dtype
            )
        return None

    def first_row() -> str | None:
        table = torch.as_tensor(call(sinusoidal, 3, 8), dtype=torch.float64)
        if table.shape != (3, 8):
            return tr("cannot check: the table has the wrong shape (see above)")
        row = table[0]
        expected = torch.tensor([0.0, 1.0] * 4, dtype=torch.float64)
        if row.shape == expected.shape and torch.allclose(row, expected, atol=1e-6):
            return None
        return tr(
            "position 0 must be [0, 1, 0, 1, ...] (sin 0, cos 0, ...); got {row_tolist}"
        ).format(row_tolist=row.tolist())

    def matches(length: int, E: int) -> Callable[[], str | None]:
        def case() -> str | None:
            table = torch.as_tensor(call(sinusoidal, length, E), dtype=torch.float64)
            expected = sinusoidal_encoding(length, E, dtype=torch.float64)
            if table.shape != expected.shape:
                return tr("wrong shape (see above)")
            if torch.allclose(table, expected, atol=1e-5):
                return None
            for explanation, wrong in _sinusoidal_mistakes(length, E).items():
                if torch.allclose(table, wrong, atol=1e-5):
                    return tr(explanation)
            worst = (table - expected).abs().argmax()
            pos, col = divmod(int(worst), E)
            return tr(
                "entry (position {pos}, column {col}) should be {value:.6f}; got "
                "{table_pos_col_item:.6f}"
            ).format(
                pos=pos,
                col=col,
                value=expected[pos, col].item(),
                table_pos_col_item=table[pos, col].item(),
            )

        return case

    report.run("returns a floating (length, embed_dim) table", shape)
    report.run("row 0 is sin(0), cos(0), sin(0), cos(0), ...", first_row)
    report.run("equals the paper's formula for 50 positions, embed_dim 16", matches(50, 16))
    report.run("equals the paper's formula for 7 positions, embed_dim 64", matches(7, 64))
    return report


def _block(seed: int = 0) -> EncoderBlock:
    """A small block in eval mode whose layer norms have non-trivial weights and biases."""
    torch.manual_seed(seed)
    block = EncoderBlock(16, 4, 32, dropout=0.0, norm_first=True).eval()
    with torch.no_grad():
        for norm in (block.norm1, block.norm2):
            norm.weight.normal_(1.0, 0.3)
            norm.bias.normal_(0.0, 0.3)
    return block


def _attend(block: EncoderBlock, h: Tensor) -> Tensor:
    return block.self_attn(h, h, h, need_weights=False)[0]


def _block_mistakes(block: EncoderBlock, x: Tensor) -> dict[str, Tensor]:
    a, f, n1, n2 = (lambda h: _attend(block, h)), block.ff, block.norm1, block.norm2
    post = n1(x + a(x))
    post = n2(post + f(post))
    h = n1(x)
    normalised_residual = h + a(h)
    normalised_residual = n2(normalised_residual) + f(n2(normalised_residual))
    h = x + a(n1(x))
    swapped = x + a(n2(x))
    swapped = swapped + f(n1(swapped))
    return {
        N_("this is post-LN: you normalise after adding the residual; in pre-LN each sublayer "
        "reads norm(x) and its output is added to the un-normalised x"): post,
        N_("the residual must carry the un-normalised x: you added the sublayer's output to "
        "norm(x) instead of to x"): normalised_residual,
        N_("the feed-forward sublayer is missing (x = x + ff(norm2(x)))"): h,
        N_("the attention sublayer is missing (x = x + self_attn(norm1(x)))"): x + f(n2(x)),
        N_("you applied a final layer norm inside the block; in a pre-LN stack it comes once, "
        "after the last block"): n2(h + f(n2(h))),
        N_("you swapped the norms: norm1 belongs to the attention, norm2 to the feed-forward"):
            swapped,
    }  # fmt: skip


class _Scale(nn.Module):
    """A deterministic stand-in for dropout: multiplies by a fixed factor, in any mode, so that
    where the learner applies dropout1 and dropout2 shows in the output."""

    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def forward(self, x: Tensor) -> Tensor:
        return x * self.factor


def _with_marked_dropout(block: EncoderBlock) -> EncoderBlock:
    block.dropout1, block.dropout2 = _Scale(0.5), _Scale(0.25)
    return block


def _dropout_mistakes(block: EncoderBlock, x: Tensor) -> dict[str, Tensor]:
    a, f, n1, n2 = (lambda h: _attend(block, h)), block.ff, block.norm1, block.norm2
    d1, d2 = block.dropout1, block.dropout2
    over_sum = d1(x + a(n1(x)))
    over_sum = d2(over_sum + f(n2(over_sum)))
    none = x + a(n1(x))
    none = none + f(n2(none))
    swapped = x + d2(a(n1(x)))
    swapped = swapped + d1(f(n2(swapped)))
    before = x + a(d1(n1(x)))
    before = before + f(d2(n2(before)))
    return {
        N_(
            "dropout belongs to the sublayer's output before the residual addition "
            "(x + dropout(sublayer(norm(x)))), not to the sum"
        ): over_sum,
        N_("dropout1 and dropout2 are not applied (in training they must be)"): none,
        N_("dropout1 goes with the attention sublayer, dropout2 with the feed-forward"): swapped,
        N_("dropout acts on the sublayer's OUTPUT, not on its input"): before,
    }


class _BlockForwardCalled(Exception):
    """Raised when the learner calls the block itself instead of its parts."""


_CALLED_THE_BLOCK = N_(
    "write the block from its parts (norm1, self_attn, ff, norm2, dropout1, dropout2): "
    "you called the block itself (block(x) or block.forward), which runs the library's "
    "forward, not yours"
)


def _forbid_forward(block: EncoderBlock) -> EncoderBlock:
    """Make ``block(x)`` and ``block.forward(x)`` raise (the instance attribute shadows the
    method, and survives the deep copy that :func:`call` makes)."""

    def forward(*args: object, **kwargs: object) -> None:
        raise _BlockForwardCalled(_CALLED_THE_BLOCK)

    block.forward = forward  # type: ignore[method-assign]
    return block


def _run_on_parts(pre_ln_forward: BlockForward, block: EncoderBlock, x: Tensor) -> object:
    """The learner's output with the block's own forward switched off; raises
    :class:`_BlockForwardCalled` if they called it."""
    try:
        return call(pre_ln_forward, _forbid_forward(block), x)
    except LearnerError as exc:
        if isinstance(exc.original, _BlockForwardCalled):
            raise exc.original from None
        raise


def check_pre_ln_block(pre_ln_forward: BlockForward) -> Report:
    """Run the reader's ``pre_ln_forward(block, x)`` and compare it with a pre-LN block."""
    report = Report("pre_ln_forward")

    def matches(N: int, L: int, seed: int) -> Callable[[], str | None]:
        def case() -> str | None:
            block = _block(seed)
            x = torch.randn(N, L, 16, generator=torch.Generator().manual_seed(seed))
            with torch.no_grad():
                expected, _ = block(x)
                try:
                    output = _run_on_parts(pre_ln_forward, block, x)
                except _BlockForwardCalled:
                    return tr(_CALLED_THE_BLOCK)
                if not isinstance(output, Tensor):
                    return tr("return the block's output tensor; got {output_type}").format(
                        output_type=type(output).__name__
                    )
                if output.shape != expected.shape:
                    return tr(
                        "for x of shape {N_L_16} return the same shape; got {output_shape}"
                    ).format(N_L_16=(N, L, 16), output_shape=tuple(output.shape))
                if torch.allclose(output, expected, atol=1e-5):
                    return None
                for explanation, wrong in _block_mistakes(block, x).items():
                    if torch.allclose(output, wrong, atol=1e-5):
                        return tr(explanation)
            error = (output - expected).abs().max().item()
            return tr("differs from the pre-LN block by up to {error:.3g}").format(error=error)

        return case

    def dropout_in_place() -> str | None:
        block = _with_marked_dropout(_block(4))
        x = torch.randn(2, 6, 16, generator=torch.Generator().manual_seed(4))
        with torch.no_grad():
            expected, _ = block(x)
            try:
                output = _run_on_parts(pre_ln_forward, block, x)
            except _BlockForwardCalled:
                return tr(_CALLED_THE_BLOCK)
            if not isinstance(output, Tensor) or output.shape != expected.shape:
                return tr("cannot check: wrong output (see above)")
            if torch.allclose(output, expected, atol=1e-5):
                return None
            for explanation, wrong in _dropout_mistakes(block, x).items():
                if torch.allclose(output, wrong, atol=1e-5):
                    return tr(explanation)
        return tr(
            "with dropout1 = x0.5 and dropout2 = x0.25 the output differs from the pre-LN block"
        )

    def leaves_input_alone() -> str | None:
        block = _block(3)
        x = torch.randn(2, 4, 16, generator=torch.Generator().manual_seed(3))
        with torch.no_grad():
            return changed_inputs(pre_ln_forward, ("block", "x"), block, x)

    report.run("one sequence of 5 tokens", matches(1, 5, seed=1))
    report.run("a batch of 3 sequences of 7 tokens", matches(3, 7, seed=2))
    report.run(
        "dropout1 and dropout2 in their places (marked with fixed factors)", dropout_in_place
    )
    report.run("does not modify its input", leaves_input_alone)
    return report


def check_decoder_count(total: int, attention: int) -> Report:
    """Check the parameters of a decoder block (E = 512, H = 8, F = 2048) and of its two
    attention layers, counted by hand."""
    report = Report(N_("decoder block parameters"))
    block = DecoderBlock(512, 8, 2048, device="meta")
    true_total = sum(p.numel() for p in block.parameters())
    true_attention = sum(
        p.numel() for m in (block.self_attn, block.cross_attn) for p in m.parameters()
    )

    def attention_case() -> str | None:
        if attention == true_attention:
            return None
        if attention == true_attention // 2:
            return tr(
                "a decoder block has TWO attention layers: self-attention and cross-attention"
            )
        if attention == 2 * 4 * 512 * 512:
            return tr("each attention layer also has 4 x 512 biases")
        return tr("expected {true_attention:,}, got {attention:,}").format(
            true_attention=true_attention, attention=attention
        )

    def total_case() -> str | None:
        if total == true_total:
            return None
        ff = 512 * 2048 + 2048 + 2048 * 512 + 512
        if total == true_total - 3 * 2 * 512:
            return tr("the three layer norms (a weight and a bias of 512 each) are missing")
        if total == true_total - 2 * 512:
            return tr("a decoder block has three layer norms, one per sublayer")
        if total == true_total - ff:
            return tr(
                "the feed-forward network (512 x 2048 and 2048 x 512, with biases) is missing"
            )
        if total == true_total - 2048 - 512:
            return tr("the feed-forward network's biases (2048 and 512) are missing")
        return tr("expected {true_total:,}, got {total:,}").format(
            true_total=true_total, total=total
        )

    report.run("the two attention layers", attention_case)
    report.run("the whole block", total_case)
    return report
