"""MODEL -> Checkpoint: a local folder today; Hugging Face repo ids go through fp8check.core.hub."""

from __future__ import annotations

import os

from fp8check.core.checkpoint import Checkpoint, open_local
from fp8check.core.errors import InputError


def open_checkpoint(model: str) -> Checkpoint:
    if os.path.isdir(model):
        return open_local(model)
    if os.path.exists(model):
        raise InputError(f"{model}: not a folder; point fp8check at the checkpoint folder (config.json + *.safetensors)")
    raise InputError(f"{model}: no such folder")
