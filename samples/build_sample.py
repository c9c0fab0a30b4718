"""Rebuild the sample wheels: a tiny extension that calls exp2 and log2.

Built with the host gcc against glibc >= 2.29, so the module needs GLIBC_2.29 and deserves manylinux_2_31 at
best. Two wheels hold it: tagged linux_x86_64, as a build leaves it before its repair (the index refuses that
tag: an audit fails it, a repair retags it), and tagged manylinux_2_31_x86_64, the tag it deserves, which the
README audits. Run: python samples/build_sample.py (``--retag`` only makes the second from the first).
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME, VERSION, TAG = "demo_ext", "1.0", "cp311-cp311-linux_x86_64"
DESERVED = "cp311-cp311-manylinux_2_31_x86_64"
SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

static PyObject *powers(PyObject *self, PyObject *arg) {
    double x = PyFloat_AsDouble(arg);
    return Py_BuildValue("(dd)", exp2(x), log2(x));
}
static PyMethodDef methods[] = {{"powers", powers, METH_O, "exp2(x), log2(x)"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_demo", NULL, -1, methods};
PyMODINIT_FUNC PyInit__demo(void) { return PyModule_Create(&module); }
"""


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(path: Path, members: dict[str, bytes]) -> None:
    """The wheel at ``path``: ``members`` in order, then a RECORD of them."""
    record_name = f"{NAME}-{VERSION}.dist-info/RECORD"
    rows = [f"{name},{_record_hash(data)},{len(data)}" for name, data in members.items() if name != record_name]
    members = {**{k: v for k, v in members.items() if k != record_name},
               record_name: ("\n".join(rows + [f"{record_name},,"]) + "\n").encode()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    print(path)


def retag(source: Path) -> None:
    """The sample as tagged for the platform it deserves: the same members, its WHEEL's Tag line changed."""
    with zipfile.ZipFile(source) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    wheel_name = f"{NAME}-{VERSION}.dist-info/WHEEL"
    members[wheel_name] = members[wheel_name].replace(f"Tag: {TAG}".encode(), f"Tag: {DESERVED}".encode())
    write_wheel(HERE / f"{NAME}-{VERSION}-{DESERVED}.whl", members)


def main() -> None:
    built = HERE / f"{NAME}-{VERSION}-{TAG}.whl"
    if "--retag" not in sys.argv[1:]:
        build(built)
    retag(built)


def build(wheel: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "demo.c"), Path(tmp, "_demo.so")
        src.write_text(SOURCE)
        include = sysconfig.get_paths()["include"]
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", f"-I{include}", str(src), "-o", str(out), "-lm", "-s"],
                       check=True)
        write_wheel(wheel, {
            "demo_ext/__init__.py": b"from demo_ext._demo import powers\n",
            "demo_ext/_demo.cpython-311-x86_64-linux-gnu.so": out.read_bytes(),
            f"{NAME}-{VERSION}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n".encode(),
            f"{NAME}-{VERSION}.dist-info/WHEEL": (
                f"Wheel-Version: 1.0\nGenerator: wheelcheck-sample\nRoot-Is-Purelib: false\nTag: {TAG}\n").encode(),
        })


if __name__ == "__main__":
    sys.exit(main())
