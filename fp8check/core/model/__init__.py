"""Stage 3, layout: the modules vLLM builds for this architecture, their TP shapes and per-rank slices."""
