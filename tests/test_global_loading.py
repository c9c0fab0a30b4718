"""What a distribution's import loads with RTLD_GLOBAL (conflicts/global_loading.py), and which of the names real environments
show colliding are harmless: read from Python code shaped like torch's, tensorflow's, faiss' and scipy-openblas',
and from gcc-built libraries imported for real.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.fixtures.conflict_wheels import pip_install, run_python
from tests.fuzz.bounded import limits_preexec_args
from tests.fixtures.wheels import build_wheel, dist_info
from tests.helpers import run_cli
from wheelcheck.conflicts.collisions import is_harmless
from wheelcheck.conflicts.global_loading import global_loading

TORCH = b'''
import ctypes, os, platform, sys
def _load_global_deps():
    lib_ext = ".dylib" if platform.system() == "Darwin" else ".so"
    lib_name = f"libtorch_global_deps{lib_ext}"
    path = os.path.join(os.path.dirname(__file__), "lib", lib_name)
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
if os.getenv("TORCH_USE_RTLD_GLOBAL"):
    sys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_LAZY)
    from torch._C import *
else:
    _load_global_deps()
    from torch._C import *
'''
TORCH_OPS = b'''
import contextlib, ctypes, sys
@contextlib.contextmanager
def dl_open_guard():
    old = sys.getdlopenflags()
    sys.setdlopenflags(old | ctypes.RTLD_GLOBAL)
    yield
    sys.setdlopenflags(old)
'''
TF_FLAGS = b'''
import ctypes, sys
def set_dlopen_flags():
    sys.setdlopenflags(sys.getdlopenflags() | ctypes.RTLD_GLOBAL)
'''
TF_PYWRAP = b'''
from tensorflow.python import pywrap_dlopen_global_flags
try:
    pywrap_dlopen_global_flags.set_dlopen_flags()
    from tensorflow.python._pywrap_tensorflow_internal import *
finally:
    pass
'''
FAISS = b'''
import ctypes
def _preload_gpu_libs():
    def _load(path):
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    for p in []:
        _load(p)
_preload_gpu_libs()
'''


def test_torch_loads_its_global_deps_alone():
    loading = global_loading({"torch/__init__.py": TORCH, "torch/_ops.py": TORCH_OPS}, lambda: iter(()))
    assert loading.loaders == ("torch/__init__.py",) and loading.dormant == ("torch/_ops.py",)
    assert "libtorch_global_deps" in (loading.libraries or ())


def test_tensorflow_sets_the_flags_from_another_module():
    others = [("tensorflow/python/pywrap_tensorflow.py", TF_PYWRAP), ("tensorflow/other.py", b"x = 1\n")]
    loading = global_loading({"tensorflow/python/pywrap_dlopen_global_flags.py": TF_FLAGS}, lambda: iter(others))
    assert loading.loaders == ("tensorflow/python/pywrap_dlopen_global_flags.py",) and loading.libraries is None
    alone = global_loading({"tensorflow/python/pywrap_dlopen_global_flags.py": TF_FLAGS}, lambda: iter(()))
    assert alone.loaders == () and alone.dormant  # nothing calls it: a function for its users


def test_a_nested_loader_and_unparsable_code():
    faiss = global_loading({"faiss/__init__.py": FAISS}, lambda: iter(()))
    assert faiss.loaders == () and faiss.dormant == ("faiss/__init__.py",)
    py2 = global_loading({"old/__init__.py": b"print 'x'\nsys.setdlopenflags(RTLD_GLOBAL)\n"}, lambda: iter(()))
    assert py2.loaders == ("old/__init__.py",) and py2.libraries is None  # read whole, as the name alone was


def test_typeinfo_of_types_that_name_no_class_is_harmless():
    for name in ("_ZTIFvvE", "_ZTSFbvE", "_ZTIPFvvE", "_ZTIi"):
        assert is_harmless(name)
    for name in ("_ZTI3Foo", "_ZTISt9exception", "_ZTIN3foo3BarE", "_ZTV3Foo"):
        assert not is_harmless(name)


SECTION_LIB = r"""
__attribute__((section("mysec"), used)) static int items[] = {ITEMS};
extern int __start_mysec[], __stop_mysec[];
int count_PKG(void) { return (int)(__stop_mysec - __start_mysec); }
"""
EXT = r"""
#include <Python.h>
extern int count_PKG(void);
static PyObject *call(PyObject *self, PyObject *args) { return PyLong_FromLong(count_PKG()); }
static PyMethodDef methods[] = {{"call", call, METH_NOARGS, ""}, {0}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ext", 0, -1, methods};
PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&module); }
"""
# a library that walks another's section: it names the bound undefined, and the loader gives it the first copy
READER_LIB = r"""
extern int __start_mysec[], __stop_mysec[];
int count_PKG(void) { return (int)(__stop_mysec - __start_mysec); }
"""


def _section_wheel(build, out, pkg: str, items: str | None, visibility: str = "protected"):
    source = (SECTION_LIB.replace("ITEMS", items) if items else READER_LIB).replace("PKG", pkg)
    lib = build.compile_c(source, f"lib{pkg}.so", flags=(f"-Wl,-soname,lib{pkg}.so",
                                                         f"-Wl,-z,start-stop-visibility={visibility}")
                          + (("-Wl,--unresolved-symbols=ignore-all",) if items is None else ()))
    ext = build.compile_c(EXT.replace("PKG", pkg), f"{pkg}_ext.so", libs=(lib,), flags=("-Wl,-rpath,$ORIGIN",))
    init = (f"import ctypes, os\nctypes.CDLL(os.path.join(os.path.dirname(__file__), 'lib{pkg}.so'), "
            f"ctypes.RTLD_GLOBAL)\nfrom ._ext import call\n").encode()
    return build_wheel(out, pkg, "1.0", "cp311-cp311-linux_x86_64", {
        f"{pkg}/__init__.py": init, f"{pkg}/_ext.cpython-311-x86_64-linux-gnu.so": ext.read_bytes(),
        f"{pkg}/lib{pkg}.so": lib.read_bytes(),
        f"{dist_info(pkg, '1.0')}/METADATA": f"Metadata-Version: 2.1\nName: {pkg}\nVersion: 1.0\n".encode()})


@pytest.mark.parametrize("visibility", ["protected", "default"])
def test_section_bounds_nobody_looks_up_do_not_collide(build, tmp_path, visibility):
    """Every tensorflow environment would fail on __start_linkarr_upb_AllExts and __start_pb_defaults, which
    protobuf, tensorflow and jaxlib each define. The linker ties each library's code to its own section (no dynamic
    relocation refers to the bound), so the copies never meet, global or not, protected or default; the interpreter
    agrees. A library that names the bound undefined does meet the global copy: that stays a finding."""
    a = _section_wheel(build, tmp_path / visibility / "a", f"seca_{visibility}", "1, 2, 3", visibility)
    b = _section_wheel(build, tmp_path / visibility / "b", f"secb_{visibility}", "4, 5", visibility)
    proc = run_cli("conflicts", "--format", "json", "--fail-on", "info", a, b)
    names = {n for f in json.loads(proc.stdout)["processes"][0]["findings"] for n in f.get("names", ())}
    assert proc.returncode == 0 and "__start_mysec" not in names, proc.stdout
    site = tmp_path / visibility / "site"
    pip_install(site, a, b)
    run = run_python(site, f"import seca_{visibility} as a, secb_{visibility} as b; print(a.call(), b.call())")
    assert run.returncode == 0 and run.stdout.split() == ["3", "2"], run.stderr
    if visibility == "default":
        reader = _section_wheel(build, tmp_path / "reader", "secr", None)
        proc = run_cli("conflicts", "--format", "json", "--fail-on", "info", a, b, reader)
        found = [f for f in json.loads(proc.stdout)["processes"][0]["findings"] if "__start_mysec" in f.get("names", ())]
        assert found and found[0]["liveness"] == "global"
        pip_install(site, reader)
        run = run_python(site, "import seca_default, secr; print(secr.call())")
        assert run.returncode == 0 and run.stdout.split() == ["3"], run.stderr  # it walks seca's section
def test_hostile_code_is_read_in_bounded_time(build, tmp_path):
    """Code comes from the wheel. Run as a user runs it, `python -m wheelcheck conflicts` under RLIMIT_CPU (5 s), as
    tests/test_hostile_regressions.py does: a name assigned from itself 2000 times is followed once (it was a
    thousand-cubed walk), and nesting deeper than the parser takes counts the file whole."""
    looped = b"import ctypes\n" + b"x = 'libfoo' + x + x + x\n" * 2000 + b"ctypes.CDLL(x, ctypes.RTLD_GLOBAL)\n"
    deep = b"import ctypes\nctypes.CDLL(" + b"(" * 5000 + b"'x'" + b")" * 5000 + b", ctypes.RTLD_GLOBAL)\n"
    lib = build.compile_c("int foo_fn(void) { return 1; }\n", "libfoo.so", flags=("-Wl,-soname,libfoo.so",))
    wheels = [build_wheel(tmp_path / pkg, pkg, "1.0", "cp311-cp311-linux_x86_64", {
        f"{pkg}/__init__.py": init, f"{pkg}/libfoo.so": lib.read_bytes()}) for pkg, init in (("looped", looped),
                                                                                            ("deep", deep))]
    command = [*limits_preexec_args(5, 1 << 30), sys.executable, "-m", "wheelcheck", "conflicts", "--format", "json",
               *map(str, wheels)]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, (proc.returncode, proc.stderr[-2000:])
    notes = json.loads(proc.stdout)["processes"][0]["notes"]
    assert any("looped 1.0 loads libfoo.so with RTLD_GLOBAL" in n for n in notes), notes
    assert any("deep 1.0 loads its libraries with RTLD_GLOBAL" in n for n in notes), notes
