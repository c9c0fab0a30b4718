#!/usr/bin/env python3
"""What some rules say on a set of wheels: a table, not a test.

    python bench/rule_counts.py [--rules a,b,...] WHEEL...

For each rule (default: the whole-wheel and Python-ABI rules), how many findings of each severity and on how
many wheels; then every error with its wheel, file and message, to be checked by hand (the member's suffix, the
symbol in CPython's manifest, the RECORD row, the zip's header bytes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

RULES = ("zip-layout", "wheel-metadata", "record-hash", "record-hash-hex", "platform-tag-refused", "wheel-size",
         "libc-vendored", "claim-without-policy", "extension-suffix", "abi3-symbol", "abi3-version",
         "free-threaded-build", "vendored-license", "isa-instructions")


def findings(wheel: Path) -> tuple[dict, str | None]:
    proc = subprocess.run([sys.executable, "-m", "wheelcheck", "audit", "--format", "json", str(wheel)],
                          capture_output=True, text=True, timeout=1800)
    try:
        report = json.loads(proc.stdout)["wheels"][0]
    except (ValueError, KeyError, IndexError):
        return {}, proc.stderr.strip() or "no report"
    return report, report.get("error")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default=",".join(RULES))
    parser.add_argument("wheels", nargs="+", type=Path)
    args = parser.parse_args(argv)
    rules = args.rules.split(",")
    counts: dict[str, Counter] = defaultdict(Counter)
    wheels_with: dict[str, set] = defaultdict(set)
    errors = []
    failed_input = []
    for wheel in args.wheels:
        report, error = findings(wheel)
        if error:
            failed_input.append((wheel.name, error))
            continue
        for f in report["findings"]:
            if f["rule"] in rules:
                counts[f["rule"]][f["severity"]] += 1
                wheels_with[f["rule"]].add(wheel.name)
                if f["severity"] == "error":
                    errors.append((wheel.name, f["rule"], f["file"], f["message"]))
    print(f"{len(args.wheels)} wheels ({len(failed_input)} bad input)")
    print(f"{'rule':<24}{'errors':>8}{'warnings':>10}{'infos':>8}{'wheels':>8}")
    for rule in rules:
        c = counts[rule]
        print(f"{rule:<24}{c['error']:>8}{c['warning']:>10}{c['info']:>8}{len(wheels_with[rule]):>8}")
    for name, rule, file, message in errors:
        print(f"ERROR {rule}: {name}: {file or '(the wheel)'}: {message}")
    for name, error in failed_input:
        print(f"BAD INPUT {name}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
