"""Errors a user can act on. Each becomes a one-line message and exit code 2 in the CLI."""

from __future__ import annotations

import json
import unicodedata


class InputError(Exception):
    """Bad usage or unreadable input: the checkpoint cannot even be judged (exit 2)."""

    exit_code = 2


class CheckpointFileError(InputError):
    """A file of the checkpoint is malformed; the message names the file (and tensor)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{printable(path)}: {message}")
        self.path = path


class ConfigError(InputError):
    """config.json or its quantization_config is malformed or of the wrong types."""


# Control characters (ESC starts terminal escape sequences), invisible format characters (bidi overrides,
# zero-width), line/paragraph separators and lone surrogates (unprintable to a UTF-8 terminal).
_UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _unprintable(ch: str) -> bool:
    code = ord(ch)
    if code < 0x80:
        return code < 0x20 or code == 0x7F
    return unicodedata.category(ch) in _UNPRINTABLE_CATEGORIES


def printable(name: str, limit: int = 200) -> str:
    """A tensor or file name safe to print: control characters and ANSI escapes are escaped."""
    out = []
    for ch in name[:limit]:
        if _unprintable(ch):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    if len(name) > limit:
        out.append("…")
    return "".join(out)


def is_printable(name: str) -> bool:
    """True when `printable` would show `name` unchanged (no control, invisible or unencodable characters)."""
    return name.isprintable() or not any(_unprintable(ch) for ch in name)


def shown(value: object, limit: int = 80) -> str:
    """A JSON value from a config or header, as one short printable line for an error message."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = f"<{type(value).__name__}>"
    return printable(text if len(text) <= limit else text[: limit - 3] + "...", limit)
