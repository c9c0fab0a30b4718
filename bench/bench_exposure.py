#!/usr/bin/env python3
"""Time the hygiene analyses on big export tables: a synthetic library with ~400,000 exported symbols
(generated here: assembly linked by gcc) and the largest-export library of each given wheel.

    python bench/bench_exposure.py [--symbols N] [--repeat R] [WHEEL ...]

Prints a table: exported symbols, then best-of-R seconds for the ELF summary (parse), the exposure
analysis, the C++ ABI classification, and a whole `wheelcheck.audit` of a wheel holding the library.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.hygiene_sources import synthetic_exports_asm  # noqa: E402
from tests.fixtures.wheels import build_wheel  # noqa: E402
from timing import best  # noqa: E402
from wheelcheck import audit  # noqa: E402
from wheelcheck.audit.cxxabi import classify  # noqa: E402
from wheelcheck.audit.exposure import exposure_of  # noqa: E402
from wheelcheck.elf.elf_summary import summarize  # noqa: E402



def synthetic(n: int, workdir: Path) -> Path:
    # a C++-heavy mix like a statically linked LLVM: 70% llvm::, 10% protobuf, 10% C API, 5% png, rest plain
    asm = workdir / "big.s"
    asm.write_text(synthetic_exports_asm({"llvm": n * 70 // 100, "protobuf": n // 10, "png": n // 20,
                                          "plain": n - n * 70 // 100 - n // 10 - n // 20}))
    out = workdir / "libbig.so"
    subprocess.run(["gcc", "-shared", "-nostdlib", str(asm), "-o", str(out)], check=True)
    return out


def largest_export_member(wheel: Path) -> tuple[str, bytes]:
    with zipfile.ZipFile(wheel) as zf:
        best_name, best_count, best_data = None, -1, b""
        for info in zf.infolist():
            if not info.filename.endswith((".so",)) and ".so." not in info.filename:
                continue
            data = zf.read(info)
            if data[:4] != b"\x7fELF":
                continue
            count = exposure_of(summarize(data, info.filename)).exports
            if count > best_count:
                best_name, best_count, best_data = info.filename, count, data
        return best_name, best_data


def row(label: str, path_in_wheel: str, data: bytes, repeat: int, workdir: Path) -> str:
    t_parse, info = best(lambda: summarize(data, path_in_wheel), repeat)
    t_exp, exp = best(lambda: exposure_of(info), repeat)
    t_abi, abi = best(lambda: classify(info), repeat)
    lib = workdir / "member.so"
    lib.write_bytes(data)
    wheel = build_wheel(workdir, "benchwheel", "1.0", "py3-none-linux_x86_64", {f"pkg/{path_in_wheel.rsplit('/', 1)[-1]}": lib})
    t_audit, _ = best(lambda: audit(wheel), repeat)
    fams = ", ".join(f"{k} {v}" for k, v in sorted(exp.families.items(), key=lambda kv: -kv[1]))
    return (f"| {label} | {exp.exports} | {t_parse:.3f} | {t_exp:.3f} | {t_abi:.3f} | {t_audit:.3f} | "
            f"{abi.abi} | {fams} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="*", type=Path)
    parser.add_argument("--symbols", type=int, default=400_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| library | exports | summary s | exposure s | C++ ABI s | whole audit s | C++ ABI | families |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lib = synthetic(args.symbols, work)
        print(row(f"synthetic {args.symbols}", "libbig.so", lib.read_bytes(), args.repeat, work))
        for wheel in args.wheels:
            name, data = largest_export_member(wheel)
            print(row(f"{wheel.name.split('-')[0]}: {name.rsplit('/', 1)[-1]}", name, data, args.repeat, work))


if __name__ == "__main__":
    main()
