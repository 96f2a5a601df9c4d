"""Target platforms described without the hardware: kind, compute capability, and stated assumptions.

vLLM's routing depends on things a checkpoint cannot tell (which optional kernel libraries are installed,
environment switches). Those are `Assumptions` with stock-install defaults, overridable with `--assume`,
and printed with every report so that nobody mistakes a default for a measurement.
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple

from fp8check.core.errors import InputError

# ROCm: torch reports gfx arch as a capability (rocm.py): gfx90a -> (9, 0), gfx942 -> (9, 4), ...
ROCM_CAPABILITY = {"gfx908": 90, "gfx90a": 90, "gfx940": 94, "gfx941": 94, "gfx942": 94, "gfx950": 95,
                   "gfx1100": 110, "gfx1101": 110, "gfx1200": 120, "gfx1201": 120}
FNUZ_ARCHS = ("gfx940", "gfx941", "gfx942")  # MI300 class: float8_e4m3fnuz

ALIASES: dict[str, str] = {
    "v100": "cuda:70", "t4": "cuda:75", "a100": "cuda:80", "a800": "cuda:80", "a10": "cuda:86", "a10g": "cuda:86",
    "a40": "cuda:86", "rtx3090": "cuda:86", "l4": "cuda:89", "l40": "cuda:89", "l40s": "cuda:89",
    "rtx4090": "cuda:89", "rtx6000-ada": "cuda:89", "h100": "cuda:90", "h800": "cuda:90", "h200": "cuda:90",
    "gh200": "cuda:90", "b200": "cuda:100", "gb200": "cuda:100", "b300": "cuda:103", "gb300": "cuda:103",
    "rtx5090": "cuda:120", "rtx-pro-6000": "cuda:120", "dgx-spark": "cuda:121",
    "mi210": "rocm:gfx90a", "mi250": "rocm:gfx90a", "mi250x": "rocm:gfx90a", "mi300a": "rocm:gfx942",
    "mi300x": "rocm:gfx942", "mi325x": "rocm:gfx942", "mi350x": "rocm:gfx950", "mi355x": "rocm:gfx950",
    "rx7900xtx": "rocm:gfx1100", "rx9070xt": "rocm:gfx1201", "r9700": "rocm:gfx1201",
    "arc-a770": "xpu", "arc-b580": "xpu", "arc-pro-b60": "xpu", "b60": "xpu", "max1100": "xpu", "max1550": "xpu",
    "pvc": "xpu", "lunar-lake": "xpu", "a100-40gb": "cuda:80", "a100-80gb": "cuda:80",
}
# Device memory per alias, nominal GiB from the vendors' datasheets (not from vLLM; the driver reports a little
# less, e.g. ~79.6 GiB for an 80 GiB H100). Aliases sold in several sizes (v100, a100, gh200, ...) are left out:
# memory unknown, --assume device_memory=... (or a100-40gb / a100-80gb) says it. MI250/MI250X and Max 1550 show
# each die/stack as its own device.
DEVICE_MEMORY_GIB: dict[str, float] = {
    "t4": 16, "a100-40gb": 40, "a100-80gb": 80, "a800": 80, "a10": 24, "a10g": 24, "a40": 48, "rtx3090": 24, "l4": 24,
    "l40": 48, "l40s": 48, "rtx4090": 24, "rtx6000-ada": 48, "h100": 80, "h800": 80, "h200": 141, "b200": 180,
    "rtx5090": 32, "rtx-pro-6000": 96, "mi210": 64, "mi250": 64, "mi250x": 64, "mi300x": 192, "mi325x": 256,
    "mi350x": 288, "mi355x": 288, "rx7900xtx": 24, "rx9070xt": 16, "r9700": 32, "arc-a770": 16, "arc-b580": 12,
    "arc-pro-b60": 24, "b60": 24, "max1100": 48, "max1550": 64,
}
MEMORY_UNITS = {"": 1 << 30, "gib": 1 << 30, "gb": 10**9, "mib": 1 << 20, "mb": 10**6, "tib": 1 << 40, "tb": 10**12}


class Assumptions(NamedTuple):
    """Facts about the serving environment that change routing; defaults describe a stock `pip install vllm==X`.

    Read from every CUDA wheel 0.25.0 ... 0.33.0 (`pip download vllm==X --no-deps`): each vendors DeepGEMM
    (vllm/third_party/deep_gemm, which `has_deep_gemm()` falls back to) and lists `humming-kernels[cu13]` and
    `flashinfer-python` as plain Requires-Dist; `b12x` is only the `vllm[b12x]` extra. No release differs, so
    one set of defaults serves every rule profile.
    """

    cuda_version: str = "12.9"      # CUTLASS FP8 kernels need CUDA >= 12.0 (12.4 on sm89, 12.8 for Blackwell block)
    flashinfer: bool = True         # Requires-Dist: flashinfer-python
    deep_gemm: bool = True          # vendored in the wheel (vllm/third_party/deep_gemm)
    humming: bool = True            # Requires-Dist: humming-kernels[cu13]
    b12x: bool = False              # the vllm[b12x] extra only
    aiter: bool = False             # VLLM_ROCM_USE_AITER=1 with aiter installed (off by default)
    rocm_skinny_gemm: bool = True   # VLLM_ROCM_USE_SKINNY_GEMM (default on)
    rocm_hip_w8a8: bool = False     # VLLM_ROCM_USE_HIP_W8A8
    cpu_amx: bool = True            # AMX tiles (Sapphire Rapids or newer) for vLLM's CPU FP8 kernels
    cpu_amx_fp8: bool = False       # native AMX-FP8 (ops.cpu_has_amx_fp8()): 0.33's CPU W8A8 kernels need it
    triton_cpu: bool = True         # triton-cpu in vLLM's x86 CPU install: 0.34 refuses to start without it
    batch_invariant: bool = False   # VLLM_BATCH_INVARIANT
    device_memory: int | None = None  # bytes per device (from the alias, fp8check.core.model.memory); None: unknown
    # None: vLLM's default for the release and platform (0.92; 1.0 on CUDA/ROCm from 0.34), core.model.memory
    gpu_memory_utilization: float | None = None

    def relevant(self, kind: str) -> dict[str, str | bool]:
        """The assumptions that can change routing on this kind of platform: the only ones shown (table, JSON),
        so a ROCm report never lists cuda_version or cpu_amx."""
        return {key: value for key, value in self._asdict().items() if key in RELEVANT[kind]}


RELEVANT = {
    "cuda": ("cuda_version", "flashinfer", "deep_gemm", "humming", "b12x", "batch_invariant"),
    "rocm": ("aiter", "rocm_skinny_gemm", "rocm_hip_w8a8"),
    "cpu": ("cpu_amx", "cpu_amx_fp8", "triton_cpu"),
    "xpu": (),
}


class Platform(NamedTuple):
    kind: str                       # "cuda" | "rocm" | "xpu" | "cpu"
    capability: int | None          # major*10+minor; None where vLLM reports none (XPU, CPU)
    label: str
    arch: str | None = None         # ROCm gfx name
    assumptions: Assumptions = Assumptions()

    @property
    def fp8_fnuz(self) -> bool:
        return self.kind == "rocm" and self.arch in FNUZ_ARCHS

    @property
    def fp8_dtype(self) -> str:
        return "float8_e4m3fnuz" if self.fp8_fnuz else "float8_e4m3fn"


def parse_platform(text: str) -> Platform:
    """`xpu`, `cpu`, `cuda:90` / `cuda:9.0` / `sm90`, `rocm:gfx942`, or an alias such as h100 or mi300x (which
    also gives the device memory)."""
    platform = _parse_platform(text)
    memory = DEVICE_MEMORY_GIB.get(text.strip().lower())
    if memory is None:
        return platform
    return platform._replace(assumptions=platform.assumptions._replace(device_memory=int(memory * (1 << 30))))


def _parse_platform(text: str) -> Platform:
    raw = text.strip().lower()
    spec = ALIASES.get(raw, raw)
    label = raw if spec == raw else f"{raw} ({spec})"
    if spec in ("xpu", "cpu"):
        return Platform(kind=spec, capability=None, label=label)
    match = re.fullmatch(r"(?:cuda:?)?(?:sm_?)?(\d+)(?:\.(\d))?", spec.removeprefix("cuda:"))
    if spec.startswith(("cuda", "sm")) and match:
        major_minor = int(match.group(1)) if match.group(2) is None else int(match.group(1)) * 10 + int(match.group(2))
        if not 30 <= major_minor <= 130:
            raise InputError(f"--platform {text}: compute capability {major_minor} is out of range (e.g. cuda:90 for H100)")
        return Platform(kind="cuda", capability=major_minor, label=label)
    if spec.startswith("rocm:"):
        arch = spec.split(":", 1)[1]
        if arch not in ROCM_CAPABILITY:
            raise InputError(f"--platform {text}: unknown ROCm arch {arch!r} (known: {', '.join(ROCM_CAPABILITY)})")
        return Platform(kind="rocm", capability=ROCM_CAPABILITY[arch], label=label, arch=arch)
    raise InputError(
        f"--platform {text!r}: expected xpu, cpu, cuda:<cc> (e.g. cuda:90), rocm:<gfx> (e.g. rocm:gfx942) "
        f"or an alias ({', '.join(sorted(ALIASES))})"
    )


def _host_has_amx(flag: str = "amx_tile") -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            return f" {flag}" in fh.read(200_000)
    except OSError:
        return False


def apply_assumptions(platform: Platform, items: list[str]) -> Platform:
    """Apply `--assume key=value` items (booleans: yes/no/true/false/1/0)."""
    known = Assumptions._fields
    changes: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in known:
            raise InputError(f"--assume {item!r}: expected KEY=VALUE with KEY one of {', '.join(known)}")
        if key in ("device_memory", "gpu_memory_utilization"):
            changes[key] = _memory_assumption(key, value, item)
        elif key == "cuda_version":
            if not re.fullmatch(r"\d+\.\d+", value.strip()):
                raise InputError(f"--assume {item!r}: cuda_version must look like 12.8")
            changes[key] = value.strip()
        else:
            lowered = value.strip().lower()
            if lowered not in ("yes", "no", "true", "false", "1", "0", "on", "off"):
                raise InputError(f"--assume {item!r}: {key} takes yes or no")
            changes[key] = lowered in ("yes", "true", "1", "on")
    return platform._replace(assumptions=platform.assumptions._replace(**changes))


def _memory_assumption(key: str, value: str, item: str) -> int | float:
    """device_memory=80GiB / 80GB (10^9 bytes) / 80 (GiB); gpu_memory_utilization=0.9 (vLLM: 0 < u <= 1)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", value.lower())
    if key == "gpu_memory_utilization":
        if not match or match.group(2) or not 0 < float(match.group(1)) <= 1:
            raise InputError(f"--assume {item!r}: gpu_memory_utilization takes a fraction in (0, 1], e.g. 0.9")
        return float(match.group(1))
    if not match or match.group(2) not in MEMORY_UNITS or float(match.group(1)) <= 0:
        raise InputError(f"--assume {item!r}: device_memory takes a size such as 80GiB, 141GB or 192 (GiB)")
    return int(float(match.group(1)) * MEMORY_UNITS[match.group(2)])


def disabled_kernels_from_env() -> tuple[str, ...]:
    """VLLM_DISABLED_KERNELS as vLLM reads it: split on ',', no whitespace stripping."""
    value = os.environ.get("VLLM_DISABLED_KERNELS", "")
    return tuple(value.split(",")) if value else ()


def detect_host() -> Platform:
    """`--platform auto` without importing torch (seconds): driver files in /proc and /sys, nvidia-smi."""
    if os.path.isdir("/proc/driver/nvidia/gpus"):
        cc = _nvidia_compute_capability()
        if cc is None:
            raise InputError("an NVIDIA GPU is present but its compute capability could not be read "
                             "(nvidia-smi failed); pass --platform cuda:<cc>, e.g. --platform h100")
        return Platform(kind="cuda", capability=cc, label=f"auto: cuda:{cc}")
    arch = _rocm_arch()
    if arch:
        if arch not in ROCM_CAPABILITY:
            raise InputError(f"ROCm GPU {arch} is not in fp8check's table; pass --platform rocm:<gfx>")
        return Platform(kind="rocm", capability=ROCM_CAPABILITY[arch], label=f"auto: rocm:{arch}", arch=arch)
    if _intel_gpu():
        return Platform(kind="xpu", capability=None, label="auto: xpu")
    return Platform(kind="cpu", capability=None, label="auto: cpu",
                    assumptions=Assumptions(cpu_amx=_host_has_amx(), cpu_amx_fp8=_host_has_amx("amx_fp8")))


def _nvidia_compute_capability() -> int | None:
    import subprocess  # noqa: PLC0415

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
        major, minor = out.split()[0].split(".")
        return int(major) * 10 + int(minor)
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def _rocm_arch() -> str | None:
    """gfx_target_version in KFD topology: major*10000 + minor*100 + stepping (90010 -> gfx90a)."""
    import glob  # noqa: PLC0415

    for props in sorted(glob.glob("/sys/class/kfd/kfd/topology/nodes/*/properties")):
        try:
            with open(props, encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("gfx_target_version"):
                        version = int(line.split()[1])
                        if version:
                            major, minor, step = version // 10000, version // 100 % 100, version % 100
                            return f"gfx{major}{minor:x}{step:x}"
        except (OSError, ValueError, IndexError):
            continue
    return None


def _intel_gpu() -> bool:
    import glob  # noqa: PLC0415

    for vendor in glob.glob("/sys/class/drm/card*/device/vendor"):
        try:
            with open(vendor, encoding="ascii") as fh:
                if fh.read().strip() == "0x8086" and os.path.exists(os.path.join(os.path.dirname(vendor), "driver")):
                    driver = os.path.basename(os.path.realpath(os.path.join(os.path.dirname(vendor), "driver")))
                    if driver in ("xe", "i915"):
                        return True
        except OSError:
            continue
    return False


_DEVICE = re.compile(r"(cpu|cuda|xpu)(?::(\d+))?")


def device_syntax(text: str) -> tuple[str, int] | None:
    """`load --device`: auto (None), cpu, cuda[:i] or xpu[:i] as (kind, index); an InputError otherwise. Torch-free:
    the API checks it before importing torch, the driver asks torch whether it sees that device."""
    text = text.strip().lower()
    if text == "auto":
        return None
    match = _DEVICE.fullmatch(text)
    if match is None:
        raise InputError(f"--device {text!r}: expected auto, cpu, cuda[:i] or xpu[:i]")
    return match.group(1), int(match.group(2) or 0)
