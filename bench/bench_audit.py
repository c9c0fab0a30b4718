#!/usr/bin/env python3
"""Time `auditwheel show --json` against `wheelcheck audit --format json`, wheel by wheel, in one run.

Prints a table (size, best-of-N wall time of each tool, their ratio, both tags, whether they agree) and,
when /usr/bin/time is present, each tool's peak RSS. Nothing is unpacked by this script.

    python bench/bench_audit.py [WHEEL_OR_DIR ...] [--repeat N] [--auditwheel PATH] [--wheelcheck PATH]

agree: yes - same tag; host - tags differ but auditwheel's answer depends on this host's libraries
(it found an external library here, or lists versioned symbols of a library wheelcheck does not);
known - auditwheel says "not a platform wheel" and wheelcheck says pure or linux_<arch> (documented);
no - anything else.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from packaging.utils import parse_wheel_filename

DEFAULT_CORPUS = Path.home() / ".cache" / "wheelcheck-corpus"
GNU_TIME = "/usr/bin/time"


def find_tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        sys.exit(f"bench_audit: cannot find {name!r}; pass --{name} PATH")
    return found


def wheels_from(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for raw in paths or [str(DEFAULT_CORPUS)]:
        p = Path(raw).expanduser()
        out.extend(sorted(p.glob("*.whl")) if p.is_dir() else [p])
    if not out:
        sys.exit("bench_audit: no wheels given or found")
    return out


def short_name(path: Path) -> str:
    name, version, _, tags = parse_wheel_filename(path.name)
    platform = next(iter(tags)).platform
    arch = re.sub(r"^(?:(?:many|musl)linux_\d+_\d+|manylinux\d+|linux)_", "", platform)
    return f"{name}-{version} {arch}{'-musl' if platform.startswith('musllinux') else ''}"


def run_timed(cmd: list[str], repeat: int, measure_rss: bool) -> tuple[float, int | None, str, int]:
    """Best wall time over `repeat` runs; peak RSS (KiB) and stdout of the fastest run."""
    prefix = [GNU_TIME, "-f", "%M"] if measure_rss else []
    best: tuple[float, int | None, str, int] | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(prefix + cmd, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        rss = None
        if measure_rss:
            last = proc.stderr.strip().rsplit("\n", 1)[-1].strip()
            rss = int(last) if last.isdigit() else None
        if best is None or elapsed < best[0]:
            best = (elapsed, rss, proc.stdout, proc.returncode)
    assert best is not None
    return best


def auditwheel_answer(stdout: str) -> tuple[str, bool, dict]:
    """(tag or "error", whether the error is "not a platform wheel", the JSON) from `auditwheel show --json`."""
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return "error", False, {}
    if "error" in data:
        return "error", ("not look like a platform wheel" in data["error"]), data
    return data.get("overall_tag") or ("pure" if data.get("pure") else "?"), False, data


def wheelcheck_answer(stdout: str) -> tuple[str, dict]:
    try:
        wheel = json.loads(stdout)["wheels"][0]
    except (json.JSONDecodeError, KeyError, IndexError):
        return "error", {}
    if "error" in wheel:
        return "error", wheel
    return wheel["deserved_tag"] or "pure", wheel


def host_dependent(aw: dict, wc: dict) -> bool:
    """auditwheel found an external library on this host, or lists one wheelcheck does not."""
    if any(v is not None for v in aw.get("external_libs", {}).values()):
        return True
    return bool(set(aw.get("versioned_symbols", {})) - set(wc.get("versioned_symbols", {})))


def agreement(aw_tag: str, not_platform: bool, aw: dict, wc_tag: str, wc: dict) -> str:
    if aw_tag == wc_tag:
        return "yes"
    if not_platform and (wc_tag == "pure" or wc_tag.startswith("linux_")):
        return "known"  # documented: pure wheel, or an arch no policy covers
    if aw_tag != "error" and wc_tag != "error" and host_dependent(aw, wc):
        return "host"
    return "no"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheels", nargs="*", help=f"wheel files or directories (default: {DEFAULT_CORPUS})")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool per wheel; the best counts")
    ap.add_argument("--auditwheel", default=None, help="auditwheel executable")
    ap.add_argument("--wheelcheck", default=None, help="wheelcheck executable")
    args = ap.parse_args()
    auditwheel = args.auditwheel or find_tool("auditwheel")
    wheelcheck = args.wheelcheck or find_tool("wheelcheck")
    measure_rss = os.access(GNU_TIME, os.X_OK)

    cols = ["wheel", "MB", "aw s", "wc s", "aw/wc", "auditwheel tag", "wheelcheck tag", "agree"]
    if measure_rss:
        cols += ["aw MB rss", "wc MB rss"]
    rows: list[list[str]] = []
    total_mb = total_aw = total_wc = 0.0
    log_ratios: list[float] = []
    for wheel in wheels_from(args.wheels):
        mb = wheel.stat().st_size / 1e6
        aw_s, aw_rss, aw_out, _ = run_timed([auditwheel, "show", "--json", str(wheel)], args.repeat, measure_rss)
        wc_s, wc_rss, wc_out, _ = run_timed([wheelcheck, "audit", "--format", "json", str(wheel)], args.repeat, measure_rss)
        aw_tag, not_platform, aw = auditwheel_answer(aw_out)
        wc_tag, wc = wheelcheck_answer(wc_out)
        ratio = aw_s / wc_s
        total_mb, total_aw, total_wc = total_mb + mb, total_aw + aw_s, total_wc + wc_s
        log_ratios.append(math.log(ratio))
        row = [short_name(wheel), f"{mb:.1f}", f"{aw_s:.2f}", f"{wc_s:.2f}", f"{ratio:.1f}", aw_tag, wc_tag,
               agreement(aw_tag, not_platform, aw, wc_tag, wc)]
        if measure_rss:
            row += [f"{aw_rss / 1024:.0f}" if aw_rss else "?", f"{wc_rss / 1024:.0f}" if wc_rss else "?"]
        rows.append(row)
        print(" | ".join(row), file=sys.stderr, flush=True)  # progress

    geomean = math.exp(sum(log_ratios) / len(log_ratios))
    total = ["TOTAL", f"{total_mb:.1f}", f"{total_aw:.2f}", f"{total_wc:.2f}", f"{total_aw / total_wc:.1f}",
             f"geomean aw/wc {geomean:.1f}", f"{len(rows)} wheels",
             f"{sum(r[7] == 'yes' for r in rows)} yes"]
    widths = [max(len(c), *(len(r[i]) for r in rows), len(total[i]) if i < len(total) else 0)
              for i, c in enumerate(cols)]
    numeric = {1, 2, 3, 4, 8, 9}

    def fmt(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    print(fmt(cols))
    print(fmt(["-" * w for w in widths]))
    for row in rows:
        print(fmt(row))
    print(fmt(["-" * w for w in widths]))
    print(fmt(total))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
