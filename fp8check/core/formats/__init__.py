"""Stage 2, checkpoint -> format: one module per vLLM quant_method, behind one protocol."""
