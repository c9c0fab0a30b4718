#!/usr/bin/env python3
"""A real-wheel sweep (L, N): for each wheel given, auditwheel first (bench/differential.py's auditwheel_answer, cached in
corpus/auditwheel/), then `/usr/bin/time -f '%e %M' wheelcheck audit --format json`; appends one JSON line per
wheel to the results file. A wheel without an ELF member is dropped (moved to DIR/no-elf/).

usage: sweep_run_one.py RESULTS.jsonl WHEEL...   (run from an empty directory; /usr/bin/time writes beside RESULTS)
"""
import json
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from differential import auditwheel_answer  # noqa: E402

def has_elf(path):
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.file_size >= 4 and not info.is_dir():
                with z.open(info) as f:
                    if f.read(4) == b"\x7fELF":
                        return True
    return False

results = Path(sys.argv[1])
timing = results.parent / "time.txt"
done = set()
if results.exists():
    done = {json.loads(line)["wheel"] for line in results.read_text().splitlines() if line.strip()}
for arg in sys.argv[2:]:
    wheel = Path(arg)
    if wheel.name in done:
        continue
    if not has_elf(wheel):
        (wheel.parent / "no-elf").mkdir(exist_ok=True)
        wheel.rename(wheel.parent / "no-elf" / wheel.name)
        print("no ELF:", wheel.name, flush=True)
        continue
    aw = auditwheel_answer(wheel.name, wheel.parent, refresh=True)
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", str(timing), "wheelcheck", "audit",
                           "--format", "json", str(wheel)], capture_output=True, text=True)
    secs, rss = timing.read_text().split()[-2:]
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = None
    row = {"wheel": wheel.name, "size": wheel.stat().st_size, "aw_exit": aw["exit"], "aw_seconds": aw["seconds"],
           "aw_error": aw["error"], "aw_tag": (aw.get("show") or {}).get("overall_tag"),
           "wc_exit": proc.returncode, "wc_seconds": float(secs), "wc_rss_kb": int(rss), "wc_stderr": proc.stderr,
           "wc_json_ok": report is not None}
    with results.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(row["wheel"], "aw", row["aw_exit"], row["aw_tag"], row["aw_seconds"], "wc", row["wc_exit"], secs, rss,
          "STDERR" if proc.stderr.strip() else "", flush=True)
