"""Unsafe loading and linking: executable stack, text relocations, RPATH/RUNPATH outside the wheel."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.fixtures.compat_wheels import RUNNABLE_SRC, RUNTIME_SRC
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


def test_a_runnable_library_s_executable_stack_is_a_library_s(build, tmp_path):
    """A library that names an interpreter and prints its version when run (libQt6Core.so.6's shape) is dlopened
    like any library, so glibc 2.41 refuses its executable stack: an error. A program's is a warning."""
    flags = ("-Wl,-z,execstack", "-Wl,-e,rt_main")
    runnable = build.compile_c(RUNTIME_SRC + RUNNABLE_SRC, "librun.so.1", flags=("-Wl,-soname,librun.so.1", *flags))
    program = build.compile_c("int main(void) { return 0; }\n", "stacky-tool", shared=False,
                              flags=("-pie", "-fPIE", "-Wl,-z,execstack"))
    assert "RWE" in next(line for line in readelf("-l", runnable).splitlines() if "GNU_STACK" in line)
    assert "INTERP" in readelf("-l", runnable)
    w = one(build_wheel(tmp_path, "stacky", "1.0", TAG, {
        "pkg/lib/librun.so.1": runnable, "stacky-1.0.data/scripts/stacky-tool": program}))
    assert {f.file: f.severity for f in by_rule(w, "executable-stack")} == {
        "pkg/lib/librun.so.1": "error", "stacky-1.0.data/scripts/stacky-tool": "warning"}


def test_default_build_has_no_loading_findings(build, tmp_path):
    ext = build.compile_c(extension_source("tidy"), "tidy.so")
    w = one(build_wheel(tmp_path, "tidy", "1.0", TAG, {EXT.format("tidy"): ext}))
    rules = {"executable-stack", "text-relocations", "rpath-absolute", "rpath-world-writable", "rpath-relative",
             "rpath-escapes-wheel"}
    assert not [f for f in w.findings if f.rule in rules]


def relocations_in_read_only_segments(path) -> list[tuple[int, str]]:
    """(offset, type) of the dynamic relocations readelf lists at an address of a PT_LOAD without W."""
    segments = [line.split() for line in readelf("-l", path).splitlines() if line.strip().startswith("LOAD")]
    read_only = [(int(f[2], 16), int(f[2], 16) + int(f[4], 16)) for f in segments if "W" not in "".join(f[6:-1])]
    found = []
    for line in readelf("-r", path).splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2].startswith("R_") and all(c in "0123456789abcdef" for c in fields[0]):
            offset = int(fields[0], 16)
            if any(start <= offset < end for start, end in read_only):
                found.append((offset, fields[2]))
    return found


def test_text_relocations_warn(build, tmp_path):
    ext = build.compile_c(TEXTREL_SRC, "textrel.so", flags=("-Wl,-z,notext",))
    assert "TEXTREL" in readelf("-d", ext)
    in_code = relocations_in_read_only_segments(ext)
    assert in_code and all(kind != "R_X86_64_NONE" for _o, kind in in_code)
    w = one(build_wheel(tmp_path, "textrel", "1.0", TAG, {EXT.format("textrel"): ext}))
    (f,) = by_rule(w, "text-relocations")
    assert f.severity == "warning" and f.file == EXT.format("textrel") and w.passed
    assert f.message == f"has text relocations (DT_TEXTREL) ({len(in_code)} relocation" \
                        f"{'s patch' if len(in_code) > 1 else ' patches'} its read-only segments)"
    assert "-fPIC" in f.hint


def test_textrel_with_only_none_placeholders_in_the_code_says_so(build, tmp_path):
    """sccache 0.16 riscv64: old GNU ld relaxed every relocation of the code into an R_RISCV_NONE placeholder and
    kept DT_TEXTREL. Here the x86_64 text relocation is turned into R_X86_64_NONE (r_info 0) in the file; glibc
    still loads it (and still makes the code writable while relocating, the warning's reason)."""
    from elftools.elf.elffile import ELFFile

    ext = build.compile_c(TEXTREL_SRC, "textrel.so", flags=("-Wl,-z,notext",))
    in_code = {offset for offset, _kind in relocations_in_read_only_segments(ext)}
    data = bytearray(ext.read_bytes())
    with open(ext, "rb") as f:
        rela = ELFFile(f).get_section_by_name(".rela.dyn")
        base, entsize = rela["sh_offset"], rela["sh_entsize"]
        entries = [(i, r["r_offset"]) for i, r in enumerate(rela.iter_relocations())]
    patched = [i for i, offset in entries if offset in in_code]
    assert patched
    for i in patched:
        data[base + i * entsize + 8: base + i * entsize + 16] = bytes(8)  # r_info: symbol 0, type R_X86_64_NONE
    none = tmp_path / "textrel_none.so"
    none.write_bytes(bytes(data))
    assert {kind for _o, kind in relocations_in_read_only_segments(none)} == {"R_X86_64_NONE"}
    assert "TEXTREL" in readelf("-d", none)
    loads = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(none)!r})"], capture_output=True)
    assert loads.returncode == 0, loads.stderr
    w = one(build_wheel(tmp_path, "textrel", "1.0", TAG, {EXT.format("textrel"): none}))
    (f,) = by_rule(w, "text-relocations")
    assert f.severity == "warning" and w.passed
    assert "no relocation patches its read-only segments" in f.message
    assert "-fPIC" not in f.hint and "-z notext" in f.hint and "newer binutils" in f.hint


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
    assert f.message == f"RUNPATH '{value}' has an empty entry, which the loader reads as the process's working directory"
