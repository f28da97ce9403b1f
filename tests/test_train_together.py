"""fit_together trains S seeds as one batched run, each member as fit would train it alone."""

from dataclasses import replace

import pytest
import torch
from torch import nn

from attnbook.attention import fused_attention, scaled_dot_product_attention
from attnbook.models.seq2seq import Seq2SeqConfig, Seq2SeqTransformer, seq2seq_loss
from attnbook.train import TrainConfig, clip_grad_norm_per_member, fit, fit_together
from attnbook.values import has_values


def make_batch(n, g):
    x = torch.randn(n, 4, generator=g)
    return x, (x[:, 0] + x[:, 1] > x[:, 2]).long()


def loss_fn(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(x), y)


def evaluate(model):
    x, y = make_batch(256, torch.Generator().manual_seed(99))
    return {"accuracy": (model(x).argmax(-1) == y).float().mean().item()}


def build(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))


CONFIG = TrainConfig(steps=30, batch_size=16, lr=0.05, warmup_steps=5, grad_clip=0.5,
                     eval_every=10, progress=False)  # fmt: skip
SEEDS = [0, 3, 7]


def solo(seed, config=CONFIG):
    model = build(seed)
    return model, fit(model, make_batch, loss_fn, replace(config, seed=seed), evaluate)


def configs(seeds, config=CONFIG):
    return [replace(config, seed=seed) for seed in seeds]


def together(seeds=SEEDS, config=CONFIG):
    models = [build(seed) for seed in seeds]
    return models, fit_together(models, make_batch, loss_fn, configs(seeds, config), evaluate)


def test_each_member_trains_as_its_solo_run():
    models, histories = together()
    for seed, model, history in zip(SEEDS, models, histories):
        alone, alone_history = solo(seed)
        torch.testing.assert_close(history.loss, alone_history.loss, atol=1e-5, rtol=1e-5)
        for p, q in zip(model.parameters(), alone.parameters()):
            torch.testing.assert_close(p, q, atol=1e-5, rtol=1e-5)
        assert history.eval_steps == alone_history.eval_steps == [10, 20, 30]
        assert history.metrics["accuracy"] == pytest.approx(alone_history.metrics["accuracy"])


def test_members_are_different_runs():
    _, histories = together()
    assert len({h.loss[0] for h in histories}) == len(SEEDS)


def test_clipping_is_per_member():
    # Member 0's gradient is huge, member 1's is tiny: clipping over the stack would shrink both.
    grads = [torch.tensor([[300.0, 400.0], [0.03, 0.04]])]  # (S = 2, 2): norms 500 and 0.05
    p = torch.zeros(2, 2, requires_grad=True)
    p.grad = grads[0].clone()
    norms = clip_grad_norm_per_member([p], 1.0)
    torch.testing.assert_close(norms, torch.tensor([500.0, 0.05]))
    torch.testing.assert_close(p.grad[0].norm(), torch.tensor(1.0), atol=1e-5, rtol=0)
    torch.testing.assert_close(p.grad[1], torch.tensor([0.03, 0.04]))  # untouched


def test_a_member_with_a_huge_gradient_leaves_the_others_alone():
    config = replace(CONFIG, steps=5, grad_clip=1.0)
    loud = build(0)
    with torch.no_grad():
        loud[2].weight.mul_(1000.0)  # its loss, and so its gradient, is huge: clipped every step
    models = [loud, build(1)]
    fit_together(models, make_batch, loss_fn, configs([0, 1], config))
    alone, _ = solo(1, config)  # the quiet member, never clipped, trains as it would alone
    for p, q in zip(models[1].parameters(), alone.parameters()):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-5)


def test_models_own_their_weights_afterwards_and_are_in_eval_mode():
    models, _ = together()
    first = next(models[0].parameters())
    assert (
        first.untyped_storage().data_ptr()
        != next(models[1].parameters()).untyped_storage().data_ptr()
    )
    assert first.untyped_storage().nbytes() == first.numel() * first.element_size()
    assert not any(m.training for m in models)


def test_a_transformer_trains_together_as_alone():
    def batch(n, g):
        src = torch.randint(3, 12, (n, 5), generator=g)
        return src, torch.cat([torch.ones(n, 1, dtype=torch.long), src.flip(1)], 1)

    def build_s2s(seed):
        torch.manual_seed(seed)
        return Seq2SeqTransformer(Seq2SeqConfig(12, d_model=16, nhead=2, num_layers=1,
                                                dim_feedforward=32))  # fmt: skip

    config = TrainConfig(steps=8, batch_size=8, lr=3e-3, warmup_steps=2, progress=False)
    models = [build_s2s(s) for s in (0, 1)]
    histories = fit_together(models, batch, seq2seq_loss, configs([0, 1], config))
    for seed, history in zip((0, 1), histories):
        alone = fit(build_s2s(seed), batch, seq2seq_loss, replace(config, seed=seed))
        torch.testing.assert_close(history.loss, alone.loss, atol=1e-4, rtol=1e-4)


def test_bad_input_gets_the_models_own_error_before_training():
    def bad(n, g):
        src = torch.full((n, 3), 50)  # ids beyond the vocabulary of 12
        return src, src

    torch.manual_seed(0)
    model = Seq2SeqTransformer(Seq2SeqConfig(12, d_model=16, nhead=2, num_layers=1))
    with pytest.raises(ValueError, match="src ids must be in"):
        fit_together([model], bad, seq2seq_loss, [CONFIG])


@pytest.mark.parametrize("seeds, match", [([0], "one length"), ([], "non-empty")])
def test_refuses_mismatched_models_and_configs(seeds, match):
    with pytest.raises(ValueError, match=match):
        fit_together([build(0), build(1)], make_batch, loss_fn, configs(seeds))


@pytest.mark.parametrize("field", ["steps", "batch_size", "grad_clip", "eval_every"])
def test_refuses_configs_that_differ_where_they_must_agree(field):
    other = replace(CONFIG, **{field: getattr(CONFIG, field) * 2})
    with pytest.raises(ValueError, match=f"share {field}"):
        fit_together([build(0), build(1)], make_batch, loss_fn, [CONFIG, other])


def test_members_with_their_own_rate_warm_up_and_schedule_train_as_alone():
    own = [
        replace(CONFIG, seed=0, lr=0.01, warmup_steps=0),
        replace(CONFIG, seed=1, lr=0.1, warmup_steps=10, schedule="cosine"),
        replace(CONFIG, seed=2, lr=0.03, warmup_steps=3, schedule="inverse_sqrt"),
    ]
    models = [build(c.seed) for c in own]
    histories = fit_together(models, make_batch, loss_fn, own, evaluate)
    for config, model, history in zip(own, models, histories):
        alone = build(config.seed)
        alone_history = fit(alone, make_batch, loss_fn, config, evaluate)
        torch.testing.assert_close(history.loss, alone_history.loss, atol=1e-5, rtol=1e-5)
        for p, q in zip(model.parameters(), alone.parameters()):
            torch.testing.assert_close(p, q, atol=1e-5, rtol=1e-5)


def test_weight_decay_is_decoupled_as_in_adamw():
    config = replace(CONFIG, weight_decay=0.1, steps=10)
    models, _ = together([0, 1], config)
    for seed, model in zip([0, 1], models):
        alone, _ = solo(seed, config)
        for p, q in zip(model.parameters(), alone.parameters()):
            torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-5)


def test_refuses_models_of_different_shapes():
    with pytest.raises(ValueError, match="same parameter names and shapes"):
        fit_together([build(0), nn.Linear(4, 2)], make_batch, loss_fn, configs([0, 1]))


def test_refuses_models_that_differ_only_in_the_number_of_heads():
    from attnbook.mha import MultiHeadAttention

    two, four = MultiHeadAttention(8, 2), MultiHeadAttention(8, 4)  # the same parameter shapes
    assert [p.shape for p in two.parameters()] == [p.shape for p in four.parameters()]
    with pytest.raises(ValueError, match=r"one architecture.*models \[1\]"):
        fit_together([two, four], make_batch, loss_fn, configs([0, 1]))


def test_has_values_is_false_only_inside_vmap():
    seen = []
    torch.func.vmap(lambda x: seen.append(has_values(x)) or x)(torch.ones(3, 2))
    assert seen == [False] and has_values(torch.ones(2))


def test_fused_attention_under_vmap_equals_each_member():
    q, k, v = torch.randn(3, 2, 4, 5, 8).unbind(0)  # (S = 2, L = 4 ... ): per member (4, 5, 8)
    mask = torch.rand(2, 4, 5, 5) > 0.3
    batched = torch.func.vmap(fused_attention)(q, k, v, mask)
    for s in range(2):
        expected, _ = scaled_dot_product_attention(q[s], k[s], v[s], mask[s])
        torch.testing.assert_close(batched[s], expected)
