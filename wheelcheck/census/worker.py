"""What a Dask worker does with one wheel: fetch it (a URL is streamed to the worker's disk, hashed on the
way, and deleted after), audit it in a child process with a time limit, return its rows.

Memory stays bounded: the download moves in 1 MiB chunks, the audit reads the wheel through the scanner's
bounded reads, and the child's memory is returned to the system when it exits. Disk and time are bounded
too: a download stops past the size the index declares (or ``WHEEL_MAX_BYTES`` when it declares none), and
one deadline, the census's ``timeout``, covers the download and the audit together.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from typing import Any

from wheelcheck._version import __version__
from wheelcheck.census.fetch import FetchError, TooLarge, fetch, origin_of
from wheelcheck.census.rows import AuditRows, error_rows
from wheelcheck.census.scratch import make_scratch
from wheelcheck.census.sources import WheelSource, is_url
from wheelcheck.wheel.record import file_sha256

__all__ = ["WHEEL_MAX_BYTES", "audit_source", "identity_of"]

WHEEL_MAX_BYTES = 4 << 30  # a download's cap when its index declares no size


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def identity_of(source: WheelSource) -> dict[str, Any]:
    """The columns every row of the wheel starts from; sha256 and size are of bytes the census read."""
    return {"sha256": source.sha256, "declared_sha256": source.declared_sha256, "source": source.location,
            "filename": source.filename, "size": source.size, "audit_seconds": None, "audited_at": None,
            "wheelcheck_version": __version__}


def _wheel_file(directory: str, filename: str) -> str:
    """The scratch path of the download, under the wheel's own name (the auditor reads its tags from it)."""
    name = os.path.basename(filename)
    if name in ("", ".", "..") or "\x00" in name or len(name.encode()) > 255:
        raise FetchError(filename, "not a file name to save the wheel under")
    return os.path.join(directory, name)


def _download(source: WheelSource, directory: str, seconds: float, max_bytes: int) -> tuple[str, str, int]:
    """Stream the source's URL into ``directory``: (path, sha256, size). FetchError past ``seconds``, past the
    declared size (or ``max_bytes``), or off the source's origins."""
    cap = max_bytes if source.declared_size is None else min(source.declared_size, max_bytes)
    digest = hashlib.sha256()
    path = _wheel_file(directory, source.filename)
    with open(path, "xb") as out:
        def write(chunk: bytes) -> None:
            digest.update(chunk)
            out.write(chunk)

        try:
            fetched = fetch(source.location, source.origins or (origin_of(source.location),), seconds=seconds,
                            max_bytes=cap, write=write)
        except TooLarge:
            if source.declared_size is None or source.declared_size > max_bytes:
                raise FetchError(source.location, f"larger than {max_bytes} bytes, the census's cap") from None
            raise FetchError(source.location, f"larger than the {cap} bytes the index declares") from None
    return path, digest.hexdigest(), fetched.size


def _claims_differ(source: WheelSource, sha256: str, size: int) -> str | None:
    if source.declared_sha256 and sha256 != source.declared_sha256:
        return f"sha256 {sha256!r} differs from the index's {source.declared_sha256!r}"
    if source.declared_size is not None and size != source.declared_size:
        return f"{size} bytes, not the {source.declared_size} the index declares"
    return None


def _run_child(path: str, identity: dict[str, Any], options: dict[str, Any], seconds: float, timeout: float,
               memory: int | None) -> AuditRows:
    request = json.dumps({"path": path, "identity": identity, "options": options, "memory": memory})
    try:
        done = subprocess.run([sys.executable, "-m", "wheelcheck.census.audit_child"], input=request,
                              capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        return error_rows(identity, f"{identity['filename']}: audit timed out after {timeout:g} s")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit status {done.returncode}"
        return error_rows(identity, f"{identity['filename']}: auditor crashed ({how}): {last[:300]}")
    return json.loads(done.stdout)


def _fetch_and_audit(source: WheelSource, identity: dict[str, Any], directory: str, options: dict[str, Any],
                     timeout: float, memory: int | None, max_bytes: int) -> AuditRows:
    deadline = time.monotonic() + timeout
    path = source.location
    if is_url(source.location):
        try:
            path, sha256, size = _download(source, directory, timeout, max_bytes)
        except FetchError as exc:
            return error_rows(identity, f"{source.location}: download failed ({exc.problem})")
        except OSError as exc:  # the scratch file: a full disk, a name the file system refuses
            return error_rows(identity, f"{source.location}: download failed ({exc.strerror or exc})")
        identity.update(sha256=sha256, size=size)  # the bytes fetched, whatever the page claimed
        mismatch = _claims_differ(source, sha256, size)
        if mismatch:
            return error_rows(identity, f"{source.location}: {mismatch}")
    else:
        identity["sha256"] = identity["sha256"] or file_sha256(path)
        identity["size"] = identity["size"] if identity["size"] is not None else os.path.getsize(path)
    left = deadline - time.monotonic()
    if left <= 0:
        return error_rows(identity, f"{identity['filename']}: audit timed out after {timeout:g} s")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = _run_child(path, identity, options, left, timeout, memory)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the child's CPU time: exact with one thread per worker (the census's default), a mix otherwise
    cpu = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 4)
    for row in rows["wheels"]:
        row["audit_cpu_seconds"] = cpu
    return rows


def audit_source(source: WheelSource, options: dict[str, Any], timeout: float = 600.0, memory: int | None = None,
                 scratch: str | None = None, max_bytes: int = WHEEL_MAX_BYTES) -> AuditRows:
    """Audit one wheel and return its rows; every failure (a problem found in its index, download, bad wheel,
    crash, time-out) is a row.

    ``timeout`` covers the download and the audit together. ``memory`` caps the auditing child's address
    space in bytes: a wheel that needs more is a row whose error says the auditor crashed (MemoryError), and
    the worker goes on. The download goes to a directory made for it in ``scratch`` (default: the system's
    temporary directory) and removed after."""
    started = time.perf_counter()
    identity = identity_of(source)
    if source.problem:
        rows = error_rows(identity, source.problem)
    else:
        directory = make_scratch(scratch)
        try:
            rows = _fetch_and_audit(source, identity, directory, options, timeout, memory, max_bytes)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    seconds = round(time.perf_counter() - started, 4)
    stamp = _now()
    for row in rows["wheels"]:
        row.update(audit_seconds=seconds, audited_at=stamp)
    return rows
