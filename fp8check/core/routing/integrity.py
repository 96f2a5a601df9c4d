"""Header-level integrity: every FP8 weight has the scales its strategy needs, with the right shape and dtype.

Which scales a module needs is its format's answer (fp8check.core.formats, expected_tensors: the tensors the
scheme's create_weights registers); the checks of shape, dtype and presence are the same for every format.

A missing block scale loads silently in vLLM and only the outputs are wrong (vllm#57108), so each problem
is an error naming the tensor.
"""

from __future__ import annotations

import math

from fp8check.core.checkpoint.safetensors_header import FP8_DTYPES, TensorInfo
from fp8check.core.errors import printable
from fp8check.core.formats.base import Assignment, ExpectedTensors, WeightScale
from fp8check.core.formats.registry import FORMATS
from fp8check.core.model.modules import LinearModule, Shard
from fp8check.core.vocabulary import Strategy

SCALE_DTYPES = ("F32", "BF16", "F16")
E8M0 = "F8_E8M0"


def check_module(module: LinearModule, assignment: Assignment) -> tuple[list[str], list[str]]:
    """(errors, warnings) for one module's tensors under the quantization vLLM will give it."""
    errors: list[str] = []
    warnings: list[str] = []
    method = assignment.method if not assignment.error else None
    quantized = method is not None
    expected = FORMATS[method].expected_tensors(assignment) if method is not None else None
    for shard in module.shards:
        weight = shard.weight
        if not quantized:
            if weight.dtype in FP8_DTYPES and not assignment.error and shard.name not in module.dequantized:
                errors.append(f"{_t(weight)} is {weight.dtype} but vLLM treats this layer as unquantized "
                              f"({assignment.reason}): the raw FP8 values would be loaded unscaled")
        elif assignment.online and weight.dtype in FP8_DTYPES:
            errors.append(f"{_t(weight)} is {weight.dtype}, but online quantization (--quantization) quantizes an "
                          "unquantized checkpoint at load: vLLM would load the raw FP8 values into a "
                          "bfloat16/float16 parameter unscaled")
        elif expected is not None:
            _check_shard(shard, expected, errors, warnings, listable=module.vllm_names is None or bool(
                module.vllm_names[0]), chunk_rows=_chunk_scale_rows(module, expected), transposed=module.transposed)
            _held_qkv(module, shard, expected, errors)
    return errors, warnings


def _chunk_scale_rows(module: LinearModule, expected: ExpectedTensors) -> int | None:
    """The block-scale rows of MiMo-V2-Pro's fused qkv_proj (LinearModule.qkv_chunks) tiled per checkpoint chunk,
    which mimo_v2.py _shard_fp8_qkv_proj reads beside one continuous grid: chunks x ceil(rows per chunk / 128)."""
    scale = expected.weight_scale
    rows = module.shards[0].weight.shape[0]
    if not module.qkv_chunks or scale is None or scale.suffix != "weight_scale_inv" \
            or scale.strategy != Strategy.BLOCK or rows % module.qkv_chunks:
        return None
    return module.qkv_chunks * math.ceil(rows // module.qkv_chunks / 128)


def _held_qkv(module: LinearModule, shard: Shard, expected: ExpectedTensors, errors: list[str]) -> None:
    """mimo_v2.py MiMoV2Model._try_load_fp8_qkv_proj takes a float8_e4m3fn qkv_proj.weight stored fused and holds it
    until its qkv_proj.weight_scale_inv arrives: under a format whose scale is another tensor it never loads."""
    scale = expected.weight_scale
    if module.qkv_chunks and shard.weight.dtype == "F8_E4M3" and scale is not None and \
            scale.suffix != "weight_scale_inv":
        errors.append(f"{_t(shard.weight)} is never loaded: vLLM's MiMo-V2 loader (mimo_v2.py _try_load_fp8_qkv_proj) "
                      f"holds a fused FP8 qkv_proj.weight until a qkv_proj.weight_scale_inv arrives, and this format's "
                      f"scale is {scale.suffix}, so the layer keeps uninitialized memory without an error; export it "
                      "as native fp8 block scales (weight_scale_inv) or store q_proj / k_proj / v_proj")


def uses_e8m0_scales(module: LinearModule) -> bool:
    return any(info.dtype == E8M0 for shard in module.shards for info in shard.side.values())


def _check_shard(shard: Shard, expected: ExpectedTensors, errors: list[str], warnings: list[str],
                 listable: bool, chunk_rows: int | None = None, transposed: bool = False) -> None:
    """`listable`: a layer list of the quantization config can name the module (False: the model file builds it
    without a prefix, Arch.quant_prefixes' NO_HEAD_PREFIX); `chunk_rows`: a block scale may also have these rows
    (_chunk_scale_rows); `transposed`: the weight is stored [in, out] and vLLM's loader transposes it alone
    (LinearModule.transposed)."""
    scale = expected.weight_scale
    if scale is not None:
        _fp8_weight(shard.weight, errors, warnings, listable)
        _scale(shard, scale, errors, chunk_rows, transposed)
        stored = shard.side.get(scale.suffix)
        n, k = shard.weight.shape
        if transposed and n == k and stored is not None and stored.numel > 1:
            warnings.append(f"{_t(stored)}: the weight is stored [in, out] and vLLM's loader transposes the weight "
                            "alone (gpt2.py _transpose_conv1d); on a square weight the header cannot tell whether "
                            "this scale was written for vLLM's [out, in] or for the stored orientation, where it "
                            "would scale the wrong rows")
        if scale.stray and scale.stray in shard.side:
            warnings.append(f"{_t(shard.side[scale.stray])}: {scale.stray_note}")
        if scale.partial_blocks and scale.block:
            (n, k), block = shard.weight.shape, scale.block
            if n % block[0] or k % block[1]:
                warnings.append(f"{_t(shard.weight)} {list(shard.weight.shape)} is not a multiple of block "
                                f"{list(block)}: the last block row/column is partial (padded scales)")
    _input_scale(shard, expected.static_input, errors, warnings)


def _fp8_weight(weight: TensorInfo, errors: list[str], warnings: list[str], listable: bool) -> None:
    if weight.dtype not in FP8_DTYPES:
        # ReplicatedLinear / ColumnParallelLinear weight_loader: param.data.copy_(loaded_weight), no dtype check
        # (0.32+ only logs one); create_fp8_scale_parameter fills the missing scale with finfo(float32).min.
        fix = ("list the layer in the config's ignore list (ignored_layers, modules_to_not_convert, ignore or "
               "exclude)" if listable else "no ignore / exclude entry can name it (the model file builds it without "
               "a prefix, so the config's lists are matched against ''): export it in FP8 with its scales, or use "
               "a format that leaves the LM head unquantized")
        errors.append(f"{_t(weight)} is {weight.dtype}, but the quantization config makes it an FP8 layer: vLLM "
                      "copies it unscaled into a float8_e4m3fn parameter (values below 2^-9 flush to zero, beyond "
                      "±448 saturate) and a scale it lacks keeps its -3.4e38 placeholder, so the layer computes "
                      f"garbage without an error; {fix}")
    elif weight.dtype != "F8_E4M3":
        warnings.append(f"{_t(weight)} is {weight.dtype}: vLLM creates float8_e4m3fn parameters and casts on load "
                        "(values beyond ±448 saturate)")


def _scale(shard: Shard, expected: WeightScale, errors: list[str], chunk_rows: int | None = None,
           transposed: bool = False) -> None:
    suffix, strategy = expected.suffix, expected.strategy
    scale = shard.side.get(suffix)
    n, k = shard.weight.shape
    want = expected.shape(n, k) if expected.shape else _expected_shape(strategy, n, k, expected.block,
                                                                      expected.group_size)
    if chunk_rows and scale is not None and want is not None and scale.shape == (chunk_rows, *want[1:]):
        want = scale.shape
    if scale is None:
        shape = "a single element" if want is None else str(list(want))
        errors.append(f"{shard.name}.{suffix} is missing: the {strategy} FP8 weight {_t(shard.weight)} needs a "
                      f"scale of shape {shape}; without it vLLM loads the layer silently and computes garbage")
        return
    allowed = expected.dtypes or (SCALE_DTYPES + ((E8M0,) if strategy == Strategy.BLOCK else ()))
    if scale.dtype not in allowed:
        errors.append(f"{_t(scale)} has dtype {scale.dtype}; a {strategy} scale must be one of {', '.join(allowed)}")
    if want is None:
        if scale.numel != 1:
            errors.append(f"{_t(scale)} has shape {list(scale.shape)}, but a per-tensor scale holds one element")
    elif scale.shape != want and not (strategy == Strategy.CHANNEL and not expected.shape and scale.shape == (n,)):
        stored = (f" (the weight is stored [in, out] = {list(shard.weight.shape[::-1])} and vLLM's loader transposes "
                  "the weight alone, not its scales: gpt2.py _transpose_conv1d)" if transposed else "")
        errors.append(f"{_t(scale)} has shape {list(scale.shape)}, but a {strategy} scale for weight "
                      f"{list(shard.weight.shape)} must be {list(want)}{stored}")


def _input_scale(shard: Shard, static_input: bool, errors: list[str], warnings: list[str]) -> None:
    scale = shard.side.get("input_scale")
    if static_input:
        if scale is None:
            errors.append(f"{shard.name}.input_scale is missing: static FP8 activations need a per-tensor input scale")
        elif scale.numel != 1:
            errors.append(f"{_t(scale)} has shape {list(scale.shape)}, but a static input scale holds one element")
    elif scale is not None:
        warnings.append(f"{_t(scale)} is present but activations are dynamic: vLLM ignores it")


def _expected_shape(strategy: str, n: int, k: int, block, group_size) -> tuple[int, ...] | None:
    if strategy == Strategy.TENSOR:
        return None
    if strategy == Strategy.CHANNEL:
        return (n, 1)
    if strategy == Strategy.BLOCK:
        return (math.ceil(n / block[0]), math.ceil(k / block[1]))
    if strategy == Strategy.GROUP and group_size:
        return (n, math.ceil(k / group_size))
    return None


def _t(info: TensorInfo) -> str:
    return f"{printable(info.name)} ({info.file})"
