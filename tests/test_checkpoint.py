"""One checkpoint format for every model: tensors and config in safetensors, no pickle."""

import pytest
import torch
from safetensors.torch import save_file

from attnbook.checkpoint import (
    load_checkpoint,
    read_training_metadata,
    save_checkpoint,
    training_metadata,
)
from attnbook.models.detective import Detective, DetectiveConfig
from attnbook.models.lookup_model import LookupModel, LookupModelConfig
from attnbook.models.toy import ToyConfig, ToyModel
from attnbook.train import TrainConfig


def models():
    torch.manual_seed(0)
    return [
        Detective(DetectiveConfig(20, nhead=4, d_model=16)).eval(),
        LookupModel(LookupModelConfig(vocab_size=12, embed_dim=8, num_heads=2)).eval(),
        ToyModel(ToyConfig(embed_dim=8, num_heads=2, attention="linear")).eval(),
    ]


@pytest.mark.parametrize("model", models(), ids=lambda m: type(m).__name__)
def test_save_then_load_rebuilds_the_same_model_without_pickle(tmp_path, model):
    path = save_checkpoint(model, tmp_path / "sub" / "m.safetensors")
    assert not path.read_bytes().startswith(b"\x80")  # a pickle would start with PROTO
    loaded = load_checkpoint(path)
    assert type(loaded) is type(model) and loaded.config == model.config
    assert not loaded.training
    for (name, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a, b), name


def test_the_training_record_travels_with_the_weights(tmp_path):
    model = models()[0]
    record = training_metadata(TrainConfig(steps=7, seed=3), init_seed=5)
    path = save_checkpoint(model, tmp_path / "m.safetensors", training=record)
    assert read_training_metadata(path) == record
    assert record["train_config"]["steps"] == 7 and record["init_seed"] == 5
    assert record["torch"] == torch.__version__
    assert read_training_metadata(save_checkpoint(model, tmp_path / "bare.safetensors")) == {}


def test_loading_a_file_without_a_model_name_is_explained(tmp_path):
    save_file({"x": torch.zeros(1)}, str(tmp_path / "x.safetensors"))
    with pytest.raises(ValueError, match="no model name and config"):
        load_checkpoint(tmp_path / "x.safetensors")


def test_saving_a_model_the_format_does_not_know_is_refused(tmp_path):
    with pytest.raises(TypeError, match="save_checkpoint saves the book's models"):
        save_checkpoint(torch.nn.Linear(2, 2), tmp_path / "x.safetensors")
