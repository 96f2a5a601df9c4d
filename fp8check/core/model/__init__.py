"""The layout stage: the modules vLLM builds for this architecture (layouts, modules), their TP shapes (tp), what
each rank reads (sharding) and the weight bytes each rank holds (memory)."""
