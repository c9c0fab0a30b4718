#!/usr/bin/env python3
"""Sweep N: every finding wheelcheck reports on the sweep's wheels, by rule and severity (for spot checks).

usage: findings.py RESULTS.jsonl WHEEL_DIR OUT.jsonl   (one `wheelcheck audit --format json` per wheel)
Writes one JSON line per wheel (file name, verdict, deserved tag, findings as rule/severity/file/message) and
prints a table: rule, severity, number of findings, number of wheels, three example wheels.
"""
import collections
import json
import subprocess
import sys
from pathlib import Path

results, wheel_dir, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
names = [json.loads(line)["wheel"] for line in results.read_text().splitlines() if line.strip()]
table = collections.defaultdict(lambda: [0, set()])
with out.open("w") as f:
    for name in names:
        proc = subprocess.run(["wheelcheck", "audit", "--format", "json", str(wheel_dir / name)],
                              capture_output=True, text=True)
        wheel = json.loads(proc.stdout)["wheels"][0]
        findings = [{k: x[k] for k in ("rule", "severity", "file", "message")} for x in wheel["findings"]]
        f.write(json.dumps({"wheel": name, "passed": wheel["passed"], "deserved": wheel["deserved_tag"],
                            "findings": findings}) + "\n")
        for x in findings:
            entry = table[(x["rule"], x["severity"])]
            entry[0] += 1
            entry[1].add(name)
for (rule, severity), (count, wheels) in sorted(table.items(), key=lambda kv: (kv[0][1], -len(kv[1][1]))):
    print(f"{rule:28} {severity:8} {count:6} findings {len(wheels):4} wheels  e.g. {', '.join(sorted(wheels)[:3])}")
