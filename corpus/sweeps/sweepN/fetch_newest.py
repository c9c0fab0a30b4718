#!/usr/bin/env python3
"""Sweep N: fetch the newest release's Linux binary wheel of a project with pip download, one request at a time.

usage: fetch_newest.py OUTDIR PROJECT SPEC [SPEC...]
SPEC: alternatives separated by |, each LIBC:ARCH[:PYVERS], e.g. gnu:x86_64, musl:aarch64, gnu:x86_64:3.7.
For each alternative, the interpreters 3.12, 3.13, 3.11 ... 3.6 (or PYVERS, comma-separated) are tried in
that order with ABIs cpXY, abi3 and none; the first wheel found wins. Only wheels with a Linux platform tag, or
`any` wheels (kept only if they hold an ELF file, checked later by sweep_run_one.py), are kept.
Prints one line per spec: PROJECT SPEC FILE|KNOWN|DUP|BIG|PURE|NONE.
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
known = set()
for f in ("corpus/differential.tsv", "corpus/dev-wheels.tsv"):
    p = ROOT / f
    if p.exists():
        for line in p.read_text().splitlines():
            if line and not line.startswith("#"):
                known.add(line.split("\t")[0])

DEFAULT_PYVERS = ["3.12", "3.13", "3.11", "3.10", "3.9", "3.8", "3.7", "3.6"]


def platforms(libc, arch):
    if libc == "musl":
        return [f"musllinux_1_{m}_{arch}" for m in (2, 1)]
    out = [f"manylinux_2_{m}_{arch}" for m in range(39, 4, -1)]
    out += [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}", f"linux_{arch}"]
    return out


def abis(pyver):
    nodot = pyver.replace(".", "")
    first = [f"cp{nodot}m"] if pyver in ("3.6", "3.7") else [f"cp{nodot}"]
    return first + ["abi3", "none"]


def fetch(out, project, libc, arch, pyver):
    tmp = Path(tempfile.mkdtemp(dir="/tmp/sweepN-dl"))
    cmd = ["pip", "download", "--isolated", "--no-deps", "--only-binary=:all:", "--python-version", pyver,
           "--implementation", "cp", "-d", str(tmp)]
    for a in abis(pyver):
        cmd += ["--abi", a]
    for p in platforms(libc, arch):
        cmd += ["--platform", p]
    cmd.append(project)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd="/tmp/sweepN-run/empty", timeout=900)
    files = list(tmp.glob("*.whl"))
    if files:
        f = files[0]
        if f.name in known:
            result = "KNOWN " + f.name
        elif (out / f.name).exists():
            result = "DUP " + f.name
        elif f.stat().st_size > 150 * 1024 * 1024:
            result = f"BIG {f.stat().st_size} " + f.name
        elif f.name.endswith("-none-any.whl") and pyver != "3.6":
            shutil.move(str(f), out / f.name)   # may carry ELF files; sweep_run_one.py drops it otherwise
            result = f.name
        else:
            shutil.move(str(f), out / f.name)
            result = f.name
    else:
        result = "NONE " + (proc.stderr.strip().splitlines() or [""])[0][:100]
    shutil.rmtree(tmp, ignore_errors=True)
    return result


def main():
    out = Path(sys.argv[1])
    project = sys.argv[2]
    for alternatives in sys.argv[3:]:
        result, spec = "NONE", ""
        for spec in alternatives.split("|"):
            parts = spec.split(":")
            libc, arch = parts[0], parts[1]
            pyvers = parts[2].split(",") if len(parts) > 2 else DEFAULT_PYVERS
            for pyver in pyvers:
                result = fetch(out, project, libc, arch, pyver)
                if not result.startswith("NONE"):
                    break
            if not result.startswith("NONE"):
                break
        print(project, spec, result, flush=True)


main()
