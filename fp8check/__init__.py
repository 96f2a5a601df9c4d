"""fp8check: predict, from safetensors headers alone, how vLLM routes every FP8 linear layer."""

__version__ = "0.1.0"
