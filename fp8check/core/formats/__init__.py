"""The format stage: one module per vLLM quant_method (compressed_tensors, fp8) behind the Format protocol
(base.py), registered by name in registry.FORMATS, which every stage dispatches through; shared.py holds
QuantArgs, the validators' checks and vLLM's name matching. Formats import no other core stage."""
