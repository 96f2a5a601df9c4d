"""Scheme and kernel selection for one module, mirroring vLLM's compressed-tensors and Fp8Config paths.

Order of failure is vLLM's: scheme selection, the scheme's capability gate, TP block-shape validation, kernel
selection (all at model construction), then post-load / first-forward failures of the chosen kernel.
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.formats.matching import Assignment
from fp8check.core.model.modules import LAYER
from fp8check.core.formats.config import ACTIVATION_FORMATS, QuantArgs
from fp8check.core.model.tp import TPLayout, block_shape_error
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.cuda import cutlass_fp8_supported
from fp8check.kernels.quant_keys import (
    KernelConfig, QuantKey, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8Static128BlockSym, kFp8StaticChannelSym,
    kFp8StaticTensorSym,
)
from fp8check.kernels.registry import FP8, FP8_BLOCK, W8A16_FP8, KernelChoice, choose_kernel
from fp8check.core.records import Backend

UNQUANTIZED = "UnquantizedLinearMethod"
# ParallelLMHead is a VocabParallelEmbedding, not a LinearBase: no FP8 config quantizes it, and vLLM builds it with
# UnquantizedEmbeddingMethod (vocab_parallel_embedding.py).
UNQUANTIZED_EMBEDDING = "UnquantizedEmbeddingMethod"
W8A8_FP8 = "CompressedTensorsW8A8Fp8"
W8A16_FP8_SCHEME = "CompressedTensorsW8A16Fp8"
FP8_METHOD = "Fp8LinearMethod"
SCHEME_MIN_CAPABILITY = {
    "CompressedTensorsWNA16": 75, W8A8_FP8: 89, W8A16_FP8_SCHEME: 75, "CompressedTensorsW8A8Int8": 75,
    "CompressedTensorsW4A8Fp8": 90, "CompressedTensorsW4A4Fp4": 75, "CompressedTensorsW4A4Mxfp4": 80,
    "CompressedTensorsW8A8Mxfp8": 75,
}
# Weight strategies vLLM's FP8 schemes know (STRATEGY_TO_WEIGHT_QUANT_KEY).
FP8_WEIGHT_STRATEGIES = ("tensor", "channel", "block")


class Route(NamedTuple):
    """Where one module lands: scheme, kernel choice and every error vLLM would raise for it."""

    scheme: str
    choice: KernelChoice | None = None
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    weight_key: str | None = None
    activation_key: str | None = None


def capability_ok(ctx: RoutingContext, minimum: int) -> bool:
    """_check_scheme_supported(error=False): a platform without a capability passes only after PR #43958."""
    if ctx.cc is None:
        return ctx.profile.has(43958)
    return ctx.cc >= minimum


def is_fp8_w8a8(w: QuantArgs | None, a: QuantArgs | None) -> bool:
    if w is None or a is None or w.type != "float" or a.type != "float":
        return False
    if not (w.symmetric and not w.dynamic and w.strategy in FP8_WEIGHT_STRATEGIES):
        return False
    return bool(a.dynamic) or (a.symmetric and a.strategy == "tensor")


def is_fp8_w8a16(w: QuantArgs | None) -> bool:
    return (w is not None and w.type == "float" and w.symmetric and not w.dynamic
            and w.strategy in FP8_WEIGHT_STRATEGIES)


def select_ct_scheme(assignment: Assignment, ctx: RoutingContext, backend: Backend) -> tuple[str | None, str | None]:
    """_get_scheme_from_parts, FP8 rows exact, other rows named: (scheme, error)."""
    w, a, fmt = assignment.weights, assignment.input_activations, assignment.format
    if w is None:
        return UNQUANTIZED, None
    if w.type == "float" and w.num_bits == 4:
        if w.strategy == "tensor_group" and w.group_size == 16:
            if a is not None and not (a.type == "float" and a.num_bits == 4 and a.strategy == "tensor_group"):
                return None, "For NVFP4 weights, input quantization must also be NVFP4 format, None for NVFP4A16"
            return "CompressedTensorsW4A4Fp4", None
        if w.strategy == "group" and w.group_size == 32:
            return "CompressedTensorsW4A4Mxfp4", None
    if w.is_float8 and w.strategy == "group" and w.group_size == 32 and w.scale_dtype == "torch.uint8":
        return "CompressedTensorsW8A8Mxfp8", None
    if w.type == "int" and a is None and w.strategy in ("channel", "group") and fmt == "pack-quantized":
        return "CompressedTensorsWNA16", None
    if fmt in ACTIVATION_FORMATS:  # vLLM keys every FP8 scheme on is_activation_quantization_format(format)
        if is_fp8_w8a8(w, a):
            if ctx.kind == "xpu" and ctx.profile.has(43645):
                # Only the global backend decides the scheme; "torch" opts in from 0.28 (0.27.1's
                # compressed_tensors.py tests linear_backend == "xpu", 0.28.0's in ("xpu", "torch")).
                supported = backend.default in (("xpu", "torch") if ctx.profile.has(49664) else ("xpu",))
                if ctx.profile.has(50787) and w.strategy == "block" and not supported:
                    supported = True  # "On XPU, block quantized weights always use the W8A8 kernel"
            else:
                supported = capability_ok(ctx, SCHEME_MIN_CAPABILITY[W8A8_FP8])
            return (W8A8_FP8 if supported else W8A16_FP8_SCHEME), None
        if is_fp8_w8a16(w):
            return W8A16_FP8_SCHEME, None
        if w.type == "int" and w.num_bits == 8 and a is not None and a.type == "int":
            return "CompressedTensorsW8A8Int8", None
    out = assignment.output_activations
    return None, (f"No compressed-tensors compatible scheme was found for layer_name={LAYER}, "
                  f"weight_quant={w.pydantic_str()}, input_quant={a.pydantic_str() if a else None}, "
                  f"output_quant={out.pydantic_str() if out else None}, format={fmt}")


def _scheme_capability_error(scheme: str, ctx: RoutingContext) -> str | None:
    minimum = SCHEME_MIN_CAPABILITY.get(scheme)
    if minimum is None or ctx.cc is None or ctx.cc >= minimum:
        return None
    return (f"Quantization scheme is not supported for the current GPU. Min capability: {minimum}. "
            f"Current capability: {ctx.cc}.")


def _block_weight_key(block: tuple[int, int], e8m0: bool) -> QuantKey:
    return QuantKey(True, block, "float8_e8m0fnu" if e8m0 else "float32")


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool) -> tuple[str, QuantKey, QuantKey] | str:
    """(quantization key, weight key, activation key) a scheme hands to the selector, or an error string."""
    if scheme == FP8_METHOD:
        if assignment.block:
            return FP8_BLOCK, _block_weight_key(assignment.block, e8m0), QuantKey(False, (1, assignment.block[0]))
        if assignment.static_input:
            act = kFp8StaticTensorSym
        elif ctx.kind == "cuda" and cutlass_fp8_supported(ctx):
            act = kFp8DynamicTokenSym
        else:
            act = kFp8DynamicTensorSym
        return FP8, kFp8StaticTensorSym, act
    w, a = assignment.weights, assignment.input_activations
    static_input = a is not None and not a.dynamic
    if scheme == W8A8_FP8:
        if w.strategy == "block":
            if static_input:
                return ("AssertionError in CompressedTensorsW8A8Fp8: block-quantized weights need dynamic activations "
                        "(is_static_input_scheme is True)")
            return FP8_BLOCK, _block_weight_key(w.block_structure, e8m0), QuantKey(False, (1, w.block_structure[0]))
        weight = kFp8StaticChannelSym if w.strategy == "channel" else kFp8StaticTensorSym
        return FP8, weight, (kFp8StaticTensorSym if static_input else kFp8DynamicTokenSym)
    # CompressedTensorsW8A16Fp8: BLOCK maps to a hard-coded 128x128 key whatever block_structure says.
    weight = {"block": kFp8Static128BlockSym, "channel": kFp8StaticChannelSym}.get(w.strategy, kFp8StaticTensorSym)
    return W8A16_FP8, weight, (kFp8StaticTensorSym if static_input else kFp8DynamicTensorSym)


def route(assignment: Assignment, layout: TPLayout, ctx: RoutingContext, backend: Backend, out_dtype: str,
          e8m0: bool = False) -> Route:
    """Route one module's assignment at one TP size. Pure: the same inputs give the same Route."""
    if assignment.error:
        return Route(scheme=UNQUANTIZED if assignment.method is None else "?", errors=(assignment.error,))
    unquantized = assignment.method is None
    if layout.error:  # divide() asserts in the layer's constructor, quantized or not
        return Route(scheme=UNQUANTIZED if unquantized else "?", errors=(layout.error,))
    if unquantized:
        return Route(scheme=UNQUANTIZED, notes=(assignment.reason,) if assignment.reason else ())
    if assignment.method == "fp8":
        scheme, error = FP8_METHOD, None
    else:
        scheme, error = select_ct_scheme(assignment, ctx, backend)
    if error:
        return Route(scheme=scheme or "?", errors=(error,))
    if scheme not in (W8A8_FP8, W8A16_FP8_SCHEME, FP8_METHOD):
        note = f"{scheme} is not an FP8 scheme; fp8check routes FP8 linear layers only"
        return Route(scheme=scheme, notes=(note,))
    # The scheme's constructor runs first (and asserts for static-input block weights), then get_scheme's
    # capability gate, then create_weights: block-shape validation, kernel selection.
    request = kernel_request(scheme, assignment, ctx, e8m0)
    if isinstance(request, str):
        return Route(scheme=scheme, errors=(request,))
    error = _scheme_capability_error(scheme, ctx)
    if error:
        return Route(scheme=scheme, errors=(error,))
    block = assignment.block if scheme == FP8_METHOD else (assignment.weights.block_structure
                                                          if assignment.weights.strategy == "block" else None)
    if block:
        error = block_shape_error(layout, block, allow_mismatch_escape=scheme == FP8_METHOD)
        if error:
            return Route(scheme=scheme, errors=(error,))
    quantization, weight_key, act_key = request
    cfg = KernelConfig(weight_key=weight_key, activation_key=act_key, out_dtype=out_dtype,
                       weight_dtype="float8_e4m3fn", n=sum(layout.output_partition_sizes),
                       k=layout.input_size_per_partition)
    choice = choose_kernel(quantization, cfg, ctx, backend.for_quantization(quantization))
    errors = tuple(e for e in (choice.error, choice.runtime_error) if e)
    return Route(scheme=scheme, choice=choice, errors=errors, weight_key=weight_key.name, activation_key=act_key.name)

