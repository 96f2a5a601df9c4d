"""FusedMoE layers: the MoE quant method vLLM picks, TP/EP sizes, expert block-shape checks and expert integrity.

Order is vLLM's (fused_moe/layer.py make_fused_moe -> quant method __init__ -> create_weights): the MoE parallel
config and FusedMoEConfig's `intermediate_size % tp_size` assert, then the method's constructor (native fp8 first
refines the block from moe-block-refine, then selects the expert backend), then create_weights' block-shape
validation. vLLM stops
at the first error, so a layer reports at most one. The method and its constructor's keys are the format's
(fp8check.core.formats: Fp8MoEMethod, CompressedTensorsW8A8Fp8MoEMethod). Sources: vLLM 0.28.0 ... 0.34.0
(fused_moe/oracle/fp8.py, fused_moe/config.py, fused_moe/expert_map_manager.py determine_expert_map,
quantization/utils/fp8_utils.py).
"""

from __future__ import annotations

import math
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from fp8check.core.checkpoint.local import ModelConfig
from fp8check.core.checkpoint.safetensors_header import TensorInfo
from fp8check.core.formats.base import UNQUANTIZED_MOE, MoEMethod
from fp8check.core.formats import compressed_tensors
from fp8check.core.formats.registry import FORMATS
from fp8check.core.formats.shared import ROUTED_EXPERTS
from fp8check.core.model.layouts import GENERIC_ARCH, model_arch
from fp8check.core.model.modules import LinearModule, MoEModule, Shard
from fp8check.core.model.tp import expert_ranges
from fp8check.core.records import MoEReport
from fp8check.core.routing.integrity import check_module
from fp8check.core.vocabulary import layer_template
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.moe import (
    MoEChoice, MoEConfig, backend_takes_block, key_text, refined_block_accepted, requested_unmodelled, select_backend,
    fp8_backend_refusal, unquantized_backend_refusal,
)
from fp8check.kernels.quant_keys import QuantKey

if TYPE_CHECKING:
    from fp8check.core.targets.profiles import RuleProfile

# Checkpoint leaf -> role in w13 / w2 (Mixtral's w1/w3/w2 are gate/up/down).
LEAF_ROLES = {"gate_proj": "gate", "w1": "gate", "up_proj": "up", "w3": "up", "down_proj": "down", "w2": "down"}
DEFAULT_LEAVES = (("gate", "gate_proj"), ("up", "up_proj"), ("down", "down_proj"))


class ExpertShapes(NamedTuple):
    """Per-expert tensors of one FusedMoE, grouped: expert id -> checkpoint leaf -> Shard."""

    experts: dict[int, dict[str, Shard]]
    leaves: dict[str, str]            # role -> checkpoint leaf name ("gate" -> "w1")
    hidden: int
    intermediate: int
    errors: tuple[str, ...]
    fused: bool = False               # experts stored fused (gate_up_proj [E, ...]): not split per expert


class MoEPlacement(NamedTuple):
    """One FusedMoE at one TP size: parallel sizes, the backend choice and the first error vLLM raises."""

    tp: int                           # MoE tensor-parallel size
    ep: int                           # expert-parallel size
    experts_per_rank: str             # "32" or "11-12"
    intermediate_per_rank: int | None
    block: tuple[int, int] | None     # block the kernels see (refined by moe-block-refine, else the checkpoint's)
    choice: MoEChoice | None
    errors: tuple[str, ...]
    notes: tuple[str, ...]
    weight_key: QuantKey | None = None


# FusedMoEConfig (fused_moe/config.py, every release 0.25-0.34), verbatim: non-gated experts off CUDA / ROCm / XPU.
NON_GATED_REFUSED = "is_act_and_mul=False is supported only for CUDA, XPU and ROCm for now"
MXFP4_MOE = "Mxfp4MoEMethod"


def expert_shapes(moe: MoEModule) -> ExpertShapes:
    """Group the expert tensors and check every expert has gate (unless the model's experts have none), up and down
    with expert 0's shapes."""
    experts: dict[int, dict[str, dict[str, TensorInfo]]] = {}
    leaves: dict[str, str] = {}
    for info, tail in zip(moe.tensors, moe.tails):  # a tail is what follows '<moe.name>.' in vLLM's naming
        parts = tail.split(".")
        if len(parts) != 3 or not parts[0].isdigit() or parts[1] not in LEAF_ROLES:
            return ExpertShapes({}, {}, 0, 0, (), fused=True)
        index, leaf, suffix = parts
        leaves.setdefault(LEAF_ROLES[leaf], leaf)
        experts.setdefault(int(index), {}).setdefault(leaf, {})[suffix] = info
    roles = DEFAULT_LEAVES if moe.gated else DEFAULT_LEAVES[1:]
    names = tuple(leaves.get(role, default) for role, default in roles)
    errors: list[str] = []
    shards: dict[int, dict[str, Shard]] = {}
    reference: dict[str, tuple[int, ...]] = {}
    for e in sorted(experts):
        shards[e] = {}
        for (role, _), leaf in zip(roles, names):
            side = experts[e].get(leaf, {})
            weight = side.pop("weight", None)
            name = f"{moe.name}.{e}.{leaf}"
            if weight is None:
                errors.append(f"{name}.weight is missing: every expert of a FusedMoE needs its {role} projection "
                              "(vLLM loads the experts into one stacked parameter)")
                continue
            want = reference.setdefault(leaf, weight.shape)
            if weight.shape != want:
                errors.append(f"{weight.name} ({weight.file}) has shape {list(weight.shape)}, but the other experts' "
                              f"{leaf} weights are {list(want)}: FusedMoE stacks experts into one parameter")
            shards[e][leaf] = Shard(name, weight, side)
    gate = reference.get(names[0])  # the up projection of non-gated experts: [intermediate, hidden] alike
    hidden, intermediate = (gate[1], gate[0]) if gate and len(gate) == 2 else (0, 0)
    return ExpertShapes(shards, leaves, hidden, intermediate, tuple(errors))


def select_method(moe: MoEModule, shapes: ExpertShapes, quant, profile: RuleProfile) -> MoEMethod:
    """The FusedMoE quant method: the format's get_quant_method for a FusedMoE, asked with vLLM's name of the layer
    (renamed by the model's hf_to_vllm_mapper) and the checkpoint's names of expert 0's gate / up / down projections,
    as the profile's release asks."""
    if quant is None:
        return MoEMethod(UNQUANTIZED_MOE, note="the model has no quantization_config")
    gate, up, down = (shapes.leaves.get(role, default) for role, default in DEFAULT_LEAVES)
    if quant.method == compressed_tensors.FORMAT.name and moe.layer_class != ROUTED_EXPERTS:
        # compressed-tensors alone matches the layer by its class name (find_matched_target)
        return compressed_tensors.moe_method(moe.vllm_name or moe.name, (gate, up, down), quant, profile,
                                             layer_class=moe.layer_class)
    return FORMATS[quant.method].moe_method(moe.vllm_name or moe.name, (gate, up, down), quant, profile)


def _expert_dtype(method: MoEMethod, config: ModelConfig, quant, dtypes: str, profile) -> MoEMethod:
    """DeepseekV4FP8Config.get_quant_method (models/deepseek_v4/quant_config.py, 0.30-0.34): with an "fp8"
    quantization_config, experts are Mxfp4MoEMethod unless config.json's expert_dtype is "fp8" (FP8 block experts,
    Fp8Config's method); FP8-stored experts then do not load."""
    arch = model_arch(config, profile)
    if arch is None or not arch.fp4_experts_by_default or quant is None or quant.method != "fp8" \
            or method.method == UNQUANTIZED_MOE or config.expert_dtype == "fp8":
        return method
    why = f"expert_dtype {config.expert_dtype!r}" if config.expert_dtype else "no expert_dtype (vLLM reads 'fp4')"
    error = None
    if "F8_E4M3" in dtypes:
        error = (f"vLLM builds these experts as MXFP4 (Mxfp4MoEMethod: DeepseekV4FP8Config, config.json has {why}) "
                 "but the checkpoint stores them in F8_E4M3: add \"expert_dtype\": \"fp8\" to config.json")
    return MoEMethod(MXFP4_MOE, error=error, note=(
        f"DeepseekV4FP8Config: config.json has {why}, so the experts are MXFP4 (Mxfp4MoEMethod); which MXFP4 "
        "backend vLLM picks is not predicted (not judged)"))


def experts_per_rank(num_experts: int, ep: int) -> str:
    """determine_expert_map (linear placement): the first `num_experts % ep` ranks hold one expert more."""
    sizes = sorted({len(held) for held in expert_ranges(num_experts, ep)})
    return str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"


def place(method: MoEMethod, hidden: int, intermediate: int, num_experts: int, tp: int, use_ep: bool,
         ctx: RoutingContext, routing: str, in_dtype: str, swiglu_limit: bool = False) -> MoEPlacement:
    """One FusedMoE at one TP size, as FusedMoEParallelConfig.make / FusedMoEConfig / the method compute it
    (`swiglu_limit`: the model file hands it a SwiGLU clamp)."""
    ep_on = use_ep and tp > 1
    moe_tp, ep = (1, tp) if ep_on else (tp, 1)
    notes: list[str] = []
    per_rank = experts_per_rank(num_experts, ep)
    if ep > 1 and num_experts % ep:
        notes.append(f"{num_experts} experts over EP {ep}: vLLM places them unevenly ({per_rank} per rank; only "
                     "--enable-eplb refuses an uneven split)")
    if ep > num_experts:
        notes.append(f"EP {ep} > {num_experts} experts: ranks {num_experts}..{ep - 1} hold no expert (how vLLM runs "
                     "an empty rank was not checked)")
    empty = MoEPlacement(moe_tp, ep, per_rank, None, method.block, None, (), tuple(notes))
    if method.error:
        return empty._replace(errors=(method.error,))
    if intermediate % moe_tp:
        return empty._replace(errors=(f"AssertionError: assert self.intermediate_size % tp_size == 0 "
                                      f"(FusedMoEConfig: moe_intermediate_size {intermediate}, TP {moe_tp})",))
    ispp = intermediate // moe_tp
    empty = empty._replace(intermediate_per_rank=ispp)
    if method.own_checks is not None:
        error, note = method.own_checks(hidden, ispp, ctx, in_dtype)
        empty = empty._replace(notes=empty.notes + ((note,) if note else ()))
        if error:
            return empty._replace(errors=(error,))
    if method.weight_key is None:
        return empty
    cfg = MoEConfig(num_experts, hidden, intermediate, moe_tp, ep, routing, in_dtype, swiglu_limit)
    weight_key, block = method.weight_key, method.block
    if block and ctx.profile.has("moe-block-refine") and method.refines_block:
        refined = refine_block(block, ispp, moe_tp, hidden)
        if ctx.moe_backend != "auto" and ctx.profile.has("moe-block-pad") and not (
                refined and backend_takes_block(refined, method.activation_key, ctx)):
            padded = pad_to_blocks(block, ispp, moe_tp, intermediate, hidden)
            if isinstance(padded, str):
                return empty._replace(errors=(padded,))
            if padded:
                notes.append(f"--moe-backend {ctx.moe_backend}: vLLM {ctx.profile.name} pads each rank's experts "
                             f"to whole {block[0]}-blocks ({ispp} -> {padded} rows; "
                             "resolve_fp8_moe_weight_block_shape: its experts classes refuse the refined block)")
                ispp, refined = padded, None
                empty = empty._replace(intermediate_per_rank=ispp)
        if refined:
            weight_key = QuantKey(True, refined)
            takers = refined_block_accepted(refined, ctx)
            notes.append(f"vLLM {ctx.profile.name} refines the block scales from {list(block)} to {list(refined)} to "
                         f"fit the TP-sharded intermediate size {ispp} (refine_fp8_moe_block_shape: gcd of block, "
                         f"shard and hidden {hidden} is >= 32); only kernels that take {key_text(weight_key, ctx)} "
                         f"accept it: {', '.join(takers) or 'none'}")
            block = refined
    choice = select_backend(cfg, weight_key, method.activation_key, ctx, method.allow_vllm_cutlass)
    result = empty._replace(block=block, choice=choice, weight_key=weight_key, notes=tuple(notes))
    # XPU / CPU's Fp8MoeBackend.NONE fails only after loading (process_weights_after_loading), after create_weights'
    # block check; CUDA / ROCm's oracle raises in the method's __init__, before it.
    after_loading = choice.backend == "NONE"
    if choice.error and not after_loading:
        return result._replace(errors=(choice.error,))
    refusal = dict(method.backend_errors).get(choice.backend) if choice.backend else None
    if refusal:  # the method's process_weights refuses the backend the oracle chose
        return result._replace(errors=(refusal,))
    if method.block and block == method.block:
        error = expert_block_shape_error(ispp, method.block, tp)
        if error:
            return result._replace(errors=(error,))
    return result._replace(errors=(choice.error,)) if choice.error else result


def refine_block(block: tuple[int, int], ispp: int, moe_tp: int, hidden: int) -> tuple[int, int] | None:
    """refine_fp8_moe_block_shape (moe-block-refine): a finer square block dividing the checkpoint's, or None."""
    block_n, block_k = block
    if ispp % block_n == 0 and (moe_tp == 1 or ispp % block_k == 0):
        return None
    refine = math.gcd(block_n, block_k, ispp, hidden)
    return None if refine < 32 else (refine, refine)


def pad_to_blocks(block: tuple[int, int], ispp: int, moe_tp: int, intermediate: int, hidden: int) -> int | str | None:
    """pad_tp_shard_to_weight_blocks (moe-block-pad, an explicit --moe-backend only): the shard rounded up to whole
    square blocks, None where no padding applies, or vLLM's refusal (an expert bias, which also refuses, is not
    read here)."""
    block_n, block_k = block
    if block_n != block_k or moe_tp == 1 or ispp % block_n == 0:
        return None
    if intermediate % block_n or hidden % block_n:
        return (f"Block-aligned FP8 TP sharding requires {block_n}-aligned global expert dimensions, pure TP, and no "
                "LoRA or expert bias.")
    return -(-ispp // block_n) * block_n


def expert_block_shape_error(ispp: int, block: tuple[int, int], tp_world: int) -> str | None:
    """0.28's create_weights check, moved verbatim into validate_fp8_block_shape_moe (0.30). Its tp_size is the
    global TP world size, not the MoE's: under EP the shard is whole but the block_k rule still runs."""
    block_n, block_k = block
    if ispp % block_n:
        return (f"The output_size of gate's and up's weight = {ispp} is not divisible by weight quantization "
                f"block_n = {block_n}.")
    if tp_world > 1 and ispp % block_k:
        return (f"The input_size of down's weight = {ispp} is not divisible by weight quantization "
                f"block_k = {block_k}.")
    return None


def integrity(moe: MoEModule, shapes: ExpertShapes, method: MoEMethod) -> tuple[list[str], list[str]]:
    """Every expert's scales, with the linear checks (fp8check.core.routing.integrity) applied per expert projection;
    warnings that repeat across experts are shown once with the expert index as {e}."""
    errors = list(shapes.errors)
    warnings: dict[str, None] = {}
    assignment = method.assignment
    if assignment is None or method.error:
        return errors, []
    clean: set[tuple] = set()  # tensor signatures already checked without findings: identical experts pass once
    for e, leaves in shapes.experts.items():
        for shard in leaves.values():
            signature = (shard.weight.dtype, shard.weight.shape,
                         tuple((k, v.dtype, v.shape) for k, v in sorted(shard.side.items())))
            if signature in clean:
                continue
            module = LinearModule(name=shard.name, layer_type="FusedMoE", shards=(shard,),
                                  input_size=shard.weight.shape[-1], output_sizes=(shard.weight.shape[0],))
            errs, warns = check_module(module, assignment)
            if not errs:
                clean.add(signature)
            errors += errs
            for w in warns:
                warnings[w.replace(f".experts.{e}.", ".experts.{e}.")] = None
    return errors, list(warnings)


def routing_method(config: ModelConfig, ctx: RoutingContext) -> tuple[str, str]:
    """RoutingMethodType as vLLM derives it (fused_moe/config.py get_routing_method_type, every release 0.28-0.33;
    a custom_routing_function's own type, except under 0.30+'s CPURouter): from what the architecture's model file
    passes to FusedMoE (layouts.Router), with the config's keys where the file reads them."""
    arch = model_arch(config, ctx.profile)
    rule = arch.router if arch is not None else GENERIC_ARCH.router
    source = arch.source[5:] if arch is not None else "the generic layout"
    cpu_router = ctx.platform.kind == "cpu" and ctx.profile.has("cpu-router")
    if isinstance(rule.custom, str) and not cpu_router:
        return rule.custom, f"routing method {rule.custom} ({source}'s custom_routing_function)"
    keys = dict(config.router_keys)

    def read(value):
        return keys.get(value[0], value[1]) if isinstance(value, tuple) else value

    scoring = read(rule.custom if isinstance(rule.custom, tuple) and not cpu_router else rule.scoring)
    renormalize = bool(read(rule.renormalize))
    groups = read(rule.groups) if rule.groups else None
    bias = (keys.get(rule.bias[0], rule.bias[2] if len(rule.bias) > 2 else None) == rule.bias[1]
            if isinstance(rule.bias, tuple) else rule.bias)
    method = routing_type(scoring, renormalize, groups, bias)
    return method, (f"routing method {method} ({source}: scoring_func {scoring}, renormalize {renormalize}, "
                    f"num_expert_group {groups}, e_score_correction_bias {'yes' if bias else 'no'})")


def _moe_activation(config: ModelConfig, name: str, profile) -> str:
    """The activation the model file hands this FusedMoE: the layout's, or its limited one on the layers the
    config gives a limit (Step-3.5's swiglu_limits)."""
    arch = model_arch(config, profile)
    if arch is None:
        return "silu"
    if arch.limited_moe_activation and layer_template(name)[1] in config.limited_moe_layers:
        return arch.limited_moe_activation
    if isinstance(arch.moe_activation, tuple):  # (config key, default): the activation the config names
        key, default = arch.moe_activation
        return str(dict(config.router_keys).get(key, default))
    return arch.moe_activation


def _swiglu_limit(config: ModelConfig, name: str, profile) -> bool:
    """Whether the model file hands this FusedMoE a SwiGLU clamp: its layout passes config.swiglu_limit, and
    config.json or else the config class sets one above 0 (HY-V4's nvidia/moe.py reads 0 or less as none), or it
    passes the layer's swiglu_limits entry and that is set (EXAONE-MoE)."""
    arch = model_arch(config, profile)
    if arch is not None and arch.layer_swiglu_limits:
        return layer_template(name)[1] in config.limited_moe_layers
    if arch is None or not arch.moe_swiglu_limit:
        return False
    limit = config.swiglu_limit if config.swiglu_limit is not None else arch.swiglu_limit_default
    return limit is not None and limit > 0


# models/kimi_k3/amd/linear.py KimiMoE.__init__ (0.27-0.34): the AttributeError reading the padded w13 off FusedMoE's
# MoERunner, verbatim.
PADDED_MOE_RUNNER = "'{runner}' object has no attribute 'w13_weight_packed'"


def _padding_refusal(config: ModelConfig, ctx: RoutingContext, tp: int, intermediate: int) -> str | None:
    """vLLM's failure building a FusedMoE its model file pads below config.min_moe_intermediate_per_partition per
    rank (Arch.padded_moe_refusal): getattr(experts, "w13_weight", None) finds nothing on the MoERunner and
    experts.w13_weight_packed raises. The runner is ROCmLatentMoERunner for a latent MoE (routed_expert_hidden_size),
    else MoERunner. None: built."""
    arch = model_arch(config, ctx.profile, ctx.kind)
    if arch is None or ctx.kind not in arch.padded_moe_refusal or tp == 1:
        return None
    change = arch.padded_moe_refusal[ctx.kind]
    least = dict(config.router_keys).get("min_moe_intermediate_per_partition", 256)
    least = least if isinstance(least, int) else 256  # router_keys holds strings and booleans too
    if (change is not None and not ctx.profile.has(change)) or intermediate // tp >= least:
        return None
    runner = "ROCmLatentMoERunner" if config.moe_hidden_size is not None else "MoERunner"
    return (PADDED_MOE_RUNNER.format(runner=runner) + f" ({arch.source[5:]}'s MoE pads its {intermediate // tp} "
            f"intermediate columns a rank at TP {tp} up to min_moe_intermediate_per_partition {least}, then reads "
            "the padded w13 off the layer, which FusedMoE's MoERunner keeps on routed_experts)")


def routing_type(scoring: str, renormalize: bool, groups: int | None, bias: bool) -> str:
    """fused_moe/config.py's get_routing_method_type."""
    if scoring == "sqrtsoftplus":
        return "DeepseekV4" if renormalize else "Unspecified"
    if bias:
        if scoring != "sigmoid" or not renormalize:
            return "Unspecified"
        return "DeepSeekV3" if (groups or 0) > 0 else "MiniMax2"
    if scoring == "sigmoid":
        return "SigmoidRenorm" if renormalize else "Sigmoid"
    if scoring == "softmax":
        return "RenormalizeNaive" if renormalize else "Default"
    return "Unspecified"


class MoESweep(NamedTuple):
    """Per FusedMoE signature, what place() needs to re-run at another TP size (the TP / EP sweep)."""

    method: MoEMethod
    hidden: int
    intermediate: int
    num_experts: int
    routing: str
    swiglu_limit: bool


def inspect_moes(moes: tuple[MoEModule, ...], tensors: dict[str, TensorInfo], quant, config: ModelConfig,
                 ctx: RoutingContext, tp: int, ep: bool, in_dtype: str
                 ) -> tuple[tuple[MoEReport, ...], frozenset[MoESweep]]:
    """Every FusedMoE at --tp / --ep, and the distinct signatures the TP sweep re-plans."""
    reports, sweeps = [], set()
    arch = model_arch(config, ctx.profile, ctx.kind)
    native_mega = arch is not None and arch.native_mega_moe  # the model takes the megakernel --moe-backend values
    twin: _Twin | None = None  # the previous FusedMoE, if its experts were checked and found clean
    for moe in moes:
        structure = _structure(moe)
        if twin is not None and twin.structure == structure:
            same, shapes, dtypes = True, twin.shapes, twin.dtypes
        else:
            same, shapes = False, expert_shapes(moe)
            dtypes = "/".join(sorted({t.dtype for t in moe.tensors if t.name.endswith(".weight")}))
        if shapes.fused:
            reports.append(MoEReport(moe.name, moe.num_experts, (), dtypes, (), None, None, "?", None, None, (), (),
                                     (), ("experts are stored fused (not one tensor set per expert): fp8check does not "
                                          "predict their method or backend yet",), layout=moe.layout))
            continue
        method = _expert_dtype(select_method(moe, shapes, quant, ctx.profile), config, quant, dtypes, ctx.profile)
        activation = _moe_activation(config, moe.name, ctx.profile)
        if activation != "silu" and method.weight_key is not None:
            method = method._replace(weight_key=None, activation_key=None, note=(
                f"activation {activation} ({moe.layout[5:]}): which experts classes take it is not modelled, so "
                "the backend vLLM picks is not predicted (not judged)"))
        unjudged = None
        # an explicit --moe-backend: the FP8 oracle's branch and the two oracles' refusals of values they do not map
        refusal = unquantized_backend_refusal(ctx) if method.method == UNQUANTIZED_MOE else \
            fp8_backend_refusal(ctx, native_mega) if method.weight_key is not None else None
        if refusal:
            method = method._replace(error=refusal)
        elif ctx.moe_backend != "auto":
            unjudged = requested_unmodelled(ctx, native_mega) if method.weight_key is not None else (
                f"--moe-backend {ctx.moe_backend} with {method.method}: the backend its oracle takes is not modelled")
            if unjudged:
                method = method._replace(weight_key=None, activation_key=None)
        if twin is not None and same and method != twin.method:
            same, shapes = False, expert_shapes(moe)
        routing, routing_note = routing_method(config, ctx)
        sweep = MoESweep(method, shapes.hidden * method.packed, shapes.intermediate, len(shapes.experts), routing,
                         _swiglu_limit(config, moe.name, ctx.profile))
        sweeps.add(sweep)
        result = place(method, *sweep[1:4], tp, ep, ctx, routing, in_dtype, sweep.swiglu_limit)
        integrity_errors, warnings = ([], []) if same else integrity(moe, shapes, method)
        clean = not shapes.errors and not integrity_errors and not warnings
        twin = _Twin(structure, shapes, dtypes, method) if clean else None
        notes = [n for n in (method.note, routing_note, unjudged and f"{unjudged} (not judged)") if n] + \
            list(result.notes)
        errors = list(result.errors)
        if errors and not ep and tp > 1 and not place(method, *sweep[1:4], tp, True, ctx, routing, in_dtype,
                                                           sweep.swiglu_limit).errors:
            notes.append(f"with --enable-expert-parallel (fp8check --ep) this layer loads at TP {tp}: each rank "
                         f"holds {experts_per_rank(sweep.num_experts, tp)} of the {sweep.num_experts} experts whole "
                         f"instead of 1/{tp} of every expert")
        if not moe.gated and ctx.kind not in ("cuda", "rocm", "xpu"):
            errors.insert(0, NON_GATED_REFUSED)
        padded = _padding_refusal(config, ctx, tp, shapes.intermediate)
        errors[:0] = [padded] if padded else []
        choice = result.choice
        leaves: dict[str, Shard] = next(iter(shapes.experts.values()), {})
        reports.append(MoEReport(
            name=moe.name, num_experts=sweep.num_experts, shards=tuple(leaves), weight_dtype=dtypes,
            shape=(sweep.num_experts, (2 if moe.gated else 1) * shapes.intermediate, shapes.hidden),
            strategy_text=method.strategy_text,
            activation=method.activation, scheme=method.method, kernel=choice.kernel if choice else None,
            backend=choice.backend if choice else None, rejected=choice.rejected if choice else (),
            errors=tuple(errors + integrity_errors), warnings=tuple(warnings), notes=tuple(notes),
            weight_key=result.weight_key.name if result.weight_key else None,
            activation_key=method.activation_key.name if method.activation_key else None, layout=moe.layout,
            ep=result.ep, moe_tp=result.tp, experts_per_rank=result.experts_per_rank,
            intermediate_per_rank=result.intermediate_per_rank, block=result.block, quant_method=method,
            unjudged=unjudged))
    return tuple(reports), frozenset(sweeps)


class _Twin(NamedTuple):
    """A FusedMoE whose experts passed every check, and what another with the same structure can reuse.

    Same structure (every tensor's name after the FusedMoE's own, dtype and shape, in the same order) and an
    equal method make every result identical but the names in messages, and a clean FusedMoE has none: its
    grouping (expert_shapes' counts, leaves, hidden and intermediate sizes; the Shards themselves are only read by
    integrity) and its integrity (every check_module signature clean) hold for the other. DeepSeek-V3's 58 MoE
    layers are checked once and compared 57 times: still every tensor, but as one list comparison each.
    """

    structure: tuple[tuple[str, ...], list[str], list[tuple[int, ...]]]
    shapes: ExpertShapes
    dtypes: str
    method: MoEMethod


def _structure(moe: MoEModule) -> tuple[tuple[str, ...], list[str], list[tuple[int, ...]]]:
    """Every tensor's name after the FusedMoE's (cut once by build_layout), dtype and shape, in order; column-wise,
    in C (shapes are shared tuples within a shard, so most compare by identity)."""
    return moe.tails, list(map(itemgetter(1), moe.tensors)), list(map(itemgetter(2), moe.tensors))


def sweep_loads(sweeps: frozenset[MoESweep], ctx: RoutingContext, tp: int, ep: bool, in_dtype: str) -> bool:
    """Whether every FusedMoE signature plans without error at this TP size."""
    return not any(place(s.method, s.hidden, s.intermediate, s.num_experts, tp, ep, ctx, s.routing, in_dtype,
                         s.swiglu_limit).errors
                   for s in sweeps)
