"""vLLM's linear kernels as a routing registry: one small class per vLLM kernel, ordered tables per platform."""
