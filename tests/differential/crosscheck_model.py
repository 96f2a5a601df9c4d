"""vLLM's real model class for a checkpoint, built whole on the meta device, every module read back — and the
comparison of that with fp8check's report of the same checkpoint.

The vLLM side (a subprocess per release and platform, like crosscheck.py's, whose stubs it reuses):
    python tests/differential/crosscheck_model.py PLATFORM [--stub] < cases.json
A case is {"id", "folder", "quantization", "allow_deprecated", "tp", "ep", "kv_cache_dtype", "moe_backend",
"tokenizer"} (tokenizer: the checkpoint's tokenizer is loaded, where the front door asks it; else skipped; moe_backend:
KernelConfig's, auto when absent). For each, the
release's own `ModelConfig` (config.json read by transformers, vLLM's front door: detection, --quantization, allow-list,
deprecation) and `VllmConfig` (quant config, capability and dtype gates; `enforce_eager`), then
`model_loader.utils.initialize_model` under `torch.device("meta")` — the model file decides which layers get the
quant config, their classes, fusions, MoE wrappers, MLA projections, towers; the case's --kv-cache-dtype resolved as
EngineArgs resolves it. Answer: every module holding a quant method (linear, LM head, embedding, FusedMoE) with its
method / scheme, kernel, MoE backend and experts class, and every attention layer with its KV cache dtype, KV
cache method and attention backend — or the first error the build raised, as vLLM's text.

Stand-ins beyond crosscheck.STUB_RISKS are in MODEL_STUB_RISKS (the distributed groups, the model-registry
subprocess). Never imported on the inspect path.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import json
import re
import os
import sys
import types
from enum import Enum
from typing import NamedTuple
from unittest import mock

from fp8check.core.model.layouts import arch_for

MODEL_STUB_RISKS = {
    "distributed groups": "TP / PP / DP / EP / DCP groups are stand-ins with world size = the case's TP (EP = TP "
                          "with --ep, PP = DP = 1), rank 0: rank-dependent construction (PP stages, DP) is not run",
    "torch.ops._C & co.": "each op may be named (module-level references) but calling one raises: no answer "
                          "comes from a mock; hasattr(torch.ops._C, X) is True for every X",
    "in_the_same_node_as": "every rank on one node (a collective over the CPU group, which the stand-in groups "
                           "cannot run): what 0.34's sparse-MLA context-parallel buffers ask while building",
    "torch.cuda / torch.xpu Stream / Event": "stand-in objects: the auxiliary stream and events of shared-expert / MLA "
                                 "overlap are created at construction and never used before loading",
    "ExpertMapManager.get_compressed_map_string": "a fixed string: 0.28 formats its expert map for a log line "
                                                   "while building, which the meta device cannot",
    "triton.language placeholder": "vLLM's Triton-less placeholder answers None for every name (it lists a few): "
                                   "kernel modules the ROCm attention selector imports name dtypes at import time",
    "triton.language.extra": "inert namespaces (tl.extra.cuda.libdevice): Step-5's kernel modules bind libdevice at "
                             "import time; no kernel is compiled or run while building",
    "triton.Config": "a record of its arguments in vLLM's Triton placeholder (MODEL_STUB_RISKS): Mamba / GDN "
                     "kernel modules read num_stages / num_warps off their autotune configs at import time",
    "triton.set_allocator": "a no-op in vLLM's Triton placeholder: OLMo Hybrid's gated-delta-net layer hands Triton a "
                            "scratch allocator at construction (triton_utils/allocation.py set_triton_allocator); "
                            "no kernel runs while building",
    "cuda (cuda-python)": "inert module: MiniMax-M2's RMS-norm workspace imports it at construction",
    "torch.ops._C.get_cuda_view_from_cpu_tensor": "the host tensor itself, on the meta device: Qwen4-Exp's n-gram "
                                                  "embedding tables (pinned host memory, read by the device through "
                                                  "a UVA view) are built with the model; no layer's method reads it",
    "vllm._flashkda_C": "inert module, and torch.ops._flashkda_C.get_workspace_size answers 0: the FlashKDA "
                        "extension (0.34's GLM-5-Next / Kimi-K3 KDA prefill on sm90 / 100 / 120) sizes its "
                        "workspace buffer at construction; a buffer size plays no part in any layer's method",
    "vllm.third_party.deep_gemm._C": "inert module: the vendored DeepGEMM's extension, which the unzipped wheels "
                                     "lack; dots3-note imports the package at import time (its vision tower casts "
                                     "weights with it after loading). Routing asks has_deep_gemm(), patched apart",
    "tokenspeed_mla": "inert module: a Requires-Dist of the wheels; TOKENSPEED_MLA's selection check imports it "
                      "(sm100), as fp8check assumes it installed",
    "cutlass (nvidia-cutlass-dsl)": "inert module: a Requires-Dist of the 0.33 / 0.34 wheels; Kimi-K3 / Kimi-Linear's "
                                    "CuTe-DSL kernels (vllm.models.kimi_k3) import it with the model class; no "
                                    "kernel is compiled or run while building",
    "torchvision": "inert module: imported with transformers' image processors by the vision-language model "
                   "files; image preprocessing plays no part in building the model",
    "torchaudio": "where it is not installed, torchaudio.functional's melscale_fbanks answers zeros of its shape: "
                  "MiDashengLM's Dasheng front end computes a mel filter bank buffer while it is built; a feature "
                  "extractor's buffer plays no part in any layer's method, kernel or backend",
    "Beam all-reduce workspace": "BeamAllReduceWorkspace.create answers None (0.33 / 0.34's Beam at TP 2 / 4 / 8: a "
                                 "multicast workspace agreed over the CPU group, which the stand-in groups cannot "
                                 "run): the fused post-attention / MLP reductions it enables play no part in any "
                                 "layer's method, kernel or backend",
    "ShardQ workspace": "allocate_shardq_buffers a no-op (0.34's mla_attention.py): the symmetric-memory query "
                        "workspace of a sparse MLA layer at TP > 1 (Kimi-K3.1) needs a device and peers; a workspace "
                        "plays no part in any layer's method or backend",
    "MLA prefill workspace": "meta-device buffers for the FlashInfer and TRT-LLM ragged MLA prefill backends (0.33 / "
                             "0.34), which reserve one while the layer is built from the workspace manager the GPU "
                             "model runner initializes; a buffer plays no part in any layer's method or backend",
    "ROCm MLA prefill": "on ROCm the MLA prefill backend FLASH_ATTN is available (is_available answers True, its "
                        "flash_attn_varlen_func a never-called op): the ROCm flash-attn package vLLM's ROCm images "
                        "carry, which this host lacks (platforms/rocm.py get_mla_prefill_backend_cls: ROCM_AITER_FA "
                        "with AITER on, else FLASH_ATTN); its dimension and dtype checks run as they are, and "
                        "fp8check does not model MLA prefill backends",
    "HAS_TRITON (model runner)": "True while VllmConfig is built and the model constructed (config/vllm.py "
                                 "use_v2_model_runner, 0.30-0.33, a property the model file may read): a GPU install "
                                 "has Triton (a CPU one triton-cpu, as the CPU platform check assumes), so vLLM picks "
                                 "Model Runner V2 as a host would; without it 0.33 refuses Step-5 ('Model Runner V1 "
                                 "does not support: Step5') and LongCat-Flash-Lite ('requires the V2 model runner')",
    "ALiBi slopes": "computed on the CPU (bloom.py / falcon.py _get_alibi_slopes, read back with .tolist() while "
                    "building), where a real build computes them on the device: the same values, which play no part "
                    "in any layer's method, kernel or backend",
    "executor backend": "`mp` named explicitly: its choice (a device count) plays no part in building the model",
    "model registry inspection": "vLLM inspects a model class in a subprocess; here in-process (same answer, "
                                 "the subprocess would not carry the stubs)",
    "attention backend": "chosen by the release's selector on the mocked platform (stubbed flash-attn / FlashInfer "
                         "probes: FlashInfer importable on CUDA, the device capability of the case) and compared "
                         "by its AttentionBackendEnum name, with the layer's KV cache dtype and KV method",
    "accelerator tensors": "every tensor asked for on cuda / xpu (workspaces attention backends allocate when "
                           "imported or built) is put on the meta device by a torch function mode, and so is "
                           "a meta tensor moved to the CPU (kimi_k25.py moves its built tower to current_device())",
    "FlashInfer feature probes": "on CUDA, NVIDIA's cubin artifactory is reachable (has_nvidia_artifactory, an "
                                 "HTTP probe: TRT-LLM attention, FlashInfer's sink support) and FlashInfer has the "
                                 "SM90 MLA API (has_flashinfer_sm90_nope_mla, FlashInfer >= 0.6.18), as fp8check "
                                 "assumes; an offline host without cubins, an older FlashInfer differ",
    "torch.cuda / torch.xpu device queries": "get_device_properties / capability / count answer for the mocked "
                                             "device (SM count of H100, B200, A100, L40S, RTX PRO 6000 for sm90 / "
                                             "100 / 80 / 89 / 120; Max 1100's 448 EUs; 8 devices); the CUDA "
                                             "device's name is fp8check's label of the platform (cuda:80), which "
                                             "vLLM's messages quote where a real GPU's name would be; a ROCm "
                                             "device's name is its gfx arch's part (AMD_Instinct_MI300X for gfx942: "
                                             "amdsmi absent), which only picks a fused-MoE tuning file",
    "XIELU on the CPU": "Apertus' xIELU activation (activation.py XIELU) is built on the CPU: it reads its beta / eps "
                        "buffers back with .item() while built, which the meta device cannot; an activation's "
                        "scalars play no part in any layer's method, kernel or backend",
    "Step-1 ALiBi slopes on the CPU": "step1.py's _get_step_alibi_slopes is computed on the CPU: StepAttention reads "
                                      "the slopes back with .tolist() while built, which the meta device cannot; "
                                      "the slopes play no part in any layer's method, kernel or backend",
    "GateLinear SM90 router warmup": "0.34+: _register_sm90_bf16x3_warmup is a no-op (it registers a CuTe-DSL JIT "
                                     "warmup of the router GEMM on sm90 and imports nvidia-cutlass-dsl, absent "
                                     "here); no routing effect: the router's method and class are read as built",
    "EXAONE-3 config": "model_type exaone, remote code on the hub (configuration_exaone.py, --trust-remote-code) "
                       "that transformers < 5.24 lacks, is read by a stand-in config class of the keys exaone.py "
                       "reads (_remote_code_exaone_config)",
    "Nemotron VL config": "model_type NemotronH_Nano_VL_V2 / NemotronH_Nano_Omni_Reasoning_V3 / "
                          "Llama_Nemotron_Nano_VL (NVIDIA's configuration.py, served with --trust-remote-code) is "
                          "read by a stand-in of the remote class: vision_config a plain config of its keys (the RADIO "
                          "args the model files read), llm_config the config class of its model_type as text_config "
                          "(_nemotron_vl_config)",
    "Llama-Nemotron-Nano-VL tower": "nemotron_vl.py builds its vision model with AutoModel.from_config(vision_config, "
                                    "trust_remote_code): NVIDIA's remote RADIOModel, which an offline build cannot "
                                    "load; a stand-in of its torch nn.Linears under the checkpoint's names "
                                    "(_remote_radio_model) takes its place, so that tower's rows agree by "
                                    "construction (no quant config reaches it either way)",
    "Nemotron VL tokenizer": "nano_nemotron_vl.py's NemotronH_Nano_VL_V2 encodes its image tags with the checkpoint's "
                             "tokenizer while it is built (cached_tokenizer_from_config, None under "
                             "skip_tokenizer_init): a stand-in answers one token id; token ids play no part in any "
                             "layer's method, kernel or backend",
    "InternVL / InternLM2 configs": "model types internvl_chat / h2ovl_chat / skywork_chat and internlm2 are the "
                                    "hub's remote code (--trust-remote-code), read by stand-ins that build "
                                    "llm_config / vision_config as the remote class does (_internvl_chat_config); "
                                    "an InternVL case with a Qwen2 / Qwen3 text model loads the fixture's word-level "
                                    "tokenizer, which internvl.py's video-token probe asks at the front door",
    "MiniCPM-V / MiniCPM-o configs": "model types minicpmv / minicpmo are the hub's remote code "
                                     "(configuration_minicpm.py, --trust-remote-code): a stand-in of MiniCPMVConfig / "
                                     "MiniCPMOConfig, the text model's Qwen2Config with vision_config a "
                                     "SiglipVisionConfig and audio_config a WhisperConfig (_minicpm_config); 2.6's "
                                     "remote classes are that, 4.5's subclass Qwen3Config, MiniCPM-V 2.5 / 4.0's "
                                     "LlamaConfig (the fixtures write every key their text model reads, and a window "
                                     "key only where the remote base reads it)",
    "Ovis2.5 config": "model_type ovis2_5 is the hub's remote code (configuration_ovis2_5.py, --trust-remote-code): a "
                      "stand-in of its Ovis2_5Config, llm_config the config class of its model_type, vit_config a "
                      "Siglip2NavitConfig of its keys (_ovis2_5_config)",
    "Gemma-3n sparse activation": "GeluAndMulSparse's constructor (Gemma-3n's activation_sparsity_pattern layers) "
                                  "runs on the CPU device: its std multiplier is a scalar's item(), which the meta "
                                  "device cannot answer; a constant plays no part in any layer's method",
    "Gemma-3n vision tower": "without timm installed, gemma3n_mm.py's MobileNetV5 tower (transformers' "
                             "TimmWrapperModel, which requires timm) is an empty module: timm 1.0.31's "
                             "mobilenetv5_300m_enc holds convolutions and norms only (282 4-D and 266 1-D tensors, no "
                             "nn.Linear), so no compared row depends on it; a host serving Gemma-3n installs timm, and "
                             "with it installed the harness builds the real tower",
    "attention impl": "the release's impl is built; its refusals (ValueError / NotImplementedError: fp8_e5m2 on "
                      "XPU, Triton's SM89 FP8) are the build's error; where building it needs what is stubbed "
                      "(a FlashInfer constant, a device workspace), a stand-in takes its place (an instance of "
                      "the impl's class to isinstance: Flint asserts FlashInferImpl), and the case lists it",
}


# Imported while building some models: cuda-python (MiniMax-M2's fused RMS norm workspace on CUDA); tokenspeed-mla
# (a Requires-Dist of the 0.28 and 0.33 wheels: TokenspeedMLABackend.supports_combination imports it on sm100);
# torchvision (the vision-language model files import transformers' image processors, which import it), resolved
# only after transformers has recorded it as absent, so that transformers itself takes no torchvision path;
# vllm.third_party.deep_gemm._C, the vendored DeepGEMM's compiled extension (dots3-note's vision.py imports
# per_block_cast_to_fp8 from the vendored package at import time, on every platform).
MODEL_INERT = ("cuda", "tokenspeed_mla", "vllm._flashkda_C", "cutlass", "vllm.third_party.deep_gemm._C")
LATE_INERT = ("torchvision",)
# torch.ops namespaces of vLLM's compiled extensions, which modules reference at import time
# (`ROTARY_OP = torch.ops._C.rotary_embedding.default` in the compile passes).
COMPILED_NAMESPACES = ("_C", "_moe_C", "_rocm_C", "_C_cache_ops", "_C_custom_ar", "_vllm_fa2_C", "_vllm_fa3_C",
                       "_flashmla_C", "_flashmla_extension_C", "_qutlass_C")


class _CompiledOp:
    """A compiled op that may be named but never called: a call while building the model is a harness gap,
    raised with the op's name (it would otherwise decide something from a mock)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _CompiledOp(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"harness: compiled op torch.ops.{self._name} was called while building the model")


class _FlashKDAOps(_CompiledOp):
    """torch.ops._flashkda_C: its workspace size (a buffer's length, MODEL_STUB_RISKS) answers 0; other ops raise."""

    def get_workspace_size(self, *args) -> int:
        return 0


class _COps(_CompiledOp):
    """torch.ops._C: a device view of a host tensor (utils/torch_utils.py get_accelerator_view_from_cpu_tensor,
    Qwen4-Exp's n-gram embedding tables on CUDA) is the tensor itself, on the meta device; other ops raise."""

    def get_cuda_view_from_cpu_tensor(self, cpu_tensor):
        return cpu_tensor.to("meta")


class _Stream:
    """torch.cuda.Stream / Event where there is no CUDA: created, never run."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


class _DevicesOnMeta:
    """A torch function mode that puts every tensor asked for on an accelerator (`device="cuda"`, `.to("xpu")`,
    `.cuda()`) on the meta device: attention backends allocate workspaces on the device when imported or built."""

    def __init__(self):
        import torch
        from torch.overrides import TorchFunctionMode

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types_, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                device = kwargs.get("device")
                if device is not None and _accelerator(device):
                    kwargs["device"] = "meta"
                if kwargs.get("pin_memory"):
                    # Pinned host memory (Qwen4-Exp's n-gram embedding tables and their staging rows) needs the
                    # device's allocator: on the meta device like the device's own tensors.
                    kwargs.update(pin_memory=False, device="meta")
                name = getattr(func, "__name__", "")
                if name in ("cuda", "xpu"):
                    return args[0].to("meta")
                if name == "to":
                    # A meta tensor moved to the CPU (kimi_k25.py moves its built tower to current_device(), the
                    # CPU platform's "cpu") stays on the meta device: a real CPU build moves real weights.
                    from_meta = bool(args) and isinstance(args[0], torch.Tensor) and args[0].is_meta
                    args = tuple("meta" if isinstance(a, (str, torch.device)) and (
                        _accelerator(a) or from_meta and str(a) == "cpu") else a for a in args)
                return func(*args, **kwargs)

        self.mode = Mode()


def _accelerator(device) -> bool:
    import torch

    if isinstance(device, int):
        return True
    if isinstance(device, (str, torch.device)):
        return str(device).split(":")[0] in ("cuda", "xpu", "hip")
    return False


# Streaming multiprocessors of the GPU each CUDA capability stands for (H100 SXM, B200, A100, L40S, RTX PRO 6000).
SM_COUNTS = {90: 132, 100: 148, 80: 108, 89: 142, 120: 188}


# The name platforms/rocm.py get_device_name gives each gfx arch's part (its _ROCM_DEVICE_ID_NAME_MAP, or the market
# name): MI300X, MI355X, MI250X.
ROCM_DEVICE_NAMES = {"gfx942": "AMD_Instinct_MI300X", "gfx950": "AMD Instinct MI355X", "gfx90a": "AMD Instinct MI250X"}


def _stub_device_queries(platform: str) -> None:
    """torch.cuda's / torch.xpu's device queries, which attention backends ask while building, answered for the
    mocked device."""
    import torch

    from fp8check.core.targets.platforms import parse_platform

    kind, _, rest = platform.partition(":")
    if kind != "cpu":  # Step-5's DSA attention impl places its workspace on the current accelerator while building
        torch.accelerator.current_device_index = lambda: 0
    if kind == "xpu":  # Intel Data Center GPU Max 1100
        xpu = types.SimpleNamespace(max_compute_units=448, gpu_eu_count=448, name="mocked xpu",
                                    total_memory=48 << 30)
        torch.xpu.get_device_properties = lambda *args, **kwargs: xpu
        torch.xpu.device_count = lambda: 8
        torch.xpu.current_device = lambda: 0  # the GDN mixer's gated norm is built on current_device()
    if kind == "rocm":
        torch.cuda.current_device = lambda: 0
        torch.accelerator.current_device_index = lambda: 0  # DeepSeek-V4.1's Engram table, as on CUDA below
        # The product name (platforms/rocm.py get_device_name asks amdsmi, absent here): the fused-MoE tuning file a
        # model looks up while building (K2-Horizon's MoVA value experts, try_get_optimal_moe_config).
        import vllm.platforms as platforms

        name = ROCM_DEVICE_NAMES.get(rest, f"AMD_{rest}")
        type(platforms.current_platform).get_device_name = classmethod(lambda cls, device_id=0: name)
    if kind != "cuda":
        return
    cc = int(rest)
    # The device's name is in vLLM's messages (Triton's SM89 FP8 refusal): fp8check names the platform as given.
    props = types.SimpleNamespace(major=cc // 10, minor=cc % 10, multi_processor_count=SM_COUNTS.get(cc, 132),
                                  name=parse_platform(platform).label, total_memory=80 << 30)
    torch.cuda.get_device_properties = lambda *args, **kwargs: props
    torch.cuda.get_device_name = lambda *args, **kwargs: props.name
    import vllm.platforms as platforms  # crosscheck's mocked platform names itself "mocked smNN"

    type(platforms.current_platform).get_device_name = classmethod(lambda cls, device_id=0: props.name)
    torch.cuda.get_device_capability = lambda *args, **kwargs: (cc // 10, cc % 10)
    torch.cuda.current_device = lambda: 0
    # DeepSeek-V4.1's Engram table (models/deepseek_v41/common/engram.py ParallelEngramEmbedding) reads the SM count
    # of torch.accelerator.current_device_index() while building.
    torch.accelerator.current_device_index = lambda: 0
    torch.cuda.device_count = lambda: 8


def _absent(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return None


def _stub_flashinfer_probes(platform: str) -> None:
    """FlashInfer's feature probes that attention selection asks (utils/flashinfer.py), answered for the FlashInfer
    a release pins, on CUDA only, as fp8check assumes: NVIDIA's cubin artifactory reachable (has_nvidia_artifactory,
    an HTTP probe: TRT-LLM attention, FlashInfer's sink support) and the SM90 MLA API of FlashInfer >= 0.6.18
    (has_flashinfer_sm90_nope_mla, an inspect of BatchMLAPagedAttentionWrapper.run: FLASHINFER_MLA_SPARSE_SM90)."""
    try:
        import vllm.utils.flashinfer as flashinfer
    except ImportError:
        return
    on_cuda = platform.startswith("cuda")
    for name in ("has_nvidia_artifactory", "has_flashinfer_sm90_nope_mla"):
        if hasattr(flashinfer, name):
            setattr(flashinfer, name, lambda: on_cuda)


class _TritonConfig:
    """triton.Config as a record: 0.34's Mamba SSD kernels filter their autotune configs on sm90 at import time
    (ssd_chunk_scan.py _drop_racy_wgmma_configs), which the placeholder's Config (a decorator) cannot answer."""

    def __init__(self, kwargs=None, num_warps=4, num_stages=3, **extra):
        self.kwargs, self.num_warps, self.num_stages = dict(kwargs or {}), num_warps, num_stages


class _TritonExtra:
    """tl.extra in vLLM's triton.language placeholder: the vendor libdevice namespaces, which kernel modules bind at
    import time (Step-5's ops/summary_update.py: `libdevice = tl.extra.cuda.libdevice`); any name an inert one."""

    def __getattr__(self, name: str):
        _absent(name)  # dunders raise, as the placeholder's do
        return self


def _stub_compiled_namespaces() -> None:
    import torch

    for namespace in COMPILED_NAMESPACES:
        setattr(torch.ops, namespace, _CompiledOp(namespace))
    torch.ops._flashkda_C = _FlashKDAOps("_flashkda_C")
    torch.ops._C = _COps("_C")
    # hasattr(torch.ops._rocm_C, X) is True here, so kernel modules register fake impls of compiled ops that do not
    # exist (0.34's hip_gdn_chunk.py): registering one for a stand-in namespace is a no-op.
    real_register_fake = torch.library.register_fake

    def register_fake(op, *args, **kwargs):
        name = op if isinstance(op, str) else ""
        if name.partition("::")[0] in COMPILED_NAMESPACES:
            return lambda fn=None: fn
        return real_register_fake(op, *args, **kwargs)

    torch.library.register_fake = register_fake
    # Shared-expert and MLA overlap: vLLM creates an auxiliary CUDA stream while building (utils.aux_stream()).
    torch.cuda.Stream = torch.cuda.Event = _Stream
    # DeepSeek-V4's XPU attention (models/deepseek_v4/xpu/xpu_sparse.py) swaps torch.cuda.Event for
    # torch.xpu.Event while building, whose real class raises without a device.
    torch.xpu.Stream = torch.xpu.Event = _Stream
    # Without Triton, vLLM's triton.language placeholder names some dtypes; kernel modules imported while the
    # attention selector resolves a backend (ROCm) name others (tl.bfloat16) at import time.
    from vllm.triton_utils import importing

    placeholder = getattr(importing, "TritonLanguagePlaceholder", None)
    if placeholder is not None:
        placeholder.__getattr__ = lambda self, name: _TritonExtra() if name == "extra" else _absent(name)
    import vllm.triton_utils

    if isinstance(vllm.triton_utils.triton, getattr(importing, "TritonPlaceholder", ())):
        vllm.triton_utils.triton.Config = _TritonConfig
        vllm.triton_utils.triton.set_allocator = lambda alloc_fn: None
    # 0.28's ExpertMapManager formats its (meta) expert map for a log line while building.
    try:
        from vllm.model_executor.layers.fused_moe.expert_map_manager import ExpertMapManager
    except ImportError:
        return
    ExpertMapManager.get_compressed_map_string = lambda self: "(expert map on the meta device)"


def _no_router_warmup() -> None:
    """0.34's GateLinear registers a CuTe-DSL JIT warmup of its SM90 router GEMM while building (MODEL_STUB_RISKS):
    a no-op where the release has it."""
    try:
        from vllm.model_executor.layers.fused_moe.router.gate_linear import GateLinear
    except ImportError:  # before 0.31: no GateLinear
        return
    if hasattr(GateLinear, "_register_sm90_bf16x3_warmup"):
        GateLinear._register_sm90_bf16x3_warmup = lambda self: None


def _xielu_on_cpu() -> None:
    """XIELU (activation.py; Apertus' MLP) reads its beta / eps buffers back with .item() while it is built, which the
    meta device cannot: the activation is built on the CPU (MODEL_STUB_RISKS)."""
    import torch
    from vllm.model_executor.layers.activation import XIELU

    build = XIELU.__init__

    def on_cpu(self, *args, **kwargs):
        with torch.device("cpu"):
            build(self, *args, **kwargs)

    XIELU.__init__ = on_cpu


def _step_alibi_on_cpu() -> None:
    """step1.py's StepAttention reads its ALiBi slopes back with .tolist() while it is built, which the meta device
    cannot: the slopes are computed on the CPU (MODEL_STUB_RISKS)."""
    import torch
    try:
        from vllm.model_executor.models import step1
    except ImportError:  # a release without step1.py
        return
    slopes = step1._get_step_alibi_slopes

    def on_cpu(total_num_heads):
        with torch.device("cpu"):
            return slopes(total_num_heads)

    step1._get_step_alibi_slopes = on_cpu


def _no_shardq_workspace() -> None:
    """0.34's MLAAttention allocates ShardQ's symmetric-memory workspace while building a layer whose impl shards the
    query (mla_attention.py allocate_shardq_buffers: Kimi-K3.1's sparse MLA at TP > 1), which needs a device and
    peers: a no-op where the release has it (MODEL_STUB_RISKS); the layer and its backend are built as they are."""
    try:
        import vllm.model_executor.layers.attention.mla_attention as mla_attention
    except ImportError:
        return
    if hasattr(mla_attention, "allocate_shardq_buffers"):
        mla_attention.allocate_shardq_buffers = lambda *args, **kwargs: None


_BEAM_ALLREDUCE = "vllm.models.beam.nvidia.allreduce"
_NEMOTRON_VL = "vllm.model_executor.models.nano_nemotron_vl"
_LLAMA_NEMOTRON_VL = "vllm.model_executor.models.nemotron_vl"


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Runs `patch` on one module right after it is first imported: a stand-in for a model file's class that the
    harness must not import before the case builds the model (its package imports the platform's kernels)."""

    def __init__(self, name: str, patch):
        self.name, self.patch = name, patch

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            real_exec = spec.loader.exec_module

            def exec_module(module):
                real_exec(module)
                self.patch(module)

            spec.loader.exec_module = exec_module
        return spec


def _nemotron_vl_tokenizer() -> None:
    """NemotronH_Nano_VL_V2.__init__ (nano_nemotron_vl.py, 0.25-0.34) tokenizes IMG_START / IMG_END / IMG_CONTEXT with
    cached_tokenizer_from_config, which answers None under the harness's skip_tokenizer_init (MODEL_STUB_RISKS): a
    stand-in tokenizer answers one id for any text once the release's model file is imported."""
    class OneToken:
        def encode(self, text, add_special_tokens=False):
            return [0]

    def one_token(module) -> None:
        module.cached_tokenizer_from_config = lambda *args, **kwargs: OneToken()

    sys.meta_path.insert(0, _PatchAfterImport(_NEMOTRON_VL, one_token))


def _no_beam_allreduce_workspace() -> None:
    """Beam's model (vllm/models/beam/nvidia/allreduce.py, 0.33 / 0.34) creates its multicast all-reduce workspace
    while building at TP 2 / 4 / 8, asking every rank over the CPU group whether the device multicasts, which the
    stand-in groups cannot (MODEL_STUB_RISKS): no workspace, as on a device without multicast, once the release's
    model imports it. The workspace only fuses the reductions after attention / MLP (and defers NVFP4 experts'
    finalize); no layer's method, kernel or backend reads it."""
    def no_workspace(module) -> None:
        module.BeamAllReduceWorkspace.create = classmethod(lambda cls, *args, **kwargs: None)

    sys.meta_path.insert(0, _PatchAfterImport(_BEAM_ALLREDUCE, no_workspace))


# The MLA prefill backends that reserve their workspace while an MLAAttention is built (v1/attention/backends/mla/
# prefill, 0.33 / 0.34): FlashInfer, and TRT-LLM ragged (SM100's pick for GLM-4.7-Flash's 192 + 64 / 256 heads).
_WORKSPACE_PREFILL_MODULES = ("flashinfer", "trtllm_ragged")


class _MetaWorkspace:
    """current_workspace_manager()'s stand-in for those backends: every buffer asked for, on the meta device."""

    @staticmethod
    def get_simultaneous(*shapes_and_dtypes):
        import torch

        return [torch.empty(shape, dtype=dtype, device="meta") for shape, dtype in shapes_and_dtypes]


def _mla_prefill_workspace() -> None:
    """Those prefill backends ask current_workspace_manager() for their buffer at construction, a manager the GPU
    model runner initializes (init_workspace_manager), which this harness does not start: they are handed
    _MetaWorkspace where the release has them (MODEL_STUB_RISKS); the backend and the layer are built as they are."""
    for name in _WORKSPACE_PREFILL_MODULES:
        try:
            module = importlib.import_module(f"vllm.v1.attention.backends.mla.prefill.{name}")
        except ImportError:
            continue
        if hasattr(module, "current_workspace_manager"):
            module.current_workspace_manager = _MetaWorkspace


def _rocm_mla_prefill(platform: str) -> None:
    """On ROCm every MLA layer asks get_mla_prefill_backend_cls (platforms/rocm.py, 0.30+) for ROCM_AITER_FA (AITER
    on) or FLASH_ATTN (the ROCm flash-attn package), and without either the build stops ("No valid MLA prefill
    backend found"): FLASH_ATTN is made available, its kernel a never-called op (MODEL_STUB_RISKS), so its own
    dimension / dtype checks decide and the layer is built as on a host with the package."""
    if not platform.startswith("rocm"):
        return
    try:
        module = importlib.import_module("vllm.v1.attention.backends.mla.prefill.flash_attn")
    except ImportError:  # before 0.30: no prefill backends of their own
        return
    module.FlashAttnPrefillBackend.is_available = classmethod(lambda cls: True)
    if module.flash_attn_varlen_func is None:
        module.flash_attn_varlen_func = _CompiledOp("flash_attn_varlen_func")


class _StandInImpl:
    """An attention impl that is never run, for one whose constructor needs what the harness stubs. It reads as the
    impl's class to isinstance, as the real impl would: Flint's FlintAttention (vllm/models/flint/model.py) asserts
    isinstance(self.attn.impl, FlashInferImpl) while building, and FlashInferImpl's constructor sizes a workspace
    from flashinfer.utils functions the harness stubs."""

    dcp_world_size = pcp_world_size = 1
    supports_quant_query_input = False

    def __init__(self, impl_cls: type):
        self.impl_cls = impl_cls

    @property
    def __class__(self):
        return self.impl_cls

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


STAND_IN_IMPLS: list[str] = []  # this case's attention impls built as _StandInImpl, with why
# What an impl's constructor raises to refuse a configuration (FlashAttentionImpl's "does not support fp8_e5m2
# kv-cache on this device.", Triton's SM89 FP8 message, CPU's head sizes): vLLM's answer, raised as the build's
# error. Anything else (a TypeError on a mocked FlashInfer constant) is the stubs' doing.
IMPL_REFUSALS = (ValueError, NotImplementedError)


def _guard_attention_impls() -> None:
    """Backends are chosen by the release's selector and their impls built; an impl whose constructor refuses
    the configuration raises as in vLLM (IMPL_REFUSALS), one that fails on a stub is replaced by _StandInImpl and
    named in the case's answer."""
    import vllm.v1.attention.selector as selector

    real = selector.get_attn_backend

    def guarded(backend):
        impl_cls = backend.get_impl_cls()

        class GuardedImpl(impl_cls):
            """impl_cls, built guarded; a class, so that a backend over it can subclass it (cross_attention.py
            create_cross_attention_backend's CrossAttentionImpl), whose instance is then built the same way."""

            def __new__(cls, *impl_args, **impl_kwargs):
                # the impl's own __new__ (AttentionImpl.__new__ sets dcp_world_size / pcp_world_size)
                instance = impl_cls.__new__(impl_cls if cls is GuardedImpl else cls, *impl_args, **impl_kwargs)
                try:
                    impl_cls.__init__(instance, *impl_args, **impl_kwargs)
                except IMPL_REFUSALS:
                    raise
                except Exception as exc:  # noqa: BLE001 - listed, never silent
                    STAND_IN_IMPLS.append(f"{impl_cls.__name__}: {type(exc).__name__}: {str(exc)[:120]}")
                    return _StandInImpl(impl_cls)
                return instance

            def __init__(self, *impl_args, **impl_kwargs):  # built in __new__
                pass

        return type(backend.__name__, (backend,), {"get_impl_cls": staticmethod(lambda: GuardedImpl)})

    def get_attn_backend(*args, **kwargs):
        return guarded(real(*args, **kwargs))

    selector.get_attn_backend = get_attn_backend
    for module in list(sys.modules.values()):
        if (getattr(module, "__name__", "") or "").startswith("vllm") and \
                getattr(module, "get_attn_backend", None) is real:
            module.get_attn_backend = get_attn_backend
    # A backend the model file hands its layer itself, not the selector's (Step-5's Attention(attn_backend=...),
    # hy_v4's attention.py MLAAttention with the sink-capable HYV4FlashMLASparseBackend), is guarded the same way.
    for path, name in (("vllm.model_executor.layers.attention.attention", "Attention"),
                       ("vllm.model_executor.layers.attention.mla_attention", "MLAAttention")):
        try:
            layer_cls = getattr(importlib.import_module(path), name)
        except ImportError:
            continue
        layer_cls.__init__ = _guarded_init(layer_cls.__init__, guarded)


def _guarded_init(real_init, guarded):
    """A layer __init__ that guards the attn_backend it is handed (_guard_attention_impls)."""

    def init(self, *args, **kwargs):
        if kwargs.get("attn_backend") is not None:
            kwargs["attn_backend"] = guarded(kwargs["attn_backend"])
        real_init(self, *args, **kwargs)

    return init


class _Group:
    """A stand-in for vLLM's GroupCoordinator: sizes and rank 0, no communicator."""

    def __init__(self, name: str, world: int):
        self.unique_name, self.world_size, self.rank_in_group, self.rank, self.local_rank = name, world, 0, 0, 0
        self.ranks = list(range(world))
        self.device_group = self.cpu_group = types.SimpleNamespace(size=lambda: world, rank=lambda: 0)
        self.use_device_communicator, self.device_communicator = False, None
        self.is_first_rank, self.is_last_rank = True, world == 1


def _install_groups(tp: int, ep: bool) -> None:
    import vllm.distributed.parallel_state as state

    # _ETP: the Engram tensor-parallel group (Qwen4-Exp's n-gram embeddings), the TP group without an engram_config.
    sizes = {"_TP": tp, "_WORLD": tp, "_EP": tp if ep else 1, "_PP": 1, "_DP": 1, "_DCP": 1, "_PCP": 1, "_EPLB": 1,
             "_ETP": tp}
    for attr, world in sizes.items():
        if hasattr(state, attr):
            setattr(state, attr, _Group(attr.strip("_").lower(), world))
    # A collective over the CPU group (0.34's sparse-MLA context-parallel buffers ask it while building): one node.
    real, same_node = getattr(state, "in_the_same_node_as", None), lambda pg, source_rank=0: [True] * tp
    for module in list(sys.modules.values()):
        if (getattr(module, "__name__", "") or "").startswith("vllm") and \
                getattr(module, "in_the_same_node_as", None) is real is not None:
            module.in_the_same_node_as = same_node


def _no_registry_subprocess() -> None:
    import vllm.model_executor.models.registry as registry

    if hasattr(registry, "_run_in_subprocess"):
        registry._run_in_subprocess = lambda fn: fn()


def _vllm_error(exc: BaseException) -> str:
    """vLLM's own exception behind pydantic's ValidationError (ModelConfig / VllmConfig are pydantic dataclasses)."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and type(exc).__name__ == "ValidationError":
        try:
            inner = exc.errors()[0].get("ctx", {}).get("error")
        except Exception:  # noqa: BLE001 - fall back to the wrapper's text
            inner = None
        if isinstance(inner, BaseException):
            return f"{type(inner).__name__}: {inner}"
    return f"{type(exc).__name__}: {exc}"


def _mro_names(obj) -> set[str]:
    return {cls.__name__ for cls in type(obj).__mro__}


def module_kind(module, method) -> str:
    names, module_names = _mro_names(method), _mro_names(module)
    if "FusedMoEMethodBase" in names:
        return "moe"
    if "BaseKVCacheMethod" in names or "AttentionLayerBase" in module_names:
        return "attention"
    if "VocabParallelEmbedding" in module_names and "ParallelLMHead" not in module_names:
        return "embedding"
    return "linear"


def _moe_parts(method) -> tuple[str | None, str | None]:
    """(backend enum name, experts class name) the FusedMoE method chose at construction."""
    backend = experts = None
    for value in vars(method).values():
        if backend is None and isinstance(value, Enum) and type(value).__name__.endswith("Backend"):
            backend = value.name
        if experts is None and isinstance(value, type) and "Experts" in value.__name__:
            experts = value.__name__
    return backend, experts


def read_modules(model) -> dict[str, dict]:
    """Every module that holds a quant method, and every torch nn.Linear (read as UnquantizedLinearMethod,
    fp8check's label for it), by its vLLM name, with its class and base classes. A FusedMoE whose method an inner
    module holds (0.33's MoERunner and its routed_experts) is reported once, under the outer name."""
    import torch

    from fp8check.core.routing.crosscheck import _kernel_of

    out: dict[str, dict] = {}
    seen: set[int] = set()
    # A module held under two paths is named by the prefix its model file built it with, where that is one of
    # them: the Transformers backend's rebuilt router and its shared expert stay on the MoE block (`mlp.gate`,
    # Hunyuan's `mlp.shared_mlp`) and are held by the FusedMoE too (transformers/moe.py hands them gate= /
    # shared_experts=), which named_modules reaches first where the block defines its experts before them.
    paths: dict[int, list[str]] = {}
    for name, module in model.named_modules(remove_duplicate=False):
        paths.setdefault(id(module), []).append(name)
    for name, module in model.named_modules():
        if getattr(module, "prefix", None) in paths[id(module)][1:]:
            name = module.prefix
        types_ = [cls.__name__ for cls in type(module).__mro__]
        # no quant method at all: unquantized by construction (radio.py's ViTPatchLinear is an nn.Linear too)
        if isinstance(module, torch.nn.Linear):
            out[_canonical(name)] = {"kind": "linear", "type": "nn.Linear", "types": ["nn.Linear"],
                                     "scheme": "UnquantizedLinearMethod", "kernel": None, "backend": None}
            continue
        # A method that is itself a torch Module (UnquantizedFusedMoEMethod is a CustomOp) sits in _modules.
        method = next((held[key] for held in (module.__dict__, module._modules)
                       for key in ("quant_method", "_quant_method") if held.get(key) is not None), None)
        if "AttentionLayerBase" in types_ and hasattr(module, "kv_cache_dtype"):
            out[name] = _attention_row(module, method, types_)  # with or without a KV cache method
            continue
        if method is None or id(method) in seen:
            continue
        seen.add(id(method))
        kind = module_kind(module, method)
        scheme = getattr(module, "scheme", None) or getattr(method, "scheme", None)
        row = {"kind": kind, "type": type(module).__name__, "types": types_,
               "scheme": type(scheme).__name__ if scheme is not None else type(method).__name__,
               "kernel": None, "backend": None}
        if kind == "moe":
            row["backend"], row["kernel"] = _moe_parts(method)
        else:
            row["kernel"] = _kernel_of(scheme if scheme is not None else method)
        out[_canonical(name)] = row
    return out


def _attention_row(module, method, types_: list[str]) -> dict:
    """An Attention / MLAAttention layer: the KV cache dtype it resolved (`kv_cache_dtype`, "auto" kept as vLLM
    keeps it), its KV cache method (None: the format gives it none) and the backend the release's selector chose,
    as its AttentionBackendEnum name (`get_name()`)."""
    # DeepSeek-V4's attention layer (models/deepseek_v4/attention.py) holds its backend as backend_cls; Inkling's
    # (models/inkling/nvidia/attention.py InklingAttention) only answers get_attn_backend().
    backend = getattr(module, "attn_backend", None) or getattr(module, "backend_cls", None)
    if backend is None and callable(getattr(module, "get_attn_backend", None)):
        backend = module.get_attn_backend()
    return {"kind": "attention", "type": type(module).__name__, "types": types_,
            "scheme": type(method).__name__ if method is not None else None, "kernel": None,
            "kv_cache_dtype": str(module.kv_cache_dtype), "backend": backend.get_name() if backend else None}


def _remote_code_vision_config(hf_config, folder: str) -> None:
    """Step-3.7's tower (step_vl.py PerceptionEncoder) reads the hub's remote-code vision config (width, layers,
    heads, output_dim, use_ln_pre, ...), with which vLLM serves it (--trust-remote-code); transformers' own
    Step3p7VisionConfig, all an offline build gets, renames or drops those fields. The harness gives the tower
    vLLM's class of the same fields (configs/step5.py PerceptionEncoderConfig, 0.33+) read from config.json."""
    if getattr(hf_config, "model_type", None) != "step3p7":
        return
    from vllm.transformers_utils.configs.step5 import PerceptionEncoderConfig

    with open(os.path.join(folder, "config.json")) as fh:
        hf_config.vision_config = PerceptionEncoderConfig(**json.load(fh).get("vision_config", {}))


def _remote_code_exaone_config(folder: str) -> None:
    """EXAONE-3.x's config (model_type exaone) is the checkpoints' remote code (LG's configuration_exaone.py, served
    with --trust-remote-code); the transformers of vLLM 0.33 / 0.34 has no class for it and an offline build has no
    remote code. The harness registers a stand-in of the remote class holding the keys exaone.py reads (num_layers
    as num_hidden_layers, activation_function, layer_norm_epsilon, rope_theta); its defaults only fill keys a
    config.json lacks (the released configs write them all). A Mistral-format folder (params.json) has none."""
    if not os.path.exists(os.path.join(folder, "config.json")):
        return
    with open(os.path.join(folder, "config.json")) as fh:
        if json.load(fh).get("model_type") != "exaone":
            return
    from transformers import AutoConfig, PretrainedConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    if "exaone" in CONFIG_MAPPING:  # transformers >= 5.24 has its own ExaoneConfig
        return

    class ExaoneConfig(PretrainedConfig):
        model_type = "exaone"
        attribute_map = {"num_hidden_layers": "num_layers"}

        def __init__(self, vocab_size=102400, max_position_embeddings=2048, hidden_size=2048, num_layers=32,
                     num_attention_heads=32, num_key_value_heads=None, intermediate_size=None,
                     activation_function="silu", rope_theta=10000.0, rope_scaling=None, layer_norm_epsilon=1e-5,
                     tie_word_embeddings=True, **kwargs):
            self.vocab_size, self.max_position_embeddings = vocab_size, max_position_embeddings
            self.hidden_size, self.num_layers, self.num_attention_heads = hidden_size, num_layers, num_attention_heads
            self.num_key_value_heads = num_key_value_heads or num_attention_heads
            self.intermediate_size = intermediate_size or hidden_size * 4
            self.activation_function, self.layer_norm_epsilon = activation_function, layer_norm_epsilon
            self.rope_theta, self.rope_scaling = rope_theta, rope_scaling
            super().__init__(tie_word_embeddings=tie_word_embeddings, **kwargs)

    AutoConfig.register("exaone", ExaoneConfig)


def _telechat2_config(pretrained_config):
    """A stand-in of TeleChat2's remote Telechat2Config (configuration_telechat2.py, model_type telechat; no
    transformers or vLLM class): its attribute_map (n_layer, n_head, ffn_hidden_size, layer_norm_epsilon, which
    telechat2.py sets on the config again), every other key from config.json."""

    class Telechat2Config(pretrained_config):
        model_type = "telechat"
        attribute_map = {"num_hidden_layers": "n_layer", "num_attention_heads": "n_head",
                         "intermediate_size": "ffn_hidden_size", "rms_norm_eps": "layer_norm_epsilon"}

    return Telechat2Config


def _plamo3_config(pretrained_config):
    """A stand-in of PLaMo-3's remote Plamo3Config (configuration_plamo3.py, model_type plamo3; no transformers or
    vLLM class): window_size (a legacy integer sliding_window overrides it) and sliding_window_pattern, from which
    its properties give plamo3.py interleaved_sliding_window (None on every pattern-th layer), layer_types and the
    per-layer-type rope_parameters (rope_local_theta on the sliding layers)."""

    class Plamo3Config(pretrained_config):
        model_type = "plamo3"

        def __init__(self, window_size=128, sliding_window_pattern=8, rope_theta=150_000, rope_local_theta=10_000,
                     head_dim=128, rms_norm_eps=1e-6, tie_word_embeddings=True, **kwargs):
            legacy = kwargs.pop("sliding_window", None)
            windows = {w for w in legacy if w is not None} if isinstance(legacy, list) else set()
            window_size = windows.pop() if len(windows) == 1 else legacy if isinstance(legacy, int) else window_size
            self.window_size, self.sliding_window_pattern, self.head_dim = window_size, sliding_window_pattern, head_dim
            self.rope_theta, self.rope_local_theta, self.rms_norm_eps = rope_theta, rope_local_theta, rms_norm_eps
            super().__init__(tie_word_embeddings=tie_word_embeddings, **kwargs)

        @property
        def sliding_window(self):
            return self.window_size

        @property
        def interleaved_sliding_window(self):
            return [None if not (i + 1) % self.sliding_window_pattern else self.window_size
                    for i in range(self.num_hidden_layers)]

        @property
        def layer_types(self):
            return ["full_attention" if window is None else "sliding_attention"
                    for window in self.interleaved_sliding_window]

        @property
        def rope_parameters(self):
            every = {"full_attention": {"rope_theta": self.rope_theta, "rope_type": "default"},
                     "sliding_attention": {"rope_theta": self.rope_local_theta, "rope_type": "default"}}
            return {layer_type: every[layer_type] for layer_type in set(self.layer_types)}

        @rope_parameters.setter
        def rope_parameters(self, value):  # the remote class ignores what transformers normalizes into it
            pass

    return Plamo3Config


# Model types whose config class only the hub's remote code defines (configuration_*.py beside the checkpoint, loaded
# with --trust-remote-code): inclusionAI's Ling / Ring v1 (bailing_moe) and 2.0 (bailing_moe_v2). Neither transformers
# 5.24 nor vLLM 0.25-0.34 has a class for them; the harness, which trusts no remote code, registers a PretrainedConfig
# of that model type, so every field comes from config.json (the fixtures write each key the model file reads bare).
# Sarvam's sarvam_moe / sarvam_mla likewise under the transformers vLLM 0.33 / 0.34 pin (< 5.21 / < 5.23; 5.24 has
# classes for them, left in place where present). AliceAI (alice_ai, vLLM 0.33 / 0.34's alice_ai.py) likewise: no
# transformers or vLLM config class; alice_ai.py reads every key off the checkpoint's config.
# K2-Horizon (k2_horizon, vLLM 0.30-0.34's k2_horizon.py) likewise, InternLM2's internlm2
# (configuration_internlm2.py; internlm2.py reads its keys bare) and DeepSeek-MoE v1's deepseek
# (configuration_deepseek.py; deepseek_v2.py reads its keys bare or with getattr defaults), the Llama-named
# minicpm, solar and orion (configuration_minicpm.py / configuration_solar.py / configuration_orion.py); InternLM3's
# internlm3 (configuration_internlm3.py) where the release's transformers pin lacks it (5.24 has InternLM3Config);
# and Phi-3-vision's phi3_v (configuration_phi3_v.py: Phi-3's keys with img_processor / embd_layer, which phi3v.py and
# llama.py read bare); openPangu's, Param2-MoE's and IQuest-LoopCoder's (openpangu.py, param2moe.py,
# iquest_loopcoder.py read their keys bare or with getattr); Phi-4-multimodal's phi4mm likewise (configuration_phi4mm.py:
# embd_layer, audio_processor).
REMOTE_CODE_MODEL_TYPES = ("bailing_moe", "bailing_moe_v2", "sarvam_moe", "sarvam_mla", "alice_ai", "k2_horizon",
                           "internlm2", "deepseek", "minicpm", "solar", "orion", "internlm3", "phi3_v",
                           "PanguEmbedded", "pangu_ultra_moe", "pangu_pro_moe_v2", "param2moe", "iquest_loopcoder",
                           "phi4mm")
# ninth round (fam-texta): Tele-FLM's TeleFLM (configuration_teleflm.py; teleflm.py and llama.py read its keys bare),
# Step-1's step1 (step1.py reads its keys bare or with getattr defaults), Domyn-Edge's domyn_edge (its per_layer_config
# is transformers' own heterogeneous-config mechanism, which PretrainedConfig applies).
REMOTE_CODE_MODEL_TYPES += ("TeleFLM", "step1", "domyn_edge")
# InternVL's remote-code configs (configuration_internvl_chat.py; H2OVL's h2ovl_chat, Skywork-R1V's skywork_chat the
# same class): vision_config an InternVisionConfig, llm_config the config of its text model's model_type, which vLLM
# renames text_config (_CONFIG_ATTRS_MAPPING). Neither transformers nor vLLM has a class for them.
INTERNVL_CHAT_MODEL_TYPES = ("internvl_chat", "h2ovl_chat", "skywork_chat")


def _internvl_chat_config(model_type: str):
    """A stand-in of InternVL's remote InternVLChatConfig under `model_type`: the nested configs built as the remote
    class builds them (llm_config by its model_type, vision_config a plain config of its keys), every other key from
    config.json (the fixtures write each key internvl.py / h2ovl.py / skyworkr1v.py read)."""
    import transformers

    class InternVLChatConfig(transformers.PretrainedConfig):
        def __init__(self, vision_config=None, llm_config=None, **kwargs):
            super().__init__(**kwargs)
            self.vision_config = transformers.PretrainedConfig(**(vision_config or {}))
            llm = dict(llm_config or {})
            self.llm_config = transformers.AutoConfig.for_model(llm.pop("model_type", "llama"), **llm)

    InternVLChatConfig.model_type = model_type
    return InternVLChatConfig


def _minicpm_config(model_type: str, transformers):
    """A stand-in of MiniCPM-V's / MiniCPM-o's remote MiniCPMVConfig / MiniCPMOConfig (configuration_minicpm*.py,
    model_type minicpmv / minicpmo): the text model's keys flat at the top (2.6's Qwen2Config), vision_config a
    SiglipVisionConfig, MiniCPM-o's audio_config a WhisperConfig and tts_config a config of its keys, every other key
    (version, query_num, drop_vision_last_layer, audio_pool_step, ...) an attribute."""

    class MiniCPMConfig(transformers.Qwen2Config):
        def __init__(self, vision_config=None, audio_config=None, tts_config=None, **kwargs):
            super().__init__(**kwargs)
            self.vision_config = transformers.SiglipVisionConfig(**(vision_config or {}))
            if audio_config is not None:
                self.audio_config = transformers.WhisperConfig(**audio_config)
            if tts_config is not None:
                self.tts_config = transformers.PretrainedConfig(**tts_config)

    MiniCPMConfig.model_type = model_type
    return MiniCPMConfig


def _ovis2_5_config(transformers):
    """A stand-in of Ovis2.5's remote Ovis2_5Config (configuration_ovis2_5.py, model_type ovis2_5): llm_config the
    config class of its model_type (Qwen3's; vLLM renames it text_config), vit_config a Siglip2NavitConfig of its keys
    (model_type siglip2_navit, which ovis2_5.py's VisualTokenizer asks), every other key (visual_vocab_size,
    hidden_size) an attribute."""

    class Siglip2NavitConfig(transformers.PretrainedConfig):
        model_type = "siglip2_navit"

    class Ovis2_5Config(transformers.PretrainedConfig):
        model_type = "ovis2_5"

        def __init__(self, llm_config=None, vit_config=None, **kwargs):
            super().__init__(**kwargs)
            llm = dict(llm_config or {})
            self.llm_config = transformers.AutoConfig.for_model(llm.pop("model_type", "qwen3"), **llm)
            self.vit_config = Siglip2NavitConfig(**{k: v for k, v in (vit_config or {}).items() if k != "model_type"})

    return Ovis2_5Config


class _ConfigBlock(dict):
    """A block_configs entry as the remote config's dataclasses give it: its keys as attributes (a key the entry
    lacks is no attribute: nemotron_nas.py tests hasattr(ffn, "ffn_mult")), JSON-serializable as a dict."""

    def __getattr__(self, key):
        try:
            value = self[key]
        except KeyError:
            raise AttributeError(key) from None
        return _ConfigBlock(value) if isinstance(value, dict) else value


def _nemotron_nas_config(llama_config):
    """A stand-in of Nemotron-NAS's remote DeciLMConfig (configuration_decilm.py, model_type nemotron-nas: a
    LlamaConfig whose block_configs entries are dataclasses read as attributes by nemotron_nas.py, config/model.py
    and NemotronNasModelArchConfigConvertor)."""

    class DeciLMConfig(llama_config):
        model_type = "nemotron-nas"

        def __init__(self, block_configs=None, **kwargs):
            super().__init__(**kwargs)
            self.block_configs = [_ConfigBlock(block) for block in block_configs or ()]

    return DeciLMConfig


def _nemotron_h_puzzle_config(nemotron_h_config):
    """A stand-in of NVIDIA's remote NemotronHPuzzleConfig (configuration_nemotron_h_puzzle.py, model_type
    nemotron_h_puzzle): a NemotronHConfig whose hybrid_override_pattern comes from block_configs' block types
    (attention *, moe E, mamba M, mlp -), the keys any block sets no top-level attribute, and
    get_nemotron_h_config_for_layer the NemotronHConfig of the top-level keys with that layer's block keys over them
    (what nemotron_h.py's MLP and MoE layers read)."""
    pattern = {"attention": "*", "moe": "E", "mamba": "M", "mlp": "-"}

    class NemotronHPuzzleConfig(nemotron_h_config):
        model_type = "nemotron_h_puzzle"

        def __init__(self, block_configs=(), mtp_block_configs=(), **kwargs):
            kwargs["hybrid_override_pattern"] = "".join(pattern[block["block_type"]] for block in block_configs)
            super().__init__(**kwargs)
            self.block_configs = [dict(block) for block in block_configs]
            self.mtp_block_configs = [dict(block) for block in mtp_block_configs]
            for member in {key for block in self.block_configs for key in block if key != "block_type"}:
                if hasattr(self, member):
                    delattr(self, member)

        def get_nemotron_h_config_for_layer(self, layer_idx: int):
            fields = {k: v for k, v in self.to_dict().items() if k not in ("block_configs", "mtp_block_configs")}
            fields.update({k: v for k, v in self.block_configs[layer_idx].items() if k != "block_type"})
            return nemotron_h_config.from_dict(fields)

    return NemotronHPuzzleConfig


def _nemotron_vl_config(pretrained_config, auto_config, model_type: str):
    """A stand-in of NVIDIA's remote Nemotron VL configs (configuration.py of the Nemotron Nano VL / Omni and
    Llama-Nemotron-Nano-VL checkpoints): vision_config a config of its keys (without its auto_map: the RADIO args,
    preferred_resolution, patch_size, which nano_nemotron_vl.py reads), llm_config (or text_config) the config class
    of its model_type (Nemotron-H's, Llama's) as text_config, the Omni checkpoints' sound_config a config of its keys
    (the remote SoundConfig's, which parakeet.py reads), every other key an attribute."""

    class NemotronVLConfig(pretrained_config):
        def __init__(self, vision_config=None, llm_config=None, text_config=None, sound_config=None, **kwargs):
            super().__init__(**kwargs)
            self.vision_config = pretrained_config(**(vision_config or {}))
            text = dict(llm_config or text_config or {"model_type": "nemotron_h"})
            self.text_config = auto_config.for_model(text.pop("model_type"), **text)
            self.sound_config = pretrained_config(**sound_config) if sound_config is not None else None

    NemotronVLConfig.model_type = model_type
    return NemotronVLConfig


def _remote_radio_model(config):
    """A stand-in of NVIDIA's remote-code RADIOModel (hf_model.py of the C-RADIO checkpoints), which nemotron_vl.py
    builds with AutoModel.from_config(config.vision_config, trust_remote_code) and an offline build cannot: its torch
    nn.Linears under the names the checkpoints hold (radio_model.model: timm's VisionTransformer blocks.N.attn.qkv /
    proj, mlp.fc1 / fc2, the patch generator's embedder), sized by args.model as vLLM's RadioConfig sizes it
    (VIT_TIMM_DIM_BY_NAME)."""
    import torch
    from vllm.transformers_utils.configs.radio import VIT_TIMM_DIM_BY_NAME

    dim, layers, _, inter = VIT_TIMM_DIM_BY_NAME[config.args["model"]]
    patch = getattr(config, "patch_size", 16)
    linear = torch.nn.Linear

    def block():
        attn = torch.nn.ModuleDict({"qkv": linear(dim, 3 * dim), "proj": linear(dim, dim)})
        return torch.nn.ModuleDict({"attn": attn,
                                    "mlp": torch.nn.ModuleDict({"fc1": linear(dim, inter), "fc2": linear(inter, dim)})})

    vit = torch.nn.ModuleDict({"patch_generator": torch.nn.ModuleDict({"embedder": linear(3 * patch * patch, dim,
                                                                                            bias=False)}),
                               "blocks": torch.nn.ModuleList(block() for _ in range(layers))})
    return torch.nn.ModuleDict({"radio_model": torch.nn.ModuleDict({"model": vit})})


def _nemotron_vl_remote_tower() -> None:
    """nemotron_vl.py's AutoModel answers _remote_radio_model for a RADIO vision_config (one with args, NVIDIA's
    remote RADIOConfig), once the release's model file is imported; any other config goes to transformers'."""
    def remote_tower(module) -> None:
        real = module.AutoModel

        class AutoModel:
            @staticmethod
            def from_config(config, **kwargs):
                if isinstance(getattr(config, "args", None), dict):
                    return _remote_radio_model(config)
                return real.from_config(config, **kwargs)

        module.AutoModel = AutoModel

    sys.meta_path.insert(0, _PatchAfterImport(_LLAMA_NEMOTRON_VL, remote_tower))


_ACTIVATION = "vllm.model_executor.layers.activation"
_GEMMA3N_MM = "vllm.model_executor.models.gemma3n_mm"


def _host_sparsity_constant() -> None:
    """GeluAndMulSparse.__init__ (layers/activation.py, Gemma-3n's sparse MLP layers) computes its std multiplier
    with torch.tensor(...).item(), which the meta device the model is built on cannot answer: the constructor runs
    on the host's CPU device, as on a GPU host the scalar is a host tensor's item too."""
    def host_init(module) -> None:
        import torch

        real = module.GeluAndMulSparse.__init__

        def __init__(self, *args, **kwargs):
            with torch.device("cpu"):
                real(self, *args, **kwargs)

        module.GeluAndMulSparse.__init__ = __init__

    if _ACTIVATION in sys.modules:  # imported while the platform was prepared
        host_init(sys.modules[_ACTIVATION])
    else:
        sys.meta_path.insert(0, _PatchAfterImport(_ACTIVATION, host_init))


def _gemma3n_vision_tower() -> None:
    """Where timm is not installed, gemma3n_mm.py's AutoModel.from_config(vision_config) (transformers'
    TimmWrapperModel over timm's MobileNetV5, which requires timm) answers an empty module: the tower's
    convolutions and norms hold no linear and no quant method, so no row is lost (MODEL_STUB_RISKS); with timm
    installed the real tower is built."""
    def empty_tower(module) -> None:
        if importlib.util.find_spec("timm") is not None:
            return
        import torch

        real = module.AutoModel

        class AutoModel:
            @staticmethod
            def from_config(config, **kwargs):
                if getattr(config, "model_type", None) == "gemma3n_vision":
                    return torch.nn.Module()
                return real.from_config(config, **kwargs)

        module.AutoModel = AutoModel

    sys.meta_path.insert(0, _PatchAfterImport(_GEMMA3N_MM, empty_tower))


def _torchaudio_frontend() -> None:
    """Where torchaudio (a Requires-Dist of the 0.33 / 0.34 wheels, built against their torch) is not installed, a
    stand-in of torchaudio.functional whose melscale_fbanks answers a zero filter bank of its shape: MiDashengLM's
    DashengFrontend (midashenglm.py) computes one into a buffer while it is built and imports the module at import time;
    a feature extractor's buffer plays no part in any layer's method (MODEL_STUB_RISKS)."""
    if importlib.util.find_spec("torchaudio") is not None:
        return
    import torch

    functional = types.ModuleType("torchaudio.functional")
    functional.melscale_fbanks = lambda n_freqs, f_min, f_max, n_mels, sample_rate, *a, **k: torch.zeros(
        n_freqs, n_mels)
    package = types.ModuleType("torchaudio")
    package.functional = functional
    sys.modules.update({"torchaudio": package, "torchaudio.functional": functional})


def _register_remote_code_configs() -> None:
    """Stand-ins of config classes only remote code defines: REMOTE_CODE_MODEL_TYPES as plain configs,
    INTERNVL_CHAT_MODEL_TYPES (_internvl_chat_config), and
    ERNIE-4.5-VL's (model_type ernie4_5_moe_vl, the hub's Ernie4_5_VLMoEConfig: flat text keys, its vision_config a
    config object, which ernie45_vl.py reads as attributes; transformers 5.24's own ernie4_5_vl_moe is another,
    nested format that vLLM's file does not read)."""
    import transformers

    for model_type in REMOTE_CODE_MODEL_TYPES:
        if model_type in transformers.CONFIG_MAPPING:
            continue
        transformers.AutoConfig.register(model_type, type(f"RemoteCode_{model_type}", (transformers.PretrainedConfig,),
                                                          {"model_type": model_type}), exist_ok=True)
    for model_type in INTERNVL_CHAT_MODEL_TYPES:
        if model_type not in transformers.CONFIG_MAPPING:
            transformers.AutoConfig.register(model_type, _internvl_chat_config(model_type))
    if "nemotron-nas" not in transformers.CONFIG_MAPPING:
        transformers.AutoConfig.register("nemotron-nas", _nemotron_nas_config(transformers.LlamaConfig))
    for model_type in ("NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3", "Llama_Nemotron_Nano_VL"):
        if model_type not in transformers.CONFIG_MAPPING:
            transformers.AutoConfig.register(model_type, _nemotron_vl_config(
                transformers.PretrainedConfig, transformers.AutoConfig, model_type))
    if "nemotron_h_puzzle" not in transformers.CONFIG_MAPPING:
        transformers.AutoConfig.register("nemotron_h_puzzle", _nemotron_h_puzzle_config(transformers.NemotronHConfig))
    for model_type in ("minicpmv", "minicpmo"):
        if model_type not in transformers.CONFIG_MAPPING:
            transformers.AutoConfig.register(model_type, _minicpm_config(model_type, transformers))
    if "ovis2_5" not in transformers.CONFIG_MAPPING:
        transformers.AutoConfig.register("ovis2_5", _ovis2_5_config(transformers))
    if "plamo3" not in transformers.CONFIG_MAPPING:
        transformers.AutoConfig.register("plamo3", _plamo3_config(transformers.PretrainedConfig))
    if "telechat" not in transformers.CONFIG_MAPPING:
        transformers.AutoConfig.register("telechat", _telechat2_config(transformers.PretrainedConfig))
    if "ernie4_5_moe_vl" in transformers.CONFIG_MAPPING:
        return

    class Ernie45VLRemoteCodeConfig(transformers.PretrainedConfig):
        model_type = "ernie4_5_moe_vl"

        def __init__(self, vision_config=None, **kwargs):
            super().__init__(**kwargs)
            self.vision_config = transformers.PretrainedConfig(**(vision_config or {}))

    transformers.AutoConfig.register("ernie4_5_moe_vl", Ernie45VLRemoteCodeConfig)


def _triton_installed():
    """HAS_TRITON as a host's install answers it while vLLM picks its model runner (MODEL_STUB_RISKS)."""
    import vllm.config.vllm as vllm_config_module

    if not hasattr(vllm_config_module, "HAS_TRITON"):  # 0.34 no longer asks
        return contextlib.nullcontext()
    return mock.patch.object(vllm_config_module, "HAS_TRITON", True)


# Model files whose attention computes its ALiBi slopes with torch ops and reads them back (.tolist()) while building.
ALIBI_MODELS = ("bloom", "falcon")


@contextlib.contextmanager
def _alibi_slopes_on_cpu():
    """bloom.py / falcon.py compute each attention's ALiBi slopes (_get_alibi_slopes) under the default device and
    read them back with .tolist(): a real build does so on the device, here they are computed on the CPU, not the
    meta device, which holds no values (MODEL_STUB_RISKS "ALiBi slopes")."""
    import torch

    with contextlib.ExitStack() as stack:
        for name in ALIBI_MODELS:
            module = importlib.import_module(f"vllm.model_executor.models.{name}")
            slopes = getattr(module, "_get_alibi_slopes", None)
            if slopes is None:
                continue

            def on_cpu(*args, _slopes=slopes, **kwargs):
                with torch.device("cpu"):
                    return _slopes(*args, **kwargs)

            stack.enter_context(mock.patch.object(module, "_get_alibi_slopes", on_cpu))
        yield


def build_model(case: dict) -> dict:
    """vLLM's whole model for one case: {"id", "error", "modules", "names"}; names maps fp8check's checkpoint
    names (case["names"]) through the model class's hf_to_vllm_mapper, as vLLM's loader renames them."""
    import torch
    from vllm.config import (
        CacheConfig, KernelConfig, LoadConfig, ModelConfig, ParallelConfig, VllmConfig, set_current_vllm_config,
    )
    from vllm.model_executor.model_loader.utils import initialize_model

    from fp8check.core.routing.crosscheck import _patch_availability

    result = {"id": case["id"], "error": None, "stage": None, "modules": {}, "names": {}, "stand_in_impls": []}
    STAND_IN_IMPLS.clear()
    _install_groups(case["tp"], case.get("ep", False))
    _patch_availability(case["platform_kind"], case["tp"], case["stubbed"])
    extra = {}
    try:  # EngineArgs resolves --quantization's online shorthands before building ModelConfig (0.28+)
        from vllm.config.quantization import resolve_quantization_config
        extra["quantization_config"] = resolve_quantization_config(case.get("quantization"), None)
    except ImportError:
        pass
    _remote_code_exaone_config(case["folder"])
    _register_remote_code_configs()
    try:
        model_config = ModelConfig(
            model=case["folder"], dtype=MODEL_DTYPE, enforce_eager=True, max_model_len=256,
            skip_tokenizer_init=not case.get("tokenizer"),
            quantization=case.get("quantization"), allow_deprecated_quantization=case.get("allow_deprecated", False),
            **extra)
        _remote_code_vision_config(model_config.hf_config, case["folder"])
        # EngineArgs.create_engine_config resolves --kv-cache-dtype auto first (a ModelOpt KV algo: fp8_e4m3).
        from vllm.utils.torch_utils import resolve_kv_cache_dtype_string

        cache_dtype = resolve_kv_cache_dtype_string(case.get("kv_cache_dtype", "auto"), model_config)
        with _triton_installed():
            config = VllmConfig(model_config=model_config, load_config=LoadConfig(load_format="dummy"),
                                cache_config=CacheConfig(cache_dtype=cache_dtype),
                                kernel_config=KernelConfig(moe_backend=case.get("moe_backend", "auto")),
                                parallel_config=ParallelConfig(tensor_parallel_size=case["tp"],
                                                               enable_expert_parallel=case.get("ep", False),
                                                               distributed_executor_backend="mp"))
    except BaseException as exc:  # noqa: BLE001 - vLLM's refusal is the answer
        return dict(result, stage="front door", error=_vllm_error(exc))
    torch.set_default_dtype(torch.bfloat16)
    try:
        with set_current_vllm_config(config), torch.device("meta"), _triton_installed(), _alibi_slopes_on_cpu():
            model = initialize_model(vllm_config=config)
    except BaseException as exc:  # noqa: BLE001
        return dict(result, stage="model", error=_vllm_error(exc), stand_in_impls=sorted(set(STAND_IN_IMPLS)))
    result["stand_in_impls"] = sorted(set(STAND_IN_IMPLS))
    result["tied"] = bool(getattr(model_config.hf_text_config, "tie_word_embeddings", False))
    # param2moe.py keeps its mapper on the inner model, whose load_weights applies it
    mapper = getattr(model, "hf_to_vllm_mapper", None) or getattr(getattr(model, "model", None), "hf_to_vllm_mapper",
                                                                  None)
    attention = set(case.get("attention_names", ()))
    for name in case.get("names", ()):
        # The loader renames tensor names: a module's name is mapped as its weight's (lm_head.weight matches the
        # "lm_head." prefix rules that a bare "lm_head" would not), an attention layer's as its KV scale's (Zamba2's
        # "0.weight" -> "A.weight" rule is its adapters', not its dpa_list.0 Attention's).
        suffix = ".k_scale" if name in attention else ".weight"
        mapped = _module_mapper(mapper, name)._map_name(f"{name}{suffix}") if mapper is not None else f"{name}{suffix}"
        result["names"][name] = mapped.removesuffix(suffix) if mapped else name
    result["modules"] = read_modules(model)
    return result


def _module_mapper(mapper, name: str):
    """The mapper for one of fp8check's module names: a fused module is already named as vLLM fuses it, so the
    orig_to_new_stacked renames (0.34: a shard's name into its fused module's) whose fused name it holds are left out
    (lfm2.py's ".w1" -> ".w13" would make w13 "w133")."""
    stacked = getattr(mapper, "orig_to_new_stacked", None)
    if not stacked or not any(new in name for new, _ in stacked.values()):
        return mapper
    import copy

    kept = copy.copy(mapper)
    kept.orig_to_new_stacked = {old: (new, shard) for old, (new, shard) in stacked.items() if new not in name}
    return kept


class ModuleAgreement(NamedTuple):
    """One module of the whole-model comparison."""

    name: str                        # vLLM's module name ("(model)" for a build that failed)
    kind: str                        # linear | moe | embedding | attention | model
    verdict: str                     # agree | differs | post-load prediction | not compared | not judged |
    #                                  explained | open (the runner's lists of known differences)
    differs: tuple[str, ...]         # scheme, kernel, backend, error, error text, only in vLLM, only in fp8check
    ours: dict
    theirs: dict
    reason: str = ""                 # why a row is not compared


MODEL = "(model)"
MODEL_DTYPE = "bfloat16"  # every case is built in it (ModelConfig's dtype), and inspected by fp8check in it


def our_modules(report) -> dict[str, dict]:
    """fp8check's InspectReport as rows keyed by module name (vLLM's, where the model class renames one), in
    read_modules' terms."""
    rows = {layer.name: {"kind": "linear", "type": layer.layer_type, "scheme": layer.scheme, "kernel": layer.kernel,
                         "backend": None, "error": layer.errors[0] if layer.errors else None}
            for layer in report.layers}
    rows.update({moe.name: {"kind": "moe", "scheme": moe.scheme, "kernel": moe.kernel, "backend": moe.backend,
                            "error": moe.errors[0] if moe.errors else None} for moe in report.moes})
    rows.update({attn.name: {"kind": "attention", "scheme": attn.kv_method, "kernel": None, "backend": attn.backend,
                             "kv_cache_dtype": attn.kv_cache_dtype, "error": attn.errors[0] if attn.errors else None,
                             "errors": list(attn.errors)}
                 for attn in report.attention})
    arch = arch_for(report.architectures)
    renames = arch.vllm_names if arch is not None else ()
    return {_vllm_name(name, renames, rows): row for name, row in rows.items()}


def _vllm_name(name: str, renames: tuple[tuple[str, ...], ...], names=()) -> str:
    """A checkpoint-named module under the name vLLM's model class gives it (layouts.Arch.vllm_names; a rename with a
    sibling leaf only where `names` holds that sibling beside the module; "re:" a regular expression)."""
    for ours, theirs, *sibling in renames:
        if sibling and f"{name.rpartition('.')[0]}.{sibling[0]}" not in names:
            continue
        name = re.sub(ours[3:], theirs, name) if ours.startswith("re:") else name.replace(ours, theirs)
    return name


def _their_kv_dtype(row: dict) -> str:
    """vLLM's Attention.kv_cache_dtype as fp8check reports it: "auto" is the model dtype."""
    return MODEL_DTYPE if row["kv_cache_dtype"] == "auto" else row["kv_cache_dtype"]


def compare_attention(mine: dict, row: dict) -> list[str]:
    """What differs between fp8check's attention layer and vLLM's built one: the resolved KV cache dtype, the KV
    cache method (None on both sides when the format gives none) and the backend's AttentionBackendEnum name."""
    diffs = []
    if mine["kv_cache_dtype"] != _their_kv_dtype(row):
        diffs.append("kv cache dtype")
    if mine["scheme"] != row["scheme"]:
        diffs.append("kv method")
    if mine["backend"] != row["backend"]:
        diffs.append("backend")
    return diffs


def _canonical(name: str) -> str:
    """0.33 wraps a FusedMoE's method in MoERunner and its `routed_experts` child (fused_moe/routed_experts.py)."""
    return name[:-len(".routed_experts")] if name.endswith(".routed_experts") else name


def compare_model(ours: dict[str, dict], errors: tuple[str, ...], theirs: dict) -> list[ModuleAgreement]:
    """Row by row, vLLM's built model (build_model's answer) against fp8check's modules (our_modules) and its
    model-level errors. A build vLLM refused is one row: it agrees when fp8check reports vLLM's message (fp8check
    may add its explanation after it), on the model or on a module (vLLM stops at the first module that raises:
    a linear, an attention layer's backend selection or its impl's constructor). An attention layer vLLM built
    agrees when its KV cache dtype, KV method and backend do (compare_attention); fp8check's error on it with all
    three equal is a post-load prediction (a scale vLLM's loader or process_weights_after_loading refuses)."""
    from fp8check.core.routing.crosscheck import _sets_in_order, compare, vllm_error

    if theirs["error"] is not None:
        text = vllm_error(theirs["error"])
        # An attention layer may report several refusals (its backend's, the fp8_e5m2 one): vLLM raises the first
        # it meets, so each is a candidate.
        ours_errors = [e for e in (*errors, *(e for row in ours.values() for e in row.get("errors", [row["error"]])))
                       if e]
        found = any(_sets_in_order(e).startswith(_sets_in_order(text)) or (text.startswith("AssertionError") and e)
                    for e in ours_errors)
        differs = () if found else (("error text",) if ours_errors else ("error",))
        return [ModuleAgreement(MODEL, "model", "agree" if found else "differs", differs,
                                {"errors": ours_errors[:3]}, {"error": theirs["error"], "stage": theirs["stage"]})]
    rows: list[ModuleAgreement] = []
    if errors:
        rows.append(ModuleAgreement(MODEL, "model", "differs", ("error",), {"errors": list(errors)},
                                    {"error": None}))
    renamed = {theirs["names"].get(name, name): name for name in ours}
    built = theirs["modules"]
    for name, row in built.items():
        mine = ours.get(renamed.get(name, name))
        if row["kind"] == "attention" and mine is not None:
            diffs = compare_attention(mine, row)
            verdict = "differs" if diffs else "post-load prediction" if mine["error"] else "agree"
            rows.append(ModuleAgreement(name, "attention", verdict, tuple(diffs), mine, row))
            continue
        if mine is None:
            # Qwen4-Exp's PLE tables: Qwen4ExpPLEUnquantizedEmbeddingMethod, its own unquantized embedding method.
            unquantized = (row["scheme"] or "").startswith(("Unquantized", "Qwen4ExpPLEUnquantized"))
            if row["kind"] == "embedding" and unquantized:
                rows.append(ModuleAgreement(name, "embedding", "not compared", (), {}, row,
                                            "an unquantized input embedding: fp8check lists linear layers"))
            elif (name.endswith("lm_head") or row.get("type") == "ParallelLMHead") and unquantized and \
                    theirs.get("tied"):  # Whisper's head is proj_out
                rows.append(ModuleAgreement(name, "linear", "not compared", (), {}, row,
                                            "tied to embed_tokens (tie_word_embeddings): no lm_head tensor to list"))
            else:
                rows.append(ModuleAgreement(name, row["kind"], "differs", ("only in vLLM",), {}, row))
            continue
        if row["kind"] == "moe" and mine["scheme"] == row["scheme"] == "UnquantizedFusedMoEMethod":
            # fp8check names the method; which BF16 experts class vLLM picks is not modelled (FP8 experts only).
            rows.append(ModuleAgreement(name, "moe", "post-load prediction" if mine["error"] else "agree", (), mine,
                                        row, "unquantized experts: the BF16 experts class is not compared"))
            continue
        if row["kind"] == "moe" and mine["kernel"] is None and mine["error"] is None and \
                mine["scheme"] == row["scheme"] and not mine["scheme"].startswith("Unquantized"):
            # fp8check names the method and says it does not judge the experts (its verdict counts them).
            rows.append(ModuleAgreement(name, "moe", "not judged", (), mine, row,
                                        "fp8check names the method and marks the experts not judged"))
            continue
        diffs = list(compare(mine["scheme"], mine["kernel"], mine["error"], dict(row, error=None)))
        if row["kind"] == "moe" and mine["backend"] != row["backend"]:
            diffs.append("backend")
        if mine.get("type") and mine["type"] not in row["types"]:
            diffs.append("class")
        verdict = "agree" if not diffs else "differs"
        if diffs == ["error"]:
            # Same scheme and kernel; fp8check adds a failure vLLM meets only after construction (a kernel's
            # runtime_error, a weight loader's refusal): listed as such.
            verdict = "post-load prediction"
        rows.append(ModuleAgreement(name, row["kind"], verdict, tuple(diffs), mine, row))
    for name in ours:
        if theirs["names"].get(name, name) not in built:
            rows.append(ModuleAgreement(name, ours[name]["kind"], "differs", ("only in fp8check",), ours[name], {}))
    return rows


def main() -> None:
    from fp8check.core.routing.crosscheck import _InertFinder, prepare

    kind = sys.argv[1].partition(":")[0]
    stubbed = "--stub" in sys.argv
    if stubbed:
        sys.meta_path.insert(0, _InertFinder(MODEL_INERT))
        _DevicesOnMeta().mode.__enter__()  # before vLLM is imported: some modules allocate at import time
    stubs = prepare(sys.argv[1], stubbed, host=False)
    _no_registry_subprocess()
    if stubbed:
        sys.meta_path.insert(0, _InertFinder(LATE_INERT))
        _stub_compiled_namespaces()
        _no_router_warmup()
        _xielu_on_cpu()
        _step_alibi_on_cpu()
        _no_shardq_workspace()
        _mla_prefill_workspace()
        _rocm_mla_prefill(sys.argv[1])
        _no_beam_allreduce_workspace()
        _nemotron_vl_tokenizer()
        _nemotron_vl_remote_tower()
        _host_sparsity_constant()
        _gemma3n_vision_tower()
        _torchaudio_frontend()
        _stub_device_queries(sys.argv[1])
        _stub_flashinfer_probes(sys.argv[1])
        _guard_attention_impls()
    stubs.update(MODEL_STUB_RISKS)
    print(json.dumps({"stubs": stubs}), flush=True)
    for case in json.load(sys.stdin):
        print(json.dumps(build_model(dict(case, platform_kind=kind, stubbed=stubbed))), flush=True)


if __name__ == "__main__":
    main()
