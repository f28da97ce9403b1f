"""Head measurements on hand-made attention patterns, and head ablation through head_mask."""

import math

import pytest
import torch

from attnbook.interp.ablation import accuracy_with_heads_off
from attnbook.interp.coref_heads import antecedent_hits, head_roles
from attnbook.interp.head_stats import head_entropy
from attnbook.interp.redundancy import head_importance, prune_curve
from attnbook.models.detective import Detective, DetectiveConfig
from attnbook.tasks.coref import Batch, CorefTask, Vocabulary, collate

S = 5


def toy_batch(lengths=(5, 4)) -> Batch:
    N = len(lengths)
    padding = torch.arange(S)[None, :] >= torch.tensor(lengths)[:, None]
    tokens = torch.arange(1, S + 1).repeat(N, 1).masked_fill(padding, 0)
    return Batch(
        tokens=tokens,
        key_padding_mask=padding,
        pronoun=torch.tensor(lengths) - 1,
        target=torch.tensor([0, 1]),
        candidates=torch.zeros(N, S, dtype=torch.bool),
    )


def pattern(kind: str, N: int = 2) -> torch.Tensor:
    eye = torch.eye(S)
    w = {
        "self": eye,
        "previous": eye.roll(-1, dims=1),
        "next": eye.roll(1, dims=1),
        "uniform": torch.full((S, S), 1 / S),
    }[kind]
    return w.expand(N, 1, S, S)  # (N, H=1, S, S)


@pytest.mark.parametrize("kind", ["self", "previous", "next"])
def test_a_head_that_always_looks_one_way_gets_mass_one_for_that_role(kind):
    roles = head_roles([pattern(kind)], toy_batch(lengths=(5, 5)), delimiter_ids=[])
    others = {"self", "previous", "next"} - {kind}
    # The wrapped-around row (first query for "previous", last for "next") has no such key.
    expected = 1.0 if kind == "self" else 4 / 5
    assert roles[kind].item() == pytest.approx(expected)
    assert all(roles[o].item() == pytest.approx(0.0) for o in others)


def test_delimiter_mass_counts_only_real_delimiter_tokens():
    roles = head_roles([pattern("uniform")], toy_batch(lengths=(5, 5)), delimiter_ids=[3, 4])
    assert roles["delimiters"].item() == pytest.approx(2 / 5)


def test_entropy_of_uniform_rows_is_log_of_the_number_of_keys_and_padding_queries_are_ignored():
    batch = toy_batch(lengths=(5, 4))
    w = pattern("uniform").clone()
    w[1, :, 4] = float("nan")  # a padding query: must not count
    assert head_entropy([w], batch).item() == pytest.approx(math.log(S))
    assert head_entropy([pattern("self")], batch).item() == pytest.approx(0.0)


def test_antecedent_hits_count_pronoun_rows_whose_peak_is_the_target():
    batch = toy_batch(lengths=(5, 5))
    w = torch.zeros(2, 2, S, S)
    w[0, 0, 4, 0] = 1.0  # sentence 0, head 0: pronoun (4) -> target 0: hit
    w[1, 0, 4, 3] = 1.0  # sentence 1, head 0: -> 3, target 1: miss
    w[:, 1, 4, 1] = 1.0  # head 1 always -> 1: hit for sentence 1 only
    torch.testing.assert_close(
        antecedent_hits([w, w], batch), torch.tensor([[0.5, 0.5], [0.5, 0.5]])
    )
    assert head_roles([w], batch, [])["antecedent"].tolist() == [[0.5, 0.5]]


@pytest.fixture(scope="module")
def detective_and_batch():
    torch.manual_seed(0)
    task = CorefTask("en")
    vocab = Vocabulary.for_tasks(task)
    model = Detective(DetectiveConfig(len(vocab), nhead=2, num_layers=2)).eval()
    return model, collate(task.examples(64, "test"), vocab)


def test_switching_every_head_off_equals_zeroing_every_out_projection(detective_and_batch):
    model, batch = detective_and_batch
    off = accuracy_with_heads_off(model, batch, [(0, 0), (0, 1), (1, 0), (1, 1)])
    zeroed = Detective(model.config)
    zeroed.load_state_dict(model.state_dict())
    with torch.no_grad():
        for layer in zeroed.encoder.layers:
            layer.self_attn.out_proj.weight.zero_()
    assert off == accuracy_with_heads_off(zeroed.eval(), batch, [])


class _OneUsefulHead(torch.nn.Module):
    """A stand-in model whose answer is right exactly when layer 0, head 0 is switched on."""

    config = DetectiveConfig(vocab_size=4, num_layers=1, nhead=2)

    def run(self, batch, head_mask=None, need_weights=False):
        on = 1.0 if head_mask is None else float(head_mask[0, 0])
        logits = torch.zeros(len(batch.target), batch.tokens.shape[1])
        logits[torch.arange(len(batch.target)), batch.target] = on  # off: a tie, argmax picks 0
        logits[:, 0] += 0.5 * (1 - on)
        return logits, None


def test_importance_and_pruning_find_the_one_head_that_matters():
    batch = toy_batch(lengths=(5, 5))._replace(target=torch.tensor([2, 3]))
    model = _OneUsefulHead()
    torch.testing.assert_close(head_importance(model, batch), torch.tensor([[1.0, 0.0]]))
    assert prune_curve(model, batch, [(0, 1), (0, 0)]) == [1.0, 1.0, 0.0]
