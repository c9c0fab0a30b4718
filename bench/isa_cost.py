#!/usr/bin/env python3
"""What reading the x86-64 level from the instructions costs, and what it finds: a table, not a test.

    python bench/isa_cost.py [--runs N] WHEEL...

Each wheel is audited (`wheelcheck audit --format json`, default jobs) with the instruction scan and without it
(the same command with elf_summary's code plan emptied), N times each, the best time kept. Per wheel: both times,
the ratio, the code bytes walked of the code in all, and the files whose instructions need x86-64-v2 or above
(how many of those a CPU check guards). Run it with nothing else running: times vary by about 30 % here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

WITHOUT = ("import sys, wheelcheck.elf.elf_summary as s; s.plan_slices = lambda *a, **k: []; "
           "from wheelcheck.cli import main; sys.argv = ['wheelcheck', *sys.argv[1:]]; main()")
WITH = "import sys; from wheelcheck.cli import main; sys.argv = ['wheelcheck', *sys.argv[1:]]; main()"


def timed(code: str, wheel: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, "audit", "--format", "json", str(wheel)],
                          capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - started
    return seconds, json.loads(proc.stdout)["wheels"][0]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("wheels", nargs="+", type=Path)
    args = parser.parse_args(argv)
    print(f"{'wheel':<48}{'without s':>10}{'with s':>9}{'ratio':>7}{'walked MB':>11}{'code MB':>9}"
          f"{'v2+':>5}{'guarded':>9}  levels")
    for wheel in args.wheels:
        without = min(timed(WITHOUT, wheel)[0] for _ in range(args.runs))
        runs = [timed(WITH, wheel) for _ in range(args.runs)]
        best, report = min(runs, key=lambda r: r[0])
        scans = [f["isa_code"] for f in report.get("files", ()) if f.get("isa_code")]
        above = [s for s in scans if s["level"] > 1]
        levels = {level: sum(s["level"] == level for s in scans) for level in (1, 2, 3, 4)}
        print(f"{wheel.name[:47]:<48}{without:>10.2f}{best:>9.2f}{best / without:>7.2f}"
              f"{sum(s['scanned_bytes'] for s in scans) / 1e6:>11.1f}{sum(s['code_bytes'] for s in scans) / 1e6:>9.1f}"
              f"{len(above):>5}{sum(bool(s['guard']) for s in above):>9}  "
              + " ".join(f"v{level}:{n}" for level, n in levels.items() if n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
