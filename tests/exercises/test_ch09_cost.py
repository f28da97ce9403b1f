"""The chapter 9 checkers accept right answers and name the typical mistakes."""

import pytest
import torch

from attnbook.efficient import online_softmax_merge
from attnbook.exercises import (
    check_block_attention,
    check_causal_tiles,
    check_how_long,
    check_online_softmax_merge,
)

# ---- merge -------------------------------------------------------------------------------


def test_the_library_merge_is_refused():
    report = check_online_softmax_merge(online_softmax_merge)
    assert not report.passed and "calls online_softmax_merge" in str(report), str(report)


def test_adding_without_rescaling_is_named():
    report = check_online_softmax_merge(
        lambda a, b: (torch.maximum(a[0], b[0]), a[1] + b[1], a[2] + b[2])
    )
    assert not report.passed
    assert "without rescaling" in str(report)


def test_exponentiating_the_maximum_itself_is_named():
    def overflowing(a, b):
        m = torch.maximum(a[0], b[0])
        l = a[1] * torch.exp(a[0]) / torch.exp(m) + b[1] * torch.exp(b[0]) / torch.exp(m)
        acc = a[2] * torch.exp(a[0]) / torch.exp(m) + b[2] * torch.exp(b[0]) / torch.exp(m)
        return m, l, acc

    assert "overflow" in str(check_online_softmax_merge(overflowing))


def test_nan_for_two_empty_blocks_is_named():
    def unsafe(a, b):
        m = torch.maximum(a[0], b[0])
        alpha, beta = torch.exp(a[0] - m), torch.exp(b[0] - m)
        return m, alpha * a[1] + beta * b[1], alpha * a[2] + beta * b[2]

    report = check_online_softmax_merge(unsafe)
    assert not report.passed
    assert "two empty blocks gives NaN" in str(report)


def whole_tensor_special_case(a, b):
    """Wrong: decides emptiness once for the whole tensor, then uses the formulas as written."""
    if torch.isneginf(a[0]).all():
        return b
    if torch.isneginf(b[0]).all():
        return a
    m = torch.maximum(a[0], b[0])
    alpha, beta = torch.exp(a[0] - m), torch.exp(b[0] - m)
    return m, alpha * a[1] + beta * b[1], alpha * a[2] + beta * b[2]


def test_emptiness_decided_for_the_whole_tensor_fails_on_rows_empty_in_both_blocks():
    report = check_online_softmax_merge(whole_tensor_special_case)
    failed = [message for ok, message in report.lines if not ok]
    assert len(failed) == 1 and "decide per row" in failed[0], str(report)


def test_a_merge_wrong_on_ordinary_blocks_gets_no_empty_block_hint():
    report = str(check_online_softmax_merge(reversed_rescaling))
    assert "cannot check" in report
    assert "-inf - (-inf)" not in report and "rescale against 0" not in report


# ---- attention over key blocks -----------------------------------------------------------


def block_attention(q, k, v, block):
    q = q / q.size(-1) ** 0.5
    m = torch.full((q.size(0), 1), float("-inf"))
    l = torch.zeros(q.size(0), 1)
    acc = torch.zeros(q.size(0), v.size(-1))
    for s0 in range(0, k.size(0), block):
        s = q @ k[s0 : s0 + block].T
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p = torch.exp(s - m_new)
        alpha = torch.exp(m - m_new)
        l, acc, m = alpha * l + p.sum(-1, keepdim=True), alpha * acc + p @ v[s0 : s0 + block], m_new
    return acc / l


def test_a_correct_block_attention_passes():
    report = check_block_attention(block_attention)
    assert report.passed, str(report)


def block_loop(q, k, v, block, *, start=float("-inf"), stop=None):
    """Attention over key blocks, written by a learner: the running maximum starts at ``start``
    and the loop runs ``range(0, stop, block)`` (the right answer: -inf and S)."""
    q = q / q.size(-1) ** 0.5
    m = torch.full((q.size(0), 1), start)
    l, acc = torch.zeros(q.size(0), 1), torch.zeros(q.size(0), v.size(-1))
    for s0 in range(0, k.size(0) if stop is None else stop(k.size(0), block), block):
        s = q @ k[s0 : s0 + block].T
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p, alpha = torch.exp(s - m_new), torch.exp(m - m_new)
        l, acc, m = alpha * l + p.sum(-1, keepdim=True), alpha * acc + p @ v[s0 : s0 + block], m_new
    return acc / l


def zero_start(q, k, v, block):
    """The running maximum started at 0: scores far below 0 underflow to 0 / 0."""
    return block_loop(q, k, v, block, start=0.0)


def test_a_running_maximum_started_at_zero_is_named():
    report = check_block_attention(zero_start)
    failed = [message for ok, message in report.lines if not ok]
    assert len(failed) == 1 and "start the running maximum at -inf" in failed[0], str(report)


def test_no_running_maximum_is_named_for_very_negative_scores_too():
    def no_max(q, k, v, block):
        q = q / q.size(-1) ** 0.5
        l, acc = torch.zeros(q.size(0), 1), torch.zeros(q.size(0), v.size(-1))
        for s0 in range(0, k.size(0), block):
            p = torch.exp(q @ k[s0 : s0 + block].T)
            l, acc = l + p.sum(-1, keepdim=True), acc + p @ v[s0 : s0 + block]
        return acc / l

    failed = [m for ok, m in check_block_attention(no_max).lines if not ok]
    assert len(failed) == 2 and all("subtract the running maximum" in m for m in failed), failed


def test_missing_scale_is_named():
    report = check_block_attention(
        lambda q, k, v, b: block_attention(q * 2, k, v, b)
    )  # E = 4: sqrt(E) = 2
    assert "1 / sqrt(E)" in str(report)


def test_missing_rescaling_is_reported():
    def no_rescale(q, k, v, block):
        q = q / 2
        outs = [
            torch.softmax(q @ k[s0 : s0 + block].T, -1) @ v[s0 : s0 + block]
            for s0 in range(0, k.size(0), block)
        ]
        return sum(outs) / len(outs)

    report = check_block_attention(no_rescale)
    assert not report.passed
    assert "rescaled" in str(report)


# ---- linear attention ----------------------------------------------------------------------


# ---- the issues found by learners --------------------------------------------------------


def reversed_rescaling(a, b):
    m = torch.maximum(a[0], b[0])
    alpha, beta = torch.exp(m - a[0]), torch.exp(m - b[0])
    return m, alpha * a[1] + beta * b[1], alpha * a[2] + beta * b[2]


def test_rescaling_with_the_sign_reversed_is_named_not_blamed_on_shapes():
    report = str(check_online_softmax_merge(reversed_rescaling))
    assert "you used exp(m - m_block)" in report
    assert "wrong shape" not in report


def merge_by_hand(a, b):
    """Another right answer: rescale against the larger maximum with torch.where."""
    (m_a, l_a, acc_a), (m_b, l_b, acc_b) = a, b
    m = torch.where(m_a > m_b, m_a, m_b)
    safe = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    alpha, beta = (m_a - safe).exp(), (m_b - safe).exp()
    return m, alpha * l_a + beta * l_b, alpha * acc_a + beta * acc_b


def test_another_right_merge_passes():
    report = check_online_softmax_merge(merge_by_hand)
    assert report.passed, str(report)


def test_a_merge_that_edits_its_inputs_is_named():
    def in_place(a, b):
        out = online_softmax_merge(a, b)
        a[2].zero_()
        return out

    assert "changed its input state_a" in str(check_online_softmax_merge(in_place))


def test_a_block_attention_that_edits_its_query_is_named_and_the_rest_still_passes():
    def in_place(q, k, v, block):
        q /= q.size(-1) ** 0.5
        return block_attention(q * q.size(-1) ** 0.5, k, v, block)

    report = check_block_attention(in_place)
    failed = [message for ok, message in report.lines if not ok]
    assert len(failed) == 1 and "changed its input query" in failed[0], str(report)


def test_only_the_last_block_is_named():
    def last_only(q, k, v, block):
        start = (k.size(0) - 1) // block * block
        return torch.softmax(q @ k[start:].T / q.size(-1) ** 0.5, -1) @ v[start:]

    assert "only the last block counts" in str(check_block_attention(last_only))


def test_a_block_attention_with_sizes_written_in_fails():
    report = check_block_attention(
        lambda q, k, v, block: block_attention(q[:5], k[:11], v[:11], block)
    )
    assert not report.passed


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ((528, 32, 528 / 1024), None),
        ((528, 32, 0.516), None),
        ((496, 32, 0.484), "the diagonal tiles are computed too"),
        ((512, 32, 0.5), "not exactly half"),
        ((528, 528, 0.516), "only the tiles on the diagonal"),
        ((528, 32, 51.6), "not a percentage"),
    ],
)
def test_causal_tile_answers(answer, fragment):
    report = check_causal_tiles(*answer)
    if fragment is None:
        assert report.passed, str(report)
    else:
        assert not report.passed and fragment in str(report), str(report)


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ((20_066, 3_100_000), None),
        ((20_066, 3_143_680), None),
        ((28_377, 3_100_000), "TWO n x n tensors"),
        ((40_132, 3_100_000), "4 bytes"),
        ((20_066, 786_432), "about 3,14"),
        ((19_364, 3_100_000), "not 24 · 10⁹"),
        ((20_066, 2_927_000), "not 24 · 10⁹"),
    ],
)
def test_how_long_answers(answer, fragment):
    report = check_how_long(*answer)
    assert report.passed if fragment is None else (not report.passed and fragment in str(report)), (
        str(report)
    )


def block_attention_by_merging(q, k, v, block):
    """Another right answer: each block's state, folded with the library's merge."""
    q = q / q.size(-1) ** 0.5
    state = (
        torch.full((q.size(0), 1), float("-inf")),
        torch.zeros(q.size(0), 1),
        torch.zeros(q.size(0), v.size(-1)),
    )
    for s0 in range(0, k.size(0), block):
        s = q @ k[s0 : s0 + block].T
        m = s.amax(-1, keepdim=True)
        p = torch.exp(s - m)
        state = online_softmax_merge(state, (m, p.sum(-1, keepdim=True), p @ v[s0 : s0 + block]))
    return state[2] / state[1]


def test_another_right_block_attention_passes():
    report = check_block_attention(block_attention_by_merging)
    assert report.passed, str(report)
