"""The library behind the CLI: plain functions over plain records (NamedTuples, dataclasses) (no torch on the inspect path)."""
