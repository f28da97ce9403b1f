"""The chapter 15 checkers accept right answers and name the usual mistakes."""

import pytest
import torch

from attnbook.exercises import check_patchify, check_rollout


def book_patchify(images, p):
    N, H, W = images.shape
    x = images.reshape(N, H // p, p, W // p, p)
    x = x.permute(0, 1, 3, 2, 4)
    return x.reshape(N, (H // p) * (W // p), p * p)


def unfold_patchify(images, p):
    patches = torch.nn.functional.unfold(images[:, None], kernel_size=p, stride=p)  # (N, p*p, P)
    return patches.transpose(1, 2)


def columns_first(images, p):
    N, H, W = images.shape
    return images.reshape(N, H // p, p, W // p, p).permute(0, 3, 1, 2, 4).reshape(N, -1, p * p)


def pixels_transposed(images, p):
    N, H, W = images.shape
    return images.reshape(N, H // p, p, W // p, p).permute(0, 1, 3, 4, 2).reshape(N, -1, p * p)


def in_place(images, p):
    images /= 1.0 + images.max()
    return book_patchify(images, p).clone()


@pytest.mark.parametrize("fn", [book_patchify, unfold_patchify])
def test_right_patchify_passes(fn):
    report = check_patchify(fn)
    assert report.passed, str(report)


@pytest.mark.parametrize(
    "fn, fragment",
    [
        (lambda x, p: x.reshape(x.size(0), -1, p * p), "strips"),
        (columns_first, "down the columns first"),
        (pixels_transposed, "column by column"),
        (lambda x, p: book_patchify(x, p)[:, :, :2], "must return shape"),
        (in_place, "in place"),
    ],
)
def test_wrong_patchify_is_named(fn, fragment):
    report = check_patchify(fn)
    assert not report.passed and fragment in str(report), str(report)


def book_rollout(weights):
    S = weights[0].size(-1)
    eye = torch.eye(S)
    rollout = eye.expand(weights[0].size(0), S, S)
    for w in weights:
        rollout = (0.5 * w.mean(1) + 0.5 * eye) @ rollout
    return rollout


def rollout_with(mix, order="left"):
    def fn(weights):
        S = weights[0].size(-1)
        out = torch.eye(S).expand(weights[0].size(0), S, S)
        for w in weights:
            out = mix(w, torch.eye(S)) @ out if order == "left" else out @ mix(w, torch.eye(S))
        return out

    return fn


def per_head_rollout(weights):
    S = weights[0].size(-1)
    out = torch.eye(S).expand(*weights[0].shape)
    for w in weights:
        out = (0.5 * w + 0.5 * torch.eye(S)) @ out
    return out.mean(1)


def residual_once(weights):
    return 0.5 * rollout_with(lambda w, eye: w.mean(1))(weights) + 0.5 * torch.eye(
        weights[0].size(-1)
    )


def test_right_rollout_passes():
    report = check_rollout(book_rollout)
    assert report.passed, str(report)


@pytest.mark.parametrize(
    "fn, fragment",
    [
        (rollout_with(lambda w, eye: 0.5 * w.mean(1) + 0.5 * eye, "right"), "wrong order"),
        (rollout_with(lambda w, eye: w.mean(1)), "left out the identity"),
        (
            rollout_with(lambda w, eye: 0.5 * w[:, 0] + 0.5 * eye),
            "average the weights over the heads",
        ),
        (rollout_with(lambda w, eye: w.mean(1) + eye), "sum to 2"),
        (lambda weights: book_rollout(weights)[:, 0], "must return shape"),
        (rollout_with(lambda w, eye: 0.5 * w.max(1).values + 0.5 * eye), "maximum over the heads"),
        (lambda weights: per_head_rollout(weights), "each head separately"),
        (lambda weights: residual_once(weights), "added once, after multiplying"),
        (
            lambda weights: book_rollout([w.transpose(-1, -2) for w in weights]),
            "weights are transposed",
        ),
    ],
)
def test_wrong_rollout_is_named(fn, fragment):
    report = check_rollout(fn)
    assert not report.passed and fragment in str(report), str(report)
