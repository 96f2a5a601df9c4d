"""The linear kernel registry as a matrix: each kernel of a platform's tables against the weight strategies and
activation schemes vLLM's FP8 schemes request, with the kernel's own reason for every "no".

The answers are the same `is_supported` / `can_implement` calls routing makes (fp8check.kernels.registry,
mirroring vllm/model_executor/kernels/linear/__init__.py), on one representative layer: N = K = 4096 (divisible by
every block and alignment a kernel asks for) and a bfloat16 output. Shape conditions (DeepGEMM's N % 64, CPU AMX's
N % 32, ...) therefore say yes here and are decided per layer by `inspect`. No torch import.
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.kernels.base import RoutingContext
from fp8check.kernels.quant_keys import (
    KernelConfig, QuantKey, kFp8Dynamic128Sym, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8Static128BlockE8M0Sym,
    kFp8Static128BlockSym, kFp8StaticChannelSym, kFp8StaticTensorSym,
)
from fp8check.kernels.registry import FP8, FP8_BLOCK, W8A16_FP8, candidates, check_kernel

REPRESENTATIVE_N = REPRESENTATIVE_K = 4096


class Column(NamedTuple):
    """One (weight strategy, activation scheme) pair as the scheme hands it to the kernel selector (the quant keys
    of each format's kernel_request, fp8check.core.formats)."""

    quantization: str
    weight: str
    activation: str
    weight_key: QuantKey
    activation_key: QuantKey


# Every pair fp8check's schemes request: CompressedTensorsW8A8Fp8 / Fp8LinearMethod (fp8_w8a8, fp8_block_w8a8) and
# CompressedTensorsW8A16Fp8 (w8a16_fp8, whose activation key is a placeholder: activations stay unquantized).
COLUMNS = (
    Column(FP8, "tensor", "static tensor", kFp8StaticTensorSym, kFp8StaticTensorSym),
    Column(FP8, "tensor", "dynamic tensor", kFp8StaticTensorSym, kFp8DynamicTensorSym),
    Column(FP8, "tensor", "dynamic token", kFp8StaticTensorSym, kFp8DynamicTokenSym),
    Column(FP8, "channel", "static tensor", kFp8StaticChannelSym, kFp8StaticTensorSym),
    Column(FP8, "channel", "dynamic token", kFp8StaticChannelSym, kFp8DynamicTokenSym),
    Column(FP8_BLOCK, "block [128, 128]", "dynamic group 128", kFp8Static128BlockSym, kFp8Dynamic128Sym),
    Column(FP8_BLOCK, "block [128, 128] e8m0 scales", "dynamic group 128", kFp8Static128BlockE8M0Sym,
           kFp8Dynamic128Sym),
    Column(W8A16_FP8, "tensor", "none (weight-only)", kFp8StaticTensorSym, kFp8DynamicTensorSym),
    Column(W8A16_FP8, "channel", "none (weight-only)", kFp8StaticChannelSym, kFp8DynamicTensorSym),
    Column(W8A16_FP8, "block [128, 128]", "none (weight-only)", kFp8Static128BlockSym, kFp8DynamicTensorSym),
)


class Cell(NamedTuple):
    ok: bool
    reason: str | None                # the kernel's own reason for "no", without its class name
    chosen: bool = False              # the first kernel of the table that says yes: what auto selects


class KernelRow(NamedTuple):
    kernel: str
    verified: bool
    cells: tuple[Cell, ...]           # one per column of its table


class KernelTable(NamedTuple):
    """One quantization key's table on this platform, in vLLM's priority order."""

    quantization: str
    columns: tuple[Column, ...]
    rows: tuple[KernelRow, ...]


def kernel_matrix(ctx: RoutingContext) -> list[KernelTable]:
    tables = []
    for quantization in dict.fromkeys(c.quantization for c in COLUMNS):
        columns = tuple(c for c in COLUMNS if c.quantization == quantization)
        kernels = candidates(quantization, ctx)
        cells: dict[str, list[Cell]] = {k.name: [] for k in kernels}
        for column in columns:
            cfg = KernelConfig(column.weight_key, column.activation_key, "bfloat16", "float8_e4m3fn",
                               REPRESENTATIVE_N, REPRESENTATIVE_K)
            chosen = False
            for kernel in kernels:
                reason = check_kernel(kernel, cfg, ctx)
                ok = reason is None
                cells[kernel.name].append(Cell(ok, _without_name(reason, kernel.name), ok and not chosen))
                chosen = chosen or ok
        tables.append(KernelTable(quantization, columns,
                                  tuple(KernelRow(k.name, k.verified, tuple(cells[k.name])) for k in kernels)))
    return tables


def _without_name(reason: str | None, name: str) -> str | None:
    """check_kernel returns vLLM's "<Kernel> <reason>."; the row already names the kernel."""
    if reason is None:
        return None
    reason = reason.strip().removeprefix(name).strip()
    return reason[:-1] if reason.endswith("..") else reason  # vLLM appends "." to reasons that end in one

