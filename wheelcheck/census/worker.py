"""What a Dask worker does with one wheel: fetch it (a URL is streamed to the worker's disk, hashed on the
way, and deleted after), audit it in a child process with a time limit, return its rows.

Memory stays bounded: the download moves in 1 MiB chunks, the audit reads the wheel through the scanner's
bounded reads, and the child's memory is returned to the system when it exits.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from typing import Any

from wheelcheck._version import __version__
from wheelcheck.census.rows import AuditRows, error_rows
from wheelcheck.census.sources import WheelSource, is_url
from wheelcheck.wheel.record import file_sha256

__all__ = ["audit_source", "DOWNLOAD_TIMEOUT"]

DOWNLOAD_TIMEOUT = 120  # seconds without progress on a download
CHUNK = 1 << 20


def _download(url: str, directory: str, filename: str) -> tuple[str, str, int]:
    """Stream ``url`` into ``directory`` under the wheel's own file name: (path, sha256, size)."""
    digest = hashlib.sha256()
    size = 0
    request = urllib.request.Request(url, headers={"User-Agent": "wheelcheck-census"})
    path = os.path.join(directory, os.path.basename(filename) or "wheel.whl")
    with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response, open(path, "wb") as out:
        for chunk in iter(lambda: response.read(CHUNK), b""):
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    return path, digest.hexdigest(), size


def _run_child(path: str, identity: dict[str, Any], options: dict[str, Any], timeout: float,
               memory: int | None) -> AuditRows:
    request = json.dumps({"path": path, "identity": identity, "options": options, "memory": memory})
    try:
        done = subprocess.run([sys.executable, "-m", "wheelcheck.census.audit_child"], input=request,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return error_rows(identity, f"{identity['filename']}: audit timed out after {timeout:g} s")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit status {done.returncode}"
        return error_rows(identity, f"{identity['filename']}: auditor crashed ({how}): {last[:300]}")
    return json.loads(done.stdout)


def audit_source(source: WheelSource, options: dict[str, Any], timeout: float = 600.0,
                 memory: int | None = None) -> AuditRows:
    """Audit one wheel and return its rows; every failure (download, bad wheel, crash, time-out) is a row.

    ``memory`` caps the auditing child's address space in bytes: a wheel that needs more is a row whose
    error says the auditor crashed (MemoryError), and the worker goes on."""
    started = time.perf_counter()
    identity: dict[str, Any] = {"sha256": source.sha256, "source": source.location, "filename": source.filename,
                                "size": source.size, "audit_seconds": None, "audited_at": None,
                                "wheelcheck_version": __version__}
    scratch = tempfile.mkdtemp(prefix="wheelcheck-census-")
    try:
        if is_url(source.location):
            try:
                path, sha256, size = _download(source.location, scratch, source.filename)
            except (OSError, ValueError) as exc:
                identity["audited_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
                return error_rows(identity, f"{source.location}: download failed ({exc})")
            if source.sha256 and sha256 != source.sha256:
                identity.update(size=size, audited_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
                return error_rows(identity, f"{source.location}: sha256 {sha256!r} differs from the index's "
                                            f"{source.sha256!r}")
            identity.update(sha256=sha256, size=size)
        else:
            path = source.location
            if identity["sha256"] is None:
                identity["sha256"] = file_sha256(path)
            if identity["size"] is None:
                identity["size"] = os.path.getsize(path)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows = _run_child(path, identity, options, timeout, memory)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # the child's CPU time: exact with one thread per worker (the census's default), a mix otherwise
        cpu = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 4)
        for row in rows["wheels"]:
            row["audit_cpu_seconds"] = cpu
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    seconds = round(time.perf_counter() - started, 4)
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for row in rows["wheels"]:
        row.update(audit_seconds=seconds, audited_at=stamp)
    return rows
