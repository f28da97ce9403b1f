"""One checkpoint format for every model of the book: safetensors, with the config as text.

``torch.save(model)`` pickles the model: loading it runs code from the file, and it breaks as soon
as the class changes. :func:`save_checkpoint` writes only the tensors, with
`safetensors <https://huggingface.co/docs/safetensors>`_, and puts the model's class name, its
configuration (a dataclass, as JSON) and, optionally, a record of how it was trained into the
file's metadata; :func:`load_checkpoint` rebuilds the model from the library's class.
"""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from pathlib import Path

import torch
from torch import nn

from attnbook.models.detective import Detective, DetectiveConfig
from attnbook.models.lookup_model import LookupModel, LookupModelConfig
from attnbook.models.toy import ToyConfig, ToyModel
from attnbook.train import TrainConfig

__all__ = [
    "save_checkpoint",
    "load_checkpoint",
    "read_training_metadata",
    "training_metadata",
    "MODELS",
]

#: Class name -> (model class, its config dataclass) — the models a checkpoint can hold.
MODELS: dict[str, tuple[type[nn.Module], type]] = {
    "Detective": (Detective, DetectiveConfig),
    "LookupModel": (LookupModel, LookupModelConfig),
    "ToyModel": (ToyModel, ToyConfig),
}


def save_checkpoint(model: nn.Module, path: str | Path, training: dict | None = None) -> Path:
    """Write ``model``'s weights and config to ``path`` (safetensors, no pickle).

    Args:
        model: one of the book's models (:data:`MODELS`), with its dataclass ``config``.
        path: the file to write; its folder is created if needed.
        training: stored as JSON if given: how the weights were made, for example
            :func:`training_metadata`'s record of the run, the PyTorch version and CPU kernels.
    """
    from safetensors.torch import save_file

    name = type(model).__name__
    if name not in MODELS or not is_dataclass(getattr(model, "config", None)):
        raise TypeError(f"save_checkpoint saves the book's models {sorted(MODELS)}; got {name}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    metadata = {"model": name, "config": json.dumps(asdict(model.config))}
    if training is not None:
        metadata["training"] = json.dumps(training)
    save_file(state, str(path), metadata=metadata)
    return path


def _metadata(path: str | Path) -> dict[str, str]:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        return f.metadata() or {}


def load_checkpoint(path: str | Path) -> nn.Module:
    """The model that :func:`save_checkpoint` wrote to ``path``, rebuilt and in eval mode."""
    from safetensors.torch import load_file

    metadata = _metadata(path)
    if metadata.get("model") not in MODELS or "config" not in metadata:
        raise ValueError(
            f"{path} has no model name and config in its metadata (got keys "
            f"{sorted(metadata)}); was it written by save_checkpoint?"
        )
    model_class, config_class = MODELS[metadata["model"]]
    model = model_class(config_class(**json.loads(metadata["config"])))
    model.load_state_dict(load_file(str(path)))
    return model.eval()


def read_training_metadata(path: str | Path) -> dict:
    """The ``training`` record stored in a checkpoint ({} if none)."""
    return json.loads(_metadata(path).get("training", "{}"))


def training_metadata(train_config: TrainConfig, init_seed: int = 0) -> dict:
    """A record of how a checkpoint was made: the run, the PyTorch version, the CPU kernels."""
    return {
        "train_config": asdict(train_config),
        "init_seed": init_seed,
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
    }
