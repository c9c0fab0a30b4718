"""Unsafe loading and linking: executable stack, text relocations, RPATH/RUNPATH outside the wheel."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.fixtures.hygiene_sources import TEXTREL_SRC
from tests.fixtures.sources import extension_source
from tests.fixtures.vendoring import patchelf
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one as one, by_rule, bundled_policy_with

TAG = "cp311-cp311-linux_x86_64"
EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"


def readelf(flag: str, path) -> str:
    return subprocess.run(["readelf", flag, "-W", str(path)], capture_output=True, text=True, check=True).stdout


def test_executable_stack_is_an_error(build, tmp_path):
    ext = build.compile_c(extension_source("stacky"), "stacky.so", flags=("-Wl,-z,execstack",))
    stack = next(line for line in readelf("-l", ext).splitlines() if "GNU_STACK" in line)
    assert "RWE" in stack  # what the linker wrote
    w = one(build_wheel(tmp_path, "stacky", "1.0", TAG, {EXT.format("stacky"): ext}))
    (f,) = by_rule(w, "executable-stack")
    assert f.severity == "error" and f.file == EXT.format("stacky") and not w.passed
    assert "2.41" in f.explanation and "2.41" not in f.message  # why, apart from what


def test_executable_stack_is_a_warning_on_musl(build, tmp_path):
    """musl's loader reads only PT_GNU_STACK's size, never its flags (ldso/dynlink.c, map_library): the
    library loads on every musl system, so the request is a warning there, not a failed audit."""
    built = build.compile_c(extension_source("stacky", python_h=False), "stacky.so", target="x86_64-linux-musl")
    ext = tmp_path / "stacky.so"  # zig's linker takes no -z execstack: patchelf sets the flag instead
    shutil.copy(built, ext)
    subprocess.run([patchelf(), "--set-execstack", str(ext)], check=True)
    stack = next(line for line in readelf("-l", ext).splitlines() if "GNU_STACK" in line)
    assert "RWE" in stack
    name = "pkg/stacky.cpython-311-x86_64-linux-musl.so"
    w = one(build_wheel(tmp_path, "stacky", "1.0", "cp311-cp311-musllinux_1_2_x86_64", {name: ext}))
    (f,) = by_rule(w, "executable-stack")
    assert w.libc == "musl" and f.severity == "warning" and f.file == name and w.passed
    assert "musl" in f.explanation and "2.41" in f.explanation


def test_default_build_has_no_loading_findings(build, tmp_path):
    ext = build.compile_c(extension_source("tidy"), "tidy.so")
    w = one(build_wheel(tmp_path, "tidy", "1.0", TAG, {EXT.format("tidy"): ext}))
    rules = {"executable-stack", "text-relocations", "rpath-absolute", "rpath-world-writable", "rpath-relative",
             "rpath-escapes-wheel"}
    assert not [f for f in w.findings if f.rule in rules]


def test_text_relocations_warn(build, tmp_path):
    ext = build.compile_c(TEXTREL_SRC, "textrel.so", flags=("-Wl,-z,notext",))
    assert "TEXTREL" in readelf("-d", ext)
    w = one(build_wheel(tmp_path, "textrel", "1.0", TAG, {EXT.format("textrel"): ext}))
    (f,) = by_rule(w, "text-relocations")
    assert f.severity == "warning" and f.file == EXT.format("textrel") and w.passed


@pytest.mark.parametrize("entry, rule, severity", [
    ("/tmp/build", "rpath-world-writable", "warning"),
    ("/dev/shm/x", "rpath-world-writable", "warning"),
    ("/opt/build/lib", "rpath-absolute", "warning"),
    ("build/lib", "rpath-relative", "warning"),
    ("$ORIGIN/../../../../lib", "rpath-escapes-wheel", "warning"),
    ("$ORIGIN/../pkg.libs", None, None),
    ("$ORIGIN/../torch/lib", None, None),  # another package in site-packages: inside the install tree
])
def test_rpath_entries(build, tmp_path, entry, rule, severity):
    ext = build.compile_c(extension_source("rp"), "rp.so", flags=(f"-Wl,-rpath,{entry}",))
    assert entry in readelf("-d", ext)
    w = one(build_wheel(tmp_path, "rp", "1.0", TAG, {EXT.format("rp"): ext}))
    found = [f for f in w.findings if f.rule.startswith("rpath-")]
    if rule is None:
        assert not found
        return
    (f,) = found
    assert (f.rule, f.severity, f.file) == (rule, severity, EXT.format("rp")) and entry in f.message
    assert w.passed == (severity != "error")


def test_an_entry_listed_twice_is_one_finding(build, tmp_path):
    """A build system that adds its -rpath again (the linker keeps both): one finding for the one entry."""
    ext = build.compile_c(extension_source("rp"), "rp.so", flags=("-Wl,-rpath,/opt/build/lib:/opt/build/lib",))
    assert "[/opt/build/lib:/opt/build/lib]" in readelf("-d", ext)
    w = one(build_wheel(tmp_path, "rp", "1.0", TAG, {EXT.format("rp"): ext}))
    (f,) = by_rule(w, "rpath-absolute")
    assert "/opt/build/lib" in f.message


def test_rule_settings_turn_a_rule_off(build, tmp_path):
    ext = build.compile_c(extension_source("stacky"), "stacky.so", flags=("-Wl,-z,execstack",))
    wheel = build_wheel(tmp_path, "stacky", "1.0", TAG, {EXT.format("stacky"): ext})
    policy = bundled_policy_with(tmp_path / "lenient.json", rules={"executable-stack": "off"})
    w = one(wheel, policy_file=policy)
    assert not by_rule(w, "executable-stack") and w.passed


@pytest.mark.parametrize("value", ["$ORIGIN/../lib:", ":$ORIGIN/../lib", "$ORIGIN/../lib::$ORIGIN"])
def test_an_empty_search_path_entry_is_the_working_directory(build, tmp_path, value):
    """clangd 22.1.1's RUNPATH is "$ORIGIN/../lib:": glibc searches the empty entry as the working directory. The
    program here finds libcwd.so only when started from the directory that holds it."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    lib = build.compile_c("int cwd_answer(void) { return 42; }\n", "libcwd.so", flags=("-Wl,-soname,libcwd.so",))
    (cwd / "libcwd.so").write_bytes(lib.read_bytes())
    program = build.compile_c("int cwd_answer(void);\nint main(void) { return cwd_answer() == 42 ? 0 : 1; }\n",
                              "tool", shared=False, libs=(lib,),
                              flags=(f"-Wl,-rpath,{value}", "-Wl,--enable-new-dtags"))
    assert subprocess.run([str(program)], cwd=cwd).returncode == 0
    assert subprocess.run([str(program)], cwd=tmp_path, capture_output=True).returncode != 0
    w = one(build_wheel(tmp_path / "w", "tool", "1.0", TAG, {"tool-1.0.data/scripts/tool": program}))
    (f,) = by_rule(w, "rpath-relative")
    assert f.message == f"RUNPATH {value} has an empty entry, which the loader reads as the process's working directory"
