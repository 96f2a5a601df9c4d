"""Run vLLM's own scheme and kernel selection for each linear layer, on the meta device (no GPU memory).

Two uses, one code path:
- `crosscheck(report, config, host)`: the vLLM installed in this environment, in a subprocess of this
  interpreter, on this host's platform or, when the report targets another one, a mocked platform with the
  compiled parts stubbed (every mock and stub is returned with the result).
- tests/differential/run.py: a PyPI wheel's Python (PYTHONPATH=<unzipped wheel>:<deps>) with `--stub`, which
  also stands in for compiled code and optional packages; each stand-in's risk is in STUB_RISKS.

Each case builds the layer with vLLM's real class (QKVParallelLinear, ...) and quantization config, and yields
the scheme, the kernel class vLLM chose and the error text it raised. Never imported on the inspect path.
    python -m fp8check.core.routing.crosscheck PLATFORM [--stub] [--host] < cases.json   (one JSON line per case;
    --host: keep this host's platform instead of mocking PLATFORM)
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import re
import sys
import types
from enum import Enum
from typing import NamedTuple
from unittest import mock

# Python packages vLLM imports at module level that play no part in linear routing (structured output, API
# server) or are compiled extensions: resolved to inert modules.
INERT = ("xgrammar", "tvm_ffi", "fastapi", "llguidance", "vllm._C", "vllm._C_stable_libtorch", "vllm._moe_C",
         "vllm._rocm_C", "vllm.cumem_allocator", "vllm._flashmla_C", "vllm._flashmla_extension_C", "vllm_xpu_kernels",
         "vllm.vllm_flash_attn", "vllm.utils.humming")
# Optional kernel packages a stock CUDA `pip install vllm` brings (METADATA Requires-Dist / vendored copy):
# present as importable names so vLLM's find_spec-based checks see them.
PRESENT_ON_CUDA = ("flashinfer", "humming", "deep_gemm")

STUB_RISKS = {
    "compiled ops (vllm._C)": "inert; every ops.* result vLLM routes on is replaced below, others are never called "
                              "before kernel selection",
    "cutlass_scaled_mm_supports_fp8(cc)": "cc >= 89 (CUDA 12.9 build, as the wheels): a build for CUDA < 12.4 differs",
    "cutlass_scaled_mm_supports_block_fp8(cc)": "cc >= 90 (csrc scaled_mm_entry: sm90 needs CUDA 12.0, sm100+ "
                                                 "CUDA 12.8; the wheels are CUDA 12.9+ builds)",
    "cutlass_group_gemm_supported(cc)": "sm90 and the sm100 family (the CUTLASS MoE grouped-GEMM builds of a "
                                        "CUDA 12.8+ wheel), as fp8check's CutlassExpertsFp8 assumes",
    "has_flashinfer / humming / deep_gemm": "True on CUDA (stock dependencies); a host without them differs",
    "vllm.utils.humming": "inert (0.32+ lazy facade over the humming package, used by Humming's weight code; "
                          "routing asks has_humming()) but for GemmType, humming-kernels' own enum: which Humming "
                          "MoE experts class fits the preferred GEMM type compares its values (0.34's W4A8 oracle)",
    "torch.cpu._is_amx_tile_supported": "True (Sapphire Rapids or newer)",
    "ops.cpu_has_amx_fp8": "False (no shipping x86 CPU has AMX-FP8 today); on vllm._custom_ops and, from 0.34, "
                           "vllm._cpu_ops, where the CPU kernels read it",
    "ops._supports_cpu_fp8_w8a16": "True (the CPU build exports the op); on both modules, like cpu_has_amx_fp8",
    "HAS_TRITON (CPU platform check)": "True while CpuPlatform.check_and_update_config runs (a CPU install has "
                                       "triton-cpu): 0.34 raises 'vLLM on x86 CPUs requires Triton (triton-cpu).' "
                                       "without it, 0.33 and older only warn; an x86 host without triton-cpu "
                                       "fails every 0.34 model at startup, which this hides",
    "ROCm arch": "torch.cuda.get_device_properties() returns the requested gfx name and its compute-unit count "
                 "(MI300X 304, MI355X 256, MI250X 110); amdsmi absent",
    "tensor-parallel group": "world size = the case's TP, rank 0",
}


class _Inert(types.ModuleType):
    __path__: list[str] = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = mock.MagicMock(name=f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _InertFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, names):
        self.names = tuple(names)

    def find_spec(self, name, path, target=None):
        if any(name == n or name.startswith(n + ".") for n in self.names):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return _Inert(spec.name)

    def exec_module(self, module):
        pass


class HummingGemmType(Enum):
    """humming.config.GemmType of humming-kernels 0.1.19 (the pin of vLLM 0.34), on the inert vllm.utils.humming."""

    DENSE = "dense"
    INDEXED = "indexed"
    GROUPED_CONTIGUOUS = "grouped_contiguous"
    GROUPED_MASKED = "grouped_masked"


def _install_platform(kind: str, cc: int | None, arch: str | None) -> None:
    """Before any vLLM module binds `current_platform`: one platform per process."""
    import torch
    import vllm.platforms as platforms
    from vllm.platforms.interface import DeviceCapability

    if kind == "rocm":
        units = {"gfx942": 304, "gfx950": 256, "gfx90a": 110}.get(arch or "", 304)  # MI300X, MI355X, MI250X
        torch.cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(  # type: ignore[assignment]
            gcnArchName=arch, name=arch, multi_processor_count=units)
        from vllm.platforms.rocm import RocmPlatform as base
    elif kind == "cuda":
        from vllm.platforms.cuda import CudaPlatform as base
    elif kind == "xpu":
        from vllm.platforms.xpu import XPUPlatform as base
    else:
        from vllm.platforms.cpu import CpuPlatform as base

    class Mocked(base):
        if kind == "cpu":
            @classmethod
            def check_and_update_config(cls, vllm_config):
                """Triton answers present for this check only (STUB_RISKS: HAS_TRITON)."""
                import vllm.triton_utils as triton_utils

                with mock.patch.object(triton_utils, "HAS_TRITON", True):
                    return super().check_and_update_config(vllm_config)

        if kind == "cuda":
            @classmethod
            def get_device_capability(cls, device_id=0):
                assert cc is not None, "a CUDA platform carries its capability"
                return DeviceCapability(cc // 10, cc % 10)

            @classmethod
            def get_device_name(cls, device_id=0):
                return f"mocked sm{cc}"

    platforms._current_platform = Mocked()


def _patch_ops():
    """Before anything else imports vllm._custom_ops (or vllm._cpu_ops): some modules evaluate these at import
    time. The CPU probes live on vllm._custom_ops up to 0.33 and on vllm._cpu_ops from 0.34 (its CPU kernels read
    them there): both are patched wherever the module exists."""
    import importlib
    import importlib.util

    import torch
    import vllm._custom_ops as ops

    ops.cutlass_scaled_mm_supports_fp8 = lambda capability: capability >= 89
    ops.cutlass_scaled_mm_supports_block_fp8 = lambda capability: capability >= 90
    ops.cutlass_group_gemm_supported = lambda capability: capability == 90 or capability // 10 == 10
    cpu_modules = [ops]
    if importlib.util.find_spec("vllm._cpu_ops") is not None:  # 0.34+
        cpu_modules.append(importlib.import_module("vllm._cpu_ops"))
    for module in cpu_modules:
        module.cpu_has_amx_fp8 = lambda: False
        module._supports_cpu_fp8_w8a16 = True
    torch.cpu._is_amx_tile_supported = lambda: True


def _patch_availability(kind: str, tp: int, stubbed: bool):
    on_cuda = kind == "cuda"
    for module in list(sys.modules.values()):
        if not (getattr(module, "__name__", "") or "").startswith("vllm"):
            continue
        for name in ("has_flashinfer", "has_humming", "has_deep_gemm") if stubbed else ():
            if hasattr(module, name):
                fn = getattr(module, name)
                if callable(fn):
                    setattr(module, name, lambda on_cuda=on_cuda: on_cuda)
        for name, value in (("get_tensor_model_parallel_world_size", tp), ("get_tensor_model_parallel_rank", 0)):
            if hasattr(module, name):
                setattr(module, name, lambda value=value: value)


def _kernel_of(obj) -> str | None:
    """The `*Kernel` object vLLM chose, held by the method or its scheme, or one level deeper (INC's wrapped
    Fp8LinearMethod, ModelOpt's / Quark's / FBGEMM's `fp8_linear`, online methods' `kernel`)."""
    holders = [h for h in (obj, getattr(obj, "scheme", None)) if h is not None]
    for depth in range(2):
        nested = []
        for holder in holders:
            for value in vars(holder).values():
                name = type(value).__name__
                if name.endswith("Kernel"):
                    return name
                if depth == 0 and type(value).__module__.startswith("vllm") and hasattr(value, "__dict__"):
                    nested.append(value)
        holders = nested
    return None


def _hf_config(folder: str):
    """transformers_utils/config.py's reading of a local checkpoint: config.json, with hf_quant_config.json as the
    quantization_config when config.json has none (ModelOpt's older layout)."""
    import os

    with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
        raw = json.load(fh)
    side = os.path.join(folder, "hf_quant_config.json")
    if raw.get("quantization_config") is None and os.path.exists(side):
        with open(side, encoding="utf-8") as fh:
            raw["quantization_config"] = json.load(fh)
    return types.SimpleNamespace(**raw)


_FRONT_DOORS: dict[tuple, tuple] = {}


def vllm_front_door(checkpoint: dict):
    """vLLM's own path from `--quantization` and a checkpoint folder to a quant config: EngineArgs'
    resolve_quantization_config, ModelConfig._verify_quantization (detection, overrides, allow-list, deprecation)
    and VllmConfig._get_quantization_config (get_quant_config, capability and dtype gates), each called on a
    namespace standing for ModelConfig. Returns (settled method, quant config), or raises vLLM's error."""
    import copy

    import torch
    from vllm.config import LoadConfig, ModelConfig, VllmConfig
    from vllm.config.quantization import resolve_quantization_config
    from vllm.transformers_utils.model_arch_config_convertor import ModelArchConfigConvertorBase

    hf_config = _hf_config(checkpoint["folder"])
    # The convertor's normalization reads and writes only its argument's quantization_config.
    normalized = ModelArchConfigConvertorBase._normalize_quantization_config(None, copy.deepcopy(hf_config))
    heads = hf_config.num_attention_heads
    model_config = types.SimpleNamespace(
        model=checkpoint["folder"], revision=None, hf_overrides={}, hf_config=hf_config, dtype=torch.bfloat16,
        quantization=checkpoint["quantization"],
        quantization_config=resolve_quantization_config(checkpoint["quantization"], None),
        allow_deprecated_quantization=checkpoint["allow_deprecated"],
        model_arch_config=types.SimpleNamespace(
            quantization_config=normalized, total_num_attention_heads=heads,
            total_num_kv_heads=getattr(hf_config, "num_key_value_heads", heads)))
    ModelConfig._verify_quantization(model_config)
    quant_config = VllmConfig._get_quantization_config(model_config, LoadConfig())
    return model_config.quantization, quant_config


def _front_door_cached(checkpoint: dict):
    key = (checkpoint["folder"], checkpoint["quantization"], checkpoint["allow_deprecated"])
    if key not in _FRONT_DOORS:
        try:
            _FRONT_DOORS[key] = (vllm_front_door(checkpoint), None)
        except BaseException as exc:  # noqa: BLE001 - vLLM's refusal is the answer
            _FRONT_DOORS[key] = (None, f"{type(exc).__name__}: {exc}")
    return _FRONT_DOORS[key]


def run_case(case: dict) -> dict:
    import torch
    import vllm.model_executor.layers.linear as linear
    from vllm.config import VllmConfig, set_current_vllm_config
    from vllm.config.kernel import KernelConfig
    from vllm.model_executor.layers.quantization import get_quantization_config

    _patch_availability(case["platform_kind"], case["tp"], case["stubbed"])
    result = {"id": case["id"]}
    if "checkpoint" in case:
        door, door_error = _front_door_cached(case["checkpoint"])
        if door_error is not None:
            return dict(result, stage="front door", method=None, config=None, scheme=None, kernel=None,
                        error=door_error)
        method, quant_config = door
        result.update(method=method, config=quant_config.get_name())
    else:
        method = case["method"]
        quant_config = get_quantization_config(method).from_config(case["quant_config"])
    kernel_kwargs = {"linear_backend": case.get("backend", "auto")}
    config = VllmConfig(kernel_config=KernelConfig(**kernel_kwargs))
    object.__setattr__(config, "model_config", types.SimpleNamespace(
        dtype=torch.bfloat16, hf_config=None, quantization=method,
        hf_text_config=types.SimpleNamespace(model_type=case.get("model_type", "llama"))))
    torch.set_default_dtype(torch.bfloat16)
    try:
        with set_current_vllm_config(config), torch.device("meta"):
            cls = getattr(linear, case["layer"])
            kw = dict(bias=False, quant_config=quant_config, prefix=case["prefix"], params_dtype=torch.bfloat16)
            if case["layer"] == "QKVParallelLinear":
                layer = cls(case["hidden"], case["head_dim"], case["heads"], case["kv_heads"], **kw)
            elif case["layer"] == "MergedColumnParallelLinear":
                layer = cls(case["hidden"], case["output_sizes"], **kw)
            else:
                layer = cls(case["input"], case["output"], **kw)
        method = layer.quant_method
        # The scheme the layer (compressed-tensors, Quark) or its method (INC's INCLinearMethod) holds.
        scheme = getattr(layer, "scheme", None) or getattr(method, "scheme", None)
        result["scheme"] = type(scheme).__name__ if scheme is not None else type(method).__name__
        result["kernel"] = _kernel_of(scheme if scheme is not None else method)
        result["error"] = None
    except BaseException as exc:  # noqa: BLE001 - every failure is a result: vLLM's message is the answer
        result.update(scheme=None, kernel=None, error=f"{type(exc).__name__}: {exc}")
    return result


def prepare(platform: str, stubbed: bool, host: bool) -> dict[str, str]:
    """Make this process's vLLM answer as on `platform` (PLATFORM argument syntax); returns every mock and stub
    in use with its risk. Must run before anything imports vLLM."""
    kind, _, rest = platform.partition(":")
    rocm_cc = {"gfx942": 94, "gfx950": 95, "gfx90a": 90}
    cc = int(rest) if kind == "cuda" else (rocm_cc.get(rest) if kind == "rocm" else None)
    arch = rest if kind == "rocm" else None
    if stubbed:
        sys.meta_path.insert(0, _InertFinder(INERT + (PRESENT_ON_CUDA if kind == "cuda" else ())))
    import logging
    logging.disable(logging.WARNING)
    if not host:
        _install_platform(kind, cc, arch)
    if stubbed:
        _patch_ops()
        import vllm.utils.humming  # an inert module (INERT)

        vllm.utils.humming.GemmType = HummingGemmType
    import vllm.model_executor.kernels.linear  # noqa: F401
    import vllm.model_executor.layers.quantization.compressed_tensors.compressed_tensors  # noqa: F401
    import vllm.model_executor.layers.quantization.fp8  # noqa: F401
    mocks = dict(STUB_RISKS) if stubbed else {}
    if not host:
        mocks["platform"] = f"vllm.platforms.current_platform replaced by a {kind} platform ({platform})"
    mocks["tensor-parallel group"] = STUB_RISKS["tensor-parallel group"]
    return mocks


def main() -> None:
    kind = sys.argv[1].partition(":")[0]
    stubbed = "--stub" in sys.argv
    print(json.dumps({"stubs": prepare(sys.argv[1], stubbed, "--host" in sys.argv)}), flush=True)
    for case in json.load(sys.stdin):
        print(json.dumps(run_case(dict(case, platform_kind=kind, stubbed=stubbed))), flush=True)


class LayerAgreement(NamedTuple):
    name: str
    agrees: bool
    differs: tuple[str, ...]          # "scheme", "kernel", "error", "error text"
    vllm_scheme: str | None
    vllm_kernel: str | None
    vllm_error: str | None


def layer_case(layer, config: dict, tp: int, checkpoint: dict) -> dict | None:
    """The vLLM constructor call for one decoder linear of a report, behind vLLM's own front door for
    `checkpoint` ({"folder", "quantization", "allow_deprecated"}), or None for layers not built here."""
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_dim = config.get("head_dim") or hidden // heads
    base = {"id": layer.name, "prefix": layer.name, "tp": tp, "checkpoint": checkpoint,
            "model_type": config.get("model_type")}  # DeepGEMM's per-model auto-disable list reads it
    out, inp = layer.shape
    if layer.layer_type == "QKVParallelLinear":
        return dict(base, layer="QKVParallelLinear", hidden=inp, head_dim=head_dim, heads=heads,
                    kv_heads=config.get("num_key_value_heads", heads))
    if layer.layer_type == "MergedColumnParallelLinear" and len(layer.shards) == 2:
        return dict(base, layer="MergedColumnParallelLinear", hidden=inp, output_sizes=[out // 2, out // 2])
    if layer.layer_type in ("RowParallelLinear", "ColumnParallelLinear", "ReplicatedLinear"):
        return dict(base, layer=layer.layer_type, input=inp, output=out)
    return None


def run_vllm(platform: str, cases: list[dict], env: dict | None = None, stub: bool = False,
             host: bool = False) -> tuple[dict, dict[str, dict]]:
    """vLLM's answers for `cases` from a subprocess: (mocks and stubs used, {case id: result})."""
    import subprocess  # noqa: PLC0415

    argv = [sys.executable, "-m", "fp8check.core.routing.crosscheck", platform] + ["--stub"] * stub + ["--host"] * host
    proc = subprocess.run(argv, input=json.dumps(cases), capture_output=True, text=True, env=env, timeout=1800)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"vLLM on {platform} produced no result:\n{proc.stderr[-3000:]}")
    return lines[0]["stubs"], {r["id"]: r for r in lines[1:]}


def platform_arg(platform) -> str:
    """fp8check's Platform as this module's PLATFORM argument."""
    if platform.kind == "cuda":
        return f"cuda:{platform.capability}"
    return f"rocm:{platform.arch}" if platform.kind == "rocm" else platform.kind


def vllm_error(text: str | None) -> str | None:
    """vLLM's exception as the user sees it: 'ValueError: msg' -> msg (fp8check reports the message only)."""
    if text is None:
        return None
    kind, _, message = text.partition(": ")
    return text if kind == "AssertionError" else message


_STRING_SET = re.compile(r"\{'[^{}]*'\}")


def _sets_in_order(text: str) -> str:
    """A message with each printed set of strings ({'mx_fp', 'int'}) in sorted order: Python prints a set of str
    in an order that changes with PYTHONHASHSEED, so vLLM's own text differs between runs."""
    return _STRING_SET.sub(lambda m: "{" + ", ".join(sorted(m.group(0)[1:-1].split(", "))) + "}", text)


def compare(scheme: str, kernel: str | None, error: str | None, theirs: dict) -> tuple[str, ...]:
    """Which of scheme / kernel / error disagree. An error's text is compared exactly (printed sets of strings in
    sorted order), except that fp8check names a bare assertion (vLLM's `assert` has no message) in its own words:
    there only its presence counts."""
    diffs = []
    their_error = vllm_error(theirs["error"])
    if their_error is None and theirs["scheme"] != scheme:
        diffs.append("scheme")
    if (their_error is None) != (error is None):
        diffs.append("error")
    elif their_error is not None and error is not None and not their_error.startswith("AssertionError") and \
            _sets_in_order(their_error) != _sets_in_order(error):
        diffs.append("error text")
    if their_error is None and theirs["kernel"] != kernel:
        diffs.append("kernel")
    return tuple(diffs)


FRONT_DOOR = "(front door)"


def crosscheck(report, config: dict, host: bool, checkpoint: dict, door_error: str | None
               ) -> tuple[dict, list[LayerAgreement]]:
    """`fp8check crosscheck MODEL`: the installed vLLM's front door (detection, --quantization, allow-list,
    deprecation, capability) and routing of every decoder linear in `report` (an InspectReport), compared row by
    row. `config` is the checkpoint's config.json (text_config for multimodal models); `checkpoint` its folder
    and the quantization flags; `door_error` fp8check's first front-door error; `host` is True when the report's
    platform is this host's (no platform mock)."""
    unquantized = ("UnquantizedLinearMethod", "UnquantizedEmbeddingMethod")
    cases = [case for layer in report.layers if layer.scheme not in unquantized
             for case in [layer_case(layer, config, report.tp, checkpoint)] if case]
    # Another platform than this host's needs the compiled parts stubbed too (they are the host's build).
    mocks, theirs = run_vllm(platform_arg(report.platform), cases, stub=not host, host=host)
    refused = next((r for r in theirs.values() if r.get("stage") == "front door"), None)
    # The config class vLLM's front door built (every case carries it), or its refusal.
    door = refused or {"scheme": None, "kernel": None, "error": None,
                       "config": next((r.get("config") for r in theirs.values()), None)}
    diffs = compare("", None, door_error, dict(door, scheme=""))
    rows = [LayerAgreement(FRONT_DOOR, not diffs, diffs, door.get("config"), None, door["error"])]
    if refused is not None:
        return mocks, rows
    for layer in report.layers:
        if layer.name not in theirs:
            continue
        result = theirs[layer.name]
        diffs = compare(layer.scheme, layer.kernel, layer.errors[0] if layer.errors else None, result)
        rows.append(LayerAgreement(layer.name, not diffs, diffs, result["scheme"], result["kernel"], result["error"]))
    return mocks, rows


if __name__ == "__main__":
    main()
