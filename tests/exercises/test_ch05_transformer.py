"""The chapter 5 checkers accept right answers and name each typical mistake."""

from __future__ import annotations

import math

import pytest
import torch

from attnbook.exercises import (
    check_decoder_count,
    check_kv_rows,
    check_pre_ln_block,
    check_sinusoidal_encoding,
    check_transformer_schedule,
)


def sinusoidal(length: int, embed_dim: int) -> torch.Tensor:
    position = torch.arange(length)[:, None].float()
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, embed_dim, 2) / embed_dim)
    table = torch.zeros(length, embed_dim)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table


def sinusoidal_loops(length: int, embed_dim: int) -> list[list[float]]:
    """A plain-Python answer, returning nested lists: also right."""
    return [
        [
            math.sin(p / 10000 ** (j / embed_dim)) if j % 2 == 0
            else math.cos(p / 10000 ** ((j - 1) / embed_dim))
            for j in range(embed_dim)
        ]
        for p in range(length)
    ]  # fmt: skip


@pytest.mark.parametrize("answer", [sinusoidal, sinusoidal_loops])
def test_right_sinusoidal_answers_pass(answer) -> None:
    report = check_sinusoidal_encoding(answer)
    assert report.passed, str(report)


def concatenated_halves(length: int, embed_dim: int) -> torch.Tensor:
    table = sinusoidal(length, embed_dim)
    return torch.cat([table[:, 0::2], table[:, 1::2]], dim=1)


def swapped_sin_cos(length: int, embed_dim: int) -> torch.Tensor:
    table = sinusoidal(length, embed_dim)
    return table[:, [j + 1 if j % 2 == 0 else j - 1 for j in range(embed_dim)]]


def frequency_per_column(length: int, embed_dim: int) -> torch.Tensor:
    angle = torch.arange(length)[:, None] / 10000 ** (torch.arange(embed_dim) / embed_dim)
    table = angle.sin()
    table[:, 1::2] = angle[:, 1::2].cos()
    return table


def exponent_doubled(length: int, embed_dim: int) -> torch.Tensor:
    angle = torch.arange(length)[:, None] / 10000 ** (2 * torch.arange(0, embed_dim, 2) / embed_dim)
    table = torch.zeros(length, embed_dim)
    table[:, 0::2], table[:, 1::2] = angle.sin(), angle.cos()
    return table


def from_position_one(length: int, embed_dim: int) -> torch.Tensor:
    return sinusoidal(length + 1, embed_dim)[1:]


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (concatenated_halves, "all the sines first"),
        (swapped_sin_cos, "sine and cosine are swapped"),
        (frequency_per_column, "must share one frequency"),
        (exponent_doubled, "wavelengths grow too fast"),
        (from_position_one, "your rows start at position 1"),
        (lambda L, E: sinusoidal(L, E).T, "the table must be (10, 6); got (6, 10)"),
        (lambda L, E: sinusoidal(L, E).long(), "must be floating point"),
        (lambda L, E: sinusoidal(L, E) * 1.01, "entry (position"),
    ],
)
def test_sinusoidal_mistakes_are_named(answer, words: str) -> None:
    report = check_sinusoidal_encoding(answer)
    assert not report.passed
    assert words in str(report), str(report)


def test_sinusoidal_crash_is_reported_not_raised() -> None:
    def broken(length, embed_dim):
        raise ZeroDivisionError("oops")

    report = check_sinusoidal_encoding(broken)
    assert not report.passed and "raised ZeroDivisionError" in str(report)


def attend(block, h):
    return block.self_attn(h, h, h, need_weights=False)[0]


def pre_ln(block, x):
    x = x + block.dropout1(attend(block, block.norm1(x)))
    return x + block.dropout2(block.ff(block.norm2(x)))


def pre_ln_named(block, x):
    """Another right answer: the sublayers written out with their own names."""
    attention_out = block.dropout1(attend(block, block.norm1(x)))
    after_attention = x + attention_out
    feed_forward_out = block.dropout2(block.ff(block.norm2(after_attention)))
    return after_attention + feed_forward_out


@pytest.mark.parametrize("answer", [pre_ln, pre_ln_named])
def test_right_pre_ln_answers_pass(answer) -> None:
    report = check_pre_ln_block(answer)
    assert report.passed, str(report)


def dropout_over_the_sum(block, x):
    x = block.dropout1(x + attend(block, block.norm1(x)))
    return block.dropout2(x + block.ff(block.norm2(x)))


def no_dropout(block, x):
    x = x + attend(block, block.norm1(x))
    return x + block.ff(block.norm2(x))


def swapped_dropouts(block, x):
    x = x + block.dropout2(attend(block, block.norm1(x)))
    return x + block.dropout1(block.ff(block.norm2(x)))


def post_ln(block, x):
    x = block.norm1(x + attend(block, x))
    return block.norm2(x + block.ff(x))


def residual_of_normalised(block, x):
    h = block.norm1(x)
    h = h + attend(block, h)
    h = block.norm2(h)
    return h + block.ff(h)


def no_feed_forward(block, x):
    return x + attend(block, block.norm1(x))


def extra_final_norm(block, x):
    return block.norm2(pre_ln(block, x))


def swapped_norms(block, x):
    x = x + attend(block, block.norm2(x))
    return x + block.ff(block.norm1(x))


def in_place(block, x):
    x += attend(block, block.norm1(x))
    x += block.ff(block.norm2(x))
    return x


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (post_ln, "this is post-LN"),
        (residual_of_normalised, "the residual must carry the un-normalised x"),
        (no_feed_forward, "the feed-forward sublayer is missing"),
        (lambda b, x: x + b.ff(b.norm2(x)), "the attention sublayer is missing"),
        (extra_final_norm, "final layer norm inside the block"),
        (swapped_norms, "you swapped the norms"),
        (in_place, "changed its input x in place"),
        (dropout_over_the_sum, "not to the sum"),
        (no_dropout, "dropout1 and dropout2 are not applied"),
        (swapped_dropouts, "dropout1 goes with the attention"),
        (lambda b, x: pre_ln(b, x)[:, :1], "return the same shape"),
        (lambda b, x: pre_ln(b, x) + 0.1, "differs from the pre-LN block by up to 0.1"),
        (lambda b, x: b(x)[0], "you called the block itself"),
        (lambda b, x: b.forward(x)[0], "you called the block itself"),
    ],
)
def test_pre_ln_mistakes_are_named(answer, words: str) -> None:
    report = check_pre_ln_block(answer)
    assert not report.passed
    assert words in str(report), str(report)


@pytest.mark.parametrize(
    ("total", "attention", "fragment"),
    [
        (4_204_032, 1_050_624, "TWO attention layers"),
        (4_204_032, 2 * 4 * 512 * 512, "4 x 512 biases"),
        (4_204_032 - 3 * 1024, 2_101_248, "three layer norms"),
        (4_204_032 - 2_099_712, 2_101_248, "feed-forward network"),
    ],
)
def test_decoder_count_mistakes_are_named(total, attention, fragment) -> None:
    report = check_decoder_count(total, attention)
    assert not report.passed and fragment in str(report), str(report)


def test_the_decoder_count_by_formula_and_by_module_pass() -> None:
    from attnbook import DecoderBlock

    block = DecoderBlock(512, 8, 2048)
    by_module = sum(p.numel() for p in block.parameters())
    attention = sum(p.numel() for m in (block.self_attn, block.cross_attn) for p in m.parameters())
    assert check_decoder_count(by_module, attention).passed
    by_formula = 2 * (4 * 512**2 + 4 * 512) + (2 * 512 * 2048 + 2048 + 512) + 3 * 2 * 512
    assert check_decoder_count(by_formula, 2 * (4 * 512**2 + 4 * 512)).passed


def transformer_lr(step: int, d_model: int, warmup_steps: int) -> float:
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def test_right_schedule_passes() -> None:
    report = check_transformer_schedule(transformer_lr)
    assert report.passed, str(report)


@pytest.mark.parametrize(
    "answer, words",
    [
        (lambda s, d, w: d**-0.5 * min(s**-0.5, s * w**-0.5), "warmup_steps**-1.5"),
        (lambda s, d, w: min(s**-0.5, s * w**-1.5), "d_model**-0.5"),
        (lambda s, d, w: d**-0.5 * max(s**-0.5, s * w**-1.5), "MINIMUM"),
        (lambda s, d, w: transformer_lr(s + 1, d, w), "0-based"),
        (lambda s, d, w: 1e-3, "your rate is 0.001 at every step"),
        (lambda s, d, w: (d * w) ** -0.5, "your rate is 0.000698771 at every step"),
        (
            lambda s, d, w: transformer_lr(s, d, w) * (1.01 if s == 1 else 1),
            "at step 1 the rate should be",
        ),
        (lambda s, d, w: "fast", "return a number; got str"),
    ],
)
def test_schedule_mistakes_are_named(answer, words: str) -> None:
    report = check_transformer_schedule(answer)
    assert not report.passed
    assert words in str(report), str(report)


def kv_rows(T: int, S: int, num_layers: int, cached: bool) -> int:
    if cached:
        return num_layers * (T + S)
    return num_layers * (T * (T + 1) // 2 + T * S)


def test_right_kv_rows_pass() -> None:
    report = check_kv_rows(kv_rows)
    assert report.passed, str(report)


@pytest.mark.parametrize(
    "answer, words",
    [
        (lambda T, S, n, c: kv_rows(T, S, n, c) if c else n * (T * T + T * S), "T(T + 1)/2"),
        (lambda T, S, n, c: n * T if c else n * T * (T + 1) // 2, "cross-attention keys count"),
        (lambda T, S, n, c: n * (T + T * S) if c else kv_rows(T, S, n, c), "projected once"),
        (lambda T, S, n, c: kv_rows(T, S, 1, c), "num_layers"),
        (lambda T, S, n, c: 2 * kv_rows(T, S, n, c), "value projections see the same rows"),
        (lambda T, S, n, c: kv_rows(T + 1, S, n, c), "<s> is the first step's input"),
        (
            lambda T, S, n, c: kv_rows(T, S, n, c) if c else n * (T * (T - 1) // 2 + T * S),
            "not T(T - 1)/2",
        ),
        (lambda T, S, n, c: 7, "expected 18 rows; got 7"),
        (lambda T, S, n, c: 2.5, "whole number of rows"),
    ],
)
def test_kv_rows_mistakes_are_named(answer, words: str) -> None:
    report = check_kv_rows(answer)
    assert not report.passed
    assert words in str(report), str(report)


def memory_once(T: int, S: int, num_layers: int, cached: bool) -> int:
    """Uncached, but the memory projected only once: a slip, not a cache."""
    return kv_rows(T, S, num_layers, cached) if cached else num_layers * (T * (T + 1) // 2 + S)


def test_an_uncached_count_with_the_memory_once_is_diagnosed_not_blamed_on_layers() -> None:
    lines = str(check_kv_rows(memory_once)).splitlines()
    small = next(line for line in lines if "T = 4, S = 5, 2 layers, without" in line)
    large = next(line for line in lines if "T = 100, S = 100, 6 layers, without" in line)
    # At T = 4, S = 5, 2 layers the slip gives 30 rows, which is also one layer's right count:
    # the checker names both possibilities; at T = S = 100 only the memory slip fits.
    assert "memory again at every step" in small and "num_layers" in small, small
    assert "memory again at every step" in large and "num_layers" not in large, large
