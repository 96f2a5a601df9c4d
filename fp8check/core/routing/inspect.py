"""inspect: checkpoint -> modules -> routing -> a report of plain records (NamedTuples) the CLI only renders."""

from __future__ import annotations

from functools import lru_cache

from fp8check.core.checkpoint.local import Checkpoint, activation_dtype, paused_gc
from fp8check.core.checkpoint.mistral import MIXTRAL_NO_EXPERTS
from fp8check.core.errors import InputError, printable
from fp8check.core.formats.base import LAYER, Assignment
from fp8check.core.formats.fp8 import NativeFp8Config, block_fp8_config
from fp8check.core.formats.frontdoor import FrontDoor
from fp8check.core.formats.registry import FORMATS, OutOfScopeConfig, assign, describe, front_door, map_layer_lists
from fp8check.core.model.layouts import (
    COLUMN, construction_refusal, experts_tp_error, import_refusal, map_vllm_name, model_arch, quant_config_refusal,
    moe_backend_model_refusal, retired_error, tail_match, transformers_refusal, unlaid_variant, version_refusal,
)
from fp8check.core.model.memory import fit, fits_at, weight_footprint
from fp8check.core.model.modules import LinearModule, ModelLayout, at_tp, build_layout
from fp8check.core.model.shapes import embedding_errors, shape_errors
from fp8check.core.model.tp import tp_layout
from fp8check.core.records import InspectOptions, InspectReport, LayerReport
from fp8check.core.routing.integrity import check_module, uses_e8m0_scales
from fp8check.core.routing.attention import attention_inspector, sliding_share
from fp8check.core.routing.linear import UNQUANTIZED, UNQUANTIZED_EMBEDDING, Route, route
from fp8check.core.formats.base import UNQUANTIZED_MOE
from fp8check.core.routing.known_issues import matching, message
from fp8check.core.routing.moe import inspect_moes, sweep_loads
from fp8check.core.routing.warnings import with_warnings
from fp8check.kernels.base import RoutingContext

TP_SWEEP = tuple(range(1, 17))


def front_door_of(ckpt: Checkpoint, options: InspectOptions, ctx: RoutingContext | None = None) -> FrontDoor:
    """The quant config vLLM builds for this checkpoint under the options, and its model-wide errors; its layer
    lists as the model class's hf_to_vllm_mapper leaves them (map_layer_lists), with what the model file appends
    (Arch.fp8_ignored_layers). `ctx`: the options' routing context
    where the caller built it already."""
    ctx = ctx or RoutingContext.of(options, ckpt.config.sliding.model_type)
    door = front_door(ckpt.config.raw_quantization_config, ckpt.config.quantization_config, ctx,
                      options.quantization, options.allow_deprecated_quantization, activation_dtype(ckpt.config))
    arch = model_arch(ckpt.config, ctx.profile)
    quant = door.quant
    block_fp8 = block_fp8_config(quant)
    if arch is not None and arch.block_fp8_suffix_ignores and block_fp8 is not None:
        quant = block_fp8._replace(ignore_match="suffix")
    if arch is not None and arch.hf_to_vllm and not arch.mapper_on_inner_model:
        quant = map_layer_lists(quant, lambda name: map_vllm_name(name, arch.hf_to_vllm))
    if arch is not None and arch.fp8_ignored_layers and isinstance(quant, NativeFp8Config):
        # while the model is built, after configure_quant_config mapped the lists
        appended = dict.fromkeys(name.format(i=i) for name in arch.fp8_ignored_layers
                                 for i in range(ckpt.config.vision_layers or 0))
        quant = quant._replace(ignored_layers=(*quant.ignored_layers, *appended))
    return door._replace(quant=quant)


# layers/sparse_attn_indexer.py SparseAttnIndexer.__init__ (every release 0.25-0.34), verbatim: DeepSeek sparse
# attention's indexer on CUDA without DeepGEMM (has_deep_gemm(): installed, or the wheel's vendored copy).
SPARSE_INDEXER_NEEDS_DEEP_GEMM = ("Sparse Attention Indexer CUDA op requires DeepGEMM support in the current vLLM "
                                  "environment.")
# models/step5/nvidia/model.py Step5Attention.__init__ (0.33, 0.34), verbatim: a sparse (DSA) layer off SM90 / SM100 /
# SM103; the capability as vLLM prints it (None where the platform has none: CPU, XPU; ROCm's is its gfx arch's).
SPARSE_CAPABILITY = "Step5 DSA requires SM90, SM100 or SM103; got {}."
# models/step5/nvidia/model.py Step5FusedQKVIndexerLinear.__init__ (0.33, 0.34), verbatim (Arch.unquantized_only),
# with the class of the quant method vLLM resolved: the format's LinearMethod (compressed-tensors' and Quark's hold
# the scheme inside theirs).
PLAIN_GEMM_ONLY = ("Step5 DSA layers fuse qkv with the sparse indexer into one plain GEMM and cannot be quantized, but "
                   "{}.weight resolved to {}.")
_LINEAR_METHOD_CLASS = {"compressed-tensors": "CompressedTensorsLinearMethod", "quark": "QuarkLinearMethod"}
# Arch.raw_weight_layers: a quantized layer whose weight the model's forward reads itself.
# (k2_horizon.py compute_mova_v_sparse stacks v_experts' weights into fused_mova_impl, use_fp8_w8a8=False).
RAW_WEIGHT = ("{} is built with {}, but {}'s forward reads its weight itself into a kernel that takes no scale: its "
              "FP8 values compute unscaled; list the layer in the config's ignore list and store it in BF16")
# platforms/cpu.py CpuPlatform.check_and_update_config, 0.34 (a warning before), verbatim.
CPU_NEEDS_TRITON = "vLLM on x86 CPUs requires Triton (triton-cpu)."


def model_errors(ckpt: Checkpoint, door: FrontDoor, tp: int, ctx: RoutingContext) -> list[str]:
    """Failures before any layer is built: the platform's own start-up check, the front door (method, platform,
    deprecation, capability, dtype, the config's own refusals) and the attention-head split; and the model's own
    loader failing on a tensor it builds no parameter for (Arch.unloadable)."""
    needs_triton = ctx.kind == "cpu" and ctx.profile.has("cpu-requires-triton")
    errors = [CPU_NEEDS_TRITON] if needs_triton and not ctx.platform.assumptions.triton_cpu else []
    retired = retired_error(ckpt.config.architectures, ctx.profile)
    refused = import_refusal(ckpt.config.architectures, ctx) or transformers_refusal(ckpt.config, ctx.profile)
    errors += ([retired] if retired else []) + ([refused] if refused else []) + list(door.errors)
    stub = construction_refusal(ckpt.config.architectures, ctx)
    errors += [stub] if stub else []
    quant_refused = quant_config_refusal(ckpt.config.architectures, door.config_name, ctx)
    errors += [quant_refused] if quant_refused else []
    version_refused = version_refusal(ckpt.config)
    errors += [version_refused] if version_refused else []
    backend_refused = moe_backend_model_refusal(ckpt.config.architectures, ctx)
    errors += [backend_refused] if backend_refused else []
    if not ctx.profile.has("mistral-large-4"):  # what the Mistral-format reader of 0.25-0.33 refuses
        errors += ckpt.config.errors_before_034
    errors += ckpt.config.mistral_errors
    heads = ckpt.config.num_attention_heads
    if heads and heads % tp:
        errors.append(f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp}).")
    arch = model_arch(ckpt.config, ctx.profile, ctx.kind)
    unloadable = arch.unloadable if arch is not None else ()
    lost = next((name for name in ckpt.tensors if any(p in name for p in unloadable)), None) if unloadable else None
    if lost is not None and arch is not None:  # after the model is built: its own loader's failure
        errors.append(f"KeyError: {lost} has no parameter in the model {arch.source[5:]} builds (no module for names "
                      f"holding {' / '.join(repr(p) for p in arch.unloadable)}), and its load_weights looks it up in "
                      "params_dict unguarded: the load fails")
    if arch is not None and arch.sparse_mla and ctx.kind == "cuda" and not ctx.platform.assumptions.deep_gemm:
        errors.append(SPARSE_INDEXER_NEEDS_DEEP_GEMM)
    sparse = any(name.endswith(".sparse_indexer_q.weight") for name in ckpt.tensors)
    if sparse and arch is not None and arch.sparse_capabilities and ctx.cc not in arch.sparse_capabilities:  # ROCm: the gfx's (9, 4)
        capability = f"DeviceCapability(major={ctx.cc // 10}, minor={ctx.cc % 10})" if ctx.cc else None
        errors.append(SPARSE_CAPABILITY.format(capability))
    kv_heads = ckpt.config.num_key_value_heads
    if sparse and arch is not None and arch.sparse_group_error and heads and kv_heads and heads % tp == 0:
        per_group = heads // tp // (kv_heads // tp if kv_heads % tp == 0 else 1)
        if per_group not in (4, 8, 16):
            errors.append(arch.sparse_group_error.format(q=per_group, heads=heads, tp=tp))
    mamba = ckpt.config.mamba if arch is not None and arch.mamba_in_proj else None
    if mamba and mamba[0] % tp:  # MambaMixer2.__init__ (layers/mamba/mamba_mixer2.py), verbatim
        errors.append("AssertionError: Tensor parallel world size must divide num heads.")
    if mamba and mamba[2] % tp and mamba[2] != 1:
        errors.append("AssertionError: If tensor parallel world size does not divide num_groups, then num_groups "
                      "must equal 1.")
    groups = ckpt.config.o_groups if arch is not None and arch.own_attention else None
    if groups and ctx.profile.has("dsv4-grouped-wo-a") and groups % tp:  # DeepseekV4GroupedWoA: divide()
        errors.append(f"AssertionError: {groups} is not divisible by {tp}")
    elif groups and arch is not None and groups < tp and ctx.kind == "cpu":
        # attention.py n_local_groups = o_groups // tp_size, which the CPU sparse attention divides by while building
        # (cpu_sparse.py); the other platforms build with 0 groups a rank (what follows is not predicted).
        errors.append(f"integer division or modulo by zero ({arch.source[5:]} gives each rank o_groups // TP = "
                      f"{groups} // {tp} = 0 output groups; use TP <= {groups})")
    hash_heads = ckpt.config.engram_hash_heads if arch is not None and "engram.embed" in arch.other_tables else None
    if hash_heads and (tp - 1) * -(-hash_heads // tp) >= hash_heads:  # ParallelEngramEmbedding.__init__, verbatim
        errors.append(f"AssertionError: Engram sharding leaves ranks without hash heads: {hash_heads} heads over "
                      f"{tp} shards")
    norm_groups = ckpt.config.group_norm_size or 1  # BailingMoELinearAttention.__init__, verbatim
    gate = f".{arch.linear_attention_gate}.weight" if arch is not None and arch.linear_attention_gate else None
    linear_attention = gate is not None and any(name.endswith(gate) for name in ckpt.tensors)
    if linear_attention and tp > norm_groups:
        errors.append("AssertionError: tp_size must be <= group_norm_size for local rms norm")
    elif linear_attention and norm_groups % tp:
        errors.append("AssertionError: group_norm_size must be divisible by tp_size")
    if arch is not None and arch.kv_heads_tp_error and heads and kv_heads and kv_heads % tp:
        errors.append(arch.kv_heads_tp_error.format(heads=heads, kv=kv_heads, tp=tp))
    too_few_experts = experts_tp_error(arch, ckpt.config, tp)
    errors += [too_few_experts] if too_few_experts else []
    if arch is not None and not arch.kv_replication and kv_heads and kv_heads < tp:
        errors.append(f"integer modulo by zero ({arch.source[5:]} gives each rank num_key_value_heads // TP = "
                      f"{kv_heads} // {tp} = 0 KV heads: it does not replicate KV heads; use TP <= {kv_heads})")
    return errors


@paused_gc()  # ~100k records built, none in a cycle (see paused_gc)
def inspect_checkpoint(ckpt: Checkpoint, options: InspectOptions, layout: ModelLayout | None = None) -> InspectReport:
    """Every module vLLM builds, routed under `options`; `layout` when the caller (load) built it already."""
    ctx = RoutingContext.of(options, ckpt.config.sliding.model_type)
    door = front_door_of(ckpt, options, ctx)
    quant = door.quant
    if isinstance(quant, OutOfScopeConfig):
        if not door.errors:
            raise InputError(
                f"{ckpt.source}: quantization method {quant.method!r} is out of fp8check's scope; it checks the FP8 "
                f"formats vLLM serves: {', '.join(sorted(FORMATS))}"
            )
        quant = None  # vLLM refuses the method before building a layer: the report says why, layers as stored
    if layout is None:
        layout = build_layout(ckpt.tensors, ckpt.config, options.profile, ctx.kind)
    out_dtype = activation_dtype(ckpt.config)

    @lru_cache(maxsize=None)
    def route_cached(assignment: Assignment, module_shape: tuple, tp: int, e8m0: bool) -> Route:
        module = shape_to_module[module_shape]
        return route(assignment, tp_layout(module, module.tp_size(tp)), ctx, options.backend,
                     module.out_dtype or out_dtype, e8m0)

    arch = model_arch(ckpt.config, ctx.profile, ctx.kind)
    wrong_shapes = shape_errors(layout, ckpt.config, arch)
    shape_to_module: dict[tuple, LinearModule] = {}
    online_modules: list[str] = []  # quantized at load by an online --quantization
    layers = []
    signatures = set()
    for module in (at_tp(module, options.tp, ckpt.config, ctx.profile) for module in layout.linears):
        assignment = assign(module, quant)
        module_shape = (module.layer_type, module.input_size, module.output_sizes, module.heads, module.tp_split,
                        module.split_heads, module.whole_parts, module.column_when_split, module.kv_parts,
                        module.out_dtype)
        shape_to_module.setdefault(module_shape, module)
        e8m0 = uses_e8m0_scales(module)
        signatures.add((assignment, module_shape, e8m0))
        result = route_cached(assignment, module_shape, options.tp, e8m0)
        own = arch.own_linear_method if arch is not None else None
        if own and result.scheme == UNQUANTIZED and tail_match(module.name, own[0]):
            result = result._replace(scheme=own[1])
        integrity_errors, warnings = check_module(module, assignment)
        integrity_errors = wrong_shapes.get(module.name, []) + integrity_errors  # the loader fails first
        if arch is not None and assignment.method is not None and tail_match(module.name, arch.unquantized_only):
            method_class = _LINEAR_METHOD_CLASS.get(assignment.method, result.scheme)
            integrity_errors.insert(0, PLAIN_GEMM_ONLY.format(module.name, method_class))
        if arch is not None and assignment.method is not None and not result.scheme.startswith("Unquantized") \
                and any(f".{p}." in f".{module.name}." for p in arch.raw_weight_layers):
            integrity_errors.insert(0, RAW_WEIGHT.format(module.name, result.scheme, arch.source[5:]))
        if assignment.online and assignment.method is not None and not assignment.error:
            online_modules.append(module.name)
        layer = _layer_report(module, assignment, result, integrity_errors, warnings)
        layers.append(layer._replace(layer_type=COLUMN) if module.column_when_split and options.tp > 1 else layer)

    errors = model_errors(ckpt, door, options.tp, ctx)
    # ModelConfig._verify_with_expert_parallelism, every release: the config's expert count, which a Mistral-format
    # Mixtral's never gives (fp8check.core.checkpoint.mistral.MIXTRAL_NO_EXPERTS), nor DBRX's (Arch.flat_experts).
    if options.ep and (not layout.moes or MIXTRAL_NO_EXPERTS in ckpt.config.mistral_errors
                       or arch is not None and arch.flat_experts and not ckpt.config.expert_counts):
        errors.append("Number of experts in the model must be greater than 0 when expert parallelism is enabled.")
    errors += list(ckpt.integrity_errors) + embedding_errors(ckpt.tensors, layout, ckpt.config, arch)
    errors += [f"{printable(t.name)} ({t.file}) is a scale/side tensor with no weight {printable(t.name.rsplit('.', 1)[0])}.weight "
               "to belong to (orphan)" for t in layout.orphans]
    moes, moe_sweeps = inspect_moes(layout.moes, ckpt.tensors, quant, ckpt.config, ctx, options.tp,
                                     options.ep, out_dtype)
    moes = tuple(moe._replace(errors=tuple(wrong_shapes[moe.name]) + moe.errors) if moe.name in wrong_shapes else moe
                 for moe in moes)
    moes, moe_refusal = model_moe_runner(arch, moes, ctx)
    moe_refused = moe_refusal is not None  # raised by the first FusedMoE vLLM builds, at any TP
    errors += [moe_refusal] if moe_refusal else []
    attention_at = attention_inspector(ckpt, layout, quant, options, ctx, out_dtype)
    attention = attention_at(options.tp)
    linear_ok = tuple(
        tp for tp in TP_SWEEP
        if not moe_refused and not model_errors(ckpt, door, tp, ctx)
        and not any(route_cached(a, s, tp, e).errors for a, s, e in signatures)
        and not any(a.errors for a in attention_at(tp))
    )
    online = frozenset(online_modules) | frozenset(m.name for m in moes
                                                   if online_modules and m.scheme != UNQUANTIZED_MOE)
    own_moe = arch.own_unquantized_moe if arch is not None else None
    required = arch.moe_backend_required if arch is not None else None
    # the model's own method for unquantized experts, its experts class and backend fixed (under an explicit
    # --moe-backend only the one its runner takes: vLLM's unquantized oracle runs first, not modelled)
    if own_moe and ctx.moe_backend in ("auto", *((required.backend,) if required else ())):
        moes = tuple(moe._replace(scheme=own_moe[0], kernel=own_moe[1], backend=own_moe[2], unjudged=None)
                     if moe.scheme == UNQUANTIZED_MOE else moe for moe in moes)
    # does it fit: a failure too, and in the TP sweep
    footprint = weight_footprint(ckpt.tensors, ckpt.config, layout, online)
    kv_per_token = sum(a.cache_bytes_per_token for a in attention) if attention else None  # in the resolved KV dtype
    memory = fit(footprint, options.platform, options.profile, options.tp, options.ep, kv_per_token,
                 sliding_share(attention) if attention else None)
    errors += [memory.error] if memory.error else []
    tp_ok = tuple(tp for tp in linear_ok if sweep_loads(moe_sweeps, ctx, tp, options.ep, out_dtype)
                  and fits_at(footprint, options.platform, options.profile, tp, options.ep))
    tp_ok_ep = tuple(tp for tp in linear_ok if sweep_loads(moe_sweeps, ctx, tp, True, out_dtype)
                     and fits_at(footprint, options.platform, options.profile, tp, True)) if moes else ()

    report = with_known_issues(InspectReport(
        model=ckpt.source, platform=options.platform, profile=options.profile, tp=options.tp,
        backend=options.backend, quant_method=door.config_name if quant else None, layers=tuple(layers),
        moes=moes, errors=tuple(errors), warnings=door.warnings, tp_sizes_ok=tp_ok, notes=layout.notes,
        skipped=layout.skipped, ep=options.ep, tp_sizes_ok_ep=tp_ok_ep, memory=memory, attention=attention,
        architectures=ckpt.config.architectures, expert_counts=ckpt.config.expert_counts, front_door_errors=tuple(door.errors),
        moe_backend=options.moe_backend, unlaid=unlaid_variant(ckpt.config),
    ))
    return with_warnings(report, ckpt, options, layout, ctx)


def with_known_issues(report: InspectReport) -> InspectReport:
    """The report with every known vLLM failure its routes meet (fp8check.core.routing.known_issues): an error, or a
    warning where the reports say it happens on some hosts only. A model vLLM refuses before building (a model-level
    error) never reaches those kernels: nothing is added."""
    found = matching(report) if not report.errors else []
    errors = tuple(message(issue, names) for issue, names in found if issue.severity == "fail")
    warnings = tuple(message(issue, names) for issue, names in found if issue.severity != "fail")
    return report._replace(errors=report.errors + errors, warnings=report.warnings + warnings) if found else report


def _layer_report(module: LinearModule, assignment: Assignment, result: Route, integrity_errors: list[str],
                  warnings: list[str]) -> LayerReport:
    strategy_text, activation = describe(assignment)
    choice = result.choice
    return LayerReport(
        name=module.name, layer_type=module.layer_type, shards=tuple(s.name for s in module.shards),
        weight_dtype="/".join(sorted({s.weight.dtype for s in module.shards})),
        shape=(sum(module.output_sizes), module.input_size), strategy_text=strategy_text, activation=activation,
        scheme=(UNQUANTIZED_EMBEDDING if module.layer_type == "ParallelLMHead" and result.scheme == UNQUANTIZED
                and not assignment.lm_head_linear_method else result.scheme), kernel=choice.kernel if choice else None,
        rejected=choice.rejected if choice else (),
        errors=tuple(e.replace(LAYER, module.name) for e in result.errors) + tuple(integrity_errors),
        warnings=tuple(warnings) + (choice.warnings if choice else ()), notes=result.notes,
        weight_key=result.weight_key, activation_key=result.activation_key, layout=module.layout,
        assignment=assignment, request=result.request,
    )


def model_moe_runner(arch, moes: tuple, ctx: RoutingContext) -> tuple[tuple, str | None]:
    """A model's own runner for quantized experts that takes one --moe-backend only (Arch.moe_backend_required):
    vLLM's refusal under another value, else its method, experts class and backend."""
    required = arch.moe_backend_required if arch is not None else None
    if required is None or ctx.kind not in required.kinds:
        return moes, None
    quantized = [moe for moe in moes if moe.scheme != UNQUANTIZED_MOE]
    if quantized and ctx.moe_backend != required.backend:
        return moes, required.refusal.format(moe_backend=repr(ctx.moe_backend))
    scheme, kernel, backend = required.runner
    return tuple(moe._replace(scheme=scheme, kernel=kernel, backend=backend, rejected=(), unjudged=None)
                 if moe in quantized else moe for moe in moes), None
