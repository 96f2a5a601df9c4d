"""Errors a user can act on. Each becomes a one-line message and exit code 2 in the CLI."""

from __future__ import annotations


class InputError(Exception):
    """Bad usage or unreadable input: the checkpoint cannot even be judged (exit 2)."""

    exit_code = 2


class CheckpointFileError(InputError):
    """A file of the checkpoint is malformed; the message names the file (and tensor)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path


class ConfigError(InputError):
    """config.json or its quantization_config is malformed or of the wrong types."""


def printable(name: str, limit: int = 200) -> str:
    """A tensor or file name safe to print: control characters and ANSI escapes are escaped."""
    out = []
    for ch in name[:limit]:
        code = ord(ch)
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    if len(name) > limit:
        out.append("…")
    return "".join(out)
