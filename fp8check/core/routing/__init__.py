"""Stage 4, routing: platform x rule profile -> scheme -> kernel per module, with vLLM's reasons; inspect."""
