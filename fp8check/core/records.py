"""The records every stage hands the next, in one torch-free module: options, inspect reports, load runs.

Records are plain NamedTuples. They live here, not in the modules that build them, so that a stage can read
another stage's records without importing its code (no import cycle), and `isinstance` tells an inspect report
from a load report without importing torch. Types named only in annotations are imported for type checkers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

from fp8check.core.vocabulary import layer_template  # records import nothing else of fp8check at run time

if TYPE_CHECKING:  # annotations only
    import torch

    from fp8check.core.checkpoint.local import Checkpoint
    from fp8check.core.formats.base import Assignment, KernelRequest, MoEMethod
    from fp8check.core.load.weights import ShardTensors
    from fp8check.core.model.modules import LinearModule, ModelLayout, Shard
    from fp8check.core.model.memory import MemoryFit
    from fp8check.core.model.modules import SkippedLayer
    from fp8check.core.targets.platforms import Platform
    from fp8check.core.targets.profiles import RuleProfile
    from fp8check.core.vocabulary import Status, Strategy
    from fp8check.kernels.registry import Rejection

DEFAULT_TOKENS = 16


# --against BASE: what a quantized module's figures are held to.
WEIGHT_LIMIT = 2 ** -4      # round-to-nearest moves an e4m3 normal value by <= half a step <= 2^-4 of it
OUTPUT_LIMIT = 2 ** -3      # weight and activation rounding, each <= 2^-4


class Worst(NamedTuple):
    """The block or row of one checkpoint tensor with the most codes BASE does not give back (then the largest
    relative error); rows and cols are half-open ranges in that tensor."""

    tensor: str
    kind: str                  # "block" | "row"
    index: tuple[int, ...]  # type: ignore[assignment]  # the report's JSON key; shadows tuple.index
    rows: tuple[int, int]
    cols: tuple[int, int]
    rel_error: float
    codes: int                 # 0 for unquantized layers
    codes_differing: int       # far codes plus one-step codes no accepted arithmetic gives

    def where(self) -> str:
        index = f"[{', '.join(map(str, self.index))}]"
        return (f"{self.kind} {index} of {self.tensor} (rows {self.rows[0]}-{self.rows[1] - 1}, "
                f"cols {self.cols[0]}-{self.cols[1] - 1})")


class Comparison(NamedTuple):
    """One module against BASE. `codes_*` are None for an unquantized module (no codes to requantize)."""

    verdict: Status            # ok | FAIL
    errors: tuple[str, ...]
    weight_rel_error: float | None
    cosine: float | None
    worst: Worst | None
    output_rel_error: float | None
    codes_total: int | None = None
    codes_mismatched: int | None = None   # more than one code step from requantized BASE
    codes_drift: int | None = None        # net one-step moves, +1 larger / -1 smaller magnitude
    weight_limit: float = WEIGHT_LIMIT
    output_limit: float = OUTPUT_LIMIT
    expert: int | None = None             # a FusedMoE's: the expert these figures are of (the worst one)

    def as_json(self) -> dict:
        doc = self._asdict()
        doc["worst"] = None if self.worst is None else self.worst._asdict()
        doc["reason"] = self.errors[0] if self.errors else None
        doc["errors"] = list(self.errors)
        return doc


class AgainstBase(Protocol):
    """--against BASE as load drives it (fp8check.core.load.against.Base): bound to the modules load runs, then
    compared module by module and expert by expert."""

    @property
    def label(self) -> str: ...
    def bind(self, ckpt: Checkpoint, chosen: list[LinearModule], tp: int,
             experts: tuple[tuple[Shard, ...], ...] = (), layout: ModelLayout | None = None) -> None: ...
    def compare(self, module: LinearModule, shards: tuple[ShardTensors, ...], block: tuple[int, int] | None,
                x: torch.Tensor, output: torch.Tensor, output_bound: float) -> Comparison: ...
    def compare_expert(self, name: str, expert: int, parts: tuple[ShardTensors, ...], block: tuple[int, int] | None,
                       x: torch.Tensor, output: torch.Tensor, output_bound: float) -> Comparison: ...
    def summary(self) -> str: ...


class LinearBackendOption(NamedTuple):
    """--linear-backend and --kernel-config's linear_backend_per_quant."""

    default: str = "auto"
    per_quant: tuple[tuple[str, str], ...] = ()

    def for_quantization(self, quantization: str) -> str:
        return dict(self.per_quant).get(quantization, self.default)


class InspectOptions(NamedTuple):
    platform: Platform
    profile: RuleProfile
    tp: int = 1
    backend: LinearBackendOption = LinearBackendOption()
    disabled_kernels: tuple[str, ...] = ()
    ep: bool = False                  # --ep: vLLM's --enable-expert-parallel
    quantization: str | None = None   # --quantization: vLLM's flag (an online method on an unquantized checkpoint)
    allow_deprecated_quantization: bool = False  # --allow-deprecated-quantization
    kv_cache_dtype: str = "auto"      # --kv-cache-dtype: vLLM's CacheDType value
    attention_backend: str | None = None  # --attention-backend: an AttentionBackendEnum name
    kv_cache_dtype_skip_layers: tuple[str, ...] = ()  # --kv-cache-dtype-skip-layers: layer indices / "sliding_window"
    moe_backend: str = "auto"         # --moe-backend: vLLM's KernelConfig.moe_backend (normalized)


class LayerReport(NamedTuple):
    name: str
    layer_type: str
    shards: tuple[str, ...]
    weight_dtype: str
    shape: tuple[int, int]            # [sum of output widths, input]
    strategy_text: str | None         # the strategy as shown: "block [128, 128]", "channel", None when unquantized
    activation: str | None            # "dynamic group 128", "static tensor", None for weight-only
    scheme: str
    kernel: str | None
    rejected: tuple[Rejection, ...]
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    weight_key: str | None = None
    activation_key: str | None = None
    layout: str = "generic"          # where its layout came from: "vllm:<model file>" or "generic"
    # The route it was given, carried for the stages after inspect (load's recipe), never derived again: the
    # format's quantization of the module and what its scheme handed the kernel selector (None: no kernel asked).
    assignment: Assignment | None = None
    request: KernelRequest | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def template(self) -> tuple[str, int | None]:
        return layer_template(self.name)


class MoEReport(NamedTuple):
    """One FusedMoE, with the linear layers' report fields (collapse() and the JSON treat both alike)."""

    name: str
    num_experts: int
    shards: tuple[str, ...]           # checkpoint leaves of expert 0 (gate_proj, up_proj, down_proj / w1, w3, w2)
    weight_dtype: str
    shape: tuple[int, ...]            # w13 as vLLM stacks it at TP 1: [experts, 2 x intermediate, hidden]
    strategy_text: str | None         # as LayerReport's: "block [128, 128]", "int4 group 128", ...
    activation: str | None
    scheme: str                       # the FusedMoE quant method class
    kernel: str | None                # the experts class the oracle picked
    backend: str | None               # its Fp8MoeBackend
    rejected: tuple
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    weight_key: str | None = None
    activation_key: str | None = None
    layout: str = "generic"
    ep: int = 1                       # expert-parallel size at this TP (1 without --ep)
    moe_tp: int = 1                   # the MoE's own TP size (1 under EP)
    experts_per_rank: str = ""
    intermediate_per_rank: int | None = None
    block: tuple[int, int] | None = None  # the block the experts kernel sees (0.33 may refine it)
    quant_method: MoEMethod | None = None  # the method it was routed with (load's recipe reads it, never re-derives)
    layer_type: str = "FusedMoE"
    unjudged: str | None = None       # why fp8check does not judge the backend vLLM takes (a --moe-backend it lacks)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def template(self) -> tuple[str, int | None]:
        return layer_template(self.name)


class AttentionReport(NamedTuple):
    """One attention layer as vLLM builds it on the target: its KV cache (dtype, method, the checkpoint's scales)
    and its attention backend, with every rejected backend and vLLM's errors."""

    name: str                         # vLLM's module name, e.g. "model.layers.0.self_attn.attn"
    kind: str                         # "full", "sliding window 4096", "MLA", ...: what rows collapse on
    head_size: int
    num_heads: int                    # per rank
    num_kv_heads: int                 # per rank (MLA: 1, the latent)
    kv_cache_dtype: str               # resolved CacheDType ("auto" shown as the model dtype): "bfloat16", "fp8", ...
    cache_dtype: str                  # what the cache holds: "bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", ...
    kv_method: str | None             # "CompressedTensorsKVCacheMethod", "Fp8KVCacheMethod", ...; None: no method
    scale_strategy: Strategy | None   # TENSOR | ATTN_HEAD | None (no checkpoint k / v scale loads)
    scales: tuple[str, ...]           # checkpoint tensors the layer's k / v (/ q / prob) scales load from
    backend: str | None               # AttentionBackendEnum name; None when selection fails
    rejected: tuple[Rejection, ...]
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    # (vLLM parameter, checkpoint tensor) for each of `scales`: "k_scale" | "v_scale" | "q_scale" | "prob_scale".
    # A deprecated fused kv_scale loads into k_scale and v_scale duplicates it (no v_scale entry); a BaseKVCacheMethod
    # layer with k_scale only writes V with k_scale too; on float8_e4m3fnuz BaseKVCacheMethod doubles both.
    scale_params: tuple[tuple[str, str], ...] = ()
    cache_bytes_per_token: int = 0    # what this layer's cache holds per token on one rank: K and V (MLA: the
                                      # latent) of num_kv_heads x head_size elements in cache_dtype's bytes
    sliding_window: int | None = None  # the layer's window (kind says it too); None: full attention, MLA

    @property
    def ok(self) -> bool:
        return not self.errors


class InspectReport(NamedTuple):
    model: str
    platform: Platform
    profile: RuleProfile
    tp: int
    backend: LinearBackendOption
    quant_method: str | None
    layers: tuple[LayerReport, ...]
    moes: tuple[MoEReport, ...]
    errors: tuple[str, ...]           # model-level: capability gates, TP heads, orphans, index disagreements
    warnings: tuple[str, ...]
    tp_sizes_ok: tuple[int, ...]
    notes: tuple[str, ...] = ()
    skipped: tuple[SkippedLayer, ...] = ()  # MTP layers the main model never loads
    ep: bool = False
    tp_sizes_ok_ep: tuple[int, ...] = ()    # with expert parallelism (only when the model has FusedMoE layers)
    memory: MemoryFit | None = None         # weights per rank against the device memory (fp8check.core.model.memory)
    suggestions: tuple = ()                 # fp8check.core.planning.suggest.Suggestion, filled in by the CLI for a failure
    attention: tuple[AttentionReport, ...] = ()  # one per attention layer
    architectures: tuple[str, ...] = ()     # config.json's: what a module laid out by guess names (report.verdicts)
    expert_counts: tuple[tuple[str, object], ...] = ()  # config.json's ModelConfig.expert_counts (report.verdicts)
    # vLLM's refusals of the quantization config before any layer is built (formats.frontdoor; in `errors` too),
    # carried for the planning views and crosscheck, which never run the front door again
    front_door_errors: tuple[str, ...] = ()
    moe_backend: str = "auto"               # --moe-backend, as routed
    unlaid: str | None = None               # why the table entry's layout does not apply (layouts.unlaid_variant)

    @property
    def ok(self) -> bool:
        return (not self.errors and all(layer.ok for layer in self.layers) and all(m.ok for m in self.moes)
                and all(a.ok for a in self.attention))


class LoadOptions(NamedTuple):
    inspect: InspectOptions
    device: torch.device
    layers: str | None = None         # regex searched in vLLM module names
    tokens: int = DEFAULT_TOKENS
    seed: int = 0
    rank_timeout_s: float = 600.0      # load --tp: the longest any collective may wait for a rank
    quiet: bool = True                 # no progress bar (under --tp, rank 0 draws it unless quiet)
    all_experts: bool = False          # FusedMoE: run every expert, not only the first and the last
    against: AgainstBase | None = None  # --against BASE, compared module by module


class RankFigures(NamedTuple):
    rank: int
    bytes_read: int        # this rank's slice only
    ms: float | None       # this rank's numerics


class LayerRun(NamedTuple):
    """What `load` found for one module or one FusedMoE (then with its experts; its figures are the worst
    expert's). `status`: ok, warn, FAIL, or "not run" (vLLM would refuse the layer)."""

    name: str
    kernel: str | None                 # a FusedMoE's: the experts class inspect selected
    numerics: str | None
    execution: str | None              # what ran where, e.g. "emulated on cpu (block numerics: fp32 per-K-block GEMM)"
    emulated: bool
    tokens: int
    status: Status
    bytes_read: int = 0
    rel_error: float | None = None     # vs the fp32 reference from the same quantized operands
    bound: float | None = None
    processing_error: float | None = None  # what vLLM's weight processing (requantization) moved the output by
    quant_error: float | None = None   # vs model-dtype activations (the FP8 quantization error; information)
    ms: float | None = None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    ranks: tuple = ()                  # load --tp: RankFigures(rank, bytes_read, ms) per rank
    against: Comparison | None = None  # --against BASE (a FusedMoE's: the worst expert's, against.worst_expert)
    num_experts: int = 0               # FusedMoE only, from here on
    experts_run: tuple[int, ...] = ()
    worst_expert: int | None = None
    experts: tuple[ExpertRun, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status.ok


class ExpertRun(NamedTuple):
    """One expert's figures. rel_error is the worse of its two GEMMs, each against fp32 of the same operands."""

    expert: int
    status: Status                     # ok | warn | FAIL
    rank: int | None = None            # under --ep: the rank that holds it
    rel_error: float | None = None
    w13_error: float | None = None
    w2_error: float | None = None
    quant_error: float | None = None   # vs model-dtype activations, an fp32 intermediate and the checkpoint's weights
    processing_error: float | None = None  # what the w13 requantization moved the w13 output by
    bytes_read: int = 0
    ms: float | None = None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    against: Comparison | None = None  # --against BASE: this expert's


class AttentionRun(NamedTuple):
    """What `load` found for one attention layer's KV cache: a random K and V written through the checkpoint's
    scales as vLLM's cache write does, read back, against fp32. `status`: ok, warn, FAIL, or "not run"."""

    name: str
    kv_cache_dtype: str
    cache_dtype: str
    status: Status
    k_scale: tuple[float, ...] = ()    # as vLLM uses them (one per tensor, or per head)
    v_scale: tuple[float, ...] = ()
    k_error: float | None = None       # relative round-trip error of K, of V
    v_error: float | None = None
    bound: float | None = None
    bytes_read: int = 0
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status.ok


class LoadReport(NamedTuple):
    inspect: InspectReport
    device: str
    device_platform: str
    tokens: int
    seed: int
    layers_regex: str | None
    runs: tuple[LayerRun, ...]
    bytes_read: int
    seconds: float
    notes: tuple[str, ...] = ()
    moe_runs: tuple[LayerRun, ...] = ()  # one per selected FusedMoE, with its experts
    against: str | None = None         # --against BASE: its folder or repo id
    attention_runs: tuple[AttentionRun, ...] = ()

    @property
    def ok(self) -> bool:
        """Every selected layer ran and agrees, and no model-level, FusedMoE or attention check of inspect's
        failed."""
        return (not self.inspect.errors and all(moe.ok for moe in self.inspect.moes)
                and all(a.ok for a in self.inspect.attention)
                and bool(self.runs or self.moe_runs) and all(run.ok for run in self.runs + self.moe_runs)
                and all(run.ok for run in self.attention_runs))
