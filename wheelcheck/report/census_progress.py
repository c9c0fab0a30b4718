"""The census's progress line on a terminal: wheels done / total, rate, errors, ETA (on stderr).

The census calls ``progress(result)`` after every wheel with an object carrying ``total``, ``skipped``,
``audited`` and ``errors``; this draws it. Nothing is drawn when stderr is not a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

__all__ = ["census_progress"]


@contextmanager
def census_progress(enabled: bool) -> Iterator[Callable[[Any], None] | None]:
    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    bar = Progress(TextColumn("census"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[rate]:.2f} wheels/s  {task.fields[errors]} errors"),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True)
    task = None

    def update(result: Any) -> None:
        nonlocal task
        todo = result.total - result.skipped
        if task is None:
            task = bar.add_task("census", total=todo or 1, rate=0.0, errors=0)
        bar.update(task, completed=result.audited, errors=result.errors,
                   rate=result.audited / result.seconds if result.seconds else 0.0)

    with bar:
        yield update
