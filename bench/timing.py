"""Timing shared by the benchmark scripts."""

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
