"""Scheme and kernel selection for one linear module, the order vLLM's LinearBase construction runs in; what
each format decides (its scheme, the keys it hands the selector) comes from fp8check.core.formats.

Order of failure is vLLM's: scheme selection, the scheme's capability gate, TP block-shape validation, kernel
selection (all at model construction), then post-load / first-forward failures of the chosen kernel.
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.formats.base import UNQUANTIZED, Assignment, KernelRefusal, KernelRequest
from fp8check.core.formats.registry import FORMATS
from fp8check.core.model.tp import TPLayout, linear_block_shape_error
from fp8check.core.records import LinearBackendOption
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.quant_keys import KernelConfig
from fp8check.kernels.registry import KernelChoice, choose_kernel

# ParallelLMHead is a VocabParallelEmbedding, not a LinearBase: no FP8 config quantizes it, and vLLM builds it with
# UnquantizedEmbeddingMethod (vocab_parallel_embedding.py).
UNQUANTIZED_EMBEDDING = "UnquantizedEmbeddingMethod"


class Route(NamedTuple):
    """Where one module lands: scheme, kernel choice and every error vLLM would raise for it."""

    scheme: str
    choice: KernelChoice | None = None
    errors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    weight_key: str | None = None
    activation_key: str | None = None
    request: KernelRequest | None = None  # what the scheme handed the kernel selector (load's recipe reads it)


def _scheme_capability_error(minimum: int | None, ctx: RoutingContext) -> str | None:
    if minimum is None or ctx.cc is None or ctx.cc >= minimum:
        return None
    return (f"Quantization scheme is not supported for the current GPU. Min capability: {minimum}. "
            f"Current capability: {ctx.cc}.")


def route(assignment: Assignment, layout: TPLayout, ctx: RoutingContext, backend: LinearBackendOption,
          out_dtype: str, e8m0: bool = False) -> Route:
    """Route one module's assignment at one TP size. Pure: the same inputs give the same Route."""
    if assignment.error:
        return Route(scheme=UNQUANTIZED if assignment.method is None else "?", errors=(assignment.error,))
    unquantized = assignment.method is None
    if layout.error:  # divide() asserts in the layer's constructor, quantized or not
        return Route(scheme=UNQUANTIZED if unquantized else "?", errors=(layout.error,))
    if assignment.method is None:
        return Route(scheme=UNQUANTIZED, notes=(assignment.reason,) if assignment.reason else ())
    quant_format = FORMATS[assignment.method]
    scheme, error = quant_format.linear_scheme(assignment, ctx, backend.default)
    if error or scheme is None:  # linear_scheme gives the scheme or the error vLLM raises
        return Route(scheme=scheme or "?", errors=(error,) if error else ())
    if scheme not in quant_format.fp8_schemes:
        note = f"{scheme} is not an FP8 scheme; fp8check routes FP8 linear layers only"
        return Route(scheme=scheme, notes=(note,))
    # The scheme's constructor runs first (and asserts for static-input block weights), then get_scheme's
    # capability gate, then create_weights: block-shape validation, kernel selection.
    request = quant_format.kernel_request(scheme, assignment, ctx, e8m0)
    if isinstance(request, KernelRefusal):
        return Route(scheme=scheme, errors=(request.error,))
    error = _scheme_capability_error(quant_format.scheme_min_capability.get(scheme), ctx)
    if error:
        return Route(scheme=scheme, errors=(error,))
    if assignment.block and quant_format.validates_block_shape:
        error = linear_block_shape_error(layout, assignment.block,
                                         allow_mismatch_escape=quant_format.block_mismatch_escape)
        if error:
            return Route(scheme=scheme, errors=(error,))
    if quant_format.shape_error is not None:
        error = quant_format.shape_error(assignment, layout, ctx)
        if error:
            return Route(scheme=scheme, errors=(error,))
    quantization = request.quantization
    cfg = KernelConfig(weight_key=request.weight_key, activation_key=request.activation_key, out_dtype=out_dtype,
                       weight_dtype="float8_e4m3fn", n=sum(layout.output_partition_sizes),
                       k=layout.input_size_per_partition)
    choice = choose_kernel(quantization, cfg, ctx, backend.for_quantization(quantization))
    errors = tuple(e for e in (choice.error, choice.runtime_error) if e)
    if choice.kernel and quant_format.kernel_error is not None:  # the scheme refuses the kernel it was given
        refusal = quant_format.kernel_error(scheme, choice.kernel, ctx)
        errors = (refusal,) if refusal else errors
    return Route(scheme=scheme, choice=choice, errors=errors, weight_key=request.weight_key.name,
                 activation_key=request.activation_key.name, request=request)
