#!/usr/bin/env python3
"""Where one `wheelcheck audit --jobs 1` spends its time, phase by phase: the profile behind bench_audit.py's table.

    python bench/profile_audit.py WHEEL [--jobs N]

The audit runs in this process, as the CLI runs it (api.audit_wheel), with timers wrapped around the functions
of each phase. With --jobs 1 every phase runs here, so their times add up; the CPU of the threads (the tables
of a large file are read on one of their own while it streams on) is counted where it is spent. Seconds are
wall time of each timed call, summed (overlapping threads may sum past the total); "inflate" counts every
decompress call, the first bytes of each member and the ranges read again included (bench_audit.py prints the
floor to compare with). With --jobs above 1, members summarised in forked children are not seen here: only the
parent's share is listed.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

START = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import wheelcheck.api as api  # noqa: E402
from wheelcheck.audit import file_analyses, verdict  # noqa: E402
from wheelcheck.audit.audit_options import AuditOptions  # noqa: E402
from wheelcheck.elf import elf_summary  # noqa: E402
from wheelcheck.wheel import _zlib, member_stream, scanner, wheel_reader  # noqa: E402

IMPORTED = time.perf_counter()
SPENT: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)
_LOCK = threading.Lock()


def _add(phase: str, seconds: float) -> None:
    with _LOCK:
        SPENT[phase] += seconds
        CALLS[phase] += 1


def timed(owner, name: str, phase: str) -> None:
    """Wrap ``owner.name`` (a function or method) so that its calls add to ``phase``."""
    inner = getattr(owner, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            _add(phase, time.perf_counter() - start)

    setattr(owner, name, wrapper)


class _TimedDecompressor:
    """A decompressor whose decompress calls add to "inflate" (first pass and rereads alike)."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def decompress(self, data, max_length=0):
        start = time.perf_counter()
        try:
            return self._inner.decompress(data, max_length)
        finally:
            _add("inflate", time.perf_counter() - start)

    def copy(self):
        return _TimedDecompressor(self._inner.copy())

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _TimedHash:
    """A hashlib object whose updates add to "hash (RECORD, sha256)"."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def update(self, data) -> None:
        start = time.perf_counter()
        self._inner.update(data)
        _add("hash (RECORD, sha256)", time.perf_counter() - start)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def instrument() -> None:
    make_decompressor = _zlib.decompressobj
    member_stream._zlib.decompressobj = lambda: _TimedDecompressor(make_decompressor())  # type: ignore[attr-defined]
    scanner.hashlib = type("timed_hashlib", (), {  # type: ignore[assignment]
        "new": staticmethod(lambda name: _TimedHash(hashlib.new(name))),
        "sha256": staticmethod(lambda: _TimedHash(hashlib.sha256()))})
    crc32 = _zlib.crc32

    def timed_crc(data, value=0):
        start = time.perf_counter()
        try:
            return crc32(data, value)
        finally:
            _add("CRC-32", time.perf_counter() - start)

    scanner._zlib = type("timed_zlib", (), {"crc32": staticmethod(timed_crc)})  # type: ignore[assignment]
    timed(wheel_reader.WheelReader, "__init__", "open (central directory)")
    timed(wheel_reader.WheelReader, "head", "find ELF members (first bytes)")
    timed(elf_summary._Summary, "passed", "parse as bytes pass (headers, string scans)")
    timed(elf_summary, "_read_dynamic", "dynamic tables (symbols, versions)")
    timed(scanner, "summarize_stream", "summaries in all (stream + parse + tables)")
    timed(api, "analyse_file", "analyses (C++ ABI, exposure)")
    timed(file_analyses, "analyse_files", "analyses (C++ ABI, exposure)")
    timed(verdict, "collect_constraints", "judge: platform constraints")
    timed(api, "assess", "judge in all (analyses not made while reading included)")
    timed(api, "wheel_bill_of_materials", "bill of materials")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    instrument()
    started = time.perf_counter()
    report = api.audit_wheel(args.wheel, AuditOptions(jobs=args.jobs))
    total = time.perf_counter() - started
    if report.error:
        sys.exit(f"profile_audit: {report.error}")
    print(f"{args.wheel.name}: audit {total:.2f} s in this process (--jobs {args.jobs}), "
          f"import {IMPORTED - START:.2f} s before it")
    width = max(map(len, SPENT))
    print(f"| {'phase'.ljust(width)} | seconds | share | calls |")
    print(f"|{'-' * (width + 2)}|---------|-------|-------|")
    for phase, seconds in sorted(SPENT.items(), key=lambda kv: -kv[1]):
        print(f"| {phase.ljust(width)} | {seconds:7.2f} | {seconds / total:5.0%} | {CALLS[phase]:5d} |")


if __name__ == "__main__":
    main()
