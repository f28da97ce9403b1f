"""The monitors, each on a model built to have the symptom it should reveal."""

from __future__ import annotations

import math

import pytest
import torch

from attnbook import MultiHeadAttention
from attnbook.lab.lab_model import LabConfig, LabModel, lab_loss
from attnbook.train import TrainConfig, fit
from attnbook.train_monitors import FLOAT16_MAX, GradientMonitor, LogitMonitor


def small(**changes) -> LabModel:
    torch.manual_seed(0)
    return LabModel(LabConfig(vocab_size=10, num_classes=10, d_model=16, num_heads=2, **changes))


def batch(n: int = 3, length: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(10, (n, length), generator=g)
    return tokens, tokens.clone()


def test_logit_monitor_records_each_head_of_each_layer_per_pass():
    model = small(num_layers=3)
    with LogitMonitor(model) as monitor:
        model(batch()[0])
        model(batch()[0])
    assert monitor.maxima.shape == (2, 3, 2)
    assert monitor.layer_max().shape == (2, 3)
    assert monitor.names == [f"blocks.{i}.attn.logits" for i in range(3)]


def test_logit_monitor_maximum_equals_the_scores_recomputed():
    attention = MultiHeadAttention(8, 2, init="linear")
    x = torch.randn(2, 5, 8)
    q = attention.q_proj(x).view(2, 5, 2, 4).transpose(1, 2)
    k = attention.k_proj(x).view(2, 5, 2, 4).transpose(1, 2)
    expected = (q @ k.transpose(-2, -1) / 2).abs().amax(dim=(0, 2, 3))  # (H,)
    with LogitMonitor(attention) as monitor:
        attention(x, x, x)
    torch.testing.assert_close(monitor.maxima[0, 0], expected.detach())


def test_huge_query_key_weights_give_logits_over_a_threshold():
    normal, grown = small(), small()
    with torch.no_grad():
        for block in grown.blocks:
            block.attn.q_proj.weight.mul_(30)
            block.attn.k_proj.weight.mul_(30)
    tokens = batch()[0]
    with LogitMonitor(normal) as calm, LogitMonitor(grown) as hot:
        normal(tokens)
        grown(tokens)
    assert calm.peak() < 20
    assert hot.peak() > 100 * calm.peak()


def test_scale_after_the_product_overflows_float16_and_scale_first_does_not():
    torch.manual_seed(0)
    x = 20 * torch.randn(1, 6, 64, dtype=torch.float16)  # |q·k| about 1.5e5 before scaling
    late = MultiHeadAttention(64, 1, scale_first=False, init="linear").half()
    early = MultiHeadAttention(64, 1, scale_first=True, init="linear").half()
    early.load_state_dict(late.state_dict())
    with torch.no_grad():
        for layer in (late, early):
            layer.q_proj.weight.mul_(8)
            layer.k_proj.weight.mul_(8)
    with LogitMonitor(late) as overflowing, LogitMonitor(early) as fine:
        out_late, _ = late(x, x, x)
        out_early, _ = early(x, x, x)
    assert overflowing.peak() == math.inf and bool(overflowing.overflowed()[0])
    assert out_late.isnan().any()
    assert FLOAT16_MAX / 8 < fine.peak() <= FLOAT16_MAX and not fine.overflowed().any()
    assert torch.isfinite(out_early).all()


def test_logit_monitor_clear_and_remove():
    model = small()
    monitor = LogitMonitor(model)
    model(batch()[0])
    monitor.clear()
    assert monitor.maxima.numel() == 0 and monitor.peak() == 0.0
    monitor.remove()
    model(batch()[0])
    assert monitor.maxima.numel() == 0


def test_logit_monitor_rejects_a_model_without_attention_logits():
    with pytest.raises(ValueError, match="AttentionLogits"):
        LogitMonitor(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="model"):
        LogitMonitor("model")


def test_gradient_monitor_matches_clip_grad_norm_and_module_norms():
    model = small()
    with GradientMonitor(model) as monitor:
        lab_loss(model, batch()).backward()
        expected = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    assert monitor.global_norms.shape == (1,)
    assert math.isclose(float(monitor.global_norms[0]), float(expected), rel_tol=1e-5)
    q = model.blocks[0].attn.q_proj
    q_norm = torch.cat([q.weight.grad.flatten(), q.bias.grad.flatten()]).norm()
    column = monitor.modules.index("blocks.0.attn.q_proj")
    assert math.isclose(float(monitor.module_norms[0, column]), float(q_norm), rel_tol=1e-5)
    assert math.isclose(
        float(monitor.norms_of("blocks.0.attn.q_proj")[0]), float(q_norm), rel_tol=1e-5
    )


def test_gradient_monitor_records_one_entry_per_training_step_before_clipping():
    model = small()
    with GradientMonitor(model) as monitor:
        fit(
            model,
            lambda n, g: batch(n),
            lab_loss,
            TrainConfig(steps=5, batch_size=4, grad_clip=1e-3, progress=False),
        )
    norms = monitor.global_norms
    assert norms.shape == (5,)
    assert (norms > 1e-3).all()  # recorded before fit clipped them to 1e-3
    assert monitor.first_nonfinite() is None and not monitor.nonfinite.any()


def test_gradient_monitor_flags_a_nan_producing_input():
    model = small(positions="none")
    with torch.no_grad():
        model.embed.weight[3] = float("nan")  # token 3's embedding is broken
    tokens = torch.tensor([[1, 2, 3, 4]])
    with GradientMonitor(model) as monitor:
        lab_loss(model, (torch.tensor([[1, 2, 4, 5]]), tokens)).backward()
        model.zero_grad()
        lab_loss(model, (tokens, tokens)).backward()
    assert monitor.nonfinite.tolist() == [False, True]
    assert monitor.first_nonfinite() == 2


def test_gradient_monitor_rejects_a_model_without_parameters_and_unknown_names():
    with pytest.raises(ValueError, match="trainable"):
        GradientMonitor(torch.nn.ReLU())
    with GradientMonitor(small()) as monitor:
        with pytest.raises(ValueError, match="no module"):
            monitor.norms_of("nowhere")


def test_gradient_monitor_books_a_module_used_only_in_the_second_pass_to_that_pass():
    class TwoPaths(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)

        def forward(self, x: torch.Tensor, use_b: bool) -> torch.Tensor:
            return (self.b(self.a(x)) if use_b else self.a(x)).sum()

    torch.manual_seed(0)
    model, x = TwoPaths(), torch.ones(1, 2)
    with GradientMonitor(model) as monitor:
        model(x, False).backward()
        model.zero_grad(set_to_none=True)
        model(x, True).backward()
        b_norm = torch.cat([p.grad.flatten() for p in model.b.parameters()]).norm()
        model(x, True)  # a forward pass without backward (evaluation) records nothing
    assert monitor.module_norms.shape == (2, 2)
    column = monitor.modules.index("b")
    assert float(monitor.module_norms[0, column]) == 0.0
    assert math.isclose(float(monitor.module_norms[1, column]), float(b_norm), rel_tol=1e-6)
