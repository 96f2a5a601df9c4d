"""The one sink of the command line: every byte a command prints or writes goes through here — the rich consoles
of stdout and stderr, JSON documents, the --output file, GitHub Actions' step summary — and every error is
formatted here, once: bad input is one line on stderr and exit 2 (with one JSON error document on stdout under
--format json), and so is a bug.

rich is imported only to draw; the JSON path imports no renderer.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, NoReturn

import typer

from fp8check.cli import ci
from fp8check.cli.options import FailOn, OutputFormat
from fp8check.core.errors import InputError, printable
from fp8check.core.records import LoadReport

DEBUG_HINT = "(set FP8CHECK_DEBUG=1 for the traceback; please report it)"
# How alike an unknown option must be to a real one to be offered (--bogus / --verbose: 0.5; --platfrom: 0.88).
NEAR = 0.75


def stdout():
    """The terminal's width, or $COLUMNS where it is set. Piped or redirected (`| head`, `| less`, `> out.txt`): the
    width of the terminal the user watches (stderr's, else the controlling terminal's); 200 columns with no
    terminal at all (CI logs), and for a stdout in memory (a Python caller capturing it: no terminal shows it)."""
    from rich.console import Console

    if sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit():  # rich reads $COLUMNS itself
        return Console(highlight=False)
    try:
        sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return Console(highlight=False, width=200)
    return Console(highlight=False, width=terminal_width() or 200)


def terminal_width() -> int | None:
    """The columns of stderr's terminal, else of the controlling terminal (/dev/tty); None without either."""
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or None
    except (OSError, ValueError, AttributeError):  # not a terminal, a closed or an in-memory stream
        pass
    try:
        tty = os.open("/dev/tty", os.O_RDONLY | getattr(os, "O_NOCTTY", 0))
    except OSError:  # no controlling terminal (CI, a daemon) or no /dev/tty (Windows)
        return None
    try:
        return os.get_terminal_size(tty).columns or None
    except OSError:
        return None
    finally:
        os.close(tty)


def stderr():
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def usage_message(exc) -> str:
    """A usage error (typer's click exceptions) in one line. An unknown long option names the real options it
    abbreviates, else the one nearest in spelling when it is near (--platfrom: --platform), else none: click's
    own pick compares whole names, dashes included, and offers --verbose for --bogus."""
    typed = getattr(exc, "option_name", "") if hasattr(exc, "possibilities") else ""  # NoSuchOption (typer's click)
    if getattr(exc, "ctx", None) is None or not typed.startswith("--"):
        return exc.format_message()
    names = [name for param in exc.ctx.command.params for name in param.opts + param.secondary_opts]
    close = nearest_options(typed, names)
    return exc.message + (f" (did you mean {' or '.join(close)}?)" if close else "")


def nearest_options(typed: str, names: list[str]) -> list[str]:
    """The long options `typed` abbreviates (3 letters at least), else the one nearest in spelling whose names
    without dashes are 75% alike (difflib's ratio), else none."""
    from difflib import SequenceMatcher

    stem = typed.lstrip("-")
    longs = [name for name in dict.fromkeys(names) if name.startswith("--")]
    prefixed = [name for name in longs if len(stem) >= 3 and name[2:].startswith(stem)]
    if prefixed:
        return prefixed
    ratio, best = max(((SequenceMatcher(None, stem, name[2:]).ratio(), name) for name in longs), default=(0, ""))
    return [best] if ratio >= NEAR else []


def safe(text: str, limit: int = 200) -> str:
    """Untrusted text (file and tensor names) for rich: control characters escaped, [markup] inert."""
    from rich.markup import escape

    return escape(printable(text, limit))


def quiet(fmt: OutputFormat) -> bool:
    """Progress bars only for people: not for machine formats, nor when stdout is not a terminal."""
    return fmt in (OutputFormat.json, OutputFormat.junit) or not sys.stdout.isatty()


def print_document(document: dict, indent: int | None = None) -> str:
    """One JSON document on stdout (compact unless `indent`: the C encoder); returns the text."""
    text = json.dumps(document, indent=indent)
    print(text)
    return text


def fail(message: str, model: str, as_json: bool) -> NoReturn:
    """Exit 2 with one line on stderr; JSON callers still get exactly one JSON object on stdout."""
    stderr().print(f"[red]error:[/red] {safe(message, 4000)}")
    if as_json:
        from fp8check.core.report.documents import input_error_document

        print_document(input_error_document(model, message))
    raise typer.Exit(ci.EXIT_INPUT)


@contextmanager
def errors_reported(model: str, as_json: bool) -> Iterator[None]:
    """Around a command's work: an InputError is `fail`; any other exception is a bug, reported the same way
    (FP8CHECK_DEBUG=1 re-raises it for the traceback)."""
    try:
        yield
    except InputError as exc:
        fail(str(exc), model, as_json)
    except Exception as exc:  # a bug: still one line, and still one JSON object for --format json
        if os.environ.get("FP8CHECK_DEBUG"):
            raise
        fail(f"internal error: {type(exc).__name__}: {exc} {DEBUG_HINT}", model, as_json)


def crashed(exc: Exception) -> NoReturn:
    """The last line of defence (fp8check.cli.app.main): a bug outside any command's work, in one line, exit 2."""
    stderr().print(f"[red]internal error:[/red] {type(exc).__name__}: {safe(str(exc), 500)} {DEBUG_HINT}")
    sys.exit(ci.EXIT_INPUT)


def write_file(path: str, text: str) -> None:
    """--output: the text printed (the Markdown for a table), ending in a newline."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(_line_ended(text))
    except OSError as exc:
        stderr().print(f"[red]error:[/red] cannot write {safe(path)}: {safe(str(exc.strerror or exc))}")
        raise typer.Exit(ci.EXIT_INPUT) from None


def _line_ended(text: str) -> str:
    return text + ("" if text.endswith("\n") else "\n")


def show(fmt: str, output: str | None, document: Callable[[], dict], table: Callable[[object], None],
         markdown: Callable[[], str], junit: Callable[[], str] | None = None) -> None:
    """A result in --format: its JSON `document`, its `junit` or `markdown` text, or its rich `table` drawn on
    stdout. --output writes what was printed; for a table, the Markdown."""
    if fmt == "table":
        table(stdout())
        text = markdown() if output else None
    elif fmt == "json":
        text = print_document(document())
    else:
        if fmt == "junit":
            assert junit is not None, "a command offers --format junit only with a junit renderer"
            text = junit()
        else:
            text = markdown()
        print(text)
    if output and text is not None:
        write_file(output, text)


def unmatched_skip_layers(report, given: list[str]) -> None:
    """--kv-cache-dtype-skip-layers values that name no attention layer of this model (vLLM matches nothing with
    them, silently): one warning line on stderr each, whatever --format prints. `report`: inspect's or load's."""
    from fp8check.core.vocabulary import layer_template

    attention = getattr(report, "inspect", report).attention
    indices = sorted({index for layer in attention for index in [layer_template(layer.name)[1]] if index is not None})
    if not indices:
        have = "it has no numbered attention layer"
    elif indices == list(range(indices[0], indices[-1] + 1)):
        have = f"its attention layers are {indices[0]}..{indices[-1]}"
    else:
        have = f"its attention layers are {', '.join(map(str, indices))}"
    for value in dict.fromkeys(v.strip() for item in given for v in item.split(",") if v.strip()):
        if value == "sliding_window" and not any(layer.sliding_window for layer in attention):
            why = "this model has no sliding-window attention layer"
        elif value.isdigit() and int(value) not in indices:
            why = have
        else:
            continue
        print(f"warning: --kv-cache-dtype-skip-layers {value} names no layer of this model ({why}): it changes "
              "nothing", file=sys.stderr)


def finish_report(report, fmt: OutputFormat, fail_on: FailOn, verbose: bool, fetch, output: str | None,
                  wide: bool = False) -> NoReturn:
    """inspect and load: the report in --format (judged under --fail-on), --output, the step summary, the exit
    code. The table and Markdown show a warning as a warning and a module not judged as it routes, and say in the
    verdict when --fail-on fails on them; JUnit fails their testcases (fp8check.cli.ci.as_judged); the JSON keeps
    `ok`, the warnings and each module's `judged` apart."""
    from fp8check.core.report import documents

    is_load = isinstance(report, LoadReport)

    def as_junit():
        from fp8check.core.report import junit  # xml.etree, only for --format junit

        return (junit.load_junit if is_load else junit.inspect_junit)(ci.as_judged(report, fmt, fail_on))

    show(fmt, output, document=lambda: (documents.load_document if is_load else documents.inspect_document)(report),
         table=lambda console: _renderer().table(report, console, verbose, fetch, wide, fail_on.value),
         markdown=lambda: _renderer().markdown(report, fail_on.value), junit=as_junit)
    _append_step_summary(report, fail_on)
    failing = ci.failing(report, fail_on)
    # the table and Markdown verdicts say it themselves
    if any(failing) and fmt in (OutputFormat.json, OutputFormat.junit):
        from fp8check.core.report.verdicts import failing_text

        print(f"fp8check: failing on {failing_text(*failing)} (--fail-on {fail_on.value})", file=sys.stderr)
    raise typer.Exit(ci.exit_code(report, fail_on))


def _renderer():
    """The tables and Markdown of inspect and load, imported only when drawn (they import rich)."""
    from fp8check.cli import render

    return render


def _append_step_summary(report, fail_on: FailOn) -> None:
    """Under GitHub Actions ($GITHUB_STEP_SUMMARY set) append the Markdown summary, whatever --format printed. An
    unwritable file is one warning line on stderr, never a failed run: the summary is a convenience."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    text = _renderer().markdown(report, fail_on.value)
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(_line_ended(text))
    except OSError as exc:
        print(f"warning: cannot append the step summary to GITHUB_STEP_SUMMARY={printable(path)}: "
              f"{printable(str(exc.strerror or exc))}", file=sys.stderr)
