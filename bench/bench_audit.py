#!/usr/bin/env python3
"""Time and measure `wheelcheck audit` against `auditwheel show` and against the inflate floor, in one run.

For each wheel, one row: auditwheel show; the floor (every ELF member inflated once on one thread by the standard
library's zlib, the bytes discarded: no parse, no hash, no CRC), and the same with zlib-ng ("ng floor", what
wheelcheck inflates with where zlib-ng is installed); wheelcheck audit with its default jobs and with --jobs 1. Times are
best of --repeat; RSS is the peak resident size of each child (os.wait4: the largest of the child and its own
workers), in MB, and "RSS all" the peak of their sum (proportional set sizes, sampled every 50 ms); cpu is the CPU seconds (user +
system) that run used, all its threads and workers together: on a loaded machine the wall times stretch, the
CPU seconds much less. Ratios: aw/wc (how many times faster
than auditwheel), wc/floor and j1/floor (1.00 means "at the floor"; below it, the floor's single thread was
beaten with two), wc/ng floor (the same against zlib-ng's floor), j1/wc (what the default's parallelism buys).

    python bench/bench_audit.py [WHEEL_OR_DIR ...] [--bench-wheels] [--synthetic-gb N] [--directory DIR]
                                [--repeat N] [--skip-auditwheel-over MB]

--bench-wheels adds the benchmark-only wheels of bench/bench-wheels.tsv (tensorflow-cpu, torch: too big for
CI), fetched once into ~/.cache/wheelcheck-bench. --synthetic-gb N adds a wheel built here (and cached
there, never committed) holding one ELF member of N GiB: a real shared object padded after its last segment.
--directory DIR also times `wheelcheck audit DIR` against the sum of its wheels' single-wheel times.
The machine's load average is printed before and after: on shared machines, read the ratios, not the times.
wheelcheck's sources are compiled to bytecode first, as pip does when it installs the wheel (an editable
install under PYTHONDONTWRITEBYTECODE=1 would compile them on every run, about 0.16 s).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

try:  # what wheelcheck inflates with where it is installed (wheelcheck/wheel/_zlib.py): its own floor, beside zlib's
    from zlib_ng import zlib_ng
except ImportError:
    zlib_ng = None

from packaging.utils import parse_wheel_filename
from timing import TreeRss, print_table

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path.home() / ".cache" / "wheelcheck-corpus"
BENCH_CACHE = Path.home() / ".cache" / "wheelcheck-bench"
BENCH_LIST = HERE / "bench-wheels.tsv"


def find_tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        sys.exit(f"bench_audit: cannot find {name!r} beside this Python or on PATH")
    return found


def wheels_from(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw).expanduser()
        out.extend(sorted(p.glob("*.whl")) if p.is_dir() else [p])
    return out


def bench_wheels() -> list[Path]:
    """The benchmark-only wheels, fetched by exact requirement (a local version such as +cpu included, so
    pip can never fall through to another build) and checked against the listed file name."""
    BENCH_CACHE.mkdir(parents=True, exist_ok=True)
    out = []
    for row in csv.reader(io.StringIO(BENCH_LIST.read_text()), delimiter="\t"):
        if not row or row[0].startswith("#"):
            continue
        filename, requirement = row[0], row[1]
        target = BENCH_CACHE / filename
        if not target.exists():
            print(f"fetching {requirement} into {BENCH_CACHE}", file=sys.stderr, flush=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                            "-d", str(BENCH_CACHE), requirement], check=False)
        if not target.exists():
            sys.exit(f"bench_audit: {requirement} did not give {filename}")
        out.append(target)
    return out


def synthetic_wheel(gib: int) -> Path:
    """A wheel holding pkg/libbig.so: a real small shared object, then ``gib`` GiB after its last segment
    (data no segment maps: the loader never reads it, the auditor must still stream and hash it)."""
    target = BENCH_CACHE / f"bigelf-{gib}.0-py3-none-linux_x86_64.whl"
    if target.exists():
        return target
    BENCH_CACHE.mkdir(parents=True, exist_ok=True)
    src = BENCH_CACHE / "bigelf.c"
    src.write_text("int bigelf_value(void) { return 42; }\n")
    lib = BENCH_CACHE / "libbigelf.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-Wl,-soname,libbigelf.so", str(src), "-o", str(lib)],
                   check=True)
    head = lib.read_bytes()
    block = hashlib.shake_256(b"wheelcheck").digest(16 << 10) * 64  # 16 KiB of noise repeated: ~80:1 deflated
    total = len(head) + (gib << 30)
    digest = hashlib.sha256()
    tmp = target.with_suffix(".part")
    print(f"building {target.name} ({total >> 20} MiB member)", file=sys.stderr, flush=True)
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        info = zipfile.ZipInfo("pkg/libbigelf.so", date_time=(2024, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        for attribute in ("_compresslevel", "compress_level"):  # its name before and after Python 3.13
            try:
                setattr(info, attribute, 1)
            except AttributeError:
                pass
        info.external_attr = 0o755 << 16
        with zf.open(info, "w", force_zip64=True) as out:
            for chunk in [head] + [block] * (gib << 10):
                out.write(chunk)
                digest.update(chunk)
        dist = "bigelf-1.0.dist-info"
        row = "pkg/libbigelf.so,sha256=" + _b64(digest.digest()) + f",{total}"
        files = {f"{dist}/METADATA": "Metadata-Version: 2.1\nName: bigelf\nVersion: 1.0\n",
                 f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\n"
                                  "Tag: py3-none-linux_x86_64\n"}
        rows = [row] + [f"{n},sha256={_b64(hashlib.sha256(t.encode()).digest())},{len(t)}" for n, t in files.items()]
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr(f"{dist}/RECORD", "\n".join(rows + [f"{dist}/RECORD,,"]) + "\n")
    tmp.rename(target)
    return target


def _b64(digest: bytes) -> str:
    import base64
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def short_name(path: Path) -> str:
    name, version, _, tags = parse_wheel_filename(path.name)
    platform = next(iter(tags)).platform
    arch = re.sub(r"^(?:(?:many|musl)linux_\d+_\d+|manylinux\d+|linux)_", "", platform)
    return f"{name}-{version} {arch}{'-musl' if platform.startswith('musllinux') else ''}"


def compile_sources() -> None:
    """wheelcheck's modules compiled to bytecode beside them, as an installed wheel has them."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("wheelcheck")
    for location in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(location, quiet=1)


def run_child(cmd: list[str], repeat: int) -> tuple[float, float, str, float, float]:
    """(best wall time, peak RSS in MB of that run, its stdout, its CPU seconds, the peak in MB of the memory of
    the process and its children together) of ``cmd`` run ``repeat`` times. The first is ru_maxrss (the largest
    single process); the second is sampled every 50 ms (timing.TreeRss), so it may miss a shorter peak."""
    best: tuple[float, float, str, float, float] | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        tree = TreeRss(proc.pid)
        out = proc.stdout.read() if proc.stdout else b""
        tree_peak = tree.stop()
        _, _status, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped here, by wait4
        elapsed = time.perf_counter() - start
        if best is None or elapsed < best[0]:
            best = (elapsed, usage.ru_maxrss / 1024, out.decode("utf-8", "replace"), usage.ru_utime + usage.ru_stime,
                    tree_peak)
    assert best is not None
    return best


def elf_members(wheel: Path) -> list[tuple[zipfile.ZipInfo, int]]:
    """(member, offset of its data in the wheel) of each member that starts with the ELF magic."""
    with zipfile.ZipFile(wheel) as zf, open(wheel, "rb", buffering=0) as f:
        fd = f.fileno()
        members = []
        for info in zf.infolist():
            if info.file_size >= 4 and not info.is_dir():
                with zf.open(info) as m:
                    if m.read(4) == b"\x7fELF":
                        members.append(info)
        out = []
        for info in members:
            header = os.pread(fd, 30, info.header_offset)
            out.append((info, info.header_offset + 30 + int.from_bytes(header[26:28], "little")
                        + int.from_bytes(header[28:30], "little")))
    return out


def inflated_pieces(fd: int, info: zipfile.ZipInfo, start: int, inflater=zlib):
    """The member's bytes, inflated by ``inflater`` from the open wheel ``fd`` in pieces of at most 1 MiB (none for a
    stored member: there is nothing to inflate)."""
    if info.compress_type == zipfile.ZIP_STORED:
        return
    d, at, end = inflater.decompressobj(-15), start, start + info.compress_size
    while at < end:
        data = os.pread(fd, min(1 << 16, end - at), at)
        at += len(data)
        while data:
            yield d.decompress(data, 1 << 20)
            data = d.unconsumed_tail


def inflate_floor(wheel: Path, repeat: int, inflater=zlib) -> tuple[float, int, float]:
    """(best time, ELF bytes, its CPU seconds): every member starting with the ELF magic inflated once, one
    thread, by ``inflater`` (the standard library's zlib, or zlib-ng's binding of the same API)."""
    members = elf_members(wheel)
    with open(wheel, "rb", buffering=0) as f:
        fd = f.fileno()
        best, cpu = None, 0.0
        for _ in range(repeat):
            t, c = time.perf_counter(), time.process_time()
            for info, start in members:
                for _piece in inflated_pieces(fd, info, start, inflater):
                    pass
            elapsed = time.perf_counter() - t
            if best is None or elapsed < best:
                best, cpu = elapsed, time.process_time() - c
    return best or 0.0, sum(m.file_size for m, _start in members), cpu


def tags_agree(aw_out: str, wc_out: str) -> str:
    try:
        aw = json.loads(aw_out)
        wc = json.loads(wc_out)["wheels"][0]
    except (ValueError, KeyError, IndexError):
        return "?"
    aw_tag = aw.get("overall_tag") or ("pure" if aw.get("pure") else "error")
    wc_tag = wc.get("deserved_tag") or ("pure" if "error" not in wc else "error")
    return "yes" if aw_tag == wc_tag else f"aw {aw_tag} / wc {wc_tag}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheels", nargs="*", help="wheel files or directories")
    ap.add_argument("--bench-wheels", action="store_true", help="add bench/bench-wheels.tsv (tensorflow, torch)")
    ap.add_argument("--synthetic-gb", type=int, default=0, help="add a wheel with one ELF member of N GiB")
    ap.add_argument("--directory", default=None, help="also time `wheelcheck audit DIR` against its wheels' sum")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool per wheel; the best counts")
    ap.add_argument("--skip-auditwheel-over", type=float, default=1000, help="no auditwheel run above this many MB")
    args = ap.parse_args()
    auditwheel, wheelcheck = find_tool("auditwheel"), find_tool("wheelcheck")
    wheels = wheels_from(args.wheels)
    if args.bench_wheels:
        wheels += bench_wheels()
    if args.synthetic_gb:
        wheels.append(synthetic_wheel(args.synthetic_gb))
    if not wheels and not args.directory:
        sys.exit(f"bench_audit: no wheels (try {DEFAULT_CORPUS} or --bench-wheels)")
    compile_sources()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores",
          flush=True)
    cols = ["wheel", "MB", "ELF MB", "aw s", "floor s", "ng floor s", "wc s", "j1 s", "aw/wc", "wc/floor", "wc/ng floor",
            "j1/floor", "j1/wc",
            "aw RSS", "wc RSS", "wc RSS all", "j1 RSS", "floor cpu", "wc cpu", "j1 cpu", "tags agree"]
    rows = []
    singles: dict[str, float] = {}
    for wheel in wheels:
        mb = wheel.stat().st_size / 1e6
        floor, elf_bytes, floor_cpu = inflate_floor(wheel, args.repeat)
        ng_floor = inflate_floor(wheel, args.repeat, zlib_ng)[0] if zlib_ng is not None else float("nan")
        if mb <= args.skip_auditwheel_over:
            aw_s, aw_rss, aw_out, _, _ = run_child([auditwheel, "show", "--json", str(wheel)], args.repeat)
        else:
            aw_s, aw_rss, aw_out = float("nan"), float("nan"), ""
        wc_s, wc_rss, wc_out, wc_cpu, wc_tree = run_child([wheelcheck, "audit", "--format", "json", str(wheel)],
                                                          args.repeat)
        j1_s, j1_rss, _, j1_cpu, _ = run_child([wheelcheck, "audit", "--format", "json", "--jobs", "1", str(wheel)],
                                            args.repeat)
        singles[wheel.name] = wc_s
        agree = tags_agree(aw_out, wc_out) if aw_out else "-"
        rows.append([short_name(wheel), f"{mb:.1f}", f"{elf_bytes / 1e6:.0f}", f"{aw_s:.2f}", f"{floor:.2f}",
                     f"{ng_floor:.2f}", f"{wc_s:.2f}", f"{j1_s:.2f}", f"{aw_s / wc_s:.1f}",
                     f"{wc_s / floor:.2f}" if floor else "-", f"{wc_s / ng_floor:.2f}" if ng_floor else "-",
                     f"{j1_s / floor:.2f}" if floor else "-", f"{j1_s / wc_s:.2f}", f"{aw_rss:.0f}",
                     f"{wc_rss:.0f}", f"{wc_tree:.0f}", f"{j1_rss:.0f}", f"{floor_cpu:.2f}", f"{wc_cpu:.2f}",
                     f"{j1_cpu:.2f}", agree])
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    if rows:
        print_table(cols, rows)
    if args.directory:
        directory = Path(args.directory).expanduser()
        members = sorted(directory.glob("*.whl"))
        for wheel in members:
            if wheel.name not in singles:
                singles[wheel.name] = run_child([wheelcheck, "audit", "--format", "json", str(wheel)], args.repeat)[0]
        all_s, all_rss, _, _, all_tree = run_child([wheelcheck, "audit", "--format", "json", str(directory)], args.repeat)
        one_s, one_rss, _, _, _ = run_child([wheelcheck, "audit", "--format", "json", "--jobs", "1", str(directory)],
                                      args.repeat)
        total = sum(singles[w.name] for w in members)
        print(f"\naudit {directory} ({len(members)} wheels): {all_s:.2f} s (peak RSS {all_rss:.0f} MB, all "
              f"processes {all_tree:.0f} MB); "
              f"--jobs 1: {one_s:.2f} s; sum of single-wheel runs: {total:.2f} s; sum/dir {total / all_s:.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
