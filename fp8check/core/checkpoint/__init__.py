"""Stage 1, source -> checkpoint: config.json and safetensors headers from a folder or the Hub, validated."""
