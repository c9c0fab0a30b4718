"""Timing and tables shared by the benchmark scripts."""

from __future__ import annotations

import os
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


class TreeRss:
    """The peak of the memory of process ``pid`` and all its descendants together, sampled every ``interval``
    seconds on a thread (``os.wait4``'s ru_maxrss is the largest single process, not the sum of a parent and the
    children it forks). Each process counts its proportional set size (PSS: a page a forked child still shares
    with its parent counts half to each), so the sum is the memory the tree really holds. Linux only."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        import threading

        self.peak = 0  # bytes
        self._pid, self._interval = pid, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> float:
        """Stop sampling; the peak in MB."""
        self._stop.set()
        self._thread.join()
        return self.peak / (1 << 20)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(self._rss(p) for p in self._tree(self._pid)))
            self._stop.wait(self._interval)

    def _tree(self, pid: int) -> list[int]:
        out, todo = [], [pid]
        while todo:
            p = todo.pop()
            out.append(p)
            try:
                for task in os.listdir(f"/proc/{p}/task"):
                    with open(f"/proc/{p}/task/{task}/children") as f:
                        todo += [int(c) for c in f.read().split()]
            except OSError:
                continue  # it ended meanwhile
        return out

    def _rss(self, pid: int) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        return int(line.split()[1]) * 1024
        except (OSError, IndexError, ValueError):
            pass
        return 0
