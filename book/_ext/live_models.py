"""Copy the models that run in the reader's browser into the built site.

``attnbook.viz.live.live_panel`` fetches ``_static/models/detective.safetensors`` when a reader
opens its panel: the committed checkpoint itself, byte for byte (no second copy of the weights in
another format). It is copied after the build, so it is never listed on any page and only that
panel ever asks for it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

#: Checkpoints served under ``_static/models/`` (this file is in book/_ext, they in book/checkpoints).
CHECKPOINTS = Path(__file__).resolve().parents[1] / "checkpoints"
MODELS = ("detective.safetensors",)


def _copy_models(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "models"
    target.mkdir(parents=True, exist_ok=True)
    for model in MODELS:
        shutil.copyfile(CHECKPOINTS / model, target / model)


def setup(app) -> dict[str, Any]:
    app.connect("build-finished", _copy_models)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
