"""Timing and tables shared by the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best(fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    """The shortest of ``repeat`` timings of ``fn()`` (machines here vary by about ±30 %), and its result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def print_table(cols: list[str], rows: list[list[str]]) -> None:
    """A Markdown table, columns padded to their widest cell."""
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    print(line(cols))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))
