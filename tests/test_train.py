"""The training loop is deterministic, learns, evaluates on schedule, and says what is wrong."""

import pytest
import torch
from torch import nn

from attnbook.train import History, TrainConfig, fit


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
