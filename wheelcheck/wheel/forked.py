"""Run calls in forked child processes and take their results back.

A child starts as a copy of this process (the wheel already open, its summaries in memory, every module
imported), so only results cross back, pickled through a pipe. Parsing and judging hold the GIL; children
are how the other cores parse and judge too. Fork only: a spawned child would import everything again and
need its input pickled.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Generic, TypeVar

__all__ = ["Forked", "ChildDied", "GroupFailed", "can_fork", "balanced_groups", "fork_map", "fork_groups",
           "MEMORY_BUDGET", "resident_bytes"]

# What an audit of the largest wheels aims to hold, its children included: a child that would copy enough of
# this process's objects to pass it is not started (the work is done here instead, a little later)
MEMORY_BUDGET = 256 << 20

T = TypeVar("T")
R = TypeVar("R")


class ChildDied(Exception):
    """The child ended without sending a result (killed by a signal, out of memory). From ``fork_map``:
    ``item`` is the index of the first item the child had."""

    item: int | None = None


def can_fork() -> bool:
    """This is Linux (macOS lists fork too, but a forked child there may crash in system libraries, which is
    why Python spawns there), and this process is not itself a multiprocessing worker: the cores are already
    shared out across wheels there (``map_wheels``), and a worker must not multiply its share."""
    if not sys.platform.startswith("linux"):
        return False
    import multiprocessing  # here: most wheels are too small ever to fork, and never pay for importing it

    return multiprocessing.parent_process() is None


def resident_bytes() -> int | None:
    """This process's resident memory now (None where /proc does not say)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def balanced_groups(weights: Sequence[int], count: int) -> list[list[int]]:
    """Indices of ``weights`` in up to ``count`` groups of about equal total weight (heaviest first to the
    lightest group), each group in ascending order, the heaviest group first; no empty group."""
    groups: list[list[int]] = [[] for _ in range(max(1, count))]
    loads = [0] * len(groups)
    for i in sorted(range(len(weights)), key=lambda i: -weights[i]):
        lightest = loads.index(min(loads))
        groups[lightest].append(i)
        loads[lightest] += weights[i]
    return [sorted(group) for group, _load in sorted(zip(groups, loads), key=lambda pair: -pair[1]) if group]


def fork_map(call: Callable[[T], R], items: Sequence[T], weights: Sequence[int], jobs: int) -> list[R]:
    """``[call(item) for item in items]``, the items split by weight between this process (the heaviest group)
    and up to ``jobs - 1`` forked children. An exception is raised as the one-by-one loop would raise it (the
    first in item order); a child that dies is ``ChildDied``, in the place of its group's first item."""
    groups = balanced_groups(weights, jobs) if jobs > 1 and len(items) > 1 and can_fork() else []
    if len(groups) < 2:
        return [call(item) for item in items]
    return fork_groups(lambda group, here: _group(call, items, group), groups, len(items))


def fork_groups(run: Callable[[list[int], bool], list[R]], groups: list[list[int]], count: int,
                arrived: Callable[[list[int]], None] | None = None) -> list[R]:
    """The ``count`` results of ``run(group, here)`` for each group of indices, by index: ``groups[0]`` run here
    (``here`` true), each other one at the same time in a forked child.

    A child's results are taken as soon as it sends them (on a thread here; ``arrived(group)`` is called
    then), so that it ends and frees its memory rather than wait, holding them twice (objects and pickle), for
    this process's own group. ``run`` raises ``GroupFailed`` for its group's first failure: the error raised
    is the first by index, as running the indices one after another would raise it; a child that dies is
    ``ChildDied``, in the place of its group's first index."""
    from concurrent.futures import ThreadPoolExecutor

    def collect(group: list[int], child: Forked) -> list[R]:
        try:
            return child.result()
        finally:
            if arrived is not None:
                arrived(group)

    children = [Forked(partial(run, group, False)) for group in groups[1:]]
    results: list = [None] * count
    failures: list[tuple[int, BaseException]] = []
    try:
        with ThreadPoolExecutor(max_workers=max(1, len(children)), thread_name_prefix="wheelcheck-collect") as pool:
            arriving = [pool.submit(collect, group, child) for group, child in zip(groups[1:], children)]
            for group, outcome in zip(groups, [partial(run, groups[0], True)] + [f.result for f in arriving]):
                try:
                    for i, result in zip(group, outcome()):
                        results[i] = result
                except GroupFailed as failed:
                    failures.append((group[failed.position], failed.error))
                except ChildDied as died:
                    died.item = group[0]
                    failures.append((group[0], died))
    finally:
        for child in children:
            child.stop()
    if failures:
        raise min(failures, key=lambda pair: pair[0])[1]
    return results


class GroupFailed(Exception):
    """The item at ``position`` of a group (or of any list worked through in order) raised ``error``."""

    def __init__(self, position: int, error: BaseException) -> None:
        super().__init__(position, error)
        self.position, self.error = position, error


def _group(call: Callable[[T], R], items: Sequence[T], group: list[int]) -> list[R]:
    out = []
    for position, i in enumerate(group):
        try:
            out.append(call(items[i]))
        except Exception as exc:
            raise GroupFailed(position, exc) from None
    return out


class Forked(Generic[T]):
    """``call()`` running in a child process from now; ``result()`` returns its value or raises its exception."""

    def __init__(self, call: Callable[[], T]) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        # the target is not pickled under fork: the child runs this very closure
        self._process = context.Process(target=_run, args=(call, send), name="wheelcheck-child", daemon=True)
        self._process.start()
        send.close()  # the child holds the only writing end: its death is EOF here

    def result(self) -> T:
        try:
            ok, value = self._receive.recv()
        except EOFError:
            self._process.join()
            raise ChildDied(f"exit code {self._process.exitcode}") from None
        finally:
            self._receive.close()
        self._process.join()
        if ok:
            return value
        raise value

    def stop(self) -> None:
        """End the child now (its result is no longer wanted)."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._receive.close()


def _run(call: Callable[[], object], send) -> None:
    try:
        outcome = (True, call())
    except BaseException as exc:  # noqa: BLE001 - raised again in the parent, by result()
        outcome = (False, exc)
    try:
        send.send(outcome)
    except Exception as exc:  # noqa: BLE001 - an exception (or value) that does not pickle: say so, as text
        send.send((False, RuntimeError(f"{type(outcome[1]).__name__} from a child process, not picklable: {exc}")))
    send.close()
    os._exit(0)  # no atexit handlers, no flushing of buffers copied from the parent
