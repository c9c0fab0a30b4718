"""Run one call per wheel on several processes at once, results in the order asked.

Within a wheel the members stream on threads, but parsing and judging hold the GIL; across wheels
(``audit dist/``, ``conflicts`` on several wheels) separate processes use every core. A single wheel, or
``jobs=1``, runs here, in this process, with nothing started.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

from wheelcheck.errors import BadWheelError
from wheelcheck.wheel.scanner import default_jobs

__all__ = ["map_wheels"]

T = TypeVar("T")
R = TypeVar("R")


def map_wheels(call: Callable[[T], R], items: Sequence[T], jobs: int | None,
               done: Callable[[int, R], None] | None = None) -> list[R]:
    """``[call(item) for item in items]``, on up to ``jobs`` processes (default: one per core).

    ``call`` must be a module-level function and the items and results picklable. ``done(index, result)``
    is called in this process as each result arrives, in order. An exception from a call is raised here,
    the calls after it in ``items`` cancelled where they have not started; a worker that dies (killed, out
    of memory) is a BadWheelError naming the item it was working on.
    """
    workers = min(jobs or default_jobs(), len(items))
    if workers <= 1:
        results = []
        for i, item in enumerate(items):
            results.append(call(item))
            if done:
                done(i, results[-1])
        return results
    import multiprocessing  # here: a single wheel, the common case, never pays for importing them
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # fork on Linux: the workers start with wheelcheck imported (the main thread alone runs here); elsewhere the
    # platform's default (macOS spawns: a forked child there may crash in system libraries)
    method = "fork" if sys.platform.startswith("linux") else None
    i = 0
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method)) as pool:
            futures = [pool.submit(call, item) for item in items]
            for i, future in enumerate(futures):
                try:
                    result = future.result()
                except BaseException:
                    for rest in futures[i + 1:]:
                        rest.cancel()
                    raise
                if done:
                    done(i, result)
            return [f.result() for f in futures]
    except BrokenProcessPool:  # a worker was killed (out of memory, a signal): no error came back to raise
        raise BadWheelError(str(items[i]), "a worker process died while reading it (killed, or out of memory); "
                                           "--jobs 1 reads the wheels in this process") from None
