"""Members installers write other than they look: links, and files named like libraries that hold no ELF.

Built with gcc, audited, compared with auditwheel, pip-installed and imported. pip writes a link member as a
regular file holding the target's path, so:

- a link nothing loads by its name (``libalpha.so`` beside ``libalpha.so.1``) is a warning; the wheel
  installs and imports, and gets auditwheel's tag;
- a link some file needs by its name is no library: that file's need is external (the wheel fails its
  claimed tag), and the installed wheel really does not import;
- a Mach-O, empty or text member named ``.so`` is a warning, not bad input: auditwheel skips it.
"""
from __future__ import annotations

import platform
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import ALPHA_TIMES, LIBALPHA_SRC, extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one, auditwheel_show, by_rule, import_and_call, make_venv, pip_install, run_cli
from wheelcheck.elf import summarize

HOSTILE_TARGET = "../../../../etc/passwd"


def _as_links(*names: str):
    """``before_close`` for build_wheel: store ``names`` with a symbolic link's mode, as `zip --symlinks` does."""
    def mark(zf: zipfile.ZipFile) -> None:
        for name in names:
            info = zf.getinfo(name)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return mark


def _needs_alpha_by_its_soname(build) -> dict[str, bytes]:
    """``pkg/_needs`` (RPATH ``$ORIGIN/lib``) needs ``libalpha.so``, the soname of the library shipped as
    ``pkg/lib/libalpha.so.1``: members of a wheel in which no file is named what the extension needs."""
    _, beta = build.alpha_beta()
    alpha = build.compile_c(LIBALPHA_SRC, "libalpha.so", flags=("-Wl,-soname,libalpha.so",), libs=(beta,))
    ext = build.alpha_extension("_needs", alpha, "$ORIGIN/lib", new_dtags=False)
    return {"pkg/__init__.py": b"", f"pkg/_needs{EXT_SUFFIX}": ext.read_bytes(),
            "pkg/lib/libalpha.so.1": alpha.read_bytes(), "pkg/lib/libbeta.so.1": beta.read_bytes()}


@pytest.fixture(scope="module")
def dev_link(build, tmp_path_factory) -> Path:
    """``pkg/lib/libalpha.so`` is a link to ``libalpha.so.1``, which the extension needs by its soname."""
    alpha, beta = build.alpha_beta()
    ext = build.alpha_extension("_linked", alpha, "$ORIGIN/lib", new_dtags=False)
    tag = python_tag()
    return build_wheel(tmp_path_factory.mktemp("devlink"), "devlink", "1.0", f"{tag}-{tag}-linux_x86_64", {
        "pkg/__init__.py": b"",
        f"pkg/_linked{EXT_SUFFIX}": ext,
        "pkg/lib/libalpha.so.1": alpha,
        "pkg/lib/libbeta.so.1": beta,
        "pkg/lib/libalpha.so": b"libalpha.so.1",
        "pkg/lib/escape.so": HOSTILE_TARGET.encode(),
    }, before_close=_as_links("pkg/lib/libalpha.so", "pkg/lib/escape.so"))


def test_a_link_nothing_loads_is_a_warning_and_the_tag_is_auditwheels(dev_link):
    report = audit_one(dev_link)
    assert report.error is None and report.passed
    links = {f.file: f for f in by_rule(report, "symlink-member")}
    assert set(links) == {"pkg/lib/libalpha.so", "pkg/lib/escape.so"}
    assert all(f.severity == "warning" for f in links.values())
    assert "'libalpha.so.1'" in links["pkg/lib/libalpha.so"].message
    assert repr(HOSTILE_TARGET) in links["pkg/lib/escape.so"].message  # quoted, never followed
    assert sorted(f.path for f in report.files) == [f"pkg/_linked{EXT_SUFFIX}", "pkg/lib/libalpha.so.1",
                                                    "pkg/lib/libbeta.so.1"]
    assert not by_rule(report, "not-elf-library")  # the link's own finding says it all
    theirs = auditwheel_show(dev_link)
    assert report.deserved_tag == theirs["overall_tag"] and not theirs["external_libs"]


def test_pip_writes_the_link_as_a_file_holding_its_target_and_the_wheel_imports(dev_link, tmp_path):
    """What the finding says installers do, checked on pip itself."""
    python = make_venv(tmp_path / "venv")
    installed = pip_install(python, dev_link)
    assert installed.returncode == 0, installed.stderr
    (site,) = (tmp_path / "venv" / "lib").glob("python*/site-packages")
    link = site / "pkg" / "lib" / "libalpha.so"
    assert not link.is_symlink() and link.read_bytes() == b"libalpha.so.1"
    assert (site / "pkg" / "lib" / "escape.so").read_bytes() == HOSTILE_TARGET.encode()
    proc = import_and_call(python, "pkg._linked", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(ALPHA_TIMES)


@pytest.fixture(scope="module")
def needed_link(build, tmp_path_factory) -> Path:
    """The extension needs ``libalpha.so`` (the library's soname), shipped only as a link to the real file."""
    tag = python_tag()
    return build_wheel(tmp_path_factory.mktemp("neededlink"), "neededlink", "1.0",
                       f"{tag}-{tag}-manylinux_2_17_x86_64",
                       {**_needs_alpha_by_its_soname(build), "pkg/lib/libalpha.so": b"libalpha.so.1"},
                       before_close=_as_links("pkg/lib/libalpha.so"))


def test_a_link_a_file_needs_by_its_name_leaves_that_need_external(needed_link, tmp_path):
    report = audit_one(needed_link)
    assert not report.passed and report.deserved_tag == "linux_x86_64"
    (external,) = [f for f in by_rule(report, "external-library") if f.file == f"pkg/_needs{EXT_SUFFIX}"]
    assert external.message == ("needs libalpha.so; the wheel ships pkg/lib/libalpha.so by that name, but as a "
                                "symbolic link to 'libalpha.so.1', which installers write as a regular file "
                                "holding that path → linux at best")
    assert "a copy" in external.hint
    assert [f.file for f in by_rule(report, "symlink-member")] == ["pkg/lib/libalpha.so"]
    # the control: installed, the loader finds the text file pip wrote and the import fails
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, needed_link).returncode == 0
    proc = import_and_call(python, "pkg._needs", tmp_path)
    assert proc.returncode != 0 and "libalpha.so" in proc.stderr


MACH_O = b"\xcf\xfa\xed\xfe" + bytes(60)


@pytest.fixture(scope="module")
def not_elf(build, tmp_path_factory) -> Path:
    tag = python_tag()
    ext = build.compile_c(extension_source("_real"), "_real.so")
    return build_wheel(tmp_path_factory.mktemp("notelf"), "notelf", "1.0", f"{tag}-{tag}-linux_x86_64", {
        "pkg/__init__.py": b"",
        f"pkg/_real{EXT_SUFFIX}": ext,
        "pkg/darwin/_real.cpython-311-darwin.so": MACH_O,
        "pkg/placeholder.so": b"",
        "pkg/notes.so.1": b"just some text\n",
        "pkg/libintlc.so": b"INPUT (libintlc.so.5)\n",  # a GNU ld script: only the link editor reads it
    })


def test_files_named_like_libraries_that_hold_no_elf_are_warnings(not_elf):
    proc = run_cli("audit", "--any-platform-tag", not_elf)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = audit_one(not_elf)
    found = {f.file: f.message for f in by_rule(report, "not-elf-library")}
    assert found == {
        "pkg/darwin/_real.cpython-311-darwin.so": "is named like a shared library but holds a Mach-O file (macOS)",
        "pkg/placeholder.so": "is named like a shared library but holds nothing (it is empty)",
        "pkg/notes.so.1": "is named like a shared library but holds no ELF file (it starts with b'just some text\\n')",
    }
    assert all(f.severity == "warning" for f in by_rule(report, "not-elf-library"))
    assert [f.path for f in report.files] == [f"pkg/_real{EXT_SUFFIX}"]
    assert report.deserved_tag == auditwheel_show(not_elf)["overall_tag"]


def test_a_wheel_whose_only_library_holds_no_elf_is_pure_with_the_warning(tmp_path):
    wheel = build_wheel(tmp_path, "onlytext", "1.0", "py3-none-any", {"pkg/_mod.so": b"not a library\n"})
    report = audit_one(wheel)
    assert report.pure and report.passed and report.error is None
    assert [f.file for f in by_rule(report, "not-elf-library")] == ["pkg/_mod.so"]


def test_a_copy_found_by_its_soname_only_is_named_as_misnamed(build, tmp_path):
    """The loader searches directories for the file name: a shipped libalpha.so.1 whose soname is libalpha.so
    is not what a file needing libalpha.so finds, and no RUNPATH entry changes that (the finding used to
    suggest one)."""
    tag = python_tag()
    wheel = build_wheel(tmp_path, "misnamed", "1.0", f"{tag}-{tag}-linux_x86_64", _needs_alpha_by_its_soname(build))
    report = audit_one(wheel)
    (external,) = [f for f in by_rule(report, "external-library") if f.file == f"pkg/_needs{EXT_SUFFIX}"]
    assert external.message == ("needs libalpha.so; the wheel ships a library of that soname as "
                                "pkg/lib/libalpha.so.1, but the loader looks for a file named libalpha.so → linux at best")
    assert external.hint.startswith("ship it as pkg/lib/libalpha.so ")
    assert auditwheel_show(wheel)["overall_tag"] == report.deserved_tag == "linux_x86_64"
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, wheel).returncode == 0
    proc = import_and_call(python, "pkg._needs", tmp_path)
    assert proc.returncode != 0 and "libalpha.so" in proc.stderr



# device code and wheels built for another platform, in the repair tests' terms
TAG = "cp311-cp311-linux_x86_64"
EXT = "pkg/{}.cpython-311-x86_64-linux-gnu.so"
one = audit_one

@pytest.mark.parametrize("machine, number", [("EM_CUDA", 190), ("EM_AMDGPU", 224), ("EM_BPF", 247), ("EM_NONE", 0)])
def test_device_code_is_left_out_without_a_warning(build, tmp_path, machine, number):
    """A cubin (EM_CUDA), an AMD GPU code object, an eBPF program, an OpenCL kernel with no machine (prophet's TBB
    tests ship those): their runtime loads them, never ld.so. An x86_64 object with its e_machine set to the
    device's stands in for one (no device compiler here)."""
    import struct

    from elftools.elf.elffile import ELFFile

    ext = build.compile_c(extension_source("dev"), "dev.so")
    kernel = build.compile_c("int kernel_entry(int x) { return x * 2; }\n", "kernel.so")
    data = bytearray(kernel.read_bytes())
    struct.pack_into("<H", data, 18, number)  # e_machine
    device = tmp_path / "kernel.bin"
    device.write_bytes(bytes(data))
    with open(device, "rb") as f:
        assert ELFFile(f).header["e_machine"] == machine
    w = one(build_wheel(tmp_path, "dev", "1.0", TAG, {EXT.format("dev"): ext, "dev/kernels/kernel.bin": device}))
    assert w.error is None and w.passed and [f.path for f in w.files] == [EXT.format("dev")]
    assert not by_rule(w, "wrong-architecture")
    (info,) = by_rule(w, "device-code")
    assert info.severity == "info" and info.file == "dev/kernels/kernel.bin" and machine in info.message


def test_a_wheel_whose_elf_files_are_all_for_another_platform_fails(build, tmp_path):
    """An aarch64 build named x86_64, a glibc build named musllinux: nothing loads where the tags claim. auditwheel
    refuses both (exit 1); wheelcheck used to pass them as manylinux_2_5, judging no file."""
    arm = build.compile_c(extension_source("other"), "other.so", target="aarch64-linux-gnu.2.17")
    w = one(build_wheel(tmp_path / "arch", "other", "1.0", TAG, {EXT.format("other"): arm}))
    assert not w.passed and w.deserved_tag == "linux_x86_64" and by_rule(w, "wrong-architecture")
    (error,) = by_rule(w, "no-platform-elf")
    assert error.severity == "error" and "none of its 1 ELF file is for x86_64 glibc" in error.message
    glibc = build.compile_c(extension_source("other", "return getpid() > 0;", prelude="#include <unistd.h>\n"),
                            "other.so")  # NEEDED libc.so.6: a glibc file
    wheel = build_wheel(tmp_path / "libc", "other", "1.0", "cp311-cp311-musllinux_1_1_x86_64",
                        {"pkg/other.cpython-311-x86_64-linux-musl.so": glibc})
    w = one(wheel)
    assert not w.passed and by_rule(w, "wrong-libc") and by_rule(w, "no-platform-elf")
    refused = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True)
    assert refused.returncode != 0  # the oracle refuses it too
    # one file of the claimed platform beside the others: judged as before, the others a warning each
    mixed = one(build_wheel(tmp_path / "mixed", "other", "1.0", TAG,
                            {EXT.format("other"): glibc, "pkg/arm/other.so": arm}))
    assert mixed.passed and not by_rule(mixed, "no-platform-elf") and by_rule(mixed, "wrong-architecture")


def test_builds_for_other_architectures_in_a_wheel_that_claims_no_platform_are_an_info(build, tmp_path):
    """pvporcupine ships its library for five architectures in a py3-none-any wheel and loads the machine's own
    with ctypes: the builds for the other architectures are expected there."""
    libs = {f"pkg/lib/{arch}/libengine.so": build.compile_c("int engine(void) { return 1; }\n", "libengine.so",
                                                             target=target)
            for arch, target in (("x86_64", None), ("aarch64", "aarch64-linux-gnu.2.17"))}
    w = one(build_wheel(tmp_path, "engine", "1.0", "py3-none-any", libs))
    (other,) = by_rule(w, "wrong-architecture")
    assert other.severity == "info" and other.file == "pkg/lib/aarch64/libengine.so" and w.passed
    assert "is not an ELF file for x86_64 (built for aarch64)" in other.message


def test_a_tie_between_architectures_does_not_depend_on_member_order(build, tmp_path):
    """From a real wheel (interpret_core 0.7.8's py3-none-any wheel: two aarch64 and two x86_64 libebm files): the wheel
    was judged for whichever architecture the zip listed first. On a tie the one with more bytes wins."""
    small = build.compile_c("int engine(void) { return 1; }\n", "libengine.so")
    big = build.compile_c("char engine_pad[65536] = {1};\nint engine(void) { return engine_pad[7]; }\n", "big/libengine.so",
                          target="aarch64-linux-gnu.2.17")
    members = {"pkg/lib/x86_64/libengine.so": small, "pkg/lib/aarch64/libengine.so": big}
    first = one(build_wheel(tmp_path / "a", "engine", "1.0", "py3-none-any", members))
    second = one(build_wheel(tmp_path / "b", "engine", "1.0", "py3-none-any", dict(reversed(members.items()))))
    assert first.arch == second.arch == "aarch64" and big.stat().st_size > small.stat().st_size
    assert first.deserved_tag == second.deserved_tag


def test_a_glibc_build_that_also_claims_musllinux_fails(build, tmp_path):
    """Named for both libcs, a build that links glibc: pip installs it on Alpine too, where it cannot load. A file
    that needs no libc at all (ziglang's static zig claims both) may claim both."""
    glibc = build.compile_c(extension_source("both", "return getpid() > 0;", prelude="#include <unistd.h>\n"),
                            "both.so")
    both = "cp311-cp311-manylinux_2_17_x86_64.musllinux_1_1_x86_64"
    w = one(build_wheel(tmp_path / "glibc", "both", "1.0", both, {EXT.format("both"): glibc}))
    (error,) = [f for f in by_rule(w, "wrong-libc") if f.severity == "error"]
    assert not w.passed and "also claims musllinux_1_1_x86_64" in error.message
    neutral = build.compile_c(extension_source("both"), "both.so")  # needs nothing of any libc
    w = one(build_wheel(tmp_path / "neutral", "both", "1.0", both, {EXT.format("both"): neutral}))
    assert w.passed and not by_rule(w, "wrong-libc")


def test_an_extension_in_a_wheel_tagged_for_every_platform_is_a_warning(build, tmp_path):
    """array-record 0.4.1's py310-none-any wheel holds an x86-64 extension; pip picks it for aarch64 too. Here an
    extension zig-built for another architecture than this machine's, tagged py3-none-any, installs here, and the
    import fails. A ctypes library in such a wheel is no finding; nor is the same extension tagged for its platform,
    nor one of which the wheel carries a build per architecture (the package imports the machine's own)."""
    other = "aarch64" if platform.machine() != "aarch64" else "x86_64"
    arm = build.compile_c(extension_source("anyext"), "anyext.so", target=f"{other}-linux-gnu.2.17")
    w = one(build_wheel(tmp_path / "any", "anyext", "1.0", "py3-none-any", {"anyext.so": arm}))
    (warning,) = by_rule(w, "extension-in-any-wheel")
    assert warning.severity == "warning" and warning.file == "anyext.so" and w.passed
    assert f"built for {other} glibc, in a wheel tagged for every platform (py3-none-any)" in warning.message
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, tmp_path / "any" / "anyext-1.0-py3-none-any.whl").returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    imported = import_and_call(python, "anyext", elsewhere)  # glibc: "cannot open shared object file" (its machine)
    assert imported.returncode != 0 and "ImportError" in imported.stderr and "site-packages/anyext" in imported.stderr
    lib = build.compile_c("int engine(void) { return 1; }\n", "libengine.so", target=f"{other}-linux-gnu.2.17")
    w = one(build_wheel(tmp_path / "lib", "engine", "1.0", "py3-none-any", {"engine/libengine.so": lib}))
    assert not by_rule(w, "extension-in-any-wheel")
    w = one(build_wheel(tmp_path / "tagged", "anyext", "1.0", f"py3-none-manylinux_2_17_{other}", {"anyext.so": arm}))
    assert not by_rule(w, "extension-in-any-wheel") and w.passed
    native = build.compile_c(extension_source("anyext"), "anyext.so")
    w = one(build_wheel(tmp_path / "both", "anyext", "1.0", "py3-none-any",
                        {f"pkg/{other}/anyext.so": arm, f"pkg/{platform.machine()}/anyext.so": native}))
    assert not by_rule(w, "extension-in-any-wheel") and by_rule(w, "wrong-architecture")


ENGINE_USES_LIBC = "#include <string.h>\nint engine(const char *s) { return (int)strlen(s); }\n"


def test_builds_for_the_other_libc_in_a_wheel_that_claims_no_platform_are_an_info(build, tmp_path):
    """From a real wheel: tigerbeetle 0.17.9's py3-none-any wheel ships its client library built by zig for glibc
    (lib/x86_64-linux-gnu.2.27) and for musl (lib/x86_64-linux-musl), and loads the machine's own with ctypes;
    pyarmor-cli-core-alpine 8.1.2's holds only musl builds. zig links a musl library against "libc.so" (no
    libc.musl-x86_64.so.1), which glibc's loader cannot load (glibc's libc.so is a linker script) and musl's answers
    with itself: those files are musl's. They were judged as glibc files needing an external libc.so (a warning,
    and linux_x86_64 for the wheel)."""
    musl = build.compile_c(ENGINE_USES_LIBC, "libengine.so", target="x86_64-linux-musl")
    assert "libc.so" in summarize(musl.read_bytes(), "libengine.so").needed  # the bare name, as zig links musl
    glibc = build.compile_c(ENGINE_USES_LIBC, "gnu/libengine.so", target="x86_64-linux-gnu.2.17")
    w = one(build_wheel(tmp_path / "musl", "engine", "1.0", "py3-none-any", {"pkg/lib/x86_64-linux-musl/libengine.so": musl}))
    assert w.libc == "musl" and w.deserved_tag == "musllinux_1_2_x86_64" and w.passed, w.findings
    assert not w.external_libs and not by_rule(w, "external-library")
    both = {"pkg/lib/x86_64-linux-gnu/libengine.so": glibc, "pkg/lib/x86_64-linux-musl/libengine.so": musl}
    w = one(build_wheel(tmp_path / "both", "engine", "1.0", "py3-none-any", both))
    assert w.passed and not w.external_libs and not by_rule(w, "external-library"), w.findings
    (other,) = by_rule(w, "wrong-libc")
    assert other.severity == "info" and other.file in both and "it is left out of the verdict" in other.message
    judged = [f.path for f in w.files]
    assert judged == [p for p in both if p != other.file]
    # named for glibc, the musl build is still a file the wheel's platform cannot load: a warning, as before
    w = one(build_wheel(tmp_path / "tagged", "engine", "1.0", "py3-none-manylinux_2_17_x86_64", both))
    (other,) = by_rule(w, "wrong-libc")
    assert w.passed and other.severity == "warning" and other.file == "pkg/lib/x86_64-linux-musl/libengine.so"
    assert not by_rule(w, "external-library")
