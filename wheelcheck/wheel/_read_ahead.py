"""Run an iterator on a thread of its own, a few items ahead of its consumer.

Inflating (zlib) and hashing (hashlib) both release the GIL, so a member inflated on one thread while the
consumer hashes and parses the previous piece on another keeps two cores busy within one process.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["ahead"]

T = TypeVar("T")
_DONE = object()


def ahead(items: Iterable[T], depth: int = 4) -> Iterator[T]:
    """Yield ``items``, produced on another thread at most ``depth`` items ahead (bounded memory).

    An exception in the producer is raised here, where the item would have come. If the consumer stops
    early (an exception, or closing this generator), the producer stops at its next item.
    """
    channel: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if not _put(channel, (item, None), stop):
                    return
            _put(channel, (_DONE, None), stop)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            _put(channel, (_DONE, exc), stop)

    thread = threading.Thread(target=produce, name="wheelcheck-inflate", daemon=True)
    thread.start()
    try:
        while True:
            item, error = channel.get()
            if item is _DONE:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        thread.join()


def _put(channel: queue.Queue, entry: tuple, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            channel.put(entry, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False
