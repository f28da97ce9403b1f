"""attnbook.lab.sampling: the next-token rules against Hugging Face's, and writing with a cache."""

import pytest
import torch
from transformers.generation.logits_process import TopKLogitsWarper, TopPLogitsWarper

from attnbook.lab.lab_model import LabModel
from attnbook.lab.sampling import generate, next_token_distribution, sample_next
from tests.lab.test_decoding import CONFIG

# The decoding tests' small causal model, as a language model: its classes are its own tokens.
LM = CONFIG.replace(vocab_size=13, num_classes=13)


def language_model(**changes) -> LabModel:
    torch.manual_seed(0)
    return LabModel(LM.replace(**changes)).eval()


def logits(n=64, v=50, seed=0):
    return torch.randn(n, v, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2


@pytest.mark.parametrize("k", [1, 2, 7, 50])
def test_top_k_keeps_what_hugging_face_keeps(k):
    x = logits()
    kept = next_token_distribution(x, top_k=k) > 0
    reference = TopKLogitsWarper(k)(None, x.clone()).isfinite()
    assert torch.equal(kept, reference) and (kept.sum(-1) == k).all()


@pytest.mark.parametrize("p", [0.05, 0.3, 0.9, 0.999])
def test_top_p_keeps_what_hugging_face_keeps(p):
    x = logits()
    kept = next_token_distribution(x, top_p=p) > 0
    reference = TopPLogitsWarper(p)(None, x.clone()).isfinite()
    assert torch.equal(kept, reference)


def test_top_p_keeps_the_smallest_set_that_reaches_p():
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]])
    for p, count in ((0.5, 1), (0.51, 2), (0.8, 2), (0.81, 3), (1.0, 4)):
        kept = next_token_distribution(probs.log(), top_p=p) > 0
        assert kept.sum().item() == count, p


def test_temperature_sharpens_and_flattens():
    x = logits(n=1, v=10)
    p1 = next_token_distribution(x)
    cold, hot = (
        next_token_distribution(x, temperature=0.5),
        next_token_distribution(x, temperature=2.0),
    )
    assert cold.max() > p1.max() > hot.max()
    torch.testing.assert_close(cold, torch.softmax(x * 2, -1))


def test_the_kept_tokens_are_renormalised():
    probs = next_token_distribution(logits(), temperature=0.7, top_k=10, top_p=0.8)
    torch.testing.assert_close(probs.sum(-1), torch.ones(64, dtype=torch.float64))


def test_temperature_zero_is_greedy_and_sampling_follows_the_generator():
    x = logits(n=8, v=20)
    assert torch.equal(sample_next(x, temperature=0), x.argmax(-1))
    draw = [sample_next(x, generator=torch.Generator().manual_seed(3)) for _ in range(2)]
    assert torch.equal(*draw)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"temperature": -1}, "temperature"),
        ({"top_k": 0}, "top_k"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": 1.5}, "top_p"),
        ({"temperature": 0}, "greedy"),
    ],
)
def test_bad_settings_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        next_token_distribution(logits(), **kwargs)


@pytest.mark.parametrize(
    "changes", [{}, {"positions": "rotary", "num_kv_heads": 2}, {"positions": "alibi"}]
)
def test_writing_with_the_cache_gives_the_logits_of_rereading_everything(changes):
    model = language_model(**changes)
    prompt = torch.randint(13, (3, 5), generator=torch.Generator().manual_seed(1))
    cached, cached_logits = generate(model, prompt, 12, temperature=0)
    full, full_logits = generate(model, prompt, 12, temperature=0, use_cache=False)
    assert torch.equal(cached, full) and torch.equal(cached[:, :5], prompt)
    torch.testing.assert_close(cached_logits, full_logits, atol=1e-5, rtol=1e-5)


def test_sampled_writing_is_the_same_with_and_without_the_cache():
    model, prompt = language_model(), torch.zeros(2, 1, dtype=torch.long)
    runs = [
        generate(
            model, prompt, 15, top_k=5, generator=torch.Generator().manual_seed(0), use_cache=c
        )[0]
        for c in (True, False)
    ]
    assert torch.equal(*runs)


def test_generate_refuses_a_model_that_sees_the_future():
    with pytest.raises(ValueError, match="causal"):
        generate(language_model(causal=False), torch.zeros(1, 1, dtype=torch.long), 3)
