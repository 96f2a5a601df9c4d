"""Shared fixtures. One checkpoint factory for every test: fp8check.synth.write_checkpoint."""

from __future__ import annotations

import itertools
import os
import sys

import pytest

from fp8check.synth import Spec, write_checkpoint

sys.path.insert(0, os.path.dirname(__file__))  # tests/ct_checkpoints.py
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.pop("VLLM_DISABLED_KERNELS", None)


@pytest.fixture
def make_checkpoint(tmp_path):
    """make_checkpoint(quant="ct-fp8-block", **Spec fields) -> folder path of a freshly written checkpoint."""
    counter = itertools.count()

    def make(spec: Spec | None = None, **overrides) -> str:
        overrides.setdefault("data", "zeros")
        return write_checkpoint(str(tmp_path / f"ckpt{next(counter)}"), spec, **overrides)

    return make
