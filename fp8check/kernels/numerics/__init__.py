"""The arithmetic of vLLM's FP8 kernels in torch (load only): activation quantization, GEMMs, Triton port."""
