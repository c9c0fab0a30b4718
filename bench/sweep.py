#!/usr/bin/env python3
"""A sweep: real wheels no row of the corpus holds yet, fetched, judged by auditwheel and wheelcheck, and
written as rows for corpus/differential.tsv.

    python bench/sweep.py fetch NAME PLAN     # the newest matching wheel per plan line, one pip download at a time
    python bench/sweep.py run NAME            # auditwheel (answer cached in corpus/auditwheel/), then wheelcheck
    python bench/sweep.py rows NAME [--ranks TSV] >> corpus/differential.tsv
    python bench/differential.py --wheels ~/.cache/wheelcheck-sweep-NAME --listing <those rows>

PLAN has one project a line, then its builds: `PROJECT SPEC [SPEC ...]`, `#` starts a comment. A SPEC is
alternatives joined by `|`, each `LIBC:ARCH[:PYVERS[:ABIS]]`: `gnu:x86_64`, `musl:aarch64`,
`gnu:x86_64:3.14:cp314t`. PYVERS (comma-separated) are tried in order, 3.12, 3.13, 3.11 ... 3.6 by default,
with ABIS (default cpXY, abi3 and none); the first wheel found wins. A wheel the corpus already lists, one
fetched before or one over 150 MB is not kept; an `any` wheel is kept only if it holds an ELF file.

Wheels go to ~/.cache/wheelcheck-sweep-NAME, results to $SWEEP_WORK (default /tmp/wheelcheck-sweep-NAME):
results.jsonl, one line per wheel (both tools' exit status and time, auditwheel's tag and error, wheelcheck's
peak RSS and stderr). `run` may go on while `fetch` does: each run judges the wheels not judged yet. A row's
why column names the project's download rank (with --ranks, a TSV of name and
rank_among_15000_most_downloaded) or "long tail", what the wheel is, and the sweep.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from differential import auditwheel_answer  # noqa: E402

DEFAULT_PYVERS = ["3.12", "3.13", "3.11", "3.10", "3.9", "3.8", "3.7", "3.6"]
LARGEST = 150 * 1024 * 1024
ARCH = re.compile(r"(x86_64|aarch64|i686|ppc64le|s390x|armv7l|riscv64|loongarch64)$")


def wheel_dir(name: str) -> Path:
    return Path.home() / ".cache" / f"wheelcheck-sweep-{name}"


def work_dir(name: str) -> Path:
    return Path(os.environ.get("SWEEP_WORK", f"/tmp/wheelcheck-sweep-{name}"))


def known_wheels() -> set[str]:
    known = set()
    for listing in ("corpus/differential.tsv", "corpus/dev-wheels.tsv"):
        for line in (ROOT / listing).read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                known.add(line.split("\t")[0])
    return known


def platforms(libc: str, arch: str) -> list[str]:
    if libc == "musl":
        return [f"musllinux_1_{minor}_{arch}" for minor in (2, 1)]
    return ([f"manylinux_2_{minor}_{arch}" for minor in range(39, 4, -1)]
            + [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}", f"linux_{arch}"])


def default_abis(pyver: str) -> list[str]:
    nodot = pyver.replace(".", "")
    return [f"cp{nodot}m" if pyver in ("3.6", "3.7") else f"cp{nodot}", "abi3", "none"]


def pip_download(project: str, libc: str, arch: str, pyver: str, abis: list[str], dest: Path) -> list[str]:
    command = [sys.executable, "-m", "pip", "download", "--isolated", "--no-deps", "--only-binary=:all:",
               "--python-version", pyver, "--implementation", "cp", "-d", str(dest)]
    for abi in abis:
        command += ["--abi", abi]
    for platform in platforms(libc, arch):
        command += ["--platform", platform]
    return command + [project]


def fetch_one(project: str, spec: str, out: Path, known: set[str]) -> str:
    """The first wheel an alternative of SPEC finds, kept in OUT: its name, or why none was kept."""
    result = "NONE"
    for alternative in spec.split("|"):
        libc, arch, *rest = alternative.split(":")
        pyvers = rest[0].split(",") if rest else DEFAULT_PYVERS
        for pyver in pyvers:
            abis = rest[1].split(",") if len(rest) > 1 else default_abis(pyver)
            with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as empty:
                proc = subprocess.run(pip_download(project, libc, arch, pyver, abis, Path(tmp)), cwd=empty,
                                      capture_output=True, text=True, timeout=900)
                wheels = sorted(Path(tmp).glob("*.whl"))
                if not wheels:
                    result = "NONE " + (proc.stderr.strip().splitlines() or [""])[0][:100]
                    continue
                wheel = wheels[0]
                if wheel.name in known:
                    return "KNOWN " + wheel.name
                if (out / wheel.name).exists():
                    return "DUP " + wheel.name
                if wheel.stat().st_size > LARGEST:
                    return f"BIG {wheel.stat().st_size} {wheel.name}"
                shutil.move(str(wheel), out / wheel.name)
                return wheel.name
    return result


def fetch(name: str, plan: Path) -> None:
    out = wheel_dir(name)
    out.mkdir(parents=True, exist_ok=True)
    known = known_wheels()
    for line in plan.read_text(encoding="utf-8").splitlines():
        words = line.split("#", 1)[0].split()
        for spec in words[1:]:
            print(words[0], spec, fetch_one(words[0], spec, out, known), flush=True)


def has_elf(path: Path) -> bool:
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.file_size >= 4 and not info.is_dir():
                with archive.open(info) as member:
                    if member.read(4) == b"\x7fELF":
                        return True
    return False


def run(name: str) -> None:
    """Both tools on each wheel not judged yet; a wheel without an ELF file moves to no-elf/."""
    work = work_dir(name)
    work.mkdir(parents=True, exist_ok=True)
    results, timing = work / "results.jsonl", work / "time.txt"
    done = set()
    if results.exists():
        done = {json.loads(line)["wheel"] for line in results.read_text().splitlines() if line.strip()}
    for wheel in sorted(wheel_dir(name).glob("*.whl")):
        if wheel.name in done:
            continue
        if not has_elf(wheel):
            (wheel.parent / "no-elf").mkdir(exist_ok=True)
            wheel.rename(wheel.parent / "no-elf" / wheel.name)
            print("no ELF:", wheel.name, flush=True)
            continue
        aw = auditwheel_answer(wheel.name, wheel.parent, refresh=True) or {}
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", str(timing), "wheelcheck", "audit", "--format",
                               "json", str(wheel)], capture_output=True, text=True, cwd=work)
        seconds, rss = timing.read_text().split()[-2:]
        try:
            json.loads(proc.stdout)
            json_ok = True
        except json.JSONDecodeError:
            json_ok = False
        row = {"wheel": wheel.name, "size": wheel.stat().st_size, "aw_exit": aw.get("exit"),
               "aw_seconds": aw.get("seconds"), "aw_error": aw.get("error"),
               "aw_tag": (aw.get("show") or {}).get("overall_tag"), "wc_exit": proc.returncode,
               "wc_seconds": float(seconds), "wc_rss_kb": int(rss), "wc_stderr": proc.stderr, "wc_json_ok": json_ok}
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(wheel.name, "auditwheel", row["aw_exit"], row["aw_tag"], "wheelcheck", proc.returncode, seconds, rss,
              "STDERR" if proc.stderr.strip() else "", flush=True)


def normalized(project: str) -> str:
    return re.sub(r"[-_.]+", "-", project).lower()


def corpus_row(wheel: Path, name: str, ranks: dict[str, str]) -> str:
    parts = wheel.name[:-4].split("-")
    plat, abi = parts[-1], parts[-2]
    found = ARCH.search(plat.split(".")[0])
    kind = (found.group(1) if found else "any") + (" musl" if "musllinux" in plat else "")
    project = normalized(parts[0])
    why = [f"rank {ranks[project]}" if project in ranks else "long tail"]
    why.append("any wheel carrying ELF files" if plat == "any" else
               "py3-none (executable or ctypes library)" if abi == "none" else abi)
    why += [f"manylinux{legacy} tag" for legacy in re.findall(r"manylinux(1|2010)_", plat)[:1]]
    why += re.findall(r"musllinux_1_\d", plat)[:1]
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    return f"{wheel.name}\tsha256:{digest}\t{kind}\t{', '.join(why)} (sweep {name})"


def rows(name: str, ranks_file: Path | None) -> None:
    ranks = {}
    if ranks_file is not None:
        with ranks_file.open(encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row.get("rank_among_15000_most_downloaded"):
                    ranks[normalized(row["name"])] = row["rank_among_15000_most_downloaded"]
    results = work_dir(name) / "results.jsonl"
    for line in results.read_text().splitlines():
        if line.strip():
            print(corpus_row(wheel_dir(name) / json.loads(line)["wheel"], name, ranks))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for command in ("fetch", "run", "rows"):
        sub = commands.add_parser(command)
        sub.add_argument("name", help="the sweep's name: its wheels' and results' directories are named after it")
        if command == "fetch":
            sub.add_argument("plan", type=Path)
        if command == "rows":
            sub.add_argument("--ranks", type=Path, help="TSV with name and rank_among_15000_most_downloaded")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        fetch(args.name, args.plan)
    elif args.command == "run":
        run(args.name)
    else:
        rows(args.name, args.ranks)


if __name__ == "__main__":
    main()
