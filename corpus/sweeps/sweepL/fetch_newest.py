#!/usr/bin/env python3
"""Sweep L: fetch the newest release's wheel of a project for a given interpreter/platform with pip download.

usage: fetch_newest.py OUTDIR PROJECT SPEC [SPEC...]
SPEC: alternatives separated by |, each pyver:abis:libc:arch, e.g. 3.14:cp314t:gnu:x86_64 or 3.14:cp314,abi3:musl:aarch64
Prints one line per spec: PROJECT SPEC FILE|- (a wheel already in the corpus listings is removed).
"""
import subprocess
import sys
import tempfile
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
known = set()
for f in ("corpus/differential.tsv", "corpus/dev-wheels.tsv"):
    for line in (ROOT / f).read_text().splitlines():
        if line and not line.startswith("#"):
            known.add(line.split("\t")[0])

def platforms(libc, arch):
    if libc == "musl":
        return [f"musllinux_1_{m}_{arch}" for m in (2, 1)]
    out = [f"manylinux_2_{m}_{arch}" for m in range(39, 4, -1)]
    out += [f"manylinux2014_{arch}", f"manylinux2010_{arch}", f"manylinux1_{arch}"]
    return out


out = Path(sys.argv[1])
project = sys.argv[2]


def fetch(spec):
    pyver, abis, libc, arch = spec.split(":")
    tmp = Path(tempfile.mkdtemp(dir="/tmp/sweepL-dl"))
    cmd = ["pip", "download", "--isolated", "--no-deps", "--only-binary=:all:", "--python-version", pyver,
           "--implementation", "cp", "-d", str(tmp)]
    for a in abis.split(","):
        cmd += ["--abi", a]
    for p in platforms(libc, arch):
        cmd += ["--platform", p]
    cmd.append(project)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd="/tmp/sweepL-run/empty")
    files = list(tmp.glob("*.whl"))
    result = "-"
    if files:
        f = files[0]
        if f.name in known:
            result = "KNOWN " + f.name
        elif (out / f.name).exists():
            result = "DUP " + f.name
        elif f.stat().st_size > 150 * 1024 * 1024:
            result = f"BIG {f.stat().st_size} " + f.name
        else:
            shutil.move(str(f), out / f.name)
            result = f.name
    else:
        result = "NONE " + (proc.stderr.strip().splitlines() or [""])[0][:100]
    shutil.rmtree(tmp, ignore_errors=True)
    return result

for alternatives in sys.argv[3:]:
    for spec in alternatives.split("|"):
        result = fetch(spec)
        if not result.startswith("NONE"):
            break
    print(project, spec, result, flush=True)
