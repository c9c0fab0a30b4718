#!/usr/bin/env python3
"""How long the audit report of each wheel is, and whether anything is lost: a table, not a test.

    python bench/report_size.py ~/.cache/wheelcheck-bench/torch-*.whl ~/.cache/wheelcheck-bench/tensorflow_cpu-*.whl

Per wheel: findings and ELF files (JSON), groups, lines of the default text report, the line of its first
error (the FAIL reason; '-' when it passes), lines with -v, and whether every finding of the JSON is in the
-v text (each file it names, and its own message or its group's cause).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "wheelcheck", "audit", *args], capture_output=True, text=True,
                          timeout=1800).stdout


def measure(wheel: Path) -> dict:
    doc = json.loads(run(str(wheel), "--format", "json"))["wheels"][0]
    text = run(str(wheel)).splitlines()
    verbose = run(str(wheel), "-v")
    first_error = next((i + 1 for i, line in enumerate(text) if line.startswith("  error ")), None)
    lost = 0
    for group in doc["groups"]:
        for i in group["findings"]:
            f = doc["findings"][i]
            if (f["file"] or "") not in verbose or (f["message"] not in verbose and group["cause"] not in verbose):
                lost += 1
    return {"wheel": wheel.name, "findings": len(doc["findings"]), "files": len(doc["files"]),
            "groups": len(doc["groups"]), "lines": len(text), "fail reason": first_error or "-",
            "-v lines": len(verbose.splitlines()), "lost in -v": lost}


def main(paths: list[str]) -> None:
    rows = [measure(Path(p)) for p in paths]
    if not rows:
        sys.exit(__doc__)
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    print("  ".join(k.ljust(widths[k]) for k in keys))
    for r in rows:
        print("  ".join(str(r[k]).ljust(widths[k]) for k in keys))


if __name__ == "__main__":
    main(sys.argv[1:])
