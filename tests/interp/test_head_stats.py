"""The head statistics on weights built to have each property: uniform, one-hot, sink."""

import math

import pytest
import torch

from attnbook.interp.head_stats import head_entropy, head_report, max_weight, sink_share
from attnbook.lab.lab_model import LabConfig, LabModel
from attnbook.tasks.coref import Batch


def _weights(L=6):
    uniform = torch.full((L, L), 1.0 / L)
    onehot = torch.eye(L)
    sink = torch.zeros(L, L)
    sink[:, 0] = 1.0
    return torch.stack((uniform, onehot, sink))[None]  # (1, 3, L, L): one sentence, 3 heads


def test_uniform_one_hot_and_sink_heads():
    w = [_weights(), _weights()]  # two layers
    entropy = head_entropy(w)
    assert entropy.shape == (2, 3)
    torch.testing.assert_close(entropy[:, 0], torch.full((2,), math.log(6)))
    assert entropy[:, 1:].abs().max() < 1e-6
    torch.testing.assert_close(head_entropy(w, normalise=True)[:, 0], torch.ones(2))
    torch.testing.assert_close(max_weight(w)[0], torch.tensor([1 / 6, 1.0, 1.0]))
    torch.testing.assert_close(sink_share(w)[0], torch.tensor([1 / 6, 1 / 6, 1.0]))
    report = head_report(w)
    assert report.table().count("\n") == 6


def test_padding_and_query_selection():
    L = 4
    w = torch.zeros(2, 1, L, L)
    w[0, 0] = torch.full((L, L), 0.25)  # sentence 0: uniform over 4 keys
    w[1, 0, :, :2] = 0.5  # sentence 1: two real keys, uniform over them
    pad = torch.tensor([[False] * 4, [False, False, True, True]])
    torch.testing.assert_close(head_entropy([w], pad, normalise=True), torch.ones(1, 1))
    queries = torch.zeros(2, L, dtype=torch.bool)
    queries[1, 0] = True
    torch.testing.assert_close(head_entropy([w], pad, queries), torch.full((1, 1), math.log(2)))
    with pytest.raises(ValueError, match="no query row"):
        head_entropy([w], pad, torch.zeros(2, L, dtype=torch.bool))
    with pytest.raises(ValueError, match="key_padding_mask"):
        head_entropy([w], torch.zeros(3, L, dtype=torch.bool))
    with pytest.raises(ValueError, match="one shape"):
        head_entropy([w, w[:1]])
    with pytest.raises(ValueError, match="sink position"):
        sink_share([w], sink=9)


def test_a_wrong_scale_makes_a_model_diffuse():
    torch.manual_seed(0)
    tokens = torch.randint(20, (8, 10))
    config = LabConfig(20, 3, d_model=32, num_heads=2)
    tiny = LabModel(config.replace(scale=1e-4))
    tiny.load_state_dict(LabModel(config).state_dict())
    _, w_tiny = tiny(tokens, need_weights=True)
    assert head_entropy(w_tiny, normalise=True).min() > 0.999
    sharp = LabModel(config.replace(scale=1e3))
    _, w_sharp = sharp(tokens, need_weights=True)
    assert max_weight(w_sharp).mean() > 0.9


def test_uniformity_counts_the_allowed_keys_not_the_keys_with_weight():
    # A head that puts 0.5/0.5 on 2 of 6 keys is sharp, not uniform: ln 2 / ln 6, not 1.
    w = torch.zeros(1, 1, 1, 6)
    w[..., :2] = 0.5
    torch.testing.assert_close(
        head_entropy([w], normalise=True), torch.full((1, 1), math.log(2) / math.log(6))
    )
    # With a causal mask, row i is uniform over its i + 1 keys: uniformity 1 on every row.
    causal = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    rows = causal.float() / causal.float().sum(-1, keepdim=True)
    w = rows[None, None]  # (1, 1, 4, 4)
    queries = torch.tensor([[False, True, True, True]])  # row 0 has one key: nothing to spread
    torch.testing.assert_close(
        head_entropy([w], queries=queries, normalise=True, allowed=causal), torch.ones(1, 1)
    )
    assert head_entropy([w], queries=queries, normalise=True) < 0.9  # over all 4 keys: not uniform
    with pytest.raises(ValueError, match="allowed must broadcast"):
        head_entropy([w], normalise=True, allowed=torch.ones(3, 3, dtype=torch.bool))


def test_a_batch_stands_for_its_own_key_padding_mask():
    weights = torch.rand(3, 2, 5, 5).softmax(-1)
    padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    zeros = torch.zeros(3, 5, dtype=torch.long)
    batch = Batch(zeros, padding, zeros[:, 0], zeros[:, 0], padding)
    assert torch.equal(head_entropy([weights], batch), head_entropy([weights], padding))


def test_a_zero_weight_adds_nothing_to_the_entropy_and_float64_stays_float64():
    one_hot = torch.zeros(1, 1, 3, 3, dtype=torch.float64)
    one_hot[..., 0] = 1.0
    out = head_entropy([one_hot])
    assert out.dtype == torch.float64 and torch.equal(out, torch.zeros(1, 1, dtype=torch.float64))
