#!/usr/bin/env python3
"""Sweep L: corpus rows (file name, sha256, architecture (and musl), why) for the wheels in results.jsonl."""
import hashlib
import json
import re
import sys
from pathlib import Path

results, wheel_dir = Path(sys.argv[1]), Path(sys.argv[2])
for line in results.read_text().splitlines():
    name = json.loads(line)["wheel"]
    digest = hashlib.sha256((wheel_dir / name).read_bytes()).hexdigest()
    plat = name[:-4].split("-")[-1]
    abi = name[:-4].split("-")[-2]
    found = re.search(r"(x86_64|aarch64|i686|ppc64le|s390x|armv7l|riscv64|loongarch64)$", plat.split(".")[0])
    arch = found.group(1) if found else "any"
    kind = arch + (" musl" if "musllinux" in plat else "")
    why = []
    if abi.endswith("t"):
        why.append(f"free-threaded {abi}")
    elif abi == "abi3":
        why.append("abi3")
    elif plat == "any":
        why.append("py3-none-any wheel carrying ELF files")
    elif abi == "none":
        why.append("py3-none (executable or ctypes library)")
    else:
        why.append(abi)
    newest = max((int(m) for m in re.findall(r"manylinux_2_(\d+)_", plat)), default=0)
    if newest >= 34:
        why.append(f"manylinux_2_{newest} tag")
    if "musllinux_1_2" in plat:
        why.append("musllinux_1_2")
    print(f"{name}\tsha256:{digest}\t{kind}\tnewest release, {', '.join(why)} (sweep L)")
