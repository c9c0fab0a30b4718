"""Run a census on Dask distributed: schedule one task per wheel, collect rows as they finish, write batches.

Dask does the engine's work: placing tasks on workers, and when a worker dies, rescheduling the tasks it
held (``distributed.scheduler.allowed-failures`` times; beyond that the wheel is a row with the error).
The client keeps a bounded window of tasks in flight, so a census of a whole index never holds every
future, and it writes rows in batches so a stopped run keeps what it finished.

A stopped run leaves no scratch: on a local cluster the downloads go to one directory the run makes and
removes when it ends, whether it finishes, raises, is interrupted, or gets SIGTERM (what a process killed
outright leaves, ``census/scratch.py`` removes later).
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from distributed import Client, LocalCluster, as_completed

from wheelcheck.census.rows import AuditRows, error_rows
from wheelcheck.census.sources import WheelSource
from wheelcheck.census.tables import ParquetSink, read_done
from wheelcheck.census.scratch import make_scratch
from wheelcheck.census.worker import audit_source, identity_of

__all__ = ["CensusOptions", "CensusResult", "CensusProgress", "run_census"]


@dataclass(frozen=True)
class CensusOptions:
    out_dir: Path
    scheduler: str | None = None  # tcp://host:8786; None starts a local cluster
    workers: int | None = None  # local cluster size (default: the CPU count)
    memory_limit: str = "2GiB"  # per local worker: Dask pauses, then restarts, a worker above it
    timeout: float = 600.0  # seconds for one wheel: its download and its audit
    audit_memory: int | None = None  # bytes of address space for one wheel's auditing child (None: no cap)
    batch_size: int = 200
    window: int | None = None  # tasks in flight (default: 4 per worker thread)
    audit: dict[str, Any] = field(default_factory=dict)  # plat, policy_file, exclude, cxx_abi, fail_on, isa_check


@dataclass
class CensusResult:
    total: int  # wheels named by the sources
    skipped: int  # already in the output
    audited: int = 0
    errors: int = 0
    failed: int = 0  # audited and failing the policy
    seconds: float = 0.0
    bytes: int = 0


# progress(result so far): called when the work starts and after every finished wheel
CensusProgress = Callable[[CensusResult], None]


def _client(options: CensusOptions, stack: ExitStack) -> Client:
    if options.scheduler:
        client = Client(options.scheduler)
    else:
        cluster = LocalCluster(n_workers=options.workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, memory_limit=options.memory_limit, dashboard_address=":0")
        stack.callback(cluster.close)
        client = Client(cluster)
    stack.callback(client.close)
    return client


def run_census(sources: Iterable[WheelSource], options: CensusOptions,
               progress: CensusProgress | None = None) -> CensusResult:
    """Audit every source not yet in ``options.out_dir`` and write their rows there."""
    sources = list(sources)
    done = read_done(options.out_dir)
    todo = [s for s in sources if s.key not in done.keys]
    result = CensusResult(total=len(sources), skipped=len(sources) - len(todo))
    sink = ParquetSink(options.out_dir, batch_size=options.batch_size)
    if not todo:
        return result
    started = time.perf_counter()
    with _sigterm_unwinds(), ExitStack() as stack:
        # a local cluster's workers share this machine: their downloads go to one directory, removed last
        scratch = None if options.scheduler else make_scratch()
        if scratch is not None:
            stack.callback(shutil.rmtree, scratch, ignore_errors=True)
        client = _client(options, stack)
        stack.callback(sink.flush)
        threads = sum(client.nthreads().values()) or 1
        pending = iter(todo)
        numbers = itertools.count()
        by_key: dict[object, WheelSource] = {}  # by future key
        # on this client's loop: as_completed() alone takes the default client's, which is the caller's own
        # inside `with Client(...)`; a result re-fetched after its worker died then waited on the wrong loop
        running = as_completed(loop=client.loop)

        def submit_next() -> None:
            source = next(pending, None)
            if source is not None:
                future = client.submit(audit_source, source, options.audit, options.timeout, options.audit_memory,
                                       scratch, key=f"census-{next(numbers)}-{time.monotonic_ns()}", pure=False)
                by_key[future.key] = source
                running.add(future)

        for _ in range(options.window or 4 * threads):
            submit_next()
        if progress:
            progress(result)  # the bar appears when the work starts, not at the first finished wheel
        for future in running:
            source = by_key.pop(future.key)
            try:
                rows = future.result()
            except Exception as exc:  # noqa: BLE001 - KilledWorker and the like: the wheel's row says so
                rows = _lost(source, exc)
            future.release()
            sink.add(_once_per_hash(rows, done.hashes))
            _count(result, rows)
            result.seconds = time.perf_counter() - started
            if progress:
                progress(result)
            submit_next()
    result.seconds = time.perf_counter() - started
    return result


def _once_per_hash(rows: AuditRows, audited: set[str]) -> AuditRows:
    """The rows to write: a wheel's findings and ELF rows belong to its bytes, so when the same bytes were
    audited before (under another URL or name) only the wheel row is written; the tables join on sha256."""
    sha256 = rows["wheels"][0].get("sha256")
    if not sha256 or rows["wheels"][0].get("error") is not None:
        return rows
    if sha256 in audited:
        return {**rows, "findings": [], "elf_files": []}
    audited.add(sha256)
    return rows


class _Terminated(BaseException):
    """SIGTERM, raised in the census so that it unwinds (cluster closed, scratch removed) before the end."""


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Within: SIGTERM raises _Terminated, when the process has no handler of its own for it and this is the
    main thread (the only one Python runs handlers in). Once unwound, the signal is sent again with its
    default action: the process ends as SIGTERM would have ended it, having cleaned up first."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return

    def unwind(_signum: int, _frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleaning short
        raise _Terminated

    signal.signal(signal.SIGTERM, unwind)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _lost(source: WheelSource, exc: Exception) -> AuditRows:
    identity = {**identity_of(source), "audited_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    return error_rows(identity, f"{source.filename}: not audited: {type(exc).__name__}: {str(exc)[:300]}")


def _count(result: CensusResult, rows: AuditRows) -> None:
    for row in rows["wheels"]:
        result.audited += 1
        result.bytes += row.get("size") or 0
        if row.get("error"):
            result.errors += 1
        elif row.get("passed") is False:
            result.failed += 1
