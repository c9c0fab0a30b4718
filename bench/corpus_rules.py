#!/usr/bin/env python3
"""Every wheel of the differential, judged once: what the whole-wheel and Python-ABI rules say, and how long the
default text report is. A table, not a test; the corpus is too big to keep, so it may be fetched as it goes.

    python bench/corpus_rules.py [--listing corpus/differential.tsv] [--wheels DIR ...] [--fetch]
                                 [--results FILE.jsonl] [--summary-only]

A wheel found in one of the --wheels directories (default: $WHEELCHECK_DIFFERENTIAL or
~/.cache/wheelcheck-differential) is audited where it is. With --fetch the others are downloaded from the package
index (the file the listing pins, its sha256 checked) a few at a time into a scratch directory, audited and
deleted, so the whole corpus never sits on disk. Each wheel is one `wheelcheck audit --format json --report
text:FILE` run: the JSON gives the findings, FILE the default report exactly as a terminal would show it.

Results go to --results (default: /tmp/wheelcheck-corpus-rules.jsonl), one line per wheel; a re-run judges only
the wheels not in it yet. The summary: per rule, errors, warnings, infos and wheels; every error with its wheel,
file and message (each to be checked by hand: the member's suffix, the symbol in CPython's manifest, the RECORD
row, the header bytes); the longest default reports; and the wheels that were bad input or could not be had.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "corpus"))
from fetch import rows as read_listing  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402
from rule_counts import RULES  # noqa: E402

LISTING = ROOT / "corpus" / "differential.tsv"
SIMPLE = "https://pypi.org/simple/{}/"
AHEAD = 6  # wheels fetched ahead of the audit: bounds the scratch directory
LONGEST = 10


def fetch(filename: str, sha256: str | None, into: Path) -> Path:
    """The pinned file from the index's simple JSON API, its hash checked."""
    request = urllib.request.Request(SIMPLE.format(canonicalize_name(filename.split("-")[0])),
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as page:
        files = json.load(page)["files"]
    entry = next((f for f in files if f["filename"] == filename), None)
    if entry is None:
        raise OSError("not on the index any more")
    target = into / filename
    digest = hashlib.sha256()
    with urllib.request.urlopen(entry["url"], timeout=600) as src, open(target, "wb") as out:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != sha256:
        target.unlink()
        raise OSError(f"sha256 {digest.hexdigest()} is not the pinned {sha256}")
    return target


def judge(wheel: Path, scratch: Path) -> dict:
    text_file = scratch / (wheel.name + ".txt")
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wheelcheck", "audit", "--format", "json", "--report",
                           f"text:{text_file}", str(wheel)], capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - started
    try:
        report = json.loads(proc.stdout)["wheels"][0]
    except (ValueError, KeyError, IndexError):
        return {"wheel": wheel.name, "error": proc.stderr.strip()[-500:] or f"exit {proc.returncode}"}
    lines = text_file.read_text(encoding="utf-8").splitlines() if text_file.exists() else []
    text_file.unlink(missing_ok=True)
    scans = [f["isa_code"] for f in report.get("files", ()) if f.get("isa_code")]
    return {"wheel": wheel.name, "error": report.get("error"), "exit": proc.returncode, "seconds": round(seconds, 2),
            "lines": len(lines), "passed": report.get("passed"),
            "isa": {"files": len(scans), "above": sum(s["level"] > 1 for s in scans),
                    "guarded": sum(s["level"] > 1 and bool(s["guard"]) for s in scans),
                    "level": max((s["level"] for s in scans), default=None)},
            "findings": [[f["rule"], f["severity"], f["file"], f["message"]] for f in report.get("findings", ())
                         if f["rule"] in RULES]}


def run(rows: list[tuple[str, str]], dirs: list[Path], do_fetch: bool, results: Path) -> None:
    done = set()
    if results.exists():
        done = {json.loads(line)["wheel"] for line in results.read_text().splitlines() if line.strip()}
    todo = [(name, digest) for name, digest in rows if name not in done]
    local = {name: d / name for name, _ in todo for d in dirs if (d / name).is_file()}
    scratch = Path(tempfile.mkdtemp(prefix="wheelcheck-corpus-rules-"))
    ready: queue.Queue = queue.Queue(maxsize=AHEAD)

    def producer() -> None:
        for name, digest in todo:
            if name in local:
                ready.put((name, local[name], None, False))
            elif do_fetch:
                try:
                    ready.put((name, fetch(name, digest, scratch), None, True))
                except OSError as exc:
                    ready.put((name, None, f"not fetched: {exc}", False))
            else:
                ready.put((name, None, "not in the --wheels directories (use --fetch)", False))
        ready.put(None)

    threading.Thread(target=producer, daemon=True).start()
    count = 0
    try:
        with results.open("a", encoding="utf-8") as out:
            while (item := ready.get()) is not None:
                name, path, problem, fetched = item
                row = {"wheel": name, "missing": problem} if path is None else judge(path, scratch)
                if fetched:
                    path.unlink(missing_ok=True)
                out.write(json.dumps(row) + "\n")
                out.flush()
                count += 1
                if count % 50 == 0:
                    print(f"{count}/{len(todo)} judged", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def summary(results: Path) -> str:
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    counts: dict[str, Counter] = defaultdict(Counter)
    wheels_with: dict[str, set] = defaultdict(set)
    errors, bad, missing = [], [], []
    judged = [r for r in rows if "missing" not in r]
    for r in rows:
        if "missing" in r:
            missing.append((r["wheel"], r["missing"]))
            continue
        if r.get("error"):
            bad.append((r["wheel"], r["error"]))
            continue
        for rule, severity, file, message in r["findings"]:
            counts[rule][severity] += 1
            wheels_with[rule].add(r["wheel"])
            if severity == "error":
                errors.append((r["wheel"], rule, file, message))
    out = [f"{len(rows)} wheels: {len(judged) - len(bad)} judged, {len(bad)} bad input, {len(missing)} not had",
           f"{'rule':<24}{'errors':>8}{'warnings':>10}{'infos':>8}{'wheels':>8}"]
    for rule in RULES:
        c = counts[rule]
        out.append(f"{rule:<24}{c['error']:>8}{c['warning']:>10}{c['info']:>8}{len(wheels_with[rule]):>8}")
    out += [f"ERROR {rule}: {name}: {file or '(the wheel)'}: {message}" for name, rule, file, message in errors]
    isa = [r["isa"] for r in judged if not r.get("error") and r.get("isa", {}).get("files")]
    if isa:
        above = [i for i in isa if i["above"]]
        out.append(f"x86-64 level read from the instructions: {len(isa)} wheels with x86-64 code; "
                   f"{len(above)} need more than the baseline in some file "
                   f"({sum(i['above'] > i['guarded'] for i in above)} with a file no CPU check in it guards); by the "
                   "highest level: "
                   + ", ".join(f"v{lv} {sum(i['level'] == lv for i in isa)}" for lv in (1, 2, 3, 4)))
        out.append(f"  files: {sum(i['files'] for i in isa)} with x86-64 code, {sum(i['above'] for i in isa)} above "
                   f"the baseline, {sum(i['guarded'] for i in isa)} of those behind a CPU check")
    sized = sorted((r for r in judged if not r.get("error")), key=lambda r: -r["lines"])
    if sized:
        out.append(f"default text report: longest {sized[0]['lines']} lines, median "
                   f"{sized[len(sized) // 2]['lines']}; over 60 lines: {sum(r['lines'] > 60 for r in sized)}")
        out += [f"  {r['lines']:>4}  {r['wheel']}" for r in sized[:LONGEST]]
    out += [f"BAD INPUT {name}: {error}" for name, error in bad]
    out += [f"NOT HAD {name}: {why}" for name, why in missing]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listing", type=Path, default=LISTING)
    parser.add_argument("--wheels", type=Path, action="append")
    parser.add_argument("--fetch", action="store_true")
    parser.add_argument("--results", type=Path, default=Path(tempfile.gettempdir()) / "wheelcheck-corpus-rules.jsonl")
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args(argv)
    dirs = args.wheels or [Path(os.environ.get("WHEELCHECK_DIFFERENTIAL",
                                               Path.home() / ".cache" / "wheelcheck-differential"))]
    if not args.summary_only:
        run(read_listing(args.listing), dirs, args.fetch, args.results)
    sys.stdout.write(summary(args.results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
