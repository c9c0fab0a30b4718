"""A progress bar on a terminal for long audits (and, later, repairs): one bar per wheel, on stderr.

The library reports progress through a callback, ``progress(wheel filename, bytes done, bytes total)``,
and never draws anything; this is the CLI's drawing of it. The bar is transient: it is erased when the
work ends, so what stays on the screen is the report alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

__all__ = ["terminal_progress"]

WheelProgress = Callable[[str, int, int], None]


@contextmanager
def terminal_progress(enabled: bool) -> Iterator[WheelProgress | None]:
    """Yield a progress callback drawing on stderr, or None when ``enabled`` is false or stderr is not
    a terminal (piped output, CI logs): then nothing extra is written anywhere."""
    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                   console=console, transient=True)
    tasks: dict[str, TaskID] = {}

    def update(wheel: str, done: int, total: int) -> None:
        if wheel not in tasks:
            tasks[wheel] = bar.add_task(f"reading {wheel}", total=total or 1)
        bar.update(tasks[wheel], completed=done if total else 1)

    with bar:
        yield update
