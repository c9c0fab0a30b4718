#!/usr/bin/env python3
"""Sweep N: corpus rows (file name, sha256, architecture (and musl), why) for the wheels in results.jsonl.

usage: make_rows.py RESULTS.jsonl WHEEL_DIR   (the project's download rank comes from pypi.tsv's rank column)
"""
import csv
import hashlib
import json
import re
import sys
from pathlib import Path

PYPI = Path("/work/.library/env/packages/pypi.tsv")


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


ranks = {}
if PYPI.exists():
    with PYPI.open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["rank_among_15000_most_downloaded"]:
                ranks[norm(row["name"])] = row["rank_among_15000_most_downloaded"]

results, wheel_dir = Path(sys.argv[1]), Path(sys.argv[2])
for line in results.read_text().splitlines():
    name = json.loads(line)["wheel"]
    digest = hashlib.sha256((wheel_dir / name).read_bytes()).hexdigest()
    parts = name[:-4].split("-")
    plat, abi = parts[-1], parts[-2]
    found = re.search(r"(x86_64|aarch64|i686|ppc64le|s390x|armv7l|riscv64|loongarch64)$", plat.split(".")[0])
    arch = found.group(1) if found else "any"
    kind = arch + (" musl" if "musllinux" in plat else "")
    why = [f"rank {ranks[norm(parts[0])]}" if norm(parts[0]) in ranks else "long tail"]
    if plat == "any":
        why.append("any wheel carrying ELF files")
    elif abi == "none":
        why.append("py3-none (executable or ctypes library)")
    else:
        why.append(abi)
    legacy = re.findall(r"manylinux(1|2010)_", plat)
    if legacy:
        why.append(f"manylinux{legacy[0]} tag")
    if "musllinux" in plat:
        why.append(re.search(r"musllinux_1_\d", plat).group(0))
    print(f"{name}\tsha256:{digest}\t{kind}\t{', '.join(why)} (sweep N)")
