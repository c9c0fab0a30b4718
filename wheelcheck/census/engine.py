"""Run a census on Dask distributed: schedule one task per wheel, collect rows as they finish, write batches.

Dask does the engine's work: placing tasks on workers, and when a worker dies, rescheduling the tasks it
held (``distributed.scheduler.allowed-failures`` times; beyond that the wheel is a row with the error).
The client keeps a bounded window of tasks in flight, so a census of a whole index never holds every
future, and it writes rows in batches so a stopped run keeps what it finished.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from distributed import Client, LocalCluster, as_completed

from wheelcheck._version import __version__
from wheelcheck.census.rows import error_rows
from wheelcheck.census.sources import WheelSource
from wheelcheck.census.tables import ParquetSink, audited_keys
from wheelcheck.census.worker import audit_source

__all__ = ["CensusOptions", "CensusResult", "CensusProgress", "run_census"]


@dataclass(frozen=True)
class CensusOptions:
    out_dir: Path
    scheduler: str | None = None  # tcp://host:8786; None starts a local cluster
    workers: int | None = None  # local cluster size (default: the CPU count)
    memory_limit: str = "2GiB"  # per local worker: Dask pauses, then restarts, a worker above it
    timeout: float = 600.0  # seconds for one wheel's audit
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


def _client(options: CensusOptions) -> tuple[Client, LocalCluster | None]:
    if options.scheduler:
        return Client(options.scheduler), None
    cluster = LocalCluster(n_workers=options.workers or os.cpu_count() or 1, threads_per_worker=1,
                           processes=True, memory_limit=options.memory_limit, dashboard_address=":0")
    return Client(cluster), cluster


def run_census(sources: Iterable[WheelSource], options: CensusOptions,
               progress: CensusProgress | None = None) -> CensusResult:
    """Audit every source not yet in ``options.out_dir`` and write their rows there."""
    sources = list(sources)
    done = audited_keys(options.out_dir)
    todo = [s for s in sources if s.key not in done and s.location not in done]
    result = CensusResult(total=len(sources), skipped=len(sources) - len(todo))
    sink = ParquetSink(options.out_dir, batch_size=options.batch_size)
    if not todo:
        return result
    started = time.perf_counter()
    client, cluster = _client(options)
    try:
        threads = sum(client.nthreads().values()) or 1
        window = options.window or 4 * threads
        pending = iter(todo)
        by_key: dict[object, WheelSource] = {}  # by future key
        # on this client's loop: as_completed() alone takes the default client's, which is the caller's own
        # inside `with Client(...)`; a result re-fetched after its worker died then waited on the wrong loop
        running = as_completed(loop=client.loop)

        def submit_next() -> None:
            source = next(pending, None)
            if source is not None:
                future = client.submit(audit_source, source, options.audit, options.timeout, options.audit_memory,
                                       key=f"census-{source.key}-{time.monotonic_ns()}", pure=False)
                by_key[future.key] = source
                running.add(future)

        for _ in range(window):
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
            sink.add(rows)
            _count(result, rows)
            result.seconds = time.perf_counter() - started
            if progress:
                progress(result)
            submit_next()
    finally:
        sink.flush()
        client.close()
        if cluster is not None:
            cluster.close()
    result.seconds = time.perf_counter() - started
    return result


def _lost(source: WheelSource, exc: Exception) -> dict:
    identity = {"sha256": source.sha256, "source": source.location, "filename": source.filename,
                "size": source.size, "audit_seconds": None, "wheelcheck_version": __version__,
                "audited_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    return error_rows(identity, f"{source.filename}: not audited: {type(exc).__name__}: {str(exc)[:300]}")


def _count(result: CensusResult, rows: dict) -> None:
    for row in rows["wheels"]:
        result.audited += 1
        result.bytes += row.get("size") or 0
        if row.get("error"):
            result.errors += 1
        elif row.get("passed") is False:
            result.failed += 1
