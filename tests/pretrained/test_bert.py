"""The BERT encoder built from attnbook blocks: configuration, weight loading and input checks."""

from __future__ import annotations

import pytest
import torch

from attnbook.blocks import EncoderBlock
from attnbook.pretrained import BertConfig, BertEncoder, load_bert_state

SMALL = BertConfig(
    vocab_size=50, hidden_size=16, num_layers=2, num_heads=4, intermediate_size=32,
    max_positions=12, dropout=0.0,
)  # fmt: skip


def hf_state(model: BertEncoder) -> dict[str, torch.Tensor]:
    """A state dict in Hugging Face names for ``model``'s own weights (plus a pooler)."""
    state = {
        "embeddings.word_embeddings.weight": model.embeddings.word.weight,
        "embeddings.position_embeddings.weight": model.embeddings.position.weight,
        "embeddings.token_type_embeddings.weight": model.embeddings.token_type.weight,
        "embeddings.LayerNorm.weight": model.embeddings.norm.weight,
        "embeddings.LayerNorm.bias": model.embeddings.norm.bias,
        "pooler.dense.weight": torch.zeros(16, 16),
    }
    parts = {
        "attention.self.query": "self_attn.q_proj", "attention.self.key": "self_attn.k_proj",
        "attention.self.value": "self_attn.v_proj", "attention.output.dense": "self_attn.out_proj",
        "attention.output.LayerNorm": "norm1", "intermediate.dense": "ff.linear1",
        "output.dense": "ff.linear2", "output.LayerNorm": "norm2",
    }  # fmt: skip
    for i, block in enumerate(model.encoder.layers):
        for hf, ours in parts.items():
            module = block.get_submodule(ours)
            for p in ("weight", "bias"):
                state[f"bert.encoder.layer.{i}.{hf}.{p}"] = getattr(module, p)
    return {k: v.detach().clone() for k, v in state.items()}


def test_layers_are_post_ln_gelu_blocks_with_bert_epsilon():
    model = BertEncoder(SMALL)
    assert all(isinstance(b, EncoderBlock) and not b.norm_first for b in model.encoder.layers)
    block = model.encoder.layers[0]
    assert block.ff.activation == "gelu" and block.norm1.eps == 1e-12
    assert model.encoder.norm is None  # post-LN: no final norm


def test_loading_a_state_reproduces_the_model():
    torch.manual_seed(0)
    source, target = BertEncoder(SMALL).eval(), BertEncoder(SMALL).eval()
    load_bert_state(target, hf_state(source))
    ids = torch.randint(0, 50, (3, 9))
    mask = torch.ones(3, 9, dtype=torch.long)
    mask[0, 5:] = 0
    torch.testing.assert_close(target(ids, mask)[0], source(ids, mask)[0], atol=0, rtol=0)


def test_a_missing_tensor_is_named():
    model = BertEncoder(SMALL)
    state = hf_state(model)
    del state["bert.encoder.layer.1.output.dense.bias"]
    with pytest.raises(ValueError, match=r"encoder\.layer\.1\.output\.dense\.bias"):
        load_bert_state(model, state)


def test_a_wrong_shape_is_named():
    model = BertEncoder(SMALL)
    state = hf_state(model)
    state["embeddings.word_embeddings.weight"] = torch.zeros(51, 16)
    with pytest.raises(ValueError, match=r"\(51, 16\).*\(50, 16\)"):
        load_bert_state(model, state)


def test_config_from_hf_refuses_other_activations():
    config = {
        "vocab_size": 5, "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2,
        "intermediate_size": 8, "max_position_embeddings": 8, "type_vocab_size": 2,
        "layer_norm_eps": 1e-12, "hidden_act": "relu",
    }  # fmt: skip
    with pytest.raises(ValueError, match="hidden_act"):
        BertConfig.from_hf(config)
    config["hidden_act"] = "gelu"
    assert BertConfig.from_hf(config).num_heads == 2


@pytest.mark.parametrize(
    ("ids", "mask", "error", "match"),
    [
        (torch.zeros(2, 3), None, TypeError, "input_ids must hold integer ids"),
        (torch.zeros(3, dtype=torch.long), None, ValueError, r"input_ids must have shape \(N, L\)"),
        (torch.zeros(1, 13, dtype=torch.long), None, ValueError, "positions up to 12"),
        (torch.full((1, 3), 50), None, ValueError, r"\[0, 50\).*50 to 50"),
        (torch.zeros(2, 3, dtype=torch.long), torch.ones(2, 4), ValueError, r"attention_mask.*\(2, 3\).*\(2, 4\)"),
        ([[1, 2]], None, TypeError, "input_ids must be a torch.Tensor"),
    ],
)  # fmt: skip
def test_bad_input_is_a_clear_error(ids, mask, error, match):
    with pytest.raises(error, match=match):
        BertEncoder(SMALL)(ids, mask)


def test_token_types_are_checked():
    with pytest.raises(ValueError, match=r"token_type_ids must lie in \[0, 2\)"):
        BertEncoder(SMALL)(
            torch.zeros(1, 3, dtype=torch.long), token_type_ids=torch.full((1, 3), 2)
        )


def test_head_mask_switches_heads_off():
    model = BertEncoder(SMALL).eval()
    ids = torch.randint(0, 50, (2, 6))
    ones = torch.ones(2, 4)
    off = ones.clone()
    off[1, 2] = 0
    base, _ = model(ids, head_mask=ones)
    torch.testing.assert_close(base, model(ids)[0])
    assert not torch.allclose(model(ids, head_mask=off)[0], base)
