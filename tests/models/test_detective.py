"""The detective model and its no-attention baseline: shapes, masks, invariances, saving."""

import pytest
import torch

from attnbook.models.detective import (
    BagOfWordsPointer,
    Detective,
    DetectiveConfig,
    alibi_bias,
    batch_loss,
    evaluator,
    pointer_accuracy,
    pointer_loss,
    train_detective,
)
from attnbook.tasks.coref import CorefTask, batch_maker, collate
from attnbook.tasks.vocab import Vocabulary
from attnbook.train import TrainConfig, fit

TASKS = [CorefTask("en"), CorefTask("zh")]
VOCAB = Vocabulary.for_tasks(*TASKS)


def model(seed=0, **kwargs):
    torch.manual_seed(seed)
    return Detective(DetectiveConfig(len(VOCAB), **kwargs)).eval()


def batch(n=4):
    return collate(TASKS[0].examples(n // 2) + TASKS[1].examples(n - n // 2), VOCAB)


def test_alibi_bias_is_minus_slope_times_distance():
    bias = alibi_bias(3, torch.tensor([1.0, 0.25]))
    expected0 = -torch.tensor([[0.0, 1, 2], [1, 0, 1], [2, 1, 0]])
    torch.testing.assert_close(bias, torch.stack([expected0, 0.25 * expected0]))


def test_logits_cover_every_position_and_padding_gets_minus_infinity():
    b = batch()
    logits, weights = model().run(b)
    assert logits.shape == b.tokens.shape and weights is None
    assert torch.isneginf(logits[b.key_padding_mask]).all()
    assert torch.isfinite(logits[~b.key_padding_mask]).all()


def test_only_candidates_leaves_only_the_names_finite():
    b = batch()
    logits, _ = model(only_candidates=True).run(b)
    assert torch.equal(torch.isfinite(logits), b.candidates)
    with pytest.raises(ValueError, match="needs the candidates mask"):
        model(only_candidates=True)(b.tokens, b.key_padding_mask, b.pronoun)


def test_a_sentence_scores_the_same_alone_and_in_a_padded_batch():
    b, m = batch(6), model()
    logits, _ = m.run(b)
    for n in range(6):
        length = int((~b.key_padding_mask[n]).sum())
        alone, _ = m(
            b.tokens[n : n + 1, :length],
            b.key_padding_mask[n : n + 1, :length],
            b.pronoun[n : n + 1],
        )
        torch.testing.assert_close(alone[0], logits[n, :length], atol=1e-5, rtol=1e-5)


def test_need_weights_returns_every_heads_weights_per_layer():
    b = batch()
    _, weights = model(num_layers=3, nhead=4, d_model=16).run(b, need_weights=True)
    N, S = b.tokens.shape
    assert len(weights) == 3 and all(w.shape == (N, 4, S, S) for w in weights)
    torch.testing.assert_close(weights[0].sum(-1), torch.ones(N, 4, S))


def test_head_mask_of_ones_changes_nothing_and_zeros_change_the_answer_scores():
    b, m = batch(), model()
    plain, _ = m.run(b)
    torch.testing.assert_close(m.run(b, head_mask=torch.ones(2, 2))[0], plain)
    assert not torch.allclose(m.run(b, head_mask=torch.zeros(2, 2))[0], plain)


def test_the_baseline_sees_the_sentence_only_as_a_bag_of_words():
    """Shuffling the *other* tokens of a sentence leaves a position's score unchanged."""
    torch.manual_seed(0)
    base = BagOfWordsPointer(len(VOCAB)).eval()
    b = batch(1)
    logits, weights = base.run(b)
    assert weights is None
    tokens = b.tokens.clone()
    others = torch.tensor([i for i in range(tokens.shape[1]) if i != 2])
    tokens[0, others] = tokens[
        0, others[torch.randperm(len(others), generator=torch.Generator().manual_seed(1))]
    ]
    shuffled, _ = base(tokens, b.key_padding_mask, b.pronoun)
    torch.testing.assert_close(shuffled[0, 2], logits[0, 2])


def test_pointer_loss_rejects_one_hot_or_column_targets():
    logits = torch.randn(3, 5)
    with pytest.raises(ValueError, match=r"shape \(N,\) = \(3,\)"):
        pointer_loss(logits, torch.nn.functional.one_hot(torch.tensor([0, 1, 2]), 5).float())
    with pytest.raises(ValueError, match=r"got shape \(3, 1\)"):
        pointer_loss(logits, torch.tensor([[0], [1], [2]]))
    assert pointer_loss(logits, torch.tensor([0, 1, 2])).shape == ()


def test_pointer_accuracy_counts_argmax_hits():
    logits = torch.tensor([[0.0, 2.0, 1.0], [3.0, 0.0, 1.0]])
    assert pointer_accuracy(logits, torch.tensor([1, 2])) == 0.5


@pytest.fixture
def one_thread():
    """Tiny matrices: on a busy 2-core machine two threads mostly wait for each other."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_a_short_run_learns_the_agreement_task(one_thread):
    tasks = [CorefTask("en", "agreement")]
    test = {"test": collate(tasks[0].examples(200, "test"), VOCAB)}
    m = model()
    history = fit(
        m,
        batch_maker(tasks, VOCAB),
        batch_loss,
        TrainConfig(steps=120, batch_size=32, lr=3e-3, eval_every=120, progress=False),
        evaluator(test),
    )
    assert history.last("test") > 0.9


@pytest.mark.parametrize("hide", ["cue", "gender"])
def test_train_detective_with_hide_is_the_same_run_on_sentences_without_that_clue(one_thread, hide):
    config = TrainConfig(steps=3, batch_size=8, progress=False)
    blind, _ = train_detective(DetectiveConfig(len(VOCAB)), config, hide=hide)
    reference = model()
    tasks = [CorefTask("en", hide=hide), CorefTask("zh", hide=hide)]
    fit(reference, batch_maker(tasks, VOCAB), batch_loss, config)
    for (name, a), b in zip(blind.state_dict().items(), reference.state_dict().values()):
        assert torch.equal(a, b), name
    seeing, _ = train_detective(DetectiveConfig(len(VOCAB)), config)
    assert not torch.equal(seeing.pointer_key.weight, blind.pointer_key.weight)


def test_train_detective_rejects_an_unknown_clue_to_hide():
    with pytest.raises(ValueError, match="hide must be None, 'cue' or 'gender'"):
        train_detective(DetectiveConfig(len(VOCAB)), hide="action")
