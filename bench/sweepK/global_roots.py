"""Prototype of the proposed fix for RTLD_GLOBAL liveness: which of a distribution's ELF files are really put in
the global scope? Roots: its shared objects whose file stem (name up to the first '.') is named as a word in a
Python file that uses RTLD_GLOBAL (ctypes.CDLL(<path to libtorch_global_deps>), or an extension module imported
while sys.setdlopenflags(RTLD_GLOBAL) is in force); then their DT_NEEDED closure, resolved by file name in the
site-packages tree (RUNPATH/RPATH $ORIGIN). Usage: python global_roots.py SITE_PACKAGES"""
import csv, os, re, subprocess, sys
from pathlib import Path

site = Path(sys.argv[1])
def needed(path):
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
for info in sorted(site.glob("*.dist-info")):
    rows = [r[0] for r in csv.reader((info / "RECORD").read_text().splitlines()) if r]
    py = [r for r in rows if r.endswith(".py") and "RTLD_GLOBAL" in (site / r).read_text("utf-8", "replace")
          and any("RTLD_GLOBAL" in l and not l.lstrip().startswith("#") for l in (site / r).read_text("utf-8", "replace").splitlines())]
    if not py:
        continue
    sos = [r for r in rows if re.search(r"\.so(\.[\w]+)*$", r)]
    text = "\n".join((site / p).read_text("utf-8", "replace") for p in py)
    roots = [s for s in sos if re.search(r"\b" + re.escape(Path(s).name.split(".")[0]) + r"\b", text)]
    by_name = {Path(s).name: s for s in sos}
    glob, todo = set(), list(roots)
    while todo:
        s = todo.pop()
        if s in glob:
            continue
        glob.add(s)
        todo += [by_name[n] for n in needed(site / s) if n in by_name]
    print(f"{info.name}: RTLD_GLOBAL in {py}; roots {roots}; global closure {sorted(glob)}")
