"""The training loop is deterministic, learns, evaluates on schedule, and says what is wrong."""

import pytest
import torch
from torch import nn

from attnbook.train import History, TrainConfig, fit, lr_factor


def make_batch(n, g):
    x = torch.randn(n, 2, generator=g)
    return x, (x[:, 0] > x[:, 1]).long()


def loss_fn(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(x), y)


def evaluate(model):
    x, y = make_batch(512, torch.Generator().manual_seed(99))
    return {"accuracy": (model(x).argmax(-1) == y).float().mean().item()}


def run(seed=0, steps=60):
    torch.manual_seed(123)  # model init; fit reseeds before training
    model = nn.Linear(2, 2)
    config = TrainConfig(
        steps=steps, batch_size=32, lr=0.05, eval_every=20, seed=seed, progress=False
    )
    return model, fit(model, make_batch, loss_fn, config, evaluate)


def test_fit_learns_a_separable_task():
    _, history = run()
    assert history.last("accuracy") > 0.95
    assert history.loss[-1] < history.loss[0]


def test_same_seed_same_history():
    assert run(seed=3)[1].loss == run(seed=3)[1].loss


def test_evaluates_every_eval_every_steps_and_at_the_end():
    _, history = run(steps=50)
    assert history.eval_steps == [20, 40, 50]
    assert len(history.metrics["accuracy"]) == 3 and len(history.loss) == 50


def test_model_is_left_in_eval_mode():
    model, _ = run(steps=5)
    assert not model.training


def test_last_names_missing_metric():
    with pytest.raises(KeyError, match="no metric 'f1'"):
        History().last("f1")


def test_rejects_non_positive_steps():
    with pytest.raises(ValueError, match="steps and batch_size must be positive"):
        fit(nn.Linear(2, 2), make_batch, loss_fn, TrainConfig(steps=0))


def test_lr_factor_warms_up_linearly_then_stays_constant():
    assert [lr_factor(s, 4, 100) for s in (1, 2, 4, 5, 100)] == [0.25, 0.5, 1.0, 1.0, 1.0]


def test_no_warm_up_starts_at_the_peak():
    assert lr_factor(1, 0, 100) == 1.0


def test_inverse_sqrt_is_vaswanis_schedule_divided_by_its_peak():
    d_model, warmup = 512, 4000
    peak = d_model**-0.5 * warmup**-0.5
    for step in (1, 100, 3999, 4000, 4001, 10_000, 100_000):
        vaswani = d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
        assert lr_factor(step, warmup, 200_000, "inverse_sqrt") == pytest.approx(vaswani / peak)


def test_cosine_falls_from_one_to_zero_after_warm_up():
    assert lr_factor(10, 10, 110, "cosine") == 1.0
    assert lr_factor(60, 10, 110, "cosine") == pytest.approx(0.5)
    assert lr_factor(110, 10, 110, "cosine") == pytest.approx(0.0)


def test_fits_first_step_has_the_warmed_up_rate():
    # Adam's first update is lr * factor * sign(gradient) (up to eps), whatever the gradient's size.
    torch.manual_seed(0)
    model = nn.Linear(2, 2)
    before = model.weight.detach().clone()
    config = TrainConfig(steps=1, lr=1.0, warmup_steps=4, grad_clip=None, progress=False)
    fit(model, make_batch, loss_fn, config)
    step = (model.weight.detach() - before).abs()
    torch.testing.assert_close(step, torch.full_like(step, 0.25), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"schedule": "linear"}, "schedule must be one of"),
        ({"step": 0}, r"step must be an integer >= 1"),
        ({"warmup_steps": -1}, "warmup_steps must be >= 0"),
    ],
)
def test_lr_factor_refuses_bad_arguments(kwargs, match):
    args = {"step": 1, "warmup_steps": 10, "total_steps": 100, **kwargs}
    with pytest.raises(ValueError, match=match):
        lr_factor(**args)


def test_fit_refuses_an_unknown_schedule_before_training():
    with pytest.raises(ValueError, match="schedule must be one of"):
        fit(nn.Linear(2, 2), make_batch, loss_fn, TrainConfig(schedule="step"))
