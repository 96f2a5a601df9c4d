"""The library behind the CLI: plain functions over plain dataclasses (no torch on the inspect path)."""
