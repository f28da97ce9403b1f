"""The chapter 10 checker accepts the right answer and names the typical mistakes."""

import pytest
import torch
import torch.nn.functional as F

from attnbook.exercises import check_linear_attention, check_state_bytes, check_window_layers


def linear(q, k, v):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    return (phi_q @ (phi_k.T @ v)) / (phi_q @ phi_k.sum(0, keepdim=True).T)


def test_a_correct_linear_attention_passes():
    report = check_linear_attention(linear)
    assert report.passed, str(report)


def test_quadratic_form_is_caught_by_counting_flops():
    def quadratic(q, k, v):
        w = (F.elu(q) + 1) @ (F.elu(k) + 1).T
        return (w / w.sum(-1, keepdim=True)) @ v

    report = check_linear_attention(quadratic)
    assert not report.passed
    assert "an (L, S) matrix product" in str(report)


def test_missing_normaliser_is_named():
    report = check_linear_attention(lambda q, k, v: (F.elu(q) + 1) @ ((F.elu(k) + 1).T @ v))
    assert "normaliser" in str(report)


def test_softmax_attention_is_named():
    report = check_linear_attention(lambda q, k, v: torch.softmax(q @ k.T / 2, -1) @ v)
    assert "that is softmax attention" in str(report)


def with_einsum(q, k, v):
    """Another right answer: einsum, summing over the keys first."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    kv = torch.einsum("se,sv->ev", phi_k, v)
    return (
        torch.einsum("le,ev->lv", phi_q, kv) / torch.einsum("le,e->l", phi_q, phi_k.sum(0))[:, None]
    )


def test_another_right_linear_attention_passes():
    report = check_linear_attention(with_einsum)
    assert report.passed, str(report)


def test_a_quadratic_form_built_by_broadcasting_is_caught():
    def broadcast(q, k, v):
        w = ((F.elu(q) + 1)[:, None, :] * (F.elu(k) + 1)[None, :, :]).sum(-1)  # (L, S), no matmul
        return (w[..., None] * v[None]).sum(1) / w.sum(-1, keepdim=True)

    report = check_linear_attention(broadcast)
    assert not report.passed and "built by broadcasting" in str(report), str(report)


def factored(phi_q, phi_k, v, z):
    return (phi_q @ (phi_k.T @ v)) / (phi_q @ z)[:, None]


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (lambda q, k, v: factored(F.elu(q), F.elu(k), v, F.elu(k).sum(0)), "without the + 1"),
        (lambda q, k, v: linear(q / q.size(-1) ** 0.5, k, v), "no 1 / sqrt(E) scaling"),
        (lambda q, k, v: factored(q.exp(), k.exp(), v, k.exp().sum(0)), "not exp(x)"),
        (
            lambda q, k, v: factored(F.elu(q) + 1, F.elu(k) + 1, v, (F.elu(k) + 1).mean(0)),
            "not a mean",
        ),
    ],
)
def test_typical_feature_and_normaliser_mistakes_are_named_and_the_cost_is_not_blamed(
    answer, fragment
):
    report = check_linear_attention(answer)
    failed = [message for ok, message in report.lines if not ok]
    assert fragment in failed[0], str(report)
    assert any("cannot check the cost" in message for message in failed), str(report)
    assert "wrong on a long sequence" not in str(report)


def test_relu_features_are_named():
    def relu(q, k, v):
        phi_q, phi_k = F.relu(q), F.relu(k)
        return (phi_q @ (phi_k.T @ v)) / (phi_q @ phi_k.sum(0)[:, None])

    assert "not relu" in str(check_linear_attention(relu))


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        ((8 * 2**20, (64 * 64 + 64) * 4), None),
        ((2 * 16_384 * 64 * 4, 16_640), None),
        ((4 * 2**20, 16_640), "the keys AND the values"),
        ((2 * 2**20, 16_640), "each float32 takes 4 bytes"),
        ((8 * 2**20, 64 * 64 * 4), "the normaliser z"),
    ],
)
def test_state_byte_answers(answer, fragment):
    report = check_state_bytes(*answer)
    if fragment is None:
        assert report.passed, str(report)
    else:
        assert not report.passed and fragment in str(report), str(report)


@pytest.mark.parametrize(
    ("reach", "layers", "fragment"),
    [
        (lambda layers, w: layers * w, 128, None),
        (lambda layers, w: sum(w for _ in range(layers)), 128.0, None),
        (lambda layers, w: w**layers, 128, "not by a factor w"),
        (lambda layers, w: layers * (2 * w + 1), 128, "at most w positions back per layer"),
        (lambda layers, w: layers * w, 100, "16,384 / 128 = 128 layers"),
        (lambda layers, w: 2 * layers * w, 128, "width of the receptive field"),
        (lambda layers, w: layers * w, 64, "counts 2w positions per layer"),
        (lambda layers, w: layers * (w + 1), 128, "not a step back"),
        (lambda layers, w: w + 2, 128, "for 1 layer of w = 4 expected 4, got 6"),
    ],
)
def test_window_answers(reach, layers, fragment):
    report = check_window_layers(reach, layers)
    assert report.passed if fragment is None else (not report.passed and fragment in str(report)), (
        str(report)
    )
