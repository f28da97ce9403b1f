"""The complete model: teacher forcing is causal, cached greedy decoding equals the full
recomputation (tokens, and logits to 1e-5), and bad input is refused with a named error."""

import pytest
import torch

from attnbook.measure.cost import counted_rows
from attnbook.models.seq2seq import Seq2SeqConfig, Seq2SeqTransformer, greedy_decode, seq2seq_loss
from attnbook.tasks.numbers import BOS, EOS, encode_numbers, number_vocabulary

VOCAB = number_vocabulary()
BOS_ID, EOS_ID = VOCAB.stoi[BOS], VOCAB.stoi[EOS]


def model(norm_first=True, num_layers=2, positions="learned", seed=0):
    torch.manual_seed(seed)
    config = Seq2SeqConfig(
        len(VOCAB), d_model=32, nhead=4, num_layers=num_layers, dim_feedforward=48,
        norm_first=norm_first, positions=positions,
    )  # fmt: skip
    return Seq2SeqTransformer(config).eval()


def randomise_norms(m):
    """Layer norms with non-trivial weights, so that a misplaced norm cannot go unnoticed."""
    with torch.no_grad():
        for module in m.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.normal_(1.0, 0.3)
                module.bias.normal_(0.0, 0.3)
    return m


# Sources of 1 to 5 words in one batch: every row but the longest is padded.
SRC, TGT = encode_numbers([7, 312, 40, 999, 105], VOCAB)


def test_the_batch_has_padding_in_the_source():
    assert (SRC == VOCAB.pad_id).any() and SRC.size(0) > 1


@pytest.mark.parametrize("positions", ["learned", "sinusoidal"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_cached_decoding_equals_full_recomputation(norm_first, positions):
    m = randomise_norms(model(norm_first, num_layers=3, positions=positions))
    cached, cached_logits = greedy_decode(m, SRC, BOS_ID, EOS_ID, max_len=8)
    full, full_logits = greedy_decode(m, SRC, BOS_ID, EOS_ID, max_len=8, use_cache=False)
    assert torch.equal(cached, full)
    torch.testing.assert_close(cached_logits, full_logits, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_each_cached_step_equals_the_teacher_forced_logits(norm_first):
    m = randomise_norms(model(norm_first))
    memory, padding = m.encode(SRC)
    expected = m.decode(TGT, memory, padding)  # (N, T, V)
    cache = m.start_cache(memory, padding)
    for t in range(TGT.size(1)):
        logits, cache = m.decode_step(TGT[:, t], cache)
        torch.testing.assert_close(logits, expected[:, t], rtol=1e-5, atol=1e-5)
    assert cache.length == TGT.size(1)


def test_padding_in_the_source_changes_nothing():
    m = model()
    alone, _ = greedy_decode(m, SRC[:1, :1], BOS_ID, EOS_ID, max_len=6)  # "seven", unpadded
    batched, _ = greedy_decode(m, SRC, BOS_ID, EOS_ID, max_len=6)
    assert torch.equal(batched[0, : alone.size(1)], alone[0])


def test_decoding_starts_with_bos_and_pads_after_eos():
    m = model()
    with torch.no_grad():
        m.output.bias[EOS_ID] = 100.0  # every row ends at once
    tokens, logits = greedy_decode(m, SRC, BOS_ID, EOS_ID, max_len=6)
    assert tokens.shape == (5, 2) and logits.shape == (5, 1, len(VOCAB))
    assert (tokens[:, 0] == BOS_ID).all() and (tokens[:, 1] == EOS_ID).all()


def test_teacher_forcing_is_causal():
    m = model()
    changed = TGT.clone()
    changed[:, -1] = VOCAB.stoi["5"]
    torch.testing.assert_close(m(SRC, changed)[:, :-1], m(SRC, TGT)[:, :-1])


def test_loss_ignores_padding_and_is_log_vocabulary_for_uniform_logits():
    m = model()
    with torch.no_grad():
        m.output.weight.zero_()
        m.output.bias.zero_()
    loss = seq2seq_loss(m, (SRC, TGT))
    torch.testing.assert_close(loss, torch.tensor(float(len(VOCAB))).log())


def test_decoding_refuses_a_model_in_training_mode():
    with pytest.raises(ValueError, match="training mode"):
        greedy_decode(model().train(), SRC, BOS_ID, EOS_ID, max_len=4)


@pytest.mark.parametrize(
    "src, match",
    [
        (SRC.float(), r"src must be integer ids of shape \(N, length\)"),
        (SRC[0], r"src must be integer ids of shape \(N, length\); got shape \(5,\)"),
        (SRC.index_fill(1, torch.tensor([3]), 50), r"vocab_size = 43\); got id 50 at \[0, 3\]"),
        (SRC - 1, r"src ids must be in \[0, vocab_size = 43\); got id -1 at \[0, 1\]"),
    ],
)
def test_bad_source_is_refused_with_its_shape(src, match):
    with pytest.raises(ValueError, match=match):
        greedy_decode(model(), src, BOS_ID, EOS_ID, max_len=4)


def test_source_must_be_a_tensor():
    with pytest.raises(TypeError, match="src must be a torch.Tensor; got list"):
        greedy_decode(model(), SRC.tolist(), BOS_ID, EOS_ID, max_len=4)


@pytest.mark.parametrize("max_len", [0, 16, 2.0])
def test_max_len_must_fit_the_position_table(max_len):
    with pytest.raises(
        ValueError, match=r"max_len must be an integer in \[1, config.max_len - 1 = 15\]"
    ):
        greedy_decode(model(), SRC, BOS_ID, EOS_ID, max_len=max_len)


@pytest.mark.parametrize("name", ["bos_id", "eos_id"])
def test_special_ids_must_be_in_the_vocabulary(name):
    ids = {"bos_id": BOS_ID, "eos_id": EOS_ID, name: 43}
    with pytest.raises(ValueError, match=f"{name} must be an id in"):
        greedy_decode(model(), SRC, max_len=4, **ids)


def test_decode_step_refuses_a_batch_of_sequences():
    m = model()
    cache = m.start_cache(*m.encode(SRC))
    with pytest.raises(
        ValueError, match=r"token must be integer ids of shape \(N,\); got shape \(5, 2\)"
    ):
        m.decode_step(TGT[:, :2], cache)


def test_decode_step_refuses_a_token_per_other_batch():
    m = model()
    cache = m.start_cache(*m.encode(SRC))
    with pytest.raises(
        ValueError, match=r"one id per cached sequence, \(N,\) = \(5,\); got \(3,\)"
    ):
        m.decode_step(TGT[:3, 0], cache)


def test_decode_step_refuses_training_mode():
    """The step skips attention-weight dropout, so in training mode it would not equal decode."""
    m = model()
    cache = m.start_cache(*m.encode(SRC))
    m.train()
    with pytest.raises(ValueError, match=r"decode_step is for inference: the model is in training"):
        m.decode_step(TGT[:, 0], cache)


def test_decode_step_updates_the_cache_in_place_and_returns_it():
    m = model()
    cache = m.start_cache(*m.encode(SRC))
    _, returned = m.decode_step(TGT[:, 0], cache)
    assert returned is cache and cache.length == 1


def count_projected_rows(m, use_cache):
    """Rows (vectors) each kind of decoder projection sees while decoding SRC greedily."""
    groups = {
        f"{attn}.{proj}": [getattr(getattr(layer, attn), proj) for layer in m.decoder.layers]
        for attn in ("self_attn", "cross_attn")
        for proj in ("q_proj", "k_proj", "v_proj")
    }
    decoded = []
    rows = counted_rows(
        groups,
        lambda: decoded.append(
            greedy_decode(m, SRC, BOS_ID, EOS_ID, max_len=8, use_cache=use_cache)
        ),
    )
    return rows, decoded[0][0].size(1) - 1


def test_the_cache_projects_each_position_and_the_memory_once():
    """A cache that recomputed the prefix or the memory at every step would fail this count."""
    m = model(num_layers=3)
    (N, S), n = SRC.shape, 3
    rows, T = count_projected_rows(m, use_cache=True)
    assert T > 1  # several steps, or the counts could not tell caching from recomputing
    for attn in ("self_attn", "cross_attn"):
        assert rows[f"{attn}.q_proj"] == n * N * T  # only the newest query is ever needed
    for proj in ("k_proj", "v_proj"):
        assert rows[f"self_attn.{proj}"] == n * N * T  # each position once
        assert rows[f"cross_attn.{proj}"] == n * N * S  # the memory once, before the first step


def test_without_the_cache_every_step_recomputes_the_prefix_and_the_memory():
    m = model(num_layers=3)
    (N, S), n = SRC.shape, 3
    rows, T = count_projected_rows(m, use_cache=False)
    for proj in ("k_proj", "v_proj"):
        assert rows[f"self_attn.{proj}"] == n * N * T * (T + 1) // 2  # 1 + 2 + ... + T
        assert rows[f"cross_attn.{proj}"] == n * N * S * T


def test_decode_step_refuses_to_run_past_max_len():
    m = model()
    cache = m.start_cache(*m.encode(SRC))
    token = TGT[:, 0]
    for _ in range(m.config.max_len):
        _, cache = m.decode_step(token, cache)
    with pytest.raises(ValueError, match="the cache holds 16 positions; max_len = 16"):
        m.decode_step(token, cache)


def test_pad_id_must_be_in_the_vocabulary():
    with pytest.raises(ValueError, match=r"pad_id must be in \[0, vocab_size = 10\)"):
        Seq2SeqTransformer(Seq2SeqConfig(10, pad_id=10))


def test_forward_returns_logits_for_every_target_position():
    m = model()
    logits = m(SRC, TGT)
    assert logits.shape == (5, TGT.size(1), len(VOCAB))
