"""The words every stage shares and records are written in: `Status` (what `load` found) and `Strategy` (a scale's
granularity), str enums whose values are what JSON, JUnit and the tables have always shown, and `layer_template`,
the key that collapses a module's rows across layers. Imports nothing of fp8check, so any module may import it."""

from __future__ import annotations

import re
from enum import Enum

_LAYER_INDEX = re.compile(r"\.(\d+)\.")


def layer_template(name: str) -> tuple[str, int | None]:
    """'model.layers.17.mlp.down_proj' -> ('model.layers.{i}.mlp.down_proj', 17), for collapsing rows."""
    match = _LAYER_INDEX.search(name)
    if not match:
        return name, None
    return name[: match.start()] + ".{i}." + name[match.end():], int(match.group(1))


class Words(str, Enum):
    """A str enum that prints as its value: `str()` and f-strings give "not run", not "Status.NOT_RUN", so JSON,
    JUnit and the tables are what they were with plain strings (Python 3.10 has no StrEnum)."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


class Status(Words):
    """What `load` found for a module, an expert or a KV cache, and a module against BASE."""

    OK = "ok"
    WARN = "warn"                      # ran and agrees, with a warning
    FAIL = "FAIL"
    NOT_RUN = "not run"                # vLLM would refuse the layer, or fp8check does not run its method

    @property
    def ok(self) -> bool:
        return self in (Status.OK, Status.WARN)


class Strategy(Words):
    """A weight's (or a KV cache scale's) quantization granularity, every format's in compressed-tensors'
    QuantizationStrategy words (compressed_tensors/quantization/quant_args.py)."""

    TENSOR = "tensor"
    CHANNEL = "channel"                # one scale per output row
    GROUP = "group"                    # one scale per `group_size` inputs of a row (MXFP8: 32)
    BLOCK = "block"                    # one scale per [rows, cols] block
    TOKEN = "token"                    # activations only: one scale per token
    TENSOR_GROUP = "tensor_group"      # NVFP4: groups under a global scale
    ATTN_HEAD = "attn_head"            # KV cache scales: one per attention head


STRATEGY_VALUES = tuple(strategy.value for strategy in Strategy)
