"""Download progress for huggingface_hub's `tqdm_class=`: tqdm's bookkeeping, drawn by one rich Progress on stderr.

huggingface_hub creates several bars at once (bytes transferred, files fetched); rich allows one live display,
so every bar is a task of one shared Progress, started with the first bar and stopped with the last (or by
stop_progress()). stdout is never written to, nor redirected.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn, DownloadColumn, Progress, ProgressColumn, TaskID, TextColumn, TimeElapsedColumn, TransferSpeedColumn,
)
from rich.text import Text
from tqdm.std import tqdm as std_tqdm


class _Amount(ProgressColumn):
    """'1.2/3.4 GB 56.7 MB/s' for byte bars, '3/7' for counting bars."""

    def render(self, task) -> Text:
        if task.fields.get("unit") == "B":
            return Text.assemble(DownloadColumn().render(task), " ", TransferSpeedColumn().render(task))
        total = "?" if task.total is None else f"{int(task.total)}"
        return Text(f"{int(task.completed)}/{total}", style="progress.download")


class _Live:
    lock = threading.Lock()
    progress: Progress | None = None
    bars = 0


def rich_tqdm_class(quiet: bool = False) -> type[std_tqdm]:
    """A tqdm class for huggingface_hub downloads; silent when `quiet`, off a terminal, or with
    HF_HUB_DISABLE_PROGRESS_BARS=1."""
    from huggingface_hub.utils import are_progress_bars_disabled

    silent = quiet or not sys.stderr.isatty() or are_progress_bars_disabled()
    return type("RichTqdm", (RichTqdm,), {"silent": silent})


class RichTqdm(std_tqdm):
    silent = True

    def __init__(self, *args, **kwargs):
        kwargs.pop("name", None)  # huggingface_hub's own tqdm takes a bar-group name; tqdm's does not
        kwargs["disable"] = self.silent or bool(kwargs.get("disable"))
        kwargs["gui"] = True  # tqdm keeps counting but draws nothing; display() hands the numbers to rich
        super().__init__(*args, **kwargs)
        if self.disable:
            return
        with _Live.lock:
            if _Live.progress is None:
                _Live.progress = Progress(TextColumn("{task.description}"), BarColumn(), _Amount(),
                                          TimeElapsedColumn(), console=Console(stderr=True),
                                          redirect_stdout=False, redirect_stderr=False)
                _Live.progress.start()
            _Live.bars += 1
            self._rich_task: TaskID | None = _Live.progress.add_task(
                self.desc or "", total=self.total or None, completed=self.n, unit=self.unit)

    def display(self, *_, **__):
        task = getattr(self, "_rich_task", None)
        if task is not None and _Live.progress is not None:
            _Live.progress.update(task, completed=self.n, total=self.total or None, description=self.desc)

    def clear(self, *_, **__):
        pass

    def close(self):
        task = getattr(self, "_rich_task", None)
        if task is None or self.disable:
            return super().close()
        self.display()
        super().close()
        self._rich_task = None
        with _Live.lock:
            _Live.bars -= 1
            if _Live.bars <= 0:
                _stop()


def stop_progress() -> None:
    """End the live display now: huggingface_hub leaves some bars to the garbage collector."""
    with _Live.lock:
        _stop()


def _stop() -> None:
    if _Live.progress is not None:
        _Live.progress.stop()
    _Live.progress, _Live.bars = None, 0


@contextmanager
def module_progress(quiet: bool):
    """load's bar over modules on stderr (modules done, MB read, ETA), as a callback(name, done, total, bytes);
    None when quiet. Under --tp only rank 0 draws it."""
    if quiet:
        yield None
        return
    from rich.progress import MofNCompleteColumn, TimeRemainingColumn

    from fp8check.core.errors import printable

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[mb]:.0f} MB"), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("loading", total=None, mb=0.0)

        def update(name: str, done: int, total: int, bytes_read: int) -> None:
            bar.update(task, description=escape(printable(name, 60)) or "done", completed=done, total=total,
                       mb=bytes_read / 1e6)

        yield update
