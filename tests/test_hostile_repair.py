"""Repair under attack: a wheel that tries to make repair run a command, or graft a file of the machine that no
careful loader would load, into the wheel that will be published (docs/security.md).

Each wheel is built here with gcc and patchelf, the way a hostile build would write it; each test fails on a
repair that searches a relative RPATH entry, joins a NEEDED path onto the system directories, grafts programs,
or vouches for a member already under a graft's name.
"""
from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.vendoring import patchelf
from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli
from wheelcheck.errors import RepairError
from wheelcheck.policy.registry import bundled_policies
from wheelcheck.repair import RepairOptions, repair_wheel
from wheelcheck.sbom.os_packages import lookup_cache_clear, os_packages_of

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"
LIBX_SRC = "int x_value(void) { return 42; }\n"
EVIL_DIR = "--pipe=touch PWNED;m"  # rpm -qf reads a path of this spelling as --pipe=CMD and runs CMD


def _libx(build, body: str = LIBX_SRC) -> Path:
    return build.compile_c(body, "libx.so.1", flags=("-Wl,-soname,libx.so.1",))


def _ext_needing(build, tmp_path: Path, libx: Path, *, needed: str | None = None, rpath: str | None = None,
                 runpath: bool = False) -> Path:
    """An extension that calls x_value() from libx.so.1, its NEEDED then set to ``needed`` and its (DT_RPATH,
    or DT_RUNPATH) to ``rpath`` by patchelf, as a hostile build would leave them."""
    built = build.compile_c(extension_source("_x", "    return x_value();", prelude="extern int x_value(void);"),
                            f"_x{EXT_SUFFIX}", libs=(libx,))
    ext = tmp_path / "build" / f"_x{EXT_SUFFIX}"
    ext.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built, ext)
    if needed is not None:
        subprocess.run([patchelf(), "--replace-needed", "libx.so.1", needed, str(ext)], check=True)
    if rpath is not None:
        subprocess.run([patchelf(), *(() if runpath else ("--force-rpath",)), "--set-rpath", rpath, str(ext)],
                       check=True)
    return ext


def _wheel(tmp_path: Path, ext: Path, name: str = "victim", extra: dict | None = None) -> Path:
    return build_wheel(tmp_path / "dist" / name, name, "1.0", TAG, {f"{name}/_x{EXT_SUFFIX}": ext, **(extra or {})})


def _repair(wheel: Path, out: Path, *, lib_path=()):
    options = RepairOptions(policies=bundled_policies(), out_dir=out, lib_path=tuple(map(str, lib_path)), environ={})
    return repair_wheel(wheel, options)


# -- command execution through the SBOM's package-manager query


def test_a_relative_rpath_is_never_searched_and_reaches_no_command(build, tmp_path):
    """RPATH '--pipe=touch PWNED;m', a library planted at that path under the current directory: repair must
    not find it there (ld.so would read the entry against whatever directory the program runs in), and no
    package manager may read the path as an option. With rpm on the machine, the old search ran the command."""
    libx = _libx(build)
    planted = tmp_path / "cwd" / EVIL_DIR
    planted.mkdir(parents=True)
    shutil.copyfile(libx, planted / "libx.so.1")
    wheel = _wheel(tmp_path, _ext_needing(build, tmp_path, libx, rpath=EVIL_DIR))
    proc = run_cli("repair", "-w", tmp_path / "out", wheel, cwd=tmp_path / "cwd")
    assert not (tmp_path / "cwd" / "PWNED").exists()
    assert proc.returncode != 0 and not list((tmp_path / "out").glob("*.whl")), proc.stdout
    assert "libx.so.1" in proc.stdout + proc.stderr  # named as not found on this host


def test_package_managers_are_asked_only_about_absolute_paths_after_double_dash(tmp_path, monkeypatch):
    """The query itself: a path that reads as an option is never asked (the old query ran rpm's --pipe
    command in the current directory), and every path asked follows '--'."""
    from wheelcheck.sbom import os_packages

    lookup_cache_clear()
    monkeypatch.chdir(tmp_path)
    try:
        assert os_packages_of([f"{EVIL_DIR}/libx.so.1"]) == {f"{EVIL_DIR}/libx.so.1": None}
        assert not (tmp_path / "PWNED").exists()
        asked: list[list[str]] = []
        monkeypatch.setattr(os_packages, "run_query", lambda argv, any_status=False: asked.append(argv))
        monkeypatch.setattr(os_packages.shutil, "which", lambda name: f"/usr/bin/{name}")
        os_packages_of(["/opt/x/libx.so.1"])
    finally:
        lookup_cache_clear()
    assert asked and all(argv[argv.index("--") + 1].startswith("/") for argv in asked), asked


def test_license_queries_name_absolute_paths_or_package_names_after_double_dash(monkeypatch):
    """The license lookup asks dpkg and rpm about absolute paths, and apk about a package by the name it
    printed; a name that could read as an option (or a path) is never asked."""
    from wheelcheck.sbom import package_licenses as licenses
    from wheelcheck.sbom.bill_of_materials import OsPackage

    asked: list[list[str]] = []
    monkeypatch.setattr(licenses, "run_query", lambda argv, any_status=False: asked.append(argv))
    monkeypatch.setattr(licenses.shutil, "which", lambda name: f"/usr/bin/{name}")
    found = licenses.package_licenses({
        "/usr/lib/libgood.so.1": OsPackage("deb", "debian", "libgood1", "1"),
        "/usr/lib/libevil.so.1": OsPackage("deb", "debian", "--admindir=/tmp", "1"),
        "/usr/lib/librpm.so.1": OsPackage("rpm", "almalinux", "good", "1-1"),
        "/lib/libapk.so.1": OsPackage("apk", "alpine", "good", "1-r0"),
        "/lib/libapkevil.so.1": OsPackage("apk", "alpine", "-x", "1-r0")})
    assert found["/usr/lib/libevil.so.1"].problem and found["/lib/libapkevil.so.1"].problem
    assert asked and all("--" in argv for argv in asked)
    for argv in asked:
        for operand in argv[argv.index("--") + 1:]:
            assert operand.startswith("/") or operand in ("good", "good-doc"), argv


# -- host files that no loader would load


@pytest.mark.parametrize("form", ["absolute", "dotdot"])
def test_a_needed_path_is_an_error_naming_it(build, tmp_path, form):
    """An absolute NEEDED, or '../' climbing out of each system directory: ld.so opens a name with a slash as
    a path and searches nothing, so repair refuses it, naming the file and the entry."""
    libx = _libx(build)
    target = tmp_path / "elsewhere" / "libx.so.1"
    target.parent.mkdir()
    shutil.copyfile(libx, target)
    needed = str(target) if form == "absolute" else "../" * 12 + str(target).lstrip("/")
    wheel = _wheel(tmp_path, _ext_needing(build, tmp_path, libx, needed=needed))
    with pytest.raises(RepairError) as caught:
        _repair(wheel, tmp_path / "out")
    assert f"victim/_x{EXT_SUFFIX}" in str(caught.value) and repr(needed) in str(caught.value)
    assert not list((tmp_path / "out").glob("*.whl"))


def test_programs_are_never_grafted(build, tmp_path):
    """A PIE program is ET_DYN like a library: one named libx.so.1 in a --lib-path directory, and /usr/bin's
    programs reached through an absolute RUNPATH, are not libraries, and are never copied into the wheel."""
    libx = _libx(build)
    program = build.compile_c("int main(void) { return 0; }\nint x_value(void) { return 1; }\n", "xprog",
                              shared=False, flags=("-fPIE", "-pie", "-rdynamic"))
    assert subprocess.run(["readelf", "-h", str(program)], capture_output=True, text=True).stdout.count("DYN") == 1
    progdir = tmp_path / "progs"
    progdir.mkdir()
    shutil.copyfile(program, progdir / "libx.so.1")
    wheel = _wheel(tmp_path, _ext_needing(build, tmp_path, libx))
    with pytest.raises(RepairError, match="libx.so.1, which cannot be found on this host"):
        _repair(wheel, tmp_path / "out", lib_path=[progdir])
    ls = Path("/usr/bin/ls")
    if not ls.exists():
        pytest.skip("no /usr/bin/ls")
    wheel = _wheel(tmp_path, _ext_needing(build, tmp_path, libx, needed="ls", rpath="/usr/bin", runpath=True),
                   name="lsuser")
    with pytest.raises(RepairError, match="needs ls, which cannot be found on this host"):
        _repair(wheel, tmp_path / "out2")
    assert not list((tmp_path / "out2").glob("*.whl"))


def test_an_absolute_rpath_of_the_wheel_is_searched(build, tmp_path):
    """What a careful loader does search stays: an absolute build directory in RPATH (how CMake builds are
    repaired), and the report names the file it came from."""
    libx = _libx(build)
    builddir = tmp_path / "cmake-build"
    builddir.mkdir()
    shutil.copyfile(libx, builddir / "libx.so.1")
    wheel = _wheel(tmp_path, _ext_needing(build, tmp_path, libx, rpath=str(builddir)))
    outcome = _repair(wheel, tmp_path / "out")
    assert [g.source for g in outcome.grafted] == [str(builddir / "libx.so.1")]


def test_relative_lib_path_is_taken_against_the_current_directory_once(build, tmp_path):
    """--lib-path given relative is the user's own directory: searched, as an absolute path."""
    libx = _libx(build)
    (tmp_path / "cwd" / "libs").mkdir(parents=True)
    shutil.copyfile(libx, tmp_path / "cwd" / "libs" / "libx.so.1")
    wheel = _wheel(tmp_path, _ext_needing(build, tmp_path, libx))
    proc = run_cli("repair", "--format", "json", "--lib-path", "libs", "-w", tmp_path / "out", wheel,
                   cwd=tmp_path / "cwd")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert str(tmp_path / "cwd" / "libs" / "libx.so.1") in proc.stdout


# -- a member already under a graft's name


def test_a_member_under_a_graft_name_is_reused_only_with_the_grafts_bytes(build, tmp_path):
    """An honest copy (the bytes an earlier repair wrote) is reused; other bytes under that name are refused:
    the name says which host library it is, and the report and SBOM would say so."""
    libx = _libx(build)
    libdir = tmp_path / "libs"
    libdir.mkdir()
    shutil.copyfile(libx, libdir / "libx.so.1")
    ext = _ext_needing(build, tmp_path, libx)
    first = _repair(_wheel(tmp_path, ext), tmp_path / "first", lib_path=[libdir])
    (graft,) = first.grafted
    honest = zipfile.ZipFile(first.output).read(graft.member)

    again = _repair(_wheel(tmp_path, ext, name="victim", extra={graft.member: honest}), tmp_path / "again",
                    lib_path=[libdir])
    assert again.status == "repaired" and [g.already_in_wheel for g in again.grafted] == [True]

    forged = build.compile_c("int x_value(void) { return 666; }\n", f"forged/{graft.soname}",
                             flags=(f"-Wl,-soname,{graft.soname}",)).read_bytes()
    wheel = _wheel(tmp_path, ext, name="victim", extra={graft.member: forged})
    with pytest.raises(RepairError) as caught:
        _repair(wheel, tmp_path / "forged", lib_path=[libdir])
    assert graft.member in str(caught.value) and "other bytes" in str(caught.value)
    assert not list((tmp_path / "forged").glob("*.whl"))


def test_a_library_file_name_with_control_characters_is_not_grafted(build, tmp_path):
    """A --lib-path directory is the user's, but its file names become member names of the published wheel:
    one holding an escape sequence is refused, not copied."""
    libx = _libx(build)
    libdir = tmp_path / "libs"
    libdir.mkdir()
    odd = libdir / "libx.so.1\x1b[2K"
    shutil.copyfile(libx, odd)
    (libdir / "libx.so.1").symlink_to(odd.name)
    wheel = _wheel(tmp_path, _ext_needing(build, tmp_path, libx))
    with pytest.raises(RepairError, match="control characters"):
        _repair(wheel, tmp_path / "out", lib_path=[libdir])
    assert not list((tmp_path / "out").glob("*.whl"))


def test_a_wheels_sbom_cannot_write_metadata_lines_through_a_license_file_name(tmp_path):
    """What an earlier repair's SBOM says of a library's license file is the wheel's to say: a name that is not
    under .dist-info/licenses/, or that holds a line break (a header of its own in METADATA), is not declared."""
    from wheelcheck.elf.elf_patch import ElfPatch
    from wheelcheck.repair.graft_licenses import plan_licenses
    from wheelcheck.repair.graft_plan import Graft
    from wheelcheck.sbom.bill_of_materials import ComponentLicense
    from wheelcheck.wheel.wheel_reader import WheelReader

    injected = "evil-1.0.dist-info/licenses/x\nRequires-Dist: malware"
    elsewhere = "evil/module.py"
    wheel = build_wheel(tmp_path, "evil", "1.0", f"{python_tag()}-{python_tag()}-linux_x86_64", {
        injected: b"text", elsewhere: b"", "evil.libs/liba-1a2b3c4d.so.1": b"", "evil.libs/libb-1a2b3c4d.so.1": b""})
    grafts = [Graft(member, member.rsplit("/", 1)[1], "/usr/lib/x.so", "/usr/lib/x.so", "0" * 64, ("x.so",), ElfPatch(),
                    in_wheel=True) for member in ("evil.libs/liba-1a2b3c4d.so.1", "evil.libs/libb-1a2b3c4d.so.1")]
    earlier = {"evil.libs/liba-1a2b3c4d.so.1": ComponentLicense("MIT", injected),
               "evil.libs/libb-1a2b3c4d.so.1": ComponentLicense("MIT", elsewhere)}
    with WheelReader(wheel) as reader:
        licensing = plan_licenses(reader, grafts, "evil.libs", {}, earlier=earlier)
    assert [g.file for g in licensing.licenses] == [None, None] and licensing.metadata is None
