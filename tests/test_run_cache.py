"""attnbook.run_cache: a stored run is taken only for the same computation, and restores all of it."""

import random
import threading

import pytest
import torch
from torch import nn

from attnbook import run_cache
from attnbook.train import TrainConfig, fit, fit_together


class Task:
    """A batch maker with state, as the book's tasks have (its ``shift`` changes the data)."""

    def __init__(self, shift: float = 0.0):
        self.shift = shift

    def __call__(self, n, g):
        x = torch.randn(n, 4, generator=g) + self.shift
        return x, (x.sum(-1) > 0).long()


def loss_fn(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(nn.functional.dropout(x, 0.1)), y)


def build(seed=0, width=4):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 2))


def config(seed=0, **changes):
    return TrainConfig(**{"steps": 30, "batch_size": 16, "eval_every": 10, "seed": seed, **changes})


def evaluate(model):
    x = torch.linspace(-1, 1, 12).reshape(3, 4)
    return {"mean": model(x).mean().item()}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(run_cache.ENV, str(tmp_path))
    return tmp_path


def stored(folder):
    return sorted(p.name for p in folder.glob("*.pt"))


@pytest.fixture
def steps(monkeypatch):
    """The optimiser steps taken: none when a run is taken from the folder."""
    taken = []
    step = torch.optim.AdamW.step

    def counted(self, *args, **kwargs):
        taken.append(1)
        return step(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", counted)
    return taken


def test_unset_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(run_cache.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    fit(build(), Task(), loss_fn, config(progress=False))
    assert list(tmp_path.iterdir()) == []


def test_a_hit_restores_weights_history_random_state_and_printed_text(folder, capsys, steps):
    trained = build()
    history = fit(trained, Task(), loss_fn, config(), evaluate)
    after = (random.random(), torch.rand(3))
    printed = capsys.readouterr().out
    assert "training: 100%" in printed and len(stored(folder)) == 1

    steps.clear()
    again = build().train()  # a fresh copy, in train mode: the hit must leave it in eval mode
    reused = fit(again, Task(), loss_fn, config(), evaluate)
    assert steps == []  # nothing trained
    assert len(stored(folder)) == 1
    for a, b in zip(trained.state_dict().values(), again.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert not any(m.training for m in again.modules())
    assert reused.loss == history.loss and reused.metrics == history.metrics
    assert (random.random(), torch.rand(3))[0] == after[0]
    assert capsys.readouterr().out == printed


def test_the_random_state_after_a_hit_is_the_trained_runs(folder):
    fit(build(), Task(), loss_fn, config(progress=False))
    expected = torch.rand(5)
    fit(build(), Task(), loss_fn, config(progress=False))
    assert torch.equal(torch.rand(5), expected)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda: (build(), Task(), loss_fn, config(seed=1)), id="config"),
        pytest.param(lambda: (build(seed=1), Task(), loss_fn, config()), id="initial weights"),
        pytest.param(lambda: (build(width=5), Task(), loss_fn, config()), id="architecture"),
        pytest.param(
            lambda: (build(), Task(shift=0.5), loss_fn, config()), id="a batch maker's state"
        ),
        pytest.param(
            lambda: (build(), Task(), lambda m, b: 2 * loss_fn(m, b), config()),
            id="the loss's code",
        ),
    ],
)
def test_any_change_to_what_the_run_reads_trains_again(folder, change, steps):
    fit(build(), Task(), loss_fn, config(progress=False))
    steps.clear()
    model, make_batch, loss, cfg = change()
    fit(model, make_batch, loss, cfg)
    assert len(steps) == cfg.steps
    assert len(stored(folder)) == 2


def test_a_closures_value_is_part_of_the_fingerprint(folder):
    def task_with(hide):  # the book's batch makers close over their tasks, as here
        return lambda n, g: Task(shift=hide)(n, g)

    fit(build(), task_with(0.0), loss_fn, config(progress=False))
    fit(build(), task_with(1.0), loss_fn, config(progress=False))
    assert len(stored(folder)) == 2


def test_other_cpu_kernels_train_again(folder, monkeypatch):
    fit(build(), Task(), loss_fn, config(progress=False))
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "OTHER")
    fit(build(), Task(), loss_fn, config(progress=False))
    assert len(stored(folder)) == 2


def test_a_model_with_a_hook_is_never_stored(folder):
    model = build()
    seen = []
    model[0].register_forward_hook(lambda *_: seen.append(1))
    fit(model, Task(), loss_fn, config(progress=False))
    assert stored(folder) == [] and len(seen) == 30
    assert "has a hook" in (folder / "not-stored.log").read_text()


def test_something_it_cannot_read_makes_the_run_train(folder):
    lock = threading.Lock()

    def make_batch(n, g):
        with lock:
            return Task()(n, g)

    with pytest.raises(run_cache.Uncacheable, match="lock"):
        run_cache.fingerprint(fit, build(), make_batch, loss_fn, config())
    fit(build(), make_batch, loss_fn, config(progress=False))
    assert stored(folder) == []


def test_fit_together_restores_every_member(folder, steps):
    models = [build(seed) for seed in (0, 1)]
    configs = [config(seed, progress=False) for seed in (0, 1)]
    histories = fit_together(models, Task(), loss_fn, configs, evaluate)
    again = [build(seed) for seed in (0, 1)]
    steps.clear()
    reused = fit_together(again, Task(), loss_fn, configs, evaluate)
    assert steps == [] and len(stored(folder)) == 1
    for trained, restored in zip(models, again, strict=True):
        for a, b in zip(trained.parameters(), restored.parameters(), strict=True):
            assert torch.equal(a, b)
    assert [h.loss for h in reused] == [h.loss for h in histories]


def test_fingerprints_do_not_depend_on_the_order_of_a_set():
    one = run_cache.fingerprint(fit, build(), Task(), loss_fn, config(), {"b", "a", "c"})
    two = run_cache.fingerprint(fit, build(), Task(), loss_fn, config(), {"c", "a", "b"})
    assert one == two


def test_a_library_closures_value_is_part_of_the_fingerprint():
    from attnbook.tasks.coref import CorefTask, Vocabulary, batch_maker

    tasks = {hide: [CorefTask("en", hide=hide)] for hide in (None, "cue")}
    vocab = Vocabulary.for_tasks(*tasks[None])
    prints = {
        hide: run_cache.fingerprint(fit, build(), batch_maker(t, vocab), loss_fn, config())
        for hide, t in tasks.items()
    }
    assert prints[None] != prints["cue"]


def test_dates_slices_and_weak_references_are_read_by_value():
    import datetime
    import weakref

    task = Task()
    prints = [
        run_cache.fingerprint(
            fit, build(), Task(), loss_fn, config(), [value, slice(0, 2), weakref.ref(task)]
        )
        for value in (
            datetime.date(2024, 3, 5),
            datetime.date(2024, 3, 6),
            datetime.date(2024, 3, 5),
        )
    ]
    assert prints[0] != prints[1] and prints[0] == prints[2]
