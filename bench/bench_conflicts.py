#!/usr/bin/env python3
"""Time `wheelcheck conflicts` on an environment of torch-sized wheels generated here, and on given wheels.

    python bench/bench_conflicts.py [--symbols N] [--pad-mb M] [--dists D] [--repeat R] [WHEEL ...]

Generates D wheels (default 4), each holding one library with N exported functions (default 250,000,
x86-64 assembly linked by gcc) and M MiB of incompressible data (default 64; torch's libtorch_cpu.so has
~300,000 dynamic symbols in ~500 MB). Neighbouring libraries share LLVM- and protobuf-like C++ names,
one pair a block of plain C names; the rest are their own. Nothing is committed: everything is built in
a temporary directory.

Prints a table, best of R: reading (inflate + ELF summaries), the analysis (symbol index and every rule),
the whole CLI in a subprocess, and the CLI on the same distributions pip-installed in a directory (--env;
only the wheels this interpreter accepts, one version of each).
With WHEEL arguments, the same for them (e.g. the corpus: ~/.cache/wheelcheck-corpus/*.whl).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.hygiene_sources import synthetic_exports_asm  # noqa: E402
from tests.fixtures.wheels import build_wheel  # noqa: E402
from timing import best  # noqa: E402
from wheelcheck.conflicts.find_conflicts import find_conflicts  # noqa: E402
from wheelcheck.conflicts.processes import group_processes  # noqa: E402
from wheelcheck.conflicts.read_distributions import from_wheel  # noqa: E402



def synthetic_library(i: int, n: int, pad_mb: int, workdir: Path) -> Path:
    """Library i: LLVM-like names overlapping library i-1's by a fifth, protobuf-like names shared by all,
    app names of its own; library 1 also shares a block of plain names with library 0."""
    llvm, proto = n * 2 // 5, n // 10
    plain = n - llvm - proto
    asm = synthetic_exports_asm({"llvm": llvm}, start=i * llvm * 4 // 5) \
        + synthetic_exports_asm({"protobuf": proto}) \
        + synthetic_exports_asm({"plain": plain}, start=(0 if i == 1 else 10_000_000 * (i + 1)))
    if pad_mb:
        blob = workdir / f"blob{i}.bin"
        blob.write_bytes(os.urandom(pad_mb << 20))
        asm += f'.section .rodata\n.incbin "{blob}"\n'
    src = workdir / f"lib{i}.s"
    src.write_text(asm)
    out = workdir / f"libbig{i}.so"
    subprocess.run(["gcc", "-shared", "-nostdlib", f"-Wl,-soname,libbig{i}.so", str(src), "-o", str(out)],
                   check=True)
    return out


def synthetic_wheels(dists: int, n: int, pad_mb: int, workdir: Path) -> list[Path]:
    wheels = []
    for i in range(dists):
        lib = synthetic_library(i, n, pad_mb, workdir)
        wheels.append(build_wheel(workdir / "dist", f"big{i}", "1.0", "cp311-cp311-manylinux_2_17_x86_64", {
            f"big{i}/__init__.py": b"", f"big{i}/lib/libbig{i}.so": lib}))
        lib.unlink()
    return wheels


def cli(*args) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wheelcheck", "conflicts", "--format", "json", *map(str, args)],
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    return elapsed, json.loads(proc.stdout)


def install(wheels: list[Path], site: Path) -> int:
    """pip install --target each wheel this interpreter accepts, one version per distribution."""
    names, count = set(), 0
    for wheel in wheels:
        name = wheel.name.split("-")[0].lower()
        if name in names:
            continue
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                               str(site), str(wheel)], capture_output=True)
        if proc.returncode == 0:
            names.add(name)
            count += 1
    return count


def measure(label: str, wheels: list[Path], repeat: int, workdir: Path) -> str:
    t_read, dists = best(lambda: [from_wheel(w) for w in wheels], repeat)
    t_analyse, reports = best(lambda: find_conflicts(group_processes(dists)), repeat)
    t_cli, (_, report) = best(lambda: cli(*wheels), repeat)
    site = workdir / f"site-{label.split()[0]}"
    installed = install(wheels, site)
    t_env, _ = best(lambda: cli("--env", site), repeat)
    exported = sum(r.stats.get("exported_symbols", 0) for r in reports)
    shared = sum(r.stats.get("shared", 0) for r in reports)
    colliding = sum(r.stats.get("colliding", 0) for r in reports)
    size = sum(w.stat().st_size for w in wheels) >> 20
    counts = report["counts"]
    return (f"| {label} | {len(wheels)} | {size} | {exported} | {shared} | {colliding} | {t_read:.2f} | "
            f"{t_analyse:.2f} | {t_cli:.2f} | {t_env:.2f} ({installed} installed) | "
            f"{counts['error']}/{counts['warning']}/{counts['info']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--symbols", type=int, default=250_000, help="exported functions per synthetic library")
    parser.add_argument("--pad-mb", type=int, default=64, help="incompressible MiB per synthetic library")
    parser.add_argument("--dists", type=int, default=4, help="synthetic distributions")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("wheels", nargs="*", type=Path)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; best of {args.repeat}\n")
    print("| set | wheels | MiB | exported symbols | shared names | colliding | read s | analyse s | CLI s | "
          "CLI --env s | error/warning/info |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        wheels = synthetic_wheels(args.dists, args.symbols, args.pad_mb, workdir)
        print(measure(f"synthetic {args.dists} x {args.symbols}", wheels, args.repeat, workdir), flush=True)
        if args.wheels:
            print(measure("given", args.wheels, args.repeat, workdir), flush=True)


if __name__ == "__main__":
    main()
