#!/usr/bin/env python3
"""Per-wheel hygiene table over the corpus: C++ ABI verdict, top exposure, run-time loaded libraries.

    python bench/corpus_hygiene.py [WHEEL_OR_DIR ...] [--findings]

Prints, per wheel: audit time, the wheel's C++ ABI, the file exporting the most symbols (and its known
families), the GNU_UNIQUE count, dlopen candidates by status, and the hygiene findings by rule.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from wheelcheck.api import audit

DEFAULT_CORPUS = Path.home() / ".cache" / "wheelcheck-corpus"
CORE_RULES = {"symbol-version", "external-library", "blacklisted-symbol", "libpython", "isa-level", "pyfpe-jbuf",
              "ucs2", "elf-in-purelib", "record-hash", "wrong-architecture", "wrong-libc", "musl-version"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(DEFAULT_CORPUS)])
    parser.add_argument("--findings", action="store_true", help="also print every hygiene finding")
    args = parser.parse_args()
    wheels = []
    for p in map(Path, args.paths):
        wheels += sorted(p.glob("*.whl")) if p.is_dir() else [p]
    print("| wheel | s | tag | C++ ABI (files old/new/mixed) | most exports (file: n, families) | "
          "GNU_UNIQUE | dlopen candidates | hygiene findings |")
    print("|---|---|---|---|---|---|---|---|")
    for wheel in wheels:
        start = time.perf_counter()
        (w,) = audit(wheel).wheels
        took = time.perf_counter() - start
        abis = Counter((f.cxx_abi or {}).get("abi") for f in w.files)
        top = max(w.files, key=lambda f: f.exported_symbols, default=None)
        fams = ", ".join(f"{k} {v}" for k, v in sorted((top.exposure or {}).get("families", {}).items(),
                                                        key=lambda kv: -kv[1])) if top else ""
        most = f"{top.path.rsplit('/', 1)[-1]}: {top.exported_symbols}" + (f" ({fams})" if fams else "") if top else ""
        unique = sum((f.exposure or {}).get("gnu_unique", 0) for f in w.files)
        runtime = Counter(r["status"] for f in w.files for r in f.runtime_libraries)
        unguaranteed = sorted({r["soname"] for f in w.files for r in f.runtime_libraries
                               if r["status"] in ("unguaranteed", "driver")})
        rt = ", ".join(f"{k} {v}" for k, v in sorted(runtime.items()))
        if unguaranteed:
            rt += ": " + ", ".join(unguaranteed)
        rules = Counter(f"{f.rule}/{f.severity[0]}" for f in w.findings if f.rule not in CORE_RULES)
        print(f"| {wheel.name.split('-')[0]}-{wheel.name.split('-')[1]} {w.arch}/{w.libc} | {took:.2f} | "
              f"{w.deserved_tag} | {w.cxx_abi} ({abis.get('old', 0)}/{abis.get('new', 0)}/{abis.get('mixed', 0)}) | "
              f"{most} | {unique} | {rt or '-'} | "
              f"{', '.join(f'{k} ×{v}' for k, v in sorted(rules.items())) or '-'} |")
        if args.findings:
            for f in w.findings:
                if f.rule not in CORE_RULES:
                    print(f"    {f.severity} {f.rule} {f.file}: {f.message[:300]}")


if __name__ == "__main__":
    main()
