"""The checkpoint stage, source -> checkpoint: config.json and safetensors headers from a folder or the Hub,
validated (the quantization_config through the format registry); no tensor data is read."""
