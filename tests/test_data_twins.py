"""A library installed both in site-packages and as data (pydevd 3.4.1's shape), built with gcc.

``pkg/attach/attach.so`` needs ``pkg.libs/libdep-1a2b3c4d.so.1`` through RPATH ``$ORIGIN/../../pkg.libs``; the
same library, as ``pkg-1.0.data/data/attach/attach.so``, has the RPATH ``$ORIGIN/../../../pkg.libs``, right inside
the unpacked wheel (where auditwheel resolves it) and wrong from ``<prefix>/attach/``, where pip installs it.
Installed, the site-packages copy loads and the data copy does not: a warning, and the tag auditwheel gives.
Without the site-packages twin, the data copy's need stays an external library.
"""
from __future__ import annotations

import subprocess

from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one, auditwheel_show, by_rule, make_venv, pip_install

TAG = "py3-none-manylinux_2_17_x86_64"
DEP = "libdep-1a2b3c4d.so.1"
LOAD = """
import ctypes, sys
try:
    print(ctypes.CDLL(sys.argv[1]).attach())
except OSError as e:
    print('OSError', e)
"""


def _files(build):
    dep = build.compile_c("int dep_value(void) { return 7; }\n", DEP, flags=(f"-Wl,-soname,{DEP}",))
    src = "extern int dep_value(void);\nint attach(void) { return 6 * dep_value(); }\n"
    site = build.compile_c(src, "site/attach.so", libs=(dep,), flags=("-Wl,-rpath,$ORIGIN/../../pkg.libs",))
    data = build.compile_c(src, "data/attach.so", libs=(dep,), flags=("-Wl,-rpath,$ORIGIN/../../../pkg.libs",))
    return dep, site, data


def test_a_data_copy_of_a_library_that_loads_is_a_warning(build, tmp_path):
    dep, site, data = _files(build)
    wheel = build_wheel(tmp_path / "w", "pkg", "1.0", TAG, {
        "pkg/__init__.py": b"", "pkg/attach/attach.so": site.read_bytes(), f"pkg.libs/{DEP}": dep.read_bytes(),
        "pkg-1.0.data/data/attach/attach.so": data.read_bytes()})
    report = audit_one(wheel)
    (finding,) = by_rule(report, "data-copy-unreached")
    assert finding.file == "pkg-1.0.data/data/attach/attach.so" and finding.subject == DEP
    assert "pkg/attach/attach.so" in finding.message and not by_rule(report, "external-library") and report.passed
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "manylinux_2_5_x86_64"
    venv = tmp_path / "venv"
    python = make_venv(venv)
    assert pip_install(python, wheel).returncode == 0
    site_copy = next(venv.glob("lib/python*/site-packages/pkg/attach/attach.so"))
    run = [str(python), "-c", LOAD]
    assert subprocess.run(run + [str(site_copy)], capture_output=True, text=True).stdout.split() == ["42"]
    broken = subprocess.run(run + [str(venv / "attach" / "attach.so")], capture_output=True, text=True).stdout
    assert f"{DEP}: cannot open shared object file" in broken


def test_a_data_library_without_a_twin_stays_external(build, tmp_path):
    dep, _site, data = _files(build)
    wheel = build_wheel(tmp_path, "pkg", "1.0", TAG, {
        "pkg/__init__.py": b"", f"pkg.libs/{DEP}": dep.read_bytes(),
        "pkg-1.0.data/data/attach/attach.so": data.read_bytes()})
    report = audit_one(wheel)
    assert not by_rule(report, "data-copy-unreached")
    (external,) = by_rule(report, "external-library")
    assert external.file == "pkg-1.0.data/data/attach/attach.so" and not report.passed
