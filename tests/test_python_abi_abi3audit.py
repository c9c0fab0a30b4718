"""abi3audit is the oracle for the Stable ABI: on the same abi3 wheels, its non-abi3 symbols and its symbols
newer than the wheel's tag must be wheelcheck's abi3-symbol and abi3-version symbols, file by file, except where
docs/differences.md ("Deliberate differences from abi3audit") says otherwise.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli
from tests.test_python_abi import PRIVATE, VECTORCALL

pytest.importorskip("abi3audit", reason="abi3audit (the oracle, in the test extra) is not installed")

PLAT = "manylinux_2_17_x86_64"
LIMITED_38 = ("-DPy_LIMITED_API=0x03080000",)
# a module whose own global function is named like the C API: it binds to nothing
OWN_PY_NAME = dict(prelude="long PyWc_Helper(void) { return 7; }\n", body_c="    return PyWc_Helper();")


def abi3audit(wheel: Path) -> dict[str, tuple[set[str], set[str]]]:
    """File name -> (non-abi3 symbols, symbols newer than the tag), as abi3audit reports them."""
    proc = subprocess.run([sys.executable, "-m", "abi3audit", "--report", str(wheel)], capture_output=True,
                          text=True, timeout=300)
    (spec,) = json.loads(proc.stdout)["specs"].values()
    return {item["name"]: (set(item["result"]["non_abi3_symbols"]), set(item["result"]["future_abi3_objects"]))
            for item in spec["wheel"]}


def wheelcheck(wheel: Path) -> dict[str, tuple[set[str], set[str]]]:
    (report,) = json.loads(run_cli("audit", "--format", "json", wheel).stdout)["wheels"]
    out: dict[str, tuple[set[str], set[str]]] = {}
    for f in report["findings"]:
        if f["rule"] in ("abi3-symbol", "abi3-version"):
            outside, later = out.setdefault(f["file"].rsplit("/", 1)[-1], (set(), set()))
            (outside if f["rule"] == "abi3-symbol" else later).update(f["symbols"])
    return out


@pytest.fixture(scope="module")
def abi3_wheel(tmp_path_factory, build) -> Path:
    def ext(name: str, flags=(), **source) -> Path:
        return build.compile_c(extension_source(name, **source), f"{name}.so", flags=flags)

    both = dict(prelude=PRIVATE["prelude"] + VECTORCALL["prelude"],
                body_c=PRIVATE["body_c"].replace("return", "long a =", 1) + "\n" + VECTORCALL["body_c"])
    lib = build.compile_c("#include <Python.h>\nint helper(PyObject *o, PyObject *n)\n"
                          "{ PyObject *r; return _PyObject_LookupAttr(o, n, &r) + (PyType_GetName(NULL) != NULL); }\n",
                          "libhelper.so")
    members = {
        "pkg/_clean.abi3.so": ext("_clean", LIMITED_38),
        "pkg/_plain.so": ext("_plain", LIMITED_38),
        "pkg/_vector.abi3.so": ext("_vector", **VECTORCALL),
        "pkg/_private.abi3.so": ext("_private", **PRIVATE),
        "pkg/_both.abi3.so": ext("_both", **both),
        "pkg/_own.abi3.so": ext("_own", LIMITED_38, **OWN_PY_NAME),
        "pkg/libhelper.so": lib,
    }
    return build_wheel(tmp_path_factory.mktemp("abi3"), "pkg", "1.0", f"cp38-abi3-{PLAT}", members)


def test_wheelcheck_agrees_with_abi3audit(abi3_wheel):
    theirs, ours = abi3audit(abi3_wheel), wheelcheck(abi3_wheel)
    assert set(theirs) == {"_clean.abi3.so", "_plain.so", "_vector.abi3.so", "_private.abi3.so", "_both.abi3.so",
                           "_own.abi3.so", "libhelper.so"}
    # the cases are what they claim to be, for the oracle
    assert theirs["_clean.abi3.so"] == theirs["_plain.so"] == (set(), set())
    assert theirs["_vector.abi3.so"] == (set(), {"PyObject_Vectorcall"})
    assert "_PyObject_LookupAttr" in theirs["_private.abi3.so"][0]
    assert theirs["libhelper.so"] == ({"_PyObject_LookupAttr"}, {"PyType_GetName"})
    for name, answer in theirs.items():
        if name != "_own.abi3.so":
            assert ours.get(name, (set(), set())) == answer, name
    # differences.md A1: abi3audit counts every global Py* name the file has, wheelcheck the ones it imports
    assert theirs["_own.abi3.so"] == ({"PyWc_Helper"}, set()) and "_own.abi3.so" not in ours

