"""The routing stage: per module, format x platform x rule profile -> vLLM's scheme -> kernel, with vLLM's reasons
(linear, moe), integrity from headers, warnings, and `inspect`, which runs the stages before it."""
