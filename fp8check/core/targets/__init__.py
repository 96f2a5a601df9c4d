"""What routing is asked about, described without the hardware: target platforms (`--platform`), vLLM rule profiles (`--vllm`), and this host (`fp8check env`)."""
