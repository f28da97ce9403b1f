"""Activation patching and attention knockout: identities they must satisfy on any model."""

import math
import re

import pytest
import torch

from attnbook.interp.patching import (
    binding_edges,
    cut_edges,
    knock_out,
    patch_effect,
    patch_from,
    patch_residual,
    residual_points,
    run_with_residuals,
)
from attnbook.models.detective import Detective, DetectiveConfig
from attnbook.tasks.coref import CorefTask, Vocabulary, collate
from attnbook.tasks.counterfactuals import swap_cue, swap_gender
from attnbook.tasks.vocab import tokenize

LAYERS, H = 2, 2


@pytest.fixture(scope="module")
def setup():
    tasks = CorefTask("en"), CorefTask("zh")
    vocab = Vocabulary.for_tasks(*tasks)
    torch.manual_seed(0)
    model = Detective(DetectiveConfig(len(vocab), nhead=H, num_layers=LAYERS)).eval()
    examples = [e for t in tasks for e in t.examples(12, "test", seed=3)]
    return model, vocab, examples, collate(examples, vocab)


def plain_logits(model, batch):
    with torch.no_grad():
        return model.run(batch)[0]


def no_hooks_left(model):
    return all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


def test_residuals_are_the_embedding_then_each_block_output(setup):
    model, _, _, batch = setup
    logits, residuals = run_with_residuals(model, batch)
    assert len(residuals) == LAYERS + 1
    assert all(r.shape == (*batch.tokens.shape, model.config.d_model) for r in residuals)
    with torch.no_grad():
        torch.testing.assert_close(residuals[0], model.embedding(batch.tokens))
    torch.testing.assert_close(logits, plain_logits(model, batch))
    assert no_hooks_left(model)


@pytest.mark.parametrize("depth", range(LAYERS + 1))
def test_patching_a_run_with_its_own_vectors_changes_nothing(setup, depth):
    model, _, _, batch = setup
    _, residuals = run_with_residuals(model, batch)
    n = torch.arange(len(batch.pronoun))
    patched = patch_residual(model, batch, depth, batch.pronoun, residuals[depth][n, batch.pronoun])
    torch.testing.assert_close(patched, plain_logits(model, batch))


@pytest.mark.parametrize("depth", [0, LAYERS])
def test_patching_every_position_is_running_the_source(setup, depth):
    # swap_gender keeps every sentence's length, so the two batches have the same padding.
    model, vocab, examples, clean = setup
    source = collate([swap_gender(e) for e in examples], vocab)
    everywhere = ~clean.key_padding_mask
    patched = patch_from(model, clean, source, depth, everywhere)
    torch.testing.assert_close(patched, plain_logits(model, source))


def test_patching_one_position_changes_only_what_reads_it(setup):
    # At the last depth nothing reads the pronoun's vector but the pointer's query, so patching
    # it from the other pronoun's sentence changes the scores, and patching a token after the
    # pronoun (which the pointer only sees as a key that is never a name) changes no name's score.
    model, vocab, examples, clean = setup
    source = collate([swap_gender(e) for e in examples], vocab)
    assert not torch.allclose(
        patch_from(model, clean, source, LAYERS, clean.pronoun), plain_logits(model, clean)
    )
    after = patch_from(model, clean, source, LAYERS, clean.pronoun + 1)
    names = clean.candidates
    torch.testing.assert_close(after[names], plain_logits(model, clean)[names])


def test_source_positions_read_elsewhere_in_the_source(setup):
    model, vocab, examples, clean = setup
    source = collate([swap_cue(e) for e in examples], vocab)
    last = torch.tensor([len(e.tokens) - 1 for e in examples])
    source_last = torch.tensor([len(swap_cue(e).tokens) - 1 for e in examples])
    _, residuals = run_with_residuals(model, source)
    n = torch.arange(len(examples))
    expected = patch_residual(model, clean, 1, last, residuals[1][n, source_last])
    torch.testing.assert_close(patch_from(model, clean, source, 1, last, source_last), expected)


def test_cutting_every_edge_of_a_head_is_switching_it_off(setup):
    model, _, _, batch = setup
    N, S = batch.tokens.shape
    everything = torch.ones(N, S, S, dtype=torch.bool)
    head_mask = torch.ones(LAYERS, H)
    head_mask[1, 0] = 0
    with torch.no_grad():
        switched_off, _ = model.run(batch, head_mask=head_mask)
    torch.testing.assert_close(knock_out(model, batch, [(1, 0)], everything), switched_off)


def test_cutting_several_heads_is_switching_them_all_off(setup):
    model, _, _, batch = setup
    N, S = batch.tokens.shape
    everything = torch.ones(N, S, S, dtype=torch.bool)
    heads = [(0, 1), (1, 0), (1, 1)]
    head_mask = torch.ones(LAYERS, H)
    for layer, head in heads:
        head_mask[layer, head] = 0
    with torch.no_grad():
        switched_off, _ = model.run(batch, head_mask=head_mask)
    torch.testing.assert_close(knock_out(model, batch, heads, everything), switched_off)


def test_a_cut_and_a_patch_combine(setup):
    # Patching after block 1 a vector that block 1 computed under the same cut is a no-op; so
    # cutting inside cut_edges and patching there with the cut run's own vectors changes nothing.
    model, _, examples, batch = setup
    N, S = batch.tokens.shape
    edges = binding_edges(examples, S)
    cut = knock_out(model, batch, [(1, 0)], edges)
    with cut_edges(model, [(1, 0)], edges):
        _, residuals = run_with_residuals(model, batch)
        patched = patch_from(model, batch, batch, 1, batch.pronoun, residuals=residuals)
    torch.testing.assert_close(patched, cut)
    assert no_hooks_left(model)
    with cut_edges(model, [(1, 0)], edges), pytest.raises(ValueError, match="for the sentences"):
        model.run(
            batch._replace(
                tokens=batch.tokens[:, :-1], key_padding_mask=batch.key_padding_mask[:, :-1]
            )
        )
    assert no_hooks_left(model)


def test_patch_effect_is_zero_for_the_clean_run_and_one_for_the_source(setup):
    model, vocab, examples, clean = setup
    source = collate([swap_gender(e) for e in examples], vocab)
    clean_logits, source_logits = plain_logits(model, clean), plain_logits(model, source)

    def among_names(logits):
        return logits.masked_fill(~clean.candidates, float("-inf")).argmax(-1)

    nothing = patch_effect(clean_logits, clean_logits, source_logits, clean, source)
    assert nothing.logit_diff == pytest.approx(0.0, abs=1e-6)
    assert nothing.leaves == (among_names(clean_logits) != clean.target).float().mean().item()
    everything = patch_effect(source_logits, clean_logits, source_logits, clean, source)
    assert everything.logit_diff == pytest.approx(1.0)
    assert everything.follows == (among_names(source_logits) == source.target).float().mean().item()


def test_patch_effect_counts_answers_among_the_names_only(setup):
    _, vocab, examples, clean = setup
    source = collate([swap_gender(e) for e in examples], vocab)
    N, S = clean.tokens.shape
    logits = torch.zeros(N, S)
    logits[torch.arange(N), source.target] = 1.0
    logits[torch.arange(N), clean.pronoun] = 5.0  # the largest score is on a token that is no name
    effect = patch_effect(logits, logits, -logits, clean, source)
    assert effect.follows == 1.0 and effect.leaves == 1.0
    assert math.isnan(patch_effect(logits, logits, logits, clean, source).logit_diff)


def test_cutting_no_edge_changes_nothing_and_cutting_some_changes_the_scores(setup):
    model, _, examples, batch = setup
    N, S = batch.tokens.shape
    none = torch.zeros(N, S, S, dtype=torch.bool)
    torch.testing.assert_close(knock_out(model, batch, [(0, 1)], none), plain_logits(model, batch))
    cut = knock_out(model, batch, [(0, 0)], binding_edges(examples, S))
    assert not torch.allclose(cut, plain_logits(model, batch))
    assert no_hooks_left(model)


def test_binding_edges_join_each_name_to_the_tokens_of_its_own_action():
    examples = CorefTask("zh").examples(5, "long", seed=2) + CorefTask("en").examples(5, "test")
    S = max(len(e.tokens) for e in examples) + 2
    own, other = binding_edges(examples, S), binding_edges(examples, S, shift=1)
    for n, e in enumerate(examples):
        for i, name in enumerate(e.candidates):
            keys = own[n, name].nonzero().flatten().tolist()
            assert [e.tokens[k] for k in keys] == tokenize(e.verbs[i])
            assert keys[0] == e.actions[i]
        assert own[n].sum() == other[n].sum()  # the control cuts as many edges
        assert not (own[n] & other[n]).any()
    assert torch.equal(binding_edges(examples, S, shift=12), own)  # 12: a multiple of 4 and 6


def test_hooks_are_removed_and_the_mode_restored_after_an_error(setup):
    model, _, _, batch = setup
    model.train()
    broken = batch._replace(tokens=batch.tokens.masked_fill(batch.tokens > 0, 10_000))
    with pytest.raises(IndexError):
        run_with_residuals(model, broken)
    assert model.training and no_hooks_left(model)
    model.eval()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m, b: patch_residual(m, b, 3, b.pronoun, torch.zeros(len(b.pronoun), 32)), "depth"),
        (lambda m, b: patch_residual(m, b, 0, b.pronoun[:3], torch.zeros(3, 32)), "(N,)"),
        (lambda m, b: patch_residual(m, b, 0, b.pronoun.float(), torch.zeros(24, 32)), "integer"),
        (lambda m, b: patch_residual(m, b, 0, b.pronoun + 100, torch.zeros(24, 32)), "[0, S)"),
        (lambda m, b: patch_residual(m, b, 0, b.pronoun, torch.zeros(24, 31)), "(K, E) = (24, 32)"),
        (lambda m, b: patch_residual(m, b, 0, b.candidates, torch.zeros(24, 32)), "(K, E) = (96"),
        (
            lambda m, b: patch_from(m, b, b._replace(tokens=b.tokens[:5]), 0, b.pronoun),
            "same number",
        ),
        (
            lambda m, b: patch_from(m, b, b, 0, b.pronoun, b.key_padding_mask.long().argmax(1)),
            "not padding",
        ),
        (lambda m, b: knock_out(m, b, [(2, 0)], torch.zeros(1, dtype=torch.bool)), "layer"),
        (lambda m, b: knock_out(m, b, [(0, 2)], torch.zeros(1, dtype=torch.bool)), "head"),
        (lambda m, b: knock_out(m, b, (1, 0), torch.zeros(1, dtype=torch.bool)), "[(1, 0)]"),
        (lambda m, b: knock_out(m, b, [], torch.zeros(1, dtype=torch.bool)), "(layer, head)"),
        (lambda m, b: knock_out(m, b, [(0, 0)], torch.zeros(24, 5, 5)), "bool tensor"),
        (
            lambda m, b: knock_out(m, b, [(0, 0)], torch.zeros(24, 5, 5, dtype=torch.bool)),
            "(N, S, S) = (24,",
        ),
        (
            lambda m, b: patch_effect(m.run(b)[0][:, :3], m.run(b)[0], m.run(b)[0], b, b),
            "patched must have shape",
        ),
    ],
)
def test_bad_arguments_are_named(setup, call, message):
    model, _, _, batch = setup
    with pytest.raises(ValueError, match=re.escape(message)):
        call(model, batch)


def test_a_model_without_an_encoder_is_refused():
    with pytest.raises(TypeError, match="embedding"):
        residual_points(torch.nn.Linear(2, 2))


def test_a_cached_source_run_gives_the_same_patch(setup):
    model, vocab, examples, clean = setup
    source = collate([swap_cue(e) for e in examples], vocab)
    _, residuals = run_with_residuals(model, source)
    torch.testing.assert_close(
        patch_from(model, clean, source, 2, clean.candidates, residuals=residuals),
        patch_from(model, clean, source, 2, clean.candidates),
    )
    with pytest.raises(ValueError, match="residuals must be"):
        patch_from(model, clean, source, 2, clean.pronoun, residuals=residuals[:2])
