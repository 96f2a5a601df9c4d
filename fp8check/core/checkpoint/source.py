"""MODEL -> Checkpoint: an existing local folder, else a Hugging Face repo id `org/name[@revision]`.

Repo ids are read header-only from the Hub (fp8check.core.checkpoint.hub), or from the local Hugging Face cache when
HF_HUB_OFFLINE=1. huggingface_hub is imported only for repo ids, so local inspection stays light.
"""

from __future__ import annotations

import os

from fp8check.core.checkpoint.local import Checkpoint, open_local
from fp8check.core.errors import InputError, printable


def open_checkpoint(model: str, revision: str | None = None, token: str | None = None) -> Checkpoint:
    """Open MODEL for inspection, reading metadata only.

    :param model: a checkpoint folder (config.json + *.safetensors), or a Hub repo id `org/name` / `org/name@rev`.
    :param revision: branch, tag or commit of a repo id (same as `@rev`; giving both, they must agree).
    :param token: Hugging Face token for gated/private repos; default HF_TOKEN or the saved login. Never printed.
    """
    if os.path.isdir(model):
        if revision:
            raise InputError(f"{printable(model)}: --revision applies to Hugging Face repo ids, not to a local folder")
        return open_local(model)
    if os.path.exists(model):
        raise InputError(f"{model}: not a folder; point fp8check at the checkpoint folder (config.json + *.safetensors)")
    from fp8check.core.checkpoint import hub

    ref = hub.parse_repo_ref(model, revision)
    if ref is None:
        raise InputError(f"{model}: no such folder (nor a Hugging Face repo id such as org/name or org/name@revision)")
    return hub.open_cached(ref) if hub.offline_mode() else hub.open_remote(ref, token)


def weights_fetcher(model: str, revision: str | None = None, token: str | None = None, quiet: bool = False):
    """For `load`: a function from the tensor names it needs to the folder holding them. A local folder is
    itself; a Hub repo downloads only the shards holding those tensors, through huggingface_hub's cache."""
    if os.path.isdir(model):
        return lambda names: model

    def download(names: set[str]) -> str:
        from fp8check.core.checkpoint import hub

        return hub.download_shards(model, revision, token, quiet=quiet, tensor_names=names)

    return download
