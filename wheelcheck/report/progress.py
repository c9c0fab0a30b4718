"""A progress bar on a terminal for long audits (and, later, repairs): one bar per wheel, on stderr.

The library reports progress through a callback, ``progress(wheel filename, bytes done, bytes total)``,
and never draws anything; this is the CLI's drawing of it. The bar is transient: it is erased when the
work ends, so what stays on the screen is the report alone.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import TaskID

__all__ = ["terminal_progress", "may_style"]

WheelProgress = Callable[[str, int, int], None]


def may_style(stream: IO) -> bool:
    """Might rich treat ``stream`` as a terminal? It is one, or the environment forces rich's hand
    (FORCE_COLOR, TTY_COMPATIBLE): then rich decides; otherwise output is plain and rich is not loaded."""
    if "FORCE_COLOR" in os.environ or "TTY_COMPATIBLE" in os.environ:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


@contextmanager
def terminal_progress(enabled: bool) -> Iterator[WheelProgress | None]:
    """Yield a progress callback drawing on stderr, or None when ``enabled`` is false or stderr is not
    a terminal (piped output, CI logs): then nothing extra is written anywhere."""
    if not enabled or not may_style(sys.stderr):
        yield None
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from wheelcheck.report.escaping import text_line

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                   console=console, transient=True)
    tasks: dict[str, TaskID] = {}

    def update(wheel: str, done: int, total: int) -> None:
        if wheel not in tasks:
            # a description is rich markup: a file name's [link=...] is shown, not obeyed
            tasks[wheel] = bar.add_task(f"reading {escape(text_line(wheel))}", total=total or 1)
        bar.update(tasks[wheel], completed=done if total else 1)

    with bar:
        yield update
