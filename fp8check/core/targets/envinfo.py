"""`fp8check env`: what this host has that decides routing and `load` — torch and its devices, Triton, IPEX, vLLM
and the rule profile matching it, and the platform `--platform auto` detects.

Each probe is independent and reports its own failure as text: a missing or broken package is an answer, never a
crash. Packages are found from their distribution metadata; torch alone is imported (only it can list devices).
"""

from __future__ import annotations

import platform as host
import sys
from importlib import metadata
from typing import NamedTuple

# Distributions that provide `triton`: upstream, and the builds PyTorch ships for ROCm and XPU.
TRITON_DISTRIBUTIONS = ("triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "pytorch-triton")
IPEX_DISTRIBUTION = "intel-extension-for-pytorch"


class Probe(NamedTuple):
    """One thing looked for: found or not, its version, and details (devices, the matching profile, an error)."""

    name: str
    found: bool
    version: str | None = None
    details: dict = {}
    error: str | None = None


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def probe_torch() -> Probe:
    version = _version("torch")
    if version is None:
        return Probe("torch", False, error="not installed (inspect needs none; load needs torch)")
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - a broken install is an answer too
        return Probe("torch", False, version, error=f"import failed: {type(exc).__name__}: {exc}")
    details: dict = {"cuda_build": torch.version.cuda, "hip_build": getattr(torch.version, "hip", None),
                     "devices": []}
    for kind in ("cuda", "xpu"):
        backend = getattr(torch, kind, None)
        try:
            count = backend.device_count() if backend is not None and backend.is_available() else 0
            for index in range(count):
                details["devices"].append(_device(torch, kind, index))
        except Exception as exc:  # noqa: BLE001 - a driver that fails to answer
            details[f"{kind}_error"] = f"{type(exc).__name__}: {exc}"
    return Probe("torch", True, torch.__version__, details)


def _device(torch, kind: str, index: int) -> dict:
    """Name, memory and capability; on CUDA builds for ROCm, capability is what torch reports (gfx arch too)."""
    backend = getattr(torch, kind)
    props = backend.get_device_properties(index)
    device = {"device": f"{kind}:{index}", "name": props.name, "memory_bytes": int(getattr(props, "total_memory", 0))}
    if kind == "cuda":
        major, minor = backend.get_device_capability(index)
        device["capability"] = major * 10 + minor
        if getattr(props, "gcnArchName", None):
            device["arch"] = props.gcnArchName.split(":")[0]
    return device


def probe_triton() -> Probe:
    for distribution in TRITON_DISTRIBUTIONS:
        version = _version(distribution)
        if version is not None:
            return Probe("triton", True, version, {"distribution": distribution})
    return Probe("triton", False, error="not installed (load emulates block GEMMs in fp32 without it)")


def probe_ipex() -> Probe:
    version = _version(IPEX_DISTRIBUTION)
    if version is None:
        return Probe("ipex", False, error="not installed (fp8check uses torch's native xpu device, not IPEX)")
    return Probe("ipex", True, version)


def probe_vllm() -> Probe:
    from fp8check.core.errors import InputError
    from fp8check.core.targets.profiles import select_profile

    version = _version("vllm")
    if version is None:
        return Probe("vllm", False, error="not installed (fp8check's rules need no vLLM; crosscheck does)")
    try:
        profile = select_profile(version)
    except InputError as exc:
        return Probe("vllm", True, version, error=str(exc))
    return Probe("vllm", True, version, {"profile": profile.name, "profile_vllm": profile.vllm})


def probe_platform() -> Probe:
    """What --platform auto resolves to, detected as inspect does (driver files, nvidia-smi; no torch)."""
    from fp8check.core.targets.platforms import detect_host

    try:
        detected = detect_host()
    except Exception as exc:  # noqa: BLE001 - InputError for an unknown GPU, or an unreadable /sys
        return Probe("platform", False, error=str(exc))
    return Probe("platform", True, None, {"label": detected.label, "kind": detected.kind,
                                          "capability": detected.capability, "arch": detected.arch,
                                          "assumptions": detected.assumptions.relevant(detected.kind)})


def environment() -> list[Probe]:
    from fp8check.version import __version__

    return [Probe("fp8check", True, __version__), Probe("python", True, host.python_version(),
                                                        {"executable": sys.executable}),
            probe_platform(), probe_torch(), probe_triton(), probe_ipex(), probe_vllm()]

