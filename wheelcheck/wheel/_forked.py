"""Run a call in a forked child process and take its result back.

The child starts as a copy of this process (the wheel already open, every module imported), so only the
result crosses back, pickled through a pipe. Parsing and judging hold the GIL; a child is how a second core
parses too. Fork only: a spawned child would import everything again and reopen the wheel.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Forked", "ChildDied", "can_fork"]

T = TypeVar("T")


class ChildDied(Exception):
    """The child ended without sending a result (killed by a signal, out of memory)."""


def can_fork() -> bool:
    """Fork is there, and this process is not itself a multiprocessing worker: the cores are already shared
    out across wheels there (``map_wheels``), and a worker must not multiply its share."""
    return "fork" in multiprocessing.get_all_start_methods() and multiprocessing.parent_process() is None


class Forked(Generic[T]):
    """``call()`` running in a child process from now; ``result()`` returns its value or raises its exception."""

    def __init__(self, call: Callable[[], T]) -> None:
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
