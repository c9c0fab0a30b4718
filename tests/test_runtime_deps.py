"""Libraries loaded at run time: dlopen candidates in read-only data, system driver libraries."""

from __future__ import annotations

import shutil
import subprocess

from tests.fixtures.hygiene_sources import DLOPEN_SRC, DRIVER_STUB_SRC, USES_DRIVER
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one as one, auditwheel_show, bundled_policy_with, by_rule
from wheelcheck.data import system_drivers
from wheelcheck.elf.elf_summary import summarize

TAG = "cp311-cp311-linux_x86_64"
EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"


def strip_section_headers(path, out):
    """A copy without section headers (e_shoff = e_shnum = e_shstrndx = 0): only segments remain."""
    data = bytearray(path.read_bytes())
    data[0x28:0x30] = bytes(8)  # e_shoff (ELF64)
    data[0x3C:0x40] = bytes(4)  # e_shnum, e_shstrndx
    out.write_bytes(bytes(data))
    return out


def test_soname_strings_from_segments(build, tmp_path):
    ext = build.compile_c(DLOPEN_SRC, "loader.so", libs=("dl",))
    strings = subprocess.run(["strings", "-a", str(ext)], capture_output=True, text=True).stdout.split()
    info = summarize(ext.read_bytes(), "loader.so")
    assert {"libcuda.so.1", "libplugin.so.3"} <= set(info.soname_strings) <= set(strings)
    assert "libcuda.so.1" not in info.needed
    stripped = summarize(strip_section_headers(ext, tmp_path / "stripped.so").read_bytes(), "loader.so")
    assert stripped.soname_strings == info.soname_strings


def test_dlopen_candidates_classified(build, tmp_path):
    ext = build.compile_c(DLOPEN_SRC, "loader.so", libs=("dl",))
    w = one(build_wheel(tmp_path / "a", "loader", "1.0", TAG, {EXT.format("loader"): ext}))
    rows = {r["soname"]: r["status"] for r in w.files[0].runtime_libraries}
    assert rows["libcuda.so.1"] == "driver" and rows["libplugin.so.3"] == "unguaranteed"
    (plugin,) = by_rule(w, "dlopen-unguaranteed")
    assert plugin.file == EXT.format("loader") and "libplugin.so.3" in plugin.message and plugin.severity == "warning"
    (driver,) = by_rule(w, "dlopen-driver")
    assert driver.severity == "info" and "libcuda.so.1" in driver.message
    assert w.passed
    # ship the plugin: no warning any more
    plugin_lib = build.compile_c("int plugin_entry(void) { return 3; }\n", "libplugin.so.3",
                                 flags=("-Wl,-soname,libplugin.so.3",))
    w2 = one(build_wheel(tmp_path / "b", "loader", "1.0", TAG,
                         {EXT.format("loader"): ext, "pkg/libplugin.so.3": plugin_lib}))
    ext_report = next(f for f in w2.files if f.path == EXT.format("loader"))
    assert {r["soname"]: r["status"] for r in ext_report.runtime_libraries}["libplugin.so.3"] == "shipped"
    assert not by_rule(w2, "dlopen-unguaranteed")


def test_renamed_copy_does_not_satisfy_dlopen(build, tmp_path):
    ext = build.compile_c(DLOPEN_SRC, "loader.so", libs=("dl",))
    plugin_lib = build.compile_c("int plugin_entry(void) { return 3; }\n", "libplugin-1a2b3c4d.so.3",
                                 flags=("-Wl,-soname,libplugin-1a2b3c4d.so.3",))
    w = one(build_wheel(tmp_path, "loader", "1.0", TAG,
                        {EXT.format("loader"): ext, "loader.libs/libplugin-1a2b3c4d.so.3": plugin_lib}))
    (f,) = by_rule(w, "dlopen-unguaranteed")
    assert "libplugin-1a2b3c4d.so.3" in f.message and "renamed" in f.message


def test_policy_allows_or_declares_drivers(build, tmp_path):
    ext = build.compile_c(DLOPEN_SRC, "loader.so", libs=("dl",))
    wheel = build_wheel(tmp_path, "loader", "1.0", TAG, {EXT.format("loader"): ext})
    policy = bundled_policy_with(tmp_path / "team.json", drivers=["libplugin.so.3"])
    w = one(wheel, policy_file=policy)
    assert not by_rule(w, "dlopen-unguaranteed")
    assert {r["soname"]: r["status"] for r in w.files[0].runtime_libraries}["libplugin.so.3"] == "driver"


def driver_stub(build):
    return build.compile_c(DRIVER_STUB_SRC, "libcuda.so.1", flags=("-Wl,-soname,libcuda.so.1",))


def test_driver_needed_is_not_external(build, tmp_path):
    cuda = driver_stub(build)
    ext = build.compile_c(USES_DRIVER, "usecuda.so", libs=(cuda,))
    wheel = build_wheel(tmp_path, "usecuda", "1.0", TAG, {EXT.format("usecuda"): ext})
    w = one(wheel)
    assert "libcuda.so.1" not in w.external_libs and not by_rule(w, "external-library")
    (f,) = by_rule(w, "driver-needed")
    assert f.file == EXT.format("usecuda") and f.severity == "info" and w.passed
    assert w.deserved_tag.startswith("manylinux_")  # the driver does not drag the tag down to linux
    # auditwheel counts it as an external library (documented difference)
    assert "libcuda.so.1" in auditwheel_show(wheel).get("external_libs", {})


def test_driver_needed_can_be_made_an_error(build, tmp_path):
    cuda = driver_stub(build)
    ext = build.compile_c(USES_DRIVER, "usecuda.so", libs=(cuda,))
    wheel = build_wheel(tmp_path, "usecuda", "1.0", TAG, {EXT.format("usecuda"): ext})
    policy = bundled_policy_with(tmp_path / "strict.json", rules={"driver-needed": "error"})
    w = one(wheel, policy_file=policy)
    assert by_rule(w, "driver-needed")[0].severity == "error" and not w.passed


def test_vendored_driver_is_an_error(build, tmp_path):
    cuda = driver_stub(build)
    ext = build.compile_c(USES_DRIVER, "usecuda.so", libs=(cuda,), flags=("-Wl,-rpath,$ORIGIN/../usecuda.libs",))
    renamed = tmp_path / "libcuda-0badc0de.so.1"
    shutil.copy(cuda, renamed)
    w = one(build_wheel(tmp_path, "usecuda", "1.0", TAG,
                        {EXT.format("usecuda"): ext, "usecuda.libs/libcuda-0badc0de.so.1": renamed}))
    (f,) = by_rule(w, "driver-vendored")
    assert f.file == "usecuda.libs/libcuda-0badc0de.so.1" and f.severity == "error" and not w.passed


def test_the_usual_drivers_are_known():
    assert {"libcuda.so.1", "libnvidia-ml.so.1", "libOpenCL.so.1", "libvulkan.so.1"} <= system_drivers()


def test_a_shipped_icd_loader_is_not_a_vendored_driver(build, tmp_path):
    """libOpenCL.so.1 finds the machine's drivers through /etc/OpenCL/vendors: a wheel may ship it
    (nvidia-cuda-runtime-cu11 does), unlike libcuda.so.1."""
    loader = build.compile_c("int clGetPlatformIDs(void) { return 0; }", "libOpenCL.so.1",
                             flags=("-Wl,-soname,libOpenCL.so.1",))
    ext = build.compile_c(extension_source("usecl"), "usecl.so", libs=(loader,), flags=("-Wl,-rpath,$ORIGIN",))
    w = one(build_wheel(tmp_path, "usecl", "1.0", TAG, {EXT.format("usecl"): ext, "pkg/libOpenCL.so.1": loader}))
    assert not by_rule(w, "driver-vendored") and w.passed
