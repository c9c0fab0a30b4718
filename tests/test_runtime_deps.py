"""Libraries loaded at run time: dlopen candidates in read-only data, system driver libraries."""

from __future__ import annotations

import shutil
import subprocess

import jsonschema
import pytest

from tests.fixtures.hygiene_sources import DLOPEN_SRC, DRIVER_STUB_SRC, USES_DRIVER, dlopen_candidates_source
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import (
    audit_json, audit_one as one, auditwheel_show, bundled_policy_with, by_rule, import_and_call, make_venv,
    pip_install,
)
from wheelcheck.data import system_drivers
from wheelcheck.elf.elf_summary import summarize
from wheelcheck.report.audit_json import audit_schema

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
    assert f.cause == "may load libplugin.so.3 at run time (named in its read-only data, not in NEEDED)"


LIBFOO_SRC = "int foo_version(void) { return 1; }\n"
FALLBACK_EXT = EXT.format("fallback")


def fallback_wheel(build, out, shipped: dict[str, str]):
    """An extension that tries dlopen("libfoo.so"), then dlopen("libfoo.so.1"), with RUNPATH $ORIGIN/lib,
    and ``shipped``: member path -> soname of a libfoo build."""
    ext = build.compile_c(dlopen_candidates_source("fallback", ("libfoo.so", "libfoo.so.1")), "fallback.so",
                          libs=("dl",), flags=("-Wl,-rpath,$ORIGIN/lib", "-Wl,--enable-new-dtags"))
    libs = {path: build.compile_c(LIBFOO_SRC, path.rsplit("/", 1)[-1], flags=(f"-Wl,-soname,{soname}",))
            for path, soname in shipped.items()}
    return build_wheel(out, "fallback", "1.0", TAG, {FALLBACK_EXT: ext, **libs})


def rows_of(report, path):
    return {r["soname"]: r["status"] for f in report.files if f.path == path for r in f.runtime_libraries}


def test_a_dlopen_fallback_name_is_not_unguaranteed(build, tmp_path):
    """blosc2: the extension names libtcc.so and libtcc.so.1 and ships lib/libtcc.so, which its RUNPATH
    $ORIGIN/lib reaches; libtcc.so.1 is only the name tried when the first fails."""
    wheel = fallback_wheel(build, tmp_path / "w", {"pkg/lib/libfoo.so": "libfoo.so"})
    w = one(wheel)
    assert rows_of(w, FALLBACK_EXT) == {"libfoo.so": "shipped", "libfoo.so.1": "fallback"}
    assert not by_rule(w, "dlopen-unguaranteed") and w.passed
    assert w.deserved_tag == auditwheel_show(wheel)["overall_tag"] != "linux_x86_64"
    code, report = audit_json(wheel)
    jsonschema.validate(report, audit_schema())  # the status is one the schema names
    assert code == 0 and report["schema_minor"] >= 2
    # and the loop does load the shipped libfoo.so, the first name, once installed
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, wheel).returncode == 0
    proc = import_and_call(python, "pkg.fallback", tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "1", proc.stderr


def test_dlopen_names_of_a_library_the_wheel_does_not_ship_stay_unguaranteed(build, tmp_path):
    """The control: without libfoo.so in the wheel, both names are read and neither is a fallback. They name one
    library, tried by both names (miniaudio tries libasound.so.2, then libasound.so): one finding names both."""
    w = one(fallback_wheel(build, tmp_path, {}))
    assert rows_of(w, FALLBACK_EXT) == {"libfoo.so": "unguaranteed", "libfoo.so.1": "unguaranteed"}
    (f,) = by_rule(w, "dlopen-unguaranteed")
    assert f.subject == "libfoo.so.1" and f.message.startswith("may load libfoo.so.1 (or libfoo.so) at run time")


def test_a_dlopen_fallback_of_a_whitelisted_library_is_not_unguaranteed(build, tmp_path):
    """libz.so.1 is on every manylinux system (the policy whitelists it): libz.so beside it is a fallback."""
    ext = build.compile_c(dlopen_candidates_source("zlibs", ("libz.so", "libz.so.1")), "zlibs.so", libs=("dl",))
    w = one(build_wheel(tmp_path, "zlibs", "1.0", TAG, {EXT.format("zlibs"): ext}))
    assert rows_of(w, EXT.format("zlibs")) == {"libz.so": "fallback", "libz.so.1": "allowed"}
    assert not by_rule(w, "dlopen-unguaranteed")


def test_glibcs_own_nss_modules_are_there_on_glibc_only(build, tmp_path):
    """From a real wheel (pyqtwebengine-qt5: Chromium names libnss_files.so.2 and libnss_compat.so.2 to load them
    before its sandbox starts): glibc builds them and ships them in its own package, so they were no library
    'there only if the user installed it', and a private copy would have to match the running glibc. musl has none."""
    names = ("libnss_files.so.2", "libnss_compat.so.2")
    ext = build.compile_c(dlopen_candidates_source("nssmods", names), "nssmods.so", libs=("dl",))
    w = one(build_wheel(tmp_path / "glibc", "nssmods", "1.0", TAG, {EXT.format("nssmods"): ext}))
    assert rows_of(w, EXT.format("nssmods")) == {n: "allowed" for n in names}
    assert not by_rule(w, "dlopen-unguaranteed")
    python = make_venv(tmp_path / "venv")  # for real: the first one loads, from this system's glibc
    assert pip_install(python, build_wheel(tmp_path / "glibc", "nssmods", "1.0", "cp311-cp311-linux_x86_64",
                                           {EXT.format("nssmods"): ext})).returncode == 0
    proc = import_and_call(python, "pkg.nssmods", tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "1", proc.stderr
    musl = build.compile_c(dlopen_candidates_source("nssmods", names), "nssmods_musl.so", target="x86_64-linux-musl")
    m = one(build_wheel(tmp_path / "musl", "nssmods", "1.0", "cp311-cp311-musllinux_1_2_x86_64",
                        {"pkg/nssmods.cpython-311-x86_64-linux-musl.so": musl}))
    assert m.libc == "musl" and by_rule(m, "dlopen-unguaranteed")


def test_a_dlopen_fallback_of_a_driver_is_not_unguaranteed(build, tmp_path):
    """vtk's glad loader tries libEGL.so.1, then libEGL.so: the first is the system's driver library."""
    ext = build.compile_c(dlopen_candidates_source("egls", ("libEGL.so.1", "libEGL.so")), "egls.so", libs=("dl",))
    w = one(build_wheel(tmp_path, "egls", "1.0", TAG, {EXT.format("egls"): ext}))
    assert rows_of(w, EXT.format("egls")) == {"libEGL.so.1": "driver", "libEGL.so": "fallback"}
    assert not by_rule(w, "dlopen-unguaranteed")


def test_a_dlopen_fallback_of_a_needed_system_library_is_not_unguaranteed(build, tmp_path):
    """open3d needs libGL.so.1 (NEEDED) and also names libGL.so: dlopen of the loaded name finds it. Here the
    extension needs libz.so.1, which the policy allows, and names libz.so only."""
    ext = build.compile_c(dlopen_candidates_source("needz", ("libz.so",)), "needz.so", libs=("dl", "z"),
                          flags=("-Wl,--no-as-needed",))
    w = one(build_wheel(tmp_path, "needz", "1.0", TAG, {EXT.format("needz"): ext}))
    assert "libz.so.1" in w.files[0].needed
    assert rows_of(w, EXT.format("needz")) == {"libz.so": "fallback"}
    assert not by_rule(w, "dlopen-unguaranteed")


# GDAL built with PROJ_STATIC (Fiona 1.8, rasterio 1.0/1.1): it links the repaired wheel's libproj-<hash>.so.12,
# imports dlopen for its plugins, and keeps the name libproj.so for messages only
LINKED_NAME_SRC = extension_source(
    "linkedname", "    return foo_version() + (plugin_name()[0] == 'l') - 1;",
    prelude="#include <dlfcn.h>\nint foo_version(void);\n"
            "static const char *volatile proj_name = \"libfoo.so\";\n"
            "const char *plugin_name(void) { return proj_name; }\n"
            "void *load_plugin(const char *path) { return dlopen(path, RTLD_NOW); }\n")


def test_the_name_of_a_library_the_file_links_under_a_repaired_name_is_a_fallback(build, tmp_path):
    """The file NEEDs the wheel's libfoo-1a2b3c4d.so.1.0.0 and names libfoo.so: it has the library, whatever it
    does with the name. The control is the hashed-graft case below: a file that only names it is warned."""
    graft = "linkedname.libs/libfoo-1a2b3c4d.so.1.0.0"
    libfoo = build.compile_c(LIBFOO_SRC, graft.rsplit("/", 1)[-1], flags=("-Wl,-soname,libfoo-1a2b3c4d.so.1.0.0",))
    ext = build.compile_c(LINKED_NAME_SRC, "linkedname.so", libs=("dl", libfoo),
                          flags=("-Wl,-rpath,$ORIGIN/../linkedname.libs",))
    wheel = build_wheel(tmp_path, "linkedname", "1.0", TAG, {EXT.format("linkedname"): ext, graft: libfoo})
    w = one(wheel)
    assert "libfoo-1a2b3c4d.so.1.0.0" in w.files[0].needed
    assert rows_of(w, EXT.format("linkedname")) == {"libfoo.so": "fallback"}
    assert not by_rule(w, "dlopen-unguaranteed") and w.passed
    assert w.deserved_tag == auditwheel_show(wheel)["overall_tag"]
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, wheel).returncode == 0
    proc = import_and_call(python, "pkg.linkedname", tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "1", proc.stderr


@pytest.mark.parametrize("names, member, message_end, fix", [
    # mysql-connector-python dlopens libkrb5.so and ships libkrb5.so.3: nothing was renamed
    (("libbar.so",), "pkg/lib/libbar.so.3",
     "; the wheel ships libbar.so.3, the library under another version's name, which dlopen(\"libbar.so\") will "
     "not find", "or ship the library as libbar.so"),
    # av's libgnutls dlopens libgmp.so.10, grafted by auditwheel from libgmp.so.10.5.0: renamed it is
    (("libbar.so.3",), "onename.libs/libbar-1a2b3c4d.so.3.0.1",
     "; the wheel ships it renamed to libbar-1a2b3c4d.so.3.0.1 (a repaired wheel's hashed name), which "
     "dlopen(\"libbar.so.3\") will not find", "or ship it under its own name libbar.so.3"),
    # the renamed graft's own version among the names the file tries: the message is about that one
    (("libbar.so.3", "libbar.so"), "onename.libs/libbar-1a2b3c4d.so.3.0.1",
     "; the wheel ships it renamed to libbar-1a2b3c4d.so.3.0.1 (a repaired wheel's hashed name), which "
     "dlopen(\"libbar.so.3\") will not find", "or ship it under its own name libbar.so.3"),
], ids=["another-version", "hashed-graft", "hashed-graft-two-names"])
def test_the_name_the_wheel_ships_instead_is_described_truly(build, tmp_path, names, member, message_end, fix):
    ext = build.compile_c(dlopen_candidates_source("onename", names), "onename.so", libs=("dl",),
                          flags=("-Wl,-rpath,$ORIGIN/lib", "-Wl,--enable-new-dtags"))
    name = member.rsplit("/", 1)[-1]
    bar = build.compile_c(LIBFOO_SRC, name, flags=(f"-Wl,-soname,{name}",))
    w = one(build_wheel(tmp_path, "onename", "1.0", TAG, {EXT.format("onename"): ext, member: bar}))
    assert rows_of(w, EXT.format("onename")) == dict.fromkeys(names, "unguaranteed")
    (f,) = by_rule(w, "dlopen-unguaranteed")
    assert f.subject == names[0] and f.message.endswith(message_end) and fix in f.hint and member in f.hint


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


def test_a_driver_numbered_by_its_release_is_a_driver_at_any_version(build, tmp_path):
    """drivers.json lists libnvidia-tileiras.so without a version: the driver names it by its release (.so.590.48.01,
    .so.615.09), so a file that needs any such name needs the driver, not an external library."""
    tile = build.compile_c(DRIVER_STUB_SRC, "libnvidia-tileiras.so.615.09", flags=("-Wl,-soname,libnvidia-tileiras.so.615.09",))
    ext = build.compile_c(USES_DRIVER, "usetile.so", libs=(tile,))
    w = one(build_wheel(tmp_path, "usetile", "1.0", TAG, {EXT.format("usetile"): ext}))
    assert not by_rule(w, "external-library") and w.deserved_tag.startswith("manylinux_") and w.passed
    (needed,) = by_rule(w, "driver-needed")
    assert needed.subject == "libnvidia-tileiras.so.615.09"


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


def egl_wheel(build, out, member: str, soname: str):
    """An extension that needs ``soname`` (NEEDED), shipped as ``member`` beside it (RUNPATH $ORIGIN/lib)."""
    egl = build.compile_c("int eglGetDisplay(void) { return 0; }\n", soname, flags=(f"-Wl,-soname,{soname}",))
    ext = build.compile_c(extension_source("useegl", "    return eglGetDisplay();",
                                           prelude="extern int eglGetDisplay(void);\n"),
                          "useegl.so", libs=(egl,), flags=("-Wl,-rpath,$ORIGIN/lib", "-Wl,--enable-new-dtags"))
    return build_wheel(out, "useegl", "1.0", TAG, {EXT.format("useegl"): ext, member: egl})


def test_an_unversioned_egl_is_not_the_system_driver(build, tmp_path):
    """kaleido ships SwiftShader's libEGL.so (soname libEGL.so), which Chromium loads by path: not glvnd's
    or Mesa's libEGL.so.1, whose major version the driver list names."""
    wheel = egl_wheel(build, tmp_path, "pkg/lib/libEGL.so", "libEGL.so")
    w = one(wheel)
    assert not by_rule(w, "driver-vendored") and w.passed
    theirs = auditwheel_show(wheel)
    assert w.deserved_tag == theirs["overall_tag"] != "linux_x86_64"
    assert not theirs.get("external_libs") and not w.external_libs


@pytest.mark.parametrize("member, soname", [
    ("pkg/lib/libEGL.so.1", "libEGL.so.1"),
    ("pkg/lib/libEGL-abcd1234.so.1.0.0", "libEGL-abcd1234.so.1.0.0"),  # auditwheel's graft of libEGL.so.1.0.0
])
def test_a_versioned_egl_is_the_system_driver(build, tmp_path, member, soname):
    wheel = egl_wheel(build, tmp_path, member, soname)
    w = one(wheel)
    (f,) = by_rule(w, "driver-vendored")
    assert f.file == member and f.subject == "libEGL.so.1" and f.severity == "error" and not w.passed
    assert w.deserved_tag == auditwheel_show(wheel)["overall_tag"]  # the tag is the same (docs/differences.md 13)


def test_a_driver_listed_without_a_version_matches_every_release(build, tmp_path):
    """libnvidia-fatbinaryloader is numbered by the driver's release: the list names it unversioned."""
    wheel = egl_wheel(build, tmp_path, "pkg/lib/libnvidia-fatbinaryloader.so.390.87",
                      "libnvidia-fatbinaryloader.so.390.87")
    (f,) = by_rule(one(wheel), "driver-vendored")
    assert f.file == "pkg/lib/libnvidia-fatbinaryloader.so.390.87" and f.subject == "libnvidia-fatbinaryloader.so"


def test_rocm_runtimes_are_shipped_like_cudart_not_drivers(build, tmp_path):
    """ROCm's HIP and HSA runtimes are user-space libraries (PyTorch's ROCm wheels ship torch/lib/libamdhip64.so
    and libhsa-runtime64.so.1), not the machine's driver: shipping them is no finding, and needing them unshipped
    is an external library, as auditwheel says (flydsl 0.5.0 needs libamdhip64.so.7 from /opt/rocm)."""
    for soname in ("libamdhip64.so", "libhsa-runtime64.so.1"):
        shipped = egl_wheel(build, tmp_path / soname, f"pkg/lib/{soname}", soname)
        w = one(shipped)
        assert not by_rule(w, "driver-vendored") and w.passed
        assert w.deserved_tag == auditwheel_show(shipped)["overall_tag"] != "linux_x86_64"
    needs = build_wheel(tmp_path / "needs", "useegl", "1.0", TAG, {
        member: data for member, data in _members(egl_wheel(build, tmp_path / "hip7", "pkg/lib/libamdhip64.so.7",
                                                            "libamdhip64.so.7")).items()
        if not member.startswith("pkg/lib/")})
    w = one(needs)
    (external,) = by_rule(w, "external-library")
    assert external.subject == "libamdhip64.so.7" and not by_rule(w, "driver-needed")
    assert set(auditwheel_show(needs)["external_libs"]) == {"libamdhip64.so.7"}


def _members(wheel) -> dict[str, bytes]:
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        return {n: zf.read(n) for n in zf.namelist() if ".dist-info/" not in n}


def test_nvidia_graphics_libraries_and_vulkan_icds_are_drivers(build, tmp_path):
    """What CUPTI, SDL and ncnn try by name: NVIDIA's GLX/EGL vendor libraries, OptiX, glvnd's GLES 1 and the
    Vulkan drivers of Mesa and Arm come from the machine (libnvidia-container mounts NVIDIA's from the host)."""
    names = ("libEGL_nvidia.so.0", "libGLX_nvidia.so.0", "libnvoptix.so.1", "libGLESv1_CM.so.1",
             "libvulkan_radeon.so", "libMaliVulkan.so.1", "libnvidia-glcore.so.590.44")
    ext = build.compile_c(dlopen_candidates_source("gfx", names), "gfx.so", libs=("dl",))
    w = one(build_wheel(tmp_path, "gfx", "1.0", TAG, {EXT.format("gfx"): ext}))
    assert rows_of(w, EXT.format("gfx")) == {n: "driver" for n in names}
    assert not by_rule(w, "dlopen-unguaranteed") and by_rule(w, "dlopen-driver")


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


@pytest.mark.parametrize("soname", ["libGLX.so.0", "libOpenGL.so.0"])
def test_glvnd_dispatchers_may_be_shipped(build, tmp_path, soname):
    """From a real wheel (imgui_bundle 1.93.0 ships auditwheel-renamed libGLX and libOpenGL beside libGLdispatch):
    glvnd's vendor-neutral libraries find the vendor's (libGLX_mesa, libGLX_nvidia) at run time, as an ICD
    loader does; the wheel renders under Mesa. Only glvnd has these names."""
    member = f"useegl.libs/{soname.split('.')[0]}-1a2b3c4d.{soname.split('.', 1)[1]}"
    wheel = egl_wheel(build, tmp_path, member, soname)
    w = one(wheel)
    assert not by_rule(w, "driver-vendored") and w.passed


@pytest.mark.parametrize("soname, shipped", [("libibverbs.so.1", True), ("librdmacm.so.1", True),
                                             ("libmlx5.so.1", False)])
def test_rdma_cores_dispatchers_may_be_shipped_its_providers_not(build, tmp_path, soname, shipped):
    """From a real wheel (pcapy-ng 2.1.0: AlmaLinux's libpcap, built with RDMA support, brought libibverbs into the wheel,
    and the wheel captures packets here with that copy loaded): libibverbs and librdmacm load the providers named in
    /etc/libibverbs.d and talk to the kernel through stable interfaces, like an ICD loader; a provider (libmlx5)
    needs libibverbs' private ABI of its own release, and stays a driver nobody may ship."""
    stem, version = soname.split(".", 1)
    renamed = f"{stem}-1de1263b.{version}"  # as auditwheel grafts it: needed and found under its new name
    wheel = egl_wheel(build, tmp_path, f"pkg/lib/{renamed}", renamed)
    w = one(wheel)
    assert bool(by_rule(w, "driver-vendored")) is not shipped and w.passed is shipped
    if shipped:
        assert w.deserved_tag == auditwheel_show(wheel)["overall_tag"] != "linux_x86_64"


# -- a name no code can hand to a loader

NAMES_ONLY_SRC = r"""
#include <stdio.h>
/* names a library for another reason than loading it (clang's driver lists libc++.so for the linker) */
static const char *const linker_inputs[] = {"libc++.so", "libplugin.so.3"};
int main(int argc, char **argv) { puts(linker_inputs[argc % 2]); return 0; }
"""
HELPER_SRC = r"""
#include <dlfcn.h>
void *load_plugin(const char *name) { return dlopen(name, RTLD_NOW); }
"""
HANDS_TO_HELPER_SRC = r"""
#include <stdio.h>
void *load_plugin(const char *name);
int main(void) { puts(load_plugin("libplugin.so.3") ? "loaded" : "missing"); return 0; }
"""
# a loader of another library, or code that may hand the name on (to ctypes), imported by a shared library
CALLS = {
    "g_module_open": ("void *g_module_open(const char *, int);", "g_module_open(NAME, 0)"),
    "PyUnicode_FromString": ("void *PyUnicode_FromString(const char *);", "PyUnicode_FromString(NAME)"),
}


def pyelftools_imports(path) -> set[str]:
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        return {s.name for s in ELFFile(f).get_section_by_name(".dynsym").iter_symbols()
                if s.name and s["st_shndx"] == "SHN_UNDEF"}


def test_a_name_the_file_cannot_hand_to_a_loader_is_no_finding(build, tmp_path):
    """A dynamically linked program that imports no loader (clangd and libc++.so, GnuTLS and libnettle.so.8):
    status no-loader, no warning; the program runs and loads nothing."""
    prog = build.compile_c(NAMES_ONLY_SRC, "lister", shared=False)
    assert not {"dlopen", "dlmopen"} & pyelftools_imports(prog)
    wheel = build_wheel(tmp_path, "lister", "1.0", "py3-none-linux_x86_64", {"lister/bin/lister": prog})
    w = one(wheel)
    assert rows_of(w, "lister/bin/lister") == {"libc++.so": "no-loader", "libplugin.so.3": "no-loader"}
    assert not by_rule(w, "dlopen-unguaranteed") and w.passed
    run = subprocess.run([str(prog)], capture_output=True, text=True, env={"LD_DEBUG": "libs"})
    assert run.returncode == 0 and "libplugin.so.3" in run.stdout and "find library=libplugin" not in run.stderr
    code, report = audit_json(wheel)
    jsonschema.validate(report, audit_schema())  # the status is one the schema names
    assert code == 0 and report["schema_minor"] >= 3


def test_a_name_handed_to_the_wheels_own_loading_helper_stays_a_warning(build, tmp_path):
    """The program imports no dlopen, but a library of the wheel it needs does: the name reaches dlopen."""
    helper = build.compile_c(HELPER_SRC, "libhelper.so", libs=("dl",), flags=("-Wl,-soname,libhelper.so",))
    prog = build.compile_c(HANDS_TO_HELPER_SRC, "runner", shared=False, libs=(helper,),
                           flags=("-Wl,-rpath,$ORIGIN/../lib", "-Wl,--enable-new-dtags"))
    assert "dlopen" not in pyelftools_imports(prog)
    w = one(build_wheel(tmp_path, "runner", "1.0", "py3-none-linux_x86_64",
                        {"runner/bin/runner": prog, "runner/lib/libhelper.so": helper}))
    assert rows_of(w, "runner/bin/runner") == {"libplugin.so.3": "unguaranteed"}
    (f,) = by_rule(w, "dlopen-unguaranteed")
    assert f.file == "runner/bin/runner"
    # for real: installed side by side, the program asks the loader for the library
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    shutil.copy(prog, tmp_path / "bin" / "runner")
    shutil.copy(helper, tmp_path / "lib" / "libhelper.so")
    run = subprocess.run([str(tmp_path / "bin" / "runner")], capture_output=True, text=True, env={"LD_DEBUG": "libs"})
    assert run.stdout.strip() == "missing" and "find library=libplugin.so.3" in run.stderr


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_name_a_loader_wrapper_or_python_may_load_stays_a_warning(build, tmp_path, call):
    declaration, use = CALLS[call]
    src = f'#define NAME "libplugin.so.3"\n{declaration}\nvoid *use_it(void) {{ return {use}; }}\n'
    lib = build.compile_c(src, "libuser.so")
    assert call in pyelftools_imports(lib) and "dlopen" not in pyelftools_imports(lib)
    w = one(build_wheel(tmp_path, "user", "1.0", TAG, {"user/libuser.so": lib}))
    assert rows_of(w, "user/libuser.so") == {"libplugin.so.3": "unguaranteed"}
    assert by_rule(w, "dlopen-unguaranteed")


def test_a_static_program_may_still_dlopen(build, tmp_path):
    """A static executable imports nothing: glibc's static dlopen cannot be told from no loader at all."""
    try:
        prog = build.compile_c(NAMES_ONLY_SRC, "static-lister", shared=False, flags=("-static",))
    except Exception as exc:  # noqa: BLE001 - no static libc on this machine
        pytest.skip(f"cannot link statically: {exc}")
    w = one(build_wheel(tmp_path, "lister", "1.0", "py3-none-linux_x86_64", {"lister/bin/lister": prog}))
    rows = rows_of(w, "lister/bin/lister")  # static glibc names libc.so.6 too (allowed)
    assert rows["libc++.so"] == rows["libplugin.so.3"] == "unguaranteed" and "no-loader" not in rows.values()


@pytest.mark.parametrize("name", ["libatiadlxx.so", "libnvidia-tileiras.so.615.09"])
def test_display_and_compute_driver_libraries_are_drivers(build, tmp_path, name):
    """x264's OpenCL lookahead (decord's vendored libx264) probes AMD's display library, which comes with the
    display driver; warp-lang 1.19 loads NVIDIA's libnvidia-tileiras (new in driver 590, CUDA 13.1: a compute
    library libnvidia-container mounts from the host), named by the driver's release. Drivers, never to ship."""
    ext = build.compile_c(dlopen_candidates_source("_drv", (name,)), "_drv.so", libs=("dl",))
    w = one(build_wheel(tmp_path, "drv", "1.0", TAG, {EXT.format("_drv"): ext}))
    assert not by_rule(w, "dlopen-unguaranteed")
    (driver,) = by_rule(w, "dlopen-driver")
    assert name in driver.message and driver.severity == "info"


def test_driver_names_match_other_versions_only_of_sonames_listed_without_one():
    from wheelcheck.audit.runtime_deps import drivers_of

    drivers = drivers_of(())
    assert "libnvidia-tileiras.so.590.48.01" in drivers and "libnvidia-tileiras.so" in drivers
    assert "libnvidia-ptxjitcompiler.so.1" in drivers and "libnvidia-ptxjitcompiler.so.2" not in drivers
    assert "libcuda" not in drivers and "libnvidia-tileiras-tools.so.1" not in drivers and 42 not in drivers


@pytest.mark.parametrize("soname", ["libnvoptix.so", "libnvoptix.so.1", "libnvoptix.so.580.65.06", "libnvcudla.so",
                                    "libnvrm_gpu.so"])
def test_every_name_a_driver_stack_installs_is_a_driver(build, tmp_path, soname):
    """OptiX's libnvoptix under its unversioned and release-numbered names, Jetson's cuDLA and nvrm: a wheel that
    needs them needs the machine's driver, and is never told to ship them."""
    stub = build.compile_c(DRIVER_STUB_SRC, soname, flags=(f"-Wl,-soname,{soname}",))
    ext = build.compile_c(USES_DRIVER, "usedrv.so", libs=(stub,))
    w = one(build_wheel(tmp_path, "usedrv", "1.0", TAG, {EXT.format("usedrv"): ext}))
    assert not by_rule(w, "external-library") and [f.subject for f in by_rule(w, "driver-needed")] == [soname]
