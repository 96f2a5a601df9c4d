"""vLLM's quant keys (quant_utils.py): what a kernel compares to decide whether it can run a layer."""

from __future__ import annotations

from typing import NamedTuple

PER_TENSOR = (-1, -1)
PER_TOKEN = (1, -1)
PER_CHANNEL = (-1, 1)


class QuantKey(NamedTuple):
    """Frozen like vLLM's ScaleDesc/QuantKey: keys built from a config compare equal to the named ones."""

    static: bool
    group_shape: tuple[int, int]
    scale_dtype: str = "float32"

    @property
    def is_per_group(self) -> bool:
        """vLLM's GroupShape.is_per_group(): row == 1 and col >= 1 (token groups such as 1x128)."""
        return self.group_shape[0] == 1 and self.group_shape[1] >= 1

    @property
    def is_per_tensor(self) -> bool:
        return self.group_shape == PER_TENSOR

    @property
    def name(self) -> str:
        return KEY_NAMES.get(self, f"fp8 {'static' if self.static else 'dynamic'} group{self.group_shape}"
                             + ("" if self.scale_dtype == "float32" else f" {self.scale_dtype} scales"))


kFp8StaticTensorSym = QuantKey(True, PER_TENSOR)
kFp8DynamicTensorSym = QuantKey(False, PER_TENSOR)
kFp8StaticTokenSym = QuantKey(True, PER_TOKEN)
kFp8StaticChannelSym = QuantKey(True, PER_CHANNEL)
kFp8DynamicTokenSym = QuantKey(False, PER_TOKEN)
kFp8Dynamic128Sym = QuantKey(False, (1, 128))
kFp8Dynamic64Sym = QuantKey(False, (1, 64))
kFp8Static128BlockSym = QuantKey(True, (128, 128))
kFp8Static128BlockE8M0Sym = QuantKey(True, (128, 128), "float8_e8m0fnu")
# MXFP8: E4M3 values, one E8M0 scale (stored as uint8) per 1 x 32 group.
kMxfp8Static = QuantKey(True, (1, 32), "uint8")
kMxfp8Dynamic = QuantKey(False, (1, 32), "uint8")

KEY_NAMES = {key: name for name, key in list(globals().items()) if name.startswith(("kFp8", "kMxfp8"))}


class KernelConfig(NamedTuple):
    """What vLLM hands a kernel's can_implement: the keys, dtypes and the per-rank weight shape."""

    weight_key: QuantKey
    activation_key: QuantKey
    out_dtype: str                  # "bfloat16" | "float16"
    weight_dtype: str               # the parameter's dtype: vLLM always creates float8_e4m3fn
    n: int                          # output features of this rank's shard
    k: int                          # input features of this rank's shard
