"""The GRU baseline: the decoder sees only the source's final state (so padding and every source
token but through that state change nothing), it plugs into seq2seq_loss and greedy_decode
unchanged, step-by-step decoding equals teacher forcing, and bad input is refused by name."""

import pytest
import torch

from attnbook.models.gru import GRUConfig, GRUSeq2Seq, GRUState
from attnbook.models.seq2seq import greedy_decode, seq2seq_loss
from attnbook.tasks.numbers import BOS, EOS, encode_numbers, number_vocabulary
from attnbook.train import TrainConfig, fit

VOCAB = number_vocabulary()
BOS_ID, EOS_ID = VOCAB.stoi[BOS], VOCAB.stoi[EOS]
SRC, TGT = encode_numbers([7, 312, 40, 999, 105], VOCAB)  # sources of 1 to 5 words


def model(context_every_step=True, num_layers=2, seed=0):
    torch.manual_seed(seed)
    config = GRUConfig(
        len(VOCAB), d_model=16, hidden_size=24, num_layers=num_layers,
        context_every_step=context_every_step, max_len=8,
    )  # fmt: skip
    return GRUSeq2Seq(config).eval()


@pytest.mark.parametrize("context_every_step", [True, False])
def test_teacher_forcing_gives_logits_for_every_target_position(context_every_step):
    m = model(context_every_step)
    assert m(SRC, TGT).shape == (5, TGT.size(1), len(VOCAB))


def test_the_summary_is_one_state_per_layer():
    summary, padding = model().encode(SRC)
    assert summary.shape == (5, 2, 24) and torch.equal(padding, SRC == VOCAB.pad_id)


def test_padding_in_the_source_changes_nothing():
    m = model()
    alone = m(SRC[:1, :1], TGT[:1])  # "seven" without its four padding positions
    torch.testing.assert_close(m(SRC, TGT)[:1], alone)


def test_the_summary_is_the_state_after_the_last_token():
    m = model(num_layers=1)
    outputs, _ = m.encoder(m.src_embed(SRC[3:4]))  # "nine hundred and ninety nine", no padding
    summary, _ = m.encode(SRC[3:4])
    torch.testing.assert_close(summary[:, -1], outputs[:, -1])


def test_the_decoder_sees_the_source_only_through_the_summary():
    m = model()
    summary, padding = m.encode(SRC)
    shuffled = SRC[torch.tensor([1, 0, 2, 3, 4])]  # another source, the same summaries
    torch.testing.assert_close(
        m.decode(TGT, summary, padding), m.decode(TGT, summary, shuffled == 0)
    )


def test_teacher_forcing_is_causal():
    m = model()
    full = m(SRC, TGT)
    changed = TGT.clone()
    changed[:, -1] = 5
    torch.testing.assert_close(m(SRC, changed)[:, :-1], full[:, :-1])


@pytest.mark.parametrize("context_every_step", [True, False])
def test_each_step_equals_the_teacher_forced_logits(context_every_step):
    m = model(context_every_step)
    summary, padding = m.encode(SRC)
    full = m.decode(TGT, summary, padding)
    state = m.start_cache(summary, padding)
    for t in range(TGT.size(1)):
        logits, returned = m.decode_step(TGT[:, t], state)
        assert returned is state
        torch.testing.assert_close(logits, full[:, t], rtol=1e-5, atol=1e-5)


def test_greedy_decode_works_unchanged_with_and_without_the_state():
    m = model()
    cached, cached_logits = greedy_decode(m, SRC, BOS_ID, EOS_ID, max_len=6)
    full, full_logits = greedy_decode(m, SRC, BOS_ID, EOS_ID, max_len=6, use_cache=False)
    assert torch.equal(cached, full) and (cached[:, 0] == BOS_ID).all()
    torch.testing.assert_close(cached_logits, full_logits, rtol=1e-5, atol=1e-5)


def test_seq2seq_loss_is_log_vocabulary_for_uniform_logits():
    m = model()
    with torch.no_grad():
        m.output.weight.zero_()
        m.output.bias.zero_()
    loss = seq2seq_loss(m, (SRC, TGT))
    torch.testing.assert_close(loss, torch.log(torch.tensor(float(len(VOCAB)))))


def test_it_learns_to_copy_a_number_with_the_library_loop():
    numbers = list(range(100))
    torch.manual_seed(0)
    m = GRUSeq2Seq(GRUConfig(len(VOCAB), d_model=16, hidden_size=32, max_len=6))

    def make_batch(n, generator):
        pick = torch.randint(len(numbers), (n,), generator=generator).tolist()
        return encode_numbers([numbers[i] for i in pick], VOCAB)

    config = TrainConfig(steps=60, batch_size=16, lr=1e-2, warmup_steps=10, progress=False)
    history = fit(m, make_batch, seq2seq_loss, config)
    assert sum(history.loss[-10:]) / 10 < 0.5 * history.loss[0]


@pytest.mark.parametrize(
    "src, match",
    [
        (torch.tensor([1, 2]), r"src must be integer ids of shape \(N, length\); got shape \(2,\)"),
        (torch.ones(2, 3), r"src must be integer ids of shape \(N, length\); got shape \(2, 3\)"),
        (
            torch.tensor([[1, 99]]),
            r"src ids must be in \[0, vocab_size = \d+\); got id 99 at \[0, 1\]",
        ),
        (torch.tensor([[5, 0], [0, 0]]), "src row 1 is all padding"),
        (torch.tensor([[0, 5]]), "src must be padded on the right only .* row 0"),
        (torch.zeros(2, 0, dtype=torch.long), "src must have at least one position"),
    ],
)
def test_bad_source_is_refused_with_its_shape(src, match):
    with pytest.raises(ValueError, match=match):
        model().encode(src)


def test_source_must_be_a_tensor():
    with pytest.raises(TypeError, match="src must be a torch.Tensor; got list"):
        model().encode([[1, 2]])


def test_a_summary_of_the_wrong_shape_is_refused():
    m = model()
    with pytest.raises(
        ValueError, match=r"summary must be \(N, Ly, K\) = \(N, 2, 24\); got \(5, 1, 24\)"
    ):
        m.decode(TGT, torch.zeros(5, 1, 24))
    with pytest.raises(
        ValueError, match="summary and tgt must have the same batch size; got 4 and 5"
    ):
        m.decode(TGT, torch.zeros(4, 2, 24))


def test_decode_step_refuses_a_token_per_other_batch():
    m = model()
    state = m.start_cache(*m.encode(SRC))
    assert isinstance(state, GRUState) and state.hidden.shape == (2, 5, 24)
    with pytest.raises(
        ValueError, match=r"token must have one id per sequence, \(N,\) = \(5,\); got \(3,\)"
    ):
        m.decode_step(torch.tensor([1, 2, 3]), state)
    with pytest.raises(ValueError, match=r"token must be integer ids of shape \(N,\)"):
        m.decode_step(TGT[:, :2], state)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"pad_id": 99}, r"pad_id must be in \[0, vocab_size"),
        ({"hidden_size": 0}, "hidden_size must be a positive integer; got 0"),
        ({"num_layers": True}, "num_layers must be a positive integer; got True"),
    ],
)
def test_bad_config_is_refused(change, match):
    with pytest.raises(ValueError, match=match):
        GRUSeq2Seq(GRUConfig(len(VOCAB), **change))


def test_greedy_decode_refuses_a_model_in_training_mode():
    with pytest.raises(ValueError, match="model is in training mode"):
        greedy_decode(model().train(), SRC, BOS_ID, EOS_ID, max_len=4)
