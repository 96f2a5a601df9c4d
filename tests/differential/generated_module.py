"""The command line of a generator that writes a committed, torch-free data module of fp8check from vLLM's or
transformers' own sources (vllm_registry.py, transformers_classes.py): check mode prints the differences and exits 1
when the committed module is stale, --write regenerates it."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable


def write_or_check(description: str, target: str, source: Callable[[], str], agrees: str, label: str) -> int:
    """Check `target` against `source()` (exit status 0 when equal; the unified diff committed -> `label` and 1
    when not), or with --write regenerate it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--write", action="store_true", help="regenerate the module instead of checking it")
    args = parser.parse_args()
    text = source()
    if args.write:
        with open(target, "w") as out:
            out.write(text)
        return 0
    with open(target) as committed:
        current = committed.read()
    if current == text:
        print(agrees)
        return 0
    sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True), "committed", label))
    return 1
