"""fp8check: predict, from safetensors headers alone, how vLLM routes every FP8 linear layer, and check it.

The Python API (fp8check.api) is re-exported here: `fp8check.inspect(model, platform="xpu", tp=2)`,
`fp8check.load(...)`, `fp8check.matrix(...)` return typed reports with `.ok` and `.to_dict()`; a bad argument
raises `fp8check.InputError`. They are imported on first use, so `import fp8check` costs nothing.
"""

from fp8check.version import __version__

__all__ = ["InputError", "InspectReport", "LoadReport", "Matrix", "__version__", "inspect", "load", "matrix"]


def __getattr__(name: str):
    """The API's names, imported from fp8check.api the first time one is asked for."""
    if name in __all__:
        from fp8check import api

        globals()[name] = value = getattr(api, name)
        return value
    raise AttributeError(f"module 'fp8check' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
