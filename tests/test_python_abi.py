"""The Python and ABI tags against the extension modules: file-name suffixes (extension-suffix), the Stable ABI
(abi3-symbol, abi3-version) and the free-threaded build (free-threaded-build).

Every module is compiled here with gcc against this machine's CPython headers; a module's file name is what
the import looks at, so one build can be named for another version, build or platform. The abi3 cases are run
through abi3audit too (tests/test_python_abi_abi3audit.py compares the two).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import ROOT, import_and_call, make_venv, pip_install, run_cli

PLAT = "manylinux_2_17_x86_64"
GNU = "x86_64-linux-gnu"
RULES = ("extension-suffix", "abi3-symbol", "abi3-version", "free-threaded-build")

# a call into CPython 3.12's Stable ABI (PyObject_Vectorcall: exported by 3.11 but not stable before 3.12), and
# one into CPython's private API (_PyObject_LookupAttr, in 3.11's headers)
VECTORCALL = dict(prelude="PyObject *wc_f;\n",
                  body_c="    return wc_f ? (long)(PyObject_Vectorcall(wc_f, NULL, 0, NULL) != NULL) : 7;")
PRIVATE = dict(prelude="PyObject *wc_o, *wc_n;\n",
               body_c="    PyObject *r = NULL;\n    return wc_o ? _PyObject_LookupAttr(wc_o, wc_n, &r) : 7;")
# what the free-threaded headers' Py_DECREF calls, declared as they declare it
FREE_THREADED = dict(prelude="PyAPI_FUNC(void) _Py_DecRefShared(PyObject *);\nPyObject *wc_o;\n",
                     body_c="    if (wc_o) _Py_DecRefShared(wc_o);\n    return 7;")
# the GIL-enabled headers' Py_DECREF: calls _Py_Dealloc when the count reaches zero
GIL_DECREF = dict(prelude="PyObject *wc_o;\n", body_c="    Py_XDECREF(wc_o);\n    return 7;")


def module(build, name: str = "_m", *, limited: str | None = None, **source) -> Path:
    flags = (f"-DPy_LIMITED_API={limited}",) if limited else ()
    return build.compile_c(extension_source(name, **source), f"{name}.so", flags=flags)


def findings(wheel: Path) -> list[tuple[str, str, str | None, str]]:
    proc = run_cli("audit", "--format", "json", wheel)
    (report,) = json.loads(proc.stdout)["wheels"]
    assert report.get("error") is None, report
    return [(f["rule"], f["severity"], f["file"], f["message"]) for f in report["findings"] if f["rule"] in RULES]


def wheel_of(tmp_path: Path, tag: str, members: dict[str, Path], name: str = "pkg") -> Path:
    return build_wheel(tmp_path, name, "1.0", tag, members)


# -- file-name suffixes


def test_a_module_for_another_cpython_version_is_an_error(tmp_path, build):
    ext = module(build)
    wheel = wheel_of(tmp_path, f"cp311-cp311-{PLAT}", {f"pkg/_m.cpython-312-{GNU}.so": ext})
    ((rule, severity, file, message),) = findings(wheel)
    assert (rule, severity, file) == ("extension-suffix", "error", f"pkg/_m.cpython-312-{GNU}.so")
    assert "CPython 3.12" in message and "cp311" in message and ".cpython-311-" in message
    # each tag's own names pass
    for tag, suffix in (("cp311-cp311", f".cpython-311-{GNU}.so"), ("cp313-cp313t", f".cpython-313t-{GNU}.so"),
                        ("cp37-cp37m", f".cpython-37m-{GNU}.so"), ("cp311-cp311", ".so"),
                        ("cp38-abi3", ".abi3.so"), ("cp311-cp311", ".abi3.so"), ("cp311-none", f".cpython-311-{GNU}.so")):
        wheel = wheel_of(tmp_path / tag / suffix, f"{tag}-{PLAT}", {f"pkg/_m{suffix}": ext})
        assert findings(wheel) == [], (tag, suffix)


def test_the_wrong_version_really_fails_to_import(tmp_path, build):
    """pip installs the cp311 wheel on this 3.11 interpreter; importing the cpython-312 module fails."""
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the wheel is tagged for CPython 3.11")
    ext = module(build)
    wheel = wheel_of(tmp_path, f"cp311-cp311-{PLAT}", {f"_m.cpython-312-{GNU}.so": ext})
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, wheel).returncode == 0
    proc = import_and_call(python, "_m", tmp_path)
    assert proc.returncode != 0 and "No module named '_m'" in proc.stderr
    assert [f[:2] for f in findings(wheel)] == [("extension-suffix", "error")]


def test_a_free_threaded_wheel_needs_the_t_in_the_module_name(tmp_path, build):
    ext = module(build)
    wheel = wheel_of(tmp_path, f"cp313-cp313t-{PLAT}", {f"pkg/_m.cpython-313-{GNU}.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("extension-suffix", "error") and "cp313t" in message
    # and the other way round
    wheel = wheel_of(tmp_path / "gil", f"cp313-cp313-{PLAT}", {f"pkg/_m.cpython-313t-{GNU}.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("extension-suffix", "error") and "free-threaded" in message


def test_abi3_on_a_free_threaded_tag_is_an_error(tmp_path, build):
    ext = module(build, limited="0x03080000")
    wheel = wheel_of(tmp_path, f"cp313-cp313t-{PLAT}", {"pkg/_m.abi3.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("extension-suffix", "error") and "PEP 803" in message


@pytest.mark.parametrize("tag", ["py3-none", "cp38-abi3", "py38-none"])
def test_a_version_specific_module_in_a_wheel_for_every_version_is_an_error(tmp_path, build, tag):
    ext = module(build)
    wheel = wheel_of(tmp_path, f"{tag}-{PLAT}", {f"pkg/_m.cpython-311-{GNU}.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("extension-suffix", "error") and "pip installs it on every CPython" in message


def test_cp3xy_none_is_that_version_alone(tmp_path, build):
    wheel = wheel_of(tmp_path, f"cp311-none-{PLAT}", {f"pkg/_m.cpython-312-{GNU}.so": module(build)})
    assert [f[:2] for f in findings(wheel)] == [("extension-suffix", "error")]


@pytest.mark.parametrize(("plat", "triplet"), [
    ("manylinux_2_17_x86_64", "aarch64-linux-gnu"),
    ("manylinux_2_17_x86_64", "x86_64-linux-musl"),
    ("musllinux_1_2_x86_64", "i386-linux-musl"),
    ("manylinux_2_17_x86_64", "darwin"),
])
def test_a_module_named_for_another_platform_is_an_error(tmp_path, build, plat, triplet):
    wheel = wheel_of(tmp_path, f"cp311-cp311-{plat}", {f"pkg/_m.cpython-311-{triplet}.so": module(build)})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("extension-suffix", "error") and f"named for {triplet}" in message


@pytest.mark.parametrize(("plat", "triplet"), [
    ("musllinux_1_2_x86_64", "x86_64-linux-musl"),
    ("musllinux_1_2_x86_64", "x86_64-linux-gnu"),  # CPython 3.10 and older name it so on musl too
    ("manylinux_2_17_i686", "i386-linux-gnu"),
    ("manylinux_2_17_armv7l", "arm-linux-gnueabihf"),
    ("manylinux_2_17_ppc64le", "powerpc64le-linux-gnu"),
    ("manylinux_2_17_s390x", "s390x-linux-gnu"),
    ("manylinux_2_31_riscv64", "riscv64-linux-gnu"),
    ("manylinux_2_36_loongarch64", "loongarch64-linux-gnu"),
    ("musllinux_1_2_aarch64", "aarch64-linux-musl"),
    ("musllinux_1_2_armv7l", "arm-linux-musleabihf"),
])
def test_each_platforms_own_triplet_passes(tmp_path, build, plat, triplet):
    # the suffix is all this rule reads (the ELF's own architecture is wrong-architecture's)
    ext = module(build)
    wheel = wheel_of(tmp_path, f"cp311-cp311-{plat}", {f"pkg/_m.cpython-311-{triplet}.so": ext,
                                                        "pkg/_n.cpython-311-powerpc64-linux-gnu.so": module(build, "_n")})
    assert [f[:3] for f in findings(wheel)] == [
        ("extension-suffix", "error", "pkg/_n.cpython-311-powerpc64-linux-gnu.so")]


def test_a_misnamed_copy_beside_the_right_one_is_a_warning(tmp_path, build):
    ext = module(build)
    wheel = wheel_of(tmp_path, f"cp311-cp311-{PLAT}", {f"pkg/_m.cpython-311-{GNU}.so": ext,
                                                        f"pkg/_m.cpython-312-{GNU}.so": ext})
    ((rule, severity, file, message),) = findings(wheel)
    assert (rule, severity, file) == ("extension-suffix", "warning", f"pkg/_m.cpython-312-{GNU}.so")
    assert "never loaded" in message


def test_a_suffix_no_cpython_looks_for_is_a_warning(tmp_path, build):
    # no triplet: what CPython on Linux names modules for no platform it knows
    wheel = wheel_of(tmp_path, f"cp311-cp311-{PLAT}", {"pkg/_m.cpython-311.so": module(build)})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("extension-suffix", "warning") and "does not look for" in message


def test_abi3t_names_need_cpython_315(tmp_path, build):
    ext = module(build, limited="0x03080000")
    wheel = wheel_of(tmp_path, f"cp38-abi3-{PLAT}", {"pkg/_m.abi3t.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("extension-suffix", "error") and "3.15 and later" in message
    wheel = wheel_of(tmp_path / "315", f"cp315-abi3.abi3t-{PLAT}", {"pkg/_m.abi3t.so": ext})
    assert findings(wheel) == []


# -- the Stable ABI


def test_only_the_module_outside_the_stable_abi_is_reported(tmp_path, build):
    limited = module(build, limited="0x03080000")
    wheel = wheel_of(tmp_path, f"cp38-abi3-{PLAT}", {"pkg/_m.abi3.so": limited,
                                                      "pkg/_n.so": module(build, "_n", limited="0x03080000"),
                                                      "pkg/_p.abi3.so": module(build, "_p", **PRIVATE)})
    assert [f[:3] for f in findings(wheel)] == [("abi3-symbol", "error", "pkg/_p.abi3.so")]


def test_a_stable_symbol_newer_than_the_tag_is_a_warning(tmp_path, build):
    """A warning: CPython exported some names before they joined the Stable ABI (not PyObject_Vectorcall: 3.8
    has no such function, so there the import fails)."""
    ext = module(build, **VECTORCALL)
    wheel = wheel_of(tmp_path, f"cp38-abi3-{PLAT}", {"pkg/_m.abi3.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("abi3-version", "warning")
    assert "PyObject_Vectorcall (3.12)" in message and "3.8 to 3.11" in message
    # tagged for 3.12, the same file keeps its promise
    assert findings(wheel_of(tmp_path / "312", f"cp312-abi3-{PLAT}", {"pkg/_m.abi3.so": ext})) == []


def test_private_api_in_an_abi3_wheel_is_an_error(tmp_path, build):
    ext = module(build, **PRIVATE)
    wheel = wheel_of(tmp_path, f"cp38-abi3-{PLAT}", {"pkg/_m.abi3.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("abi3-symbol", "error") and "_PyObject_LookupAttr" in message and "private" in message
    # public API outside the Stable ABI may stay exported: a warning
    public = module(build, prelude="PyObject *wc_o;\n", body_c="    return wc_o ? (long)*PyUnicode_AsUTF8(wc_o) : 7;")
    wheel = wheel_of(tmp_path / "public", f"cp38-abi3-{PLAT}", {"pkg/_m.abi3.so": public})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("abi3-symbol", "warning") and "PyUnicode_AsUTF8" in message


def test_a_library_of_an_abi3_wheel_is_held_to_the_stable_abi_too(tmp_path, build):
    lib = build.compile_c("#include <Python.h>\nint helper(PyObject *o, PyObject *n)\n"
                          "{ PyObject *r; return _PyObject_LookupAttr(o, n, &r); }\n", "libhelper.so")
    wheel = wheel_of(tmp_path, f"cp38-abi3-{PLAT}", {"pkg/_m.abi3.so": module(build, limited="0x03080000"),
                                                      "pkg/libhelper.so": lib})
    assert [(r, s, f) for r, s, f, _ in findings(wheel)] == [("abi3-symbol", "error", "pkg/libhelper.so")]
    # a Py-named function of the wheel's own library binds there, not to CPython
    own = build.compile_c("long PyWc_Thing(void) { return 7; }\n", "libown.so")
    user = build.compile_c(extension_source("_u", prelude="long PyWc_Thing(void);\n", body_c="    return PyWc_Thing();"),
                           "_u.so", flags=("-DPy_LIMITED_API=0x03080000",), libs=(own,))
    wheel = wheel_of(tmp_path / "own", f"cp38-abi3-{PLAT}", {"pkg/_u.abi3.so": user, "pkg/libown.so": own})
    assert findings(wheel) == []


def test_a_library_shipped_once_per_cpython_version_is_not_held_to_the_stable_abi(tmp_path, build):
    """chdb's abi3 wheel ships libpybind11nonlimitedapi_chdb_3.9.so ... _3.14.so and loads the running interpreter's:
    each is for one CPython, as a module named for it is. One such library alone is still judged."""
    src = ("#include <Python.h>\nint helper(PyObject *o, PyObject *n)\n"
           "{ PyObject *r; return _PyObject_LookupAttr(o, n, &r); }\n")
    shims = {f"pkg/libshim_{v}.so": build.compile_c(src, f"libshim_{v}.so") for v in ("3.10", "3.11", "3.12")}
    base = {"pkg/_m.abi3.so": module(build, limited="0x03080000")}
    assert findings(wheel_of(tmp_path, f"cp38-abi3-{PLAT}", {**base, **shims})) == []
    alone = wheel_of(tmp_path / "alone", f"cp38-abi3-{PLAT}", {**base, "pkg/libshim_3.10.so": shims["pkg/libshim_3.10.so"]})
    assert [(r, s, f) for r, s, f, _ in findings(alone)] == [("abi3-symbol", "error", "pkg/libshim_3.10.so")]


def test_a_none_abi_wheel_with_non_stable_imports_is_a_warning(tmp_path, build):
    ext = module(build, **PRIVATE)
    wheel = wheel_of(tmp_path, f"py3-none-{PLAT}", {"pkg/_m.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("abi3-symbol", "warning") and "no ABI" in message
    # a wheel for one CPython version may use any of its API
    for tag, suffix in (("cp311-cp311", f".cpython-311-{GNU}.so"), ("cp311-none", ".so")):
        for source in (PRIVATE, VECTORCALL):
            wheel = wheel_of(tmp_path / tag / source["body_c"][-5:-1], f"{tag}-{PLAT}",
                             {f"pkg/_m{suffix}": module(build, **source)})
            assert findings(wheel) == [], tag


# -- free-threaded builds


def test_free_threaded_imports_in_a_gil_module_are_an_error(tmp_path, build):
    ext = module(build, **FREE_THREADED)
    wheel = wheel_of(tmp_path, f"cp313-cp313-{PLAT}", {f"pkg/_m.cpython-313-{GNU}.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("free-threaded-build", "error") and "_Py_DecRefShared" in message
    # named and tagged for the free-threaded build, it is what it says
    assert findings(wheel_of(tmp_path / "t", f"cp313-cp313t-{PLAT}", {f"pkg/_m.cpython-313t-{GNU}.so": ext})) == []


def test_a_gil_build_named_for_free_threading_is_a_warning(tmp_path, build):
    ext = module(build, **GIL_DECREF)
    wheel = wheel_of(tmp_path, f"cp313-cp313t-{PLAT}", {f"pkg/_m.cpython-313t-{GNU}.so": ext})
    ((rule, severity, _, message),) = findings(wheel)
    assert (rule, severity) == ("free-threaded-build", "warning") and "_Py_Dealloc" in message
    assert findings(wheel_of(tmp_path / "gil", f"cp313-cp313-{PLAT}", {f"pkg/_m.cpython-313-{GNU}.so": ext})) == []


def test_the_findings_fail_the_audit_and_reach_sarif(tmp_path, build):
    wheel = wheel_of(tmp_path, f"cp311-cp311-{PLAT}", {f"pkg/_m.cpython-312-{GNU}.so": module(build)})
    assert run_cli("audit", wheel).returncode == 1
    sarif = json.loads(run_cli("audit", "--format", "sarif", wheel).stdout)
    assert any(r["ruleId"] == "extension-suffix" for run in sarif["runs"] for r in run["results"])


# -- the Stable ABI table


def test_the_stable_abi_table_is_made_from_cpythons_manifest(tmp_path):
    manifest = tmp_path / "stable_abi.toml"
    manifest.write_text("[feature_macro.HAVE_FORK]\n    doc = 'on platforms with fork()'\n"
                        "[struct.PyObject]\n    added = '3.2'\n"
                        "[function.PyObject_Vectorcall]\n    added = '3.12'\n"
                        "[data._Py_NoneStruct]\n    added = '3.2'\n    abi_only = true\n"
                        "[function.PyOS_AfterFork]\n    added = '3.2'\n    ifdef = 'HAVE_FORK'\n")
    out = tmp_path / "stable_abi.json"
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_stable_abi.py"), str(manifest), "-o", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    table = json.loads(out.read_text())
    assert table["symbols"] == {"PyOS_AfterFork": ["3.2", "function", "ifdef:HAVE_FORK"],
                                "PyObject_Vectorcall": ["3.12", "function"],
                                "_Py_NoneStruct": ["3.2", "data", "abi_only"]}
    assert table["newest"] == "3.12"
    # the shipped table: CPython's manifest through 3.15
    from wheelcheck.audit.stable_abi import stable_symbol

    assert stable_symbol("PyObject_Vectorcall").added == (3, 12)
    assert stable_symbol("PyType_GetName").added == (3, 11)
    assert stable_symbol("_Py_Dealloc").abi_only and stable_symbol("PyModule_Exec").added == (3, 15)
    assert stable_symbol("PyUnicode_AsUTF8") is None and stable_symbol("_PyObject_LookupAttr") is None


def test_a_module_with_a_file_for_every_cpython_the_wheel_installs_on_passes(tmp_path, build):
    """mosek 11.2.7 is cp39-abi3 with Requires-Python <3.15,>=3.9 and _msk.cpython-39 ... -314: every CPython pip
    installs it on imports its own file. Without the upper bound 3.15 has none: an error naming the files."""
    ext = module(build)
    files = {f"pkg/_m.cpython-3{minor}-x86_64-linux-gnu.so": ext for minor in range(9, 15)}
    bounded = build_wheel(tmp_path, "pkg", "1.0", f"cp39-abi3-{PLAT}",
                          {**files, "pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"
                                                                  b"Requires-Python: >=3.9,<3.15\n"})
    assert [f for f in findings(bounded) if f[0] == "extension-suffix"] == []
    unbounded = build_wheel(tmp_path / "open", "pkg", "1.0", f"cp39-abi3-{PLAT}", files)
    assert {s for r, s, _, _ in findings(unbounded) if r == "extension-suffix"} == {"error"}
