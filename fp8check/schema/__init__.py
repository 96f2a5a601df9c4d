"""The JSON Schema (draft 2020-12) of `inspect` and `load --format json`, shipped as package data so a CI job can
validate a report with the schema of the fp8check that wrote it (`fp8check schema`)."""

from __future__ import annotations

from importlib.resources import files

SCHEMA_FILE = "report.schema.json"


def schema_text() -> str:
    return files(__name__).joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
