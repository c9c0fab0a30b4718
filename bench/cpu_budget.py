#!/usr/bin/env python3
"""The CPU an audit of a wheel cannot do without, stage by stage, each measured on one thread (process CPU time).

For each wheel: inflating its ELF members (streamed and discarded, as bench_audit.py's floors: with the standard
library's zlib and with zlib-ng, which wheelcheck reads with), their sha256 (RECORD) and CRC-32 (the zip's check),
summarising each file in memory (headers, dynamic tables, string scans: ``summarize``), its per-file analyses (C++
ABI and exposure: ``analyse_file``) and judging the wheel from them (``assess``). Their sum with zlib-ng's inflate,
halved, is the least time two cores could take if every stage overlapped perfectly and nothing else ran (no
start-up, no threads, no process results crossing back): compare it with the floor.

    python bench/cpu_budget.py WHEEL [WHEEL ...]
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import zipfile
from pathlib import Path

from bench_audit import elf_members, inflate_floor, inflated_pieces

from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.file_analyses import analyse_file
from wheelcheck.audit.verdict import assess
from wheelcheck.elf.elf_summary import summarize
from wheelcheck.wheel import _zlib
from wheelcheck.wheel.scanner import scan_wheel


def timed(cpu: dict[str, float], label: str, call, *args):
    """``call(*args)``, its CPU time added to ``cpu[label]``."""
    start = time.process_time()
    result = call(*args)
    cpu[label] += time.process_time() - start
    return result


def budget(wheel: Path) -> dict[str, float]:
    members = elf_members(wheel)
    cpu: dict[str, float] = dict.fromkeys(("inflate (zlib)", "inflate (zlib-ng)", "sha256", "crc32", "summarize",
                                           "analyse_file", "assess"), 0.0)
    cpu["inflate (zlib)"] = inflate_floor(wheel, 1)[2]  # bench_audit.py's floors, measured the same way
    cpu["inflate (zlib-ng)"] = inflate_floor(wheel, 1, _zlib.inflater)[2]
    with open(wheel, "rb", buffering=0) as f:
        fd = f.fileno()
        for info, at in members:
            data = b"".join(inflated_pieces(fd, info, at, _zlib.inflater)) \
                if info.compress_type != zipfile.ZIP_STORED else os.pread(fd, info.file_size, at)
            timed(cpu, "sha256", hashlib.sha256, data)
            timed(cpu, "crc32", _zlib.crc32, data)
            summary = timed(cpu, "summarize", summarize, data, info.filename)
            del data
            timed(cpu, "analyse_file", analyse_file, summary)
    timed(cpu, "assess", assess, scan_wheel(wheel, jobs=1, analyse=analyse_file), AuditOptions(jobs=1))
    return cpu


def main() -> None:
    for name in sys.argv[1:]:
        wheel = Path(name).expanduser()
        cpu = budget(wheel)
        print(f"{wheel.name}")
        for label, seconds in cpu.items():
            print(f"  {label:20s} {seconds:6.2f} s")
        total = sum(seconds for label, seconds in cpu.items() if label != "inflate (zlib)")
        floor = cpu["inflate (zlib)"]
        print(f"  {'sum (with zlib-ng)':20s} {total:6.2f} s; on two cores at best {total / 2:.2f} s: "
              f"{total / 2 / floor:.2f}x the floor ({floor:.2f} s, zlib), "
              f"{total / 2 / cpu['inflate (zlib-ng)']:.2f}x zlib-ng's ({cpu['inflate (zlib-ng)']:.2f} s)")


if __name__ == "__main__":
    main()
