"""The fixture machinery itself: cross builds, wheel writing, hostile wheels."""
from __future__ import annotations

import csv
import importlib.util
import io
import platform
import stat
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from tests.fixtures import wheels
from tests.fixtures.compile import (ELF_MACHINES, ZIG_MUSL_TARGETS, ZIG_TARGETS, CompileError,
                                    compile_c, python_h_works, zig_triple)
from tests.fixtures.sources import (CXX_LIB_SRC, LIBC_USER_SRC, extension_source,
                                    math_extension_source)

HOST_X86_64 = platform.machine() == "x86_64"
ALL_TARGETS = [(arch, t) for arch, t in ZIG_TARGETS.items()] + [
    (arch, t) for arch, t in ZIG_MUSL_TARGETS.items()]


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def elf_summary(path: Path) -> dict:
    """machine, NEEDED, exported and imported dynamic symbols, GLIBC_ versions required."""
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        dynamic = elf.get_section_by_name(".dynamic")
        needed = [t.needed for t in dynamic.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        dynsym = elf.get_section_by_name(".dynsym")
        exported, imported = set(), set()
        for sym in dynsym.iter_symbols():
            if sym.name:
                (imported if sym["st_shndx"] == "SHN_UNDEF" else exported).add(sym.name)
        versions = set()
        verneed = elf.get_section_by_name(".gnu.version_r")
        if verneed is not None:
            for _, auxs in verneed.iter_versions():
                versions |= {aux.name for aux in auxs}
        return {"machine": elf["e_machine"], "needed": needed, "exported": exported,
                "imported": imported, "versions": versions}


def glibc_versions(summary: dict) -> list[tuple[int, ...]]:
    return [_version(v[len("GLIBC_"):]) for v in summary["versions"] if v.startswith("GLIBC_2")]


@pytest.mark.parametrize("arch,target", ALL_TARGETS, ids=[t for _, t in ALL_TARGETS])
def test_zig_target_builds_shared_library(build, arch, target):
    lib = build.compile_c(LIBC_USER_SRC, "libuser.so", target=target)
    info = elf_summary(lib)
    assert info["machine"] == ELF_MACHINES[arch]
    assert "libc_user" in info["exported"]
    if "musl" in target:
        assert info["needed"] == ["libc.so"] and not info["versions"]
    else:
        assert "libc.so.6" in info["needed"]
        floor = _version(target.split("-gnu")[1].split(".", 1)[1])
        assert glibc_versions(info) and max(glibc_versions(info)) <= floor

    mod = build.compile_c(extension_source("xmod", python_h=python_h_works(target)),
                          "xmod.so", target=target)
    info = elf_summary(mod)
    assert info["machine"] == ELF_MACHINES[arch]
    assert "PyInit_xmod" in info["exported"]
    assert {"PyModule_Create2", "PyLong_FromLong"} <= info["imported"]


def test_zig_triple():
    assert zig_triple("x86_64", glibc="2.28") == "x86_64-linux-gnu.2.28"
    assert zig_triple("armv7l") == "arm-linux-gnueabihf.2.17"
    assert zig_triple("aarch64", musl=True) == "aarch64-linux-musl"
    assert not python_h_works(ZIG_TARGETS["i686"]) and not python_h_works(ZIG_TARGETS["armv7l"])
    assert python_h_works(ZIG_TARGETS["x86_64"]) and python_h_works(None)


def _import_from(path: Path, name: str, tmp_path: Path):
    dest = tmp_path / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}"
    dest.write_bytes(path.read_bytes())
    spec = importlib.util.spec_from_file_location(name, dest)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("python_h", [True, False], ids=["Python.h", "stub"])
def test_host_extension_imports(build, tmp_path, python_h):
    name = f"wcfix_{'real' if python_h else 'stub'}"
    src = extension_source(name, "    return 6 * 7;", python_h=python_h)
    so = build.compile_c(src, f"{name}.so")
    assert _import_from(so, name, tmp_path).call() == 42


@pytest.mark.skipif(not HOST_X86_64, reason="GLIBC_2.29 exp2/log2 are x86_64 facts")
def test_math_module_glibc_versions(build, tmp_path):
    host = build.compile_c(math_extension_source("wcmath"), "wcmath.so", libs=("m",))
    host_info = elf_summary(host)
    if _version(platform.libc_ver()[1] or "0") >= (2, 29):
        assert "GLIBC_2.29" in host_info["versions"]
    assert _import_from(host, "wcmath", tmp_path).call() == 12

    old = build.compile_c(math_extension_source("wcmath"), "wcmath.so", libs=("m",),
                          target=ZIG_TARGETS["x86_64"])
    old_info = elf_summary(old)
    assert {"exp2", "log2"} <= old_info["imported"]
    assert max(glibc_versions(old_info)) <= (2, 17)


@pytest.mark.parametrize("target", [None, ZIG_TARGETS["aarch64"]], ids=["host", "aarch64"])
def test_alpha_needs_beta(build, target):
    alpha, beta = build.alpha_beta(target)
    assert alpha.name == "libalpha.so.1" and beta.name == "libbeta.so.1"
    info = elf_summary(alpha)
    assert "libbeta.so.1" in info["needed"]
    assert "beta_value" in info["imported"] and "alpha_value" in info["exported"]


@pytest.mark.parametrize("abi", [0, 1])
def test_host_cxx_abi(build, abi):
    lib = build.compile_c(CXX_LIB_SRC, "libcxx.so", cxx=True, lang_std="c++11",
                          flags=(f"-D_GLIBCXX_USE_CXX11_ABI={abi}",))
    info = elf_summary(lib)
    assert "libstdc++.so.6" in info["needed"]
    assert any(v.startswith("GLIBCXX_") for v in info["versions"])
    assert any("cxx11" in s for s in info["exported"] | info["imported"]) == bool(abi)


def test_build_cache_and_errors(build, tmp_path):
    before = build.builds
    first = build.compile_c("int cached_fn(void) { return 1; }", "libcached.so")
    again = build.compile_c("int cached_fn(void) { return 1; }", "libcached.so")
    assert first == again and build.builds == before + 1
    other = build.compile_c("int cached_fn(void) { return 1; }", "libcached.so", flags=("-O0",))
    assert other != first and build.builds == before + 2

    with pytest.raises(CompileError, match="not_a_type"):
        compile_c("not_a_type x = ;", tmp_path / "libbroken.so")
    with pytest.raises(CompileError, match="not_a_type"):
        compile_c("not_a_type x = ;", tmp_path / "libbroken.so", target=ZIG_TARGETS["x86_64"])


def _read_record(zf: zipfile.ZipFile, name: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(zf.read(name).decode())))


def test_build_wheel(build, tmp_path):
    so = build.compile_c(extension_source("_mod"), "_mod.so")
    members = {"pkg/__init__.py": b"", "pkg/_mod.cpython-311-x86_64-linux-gnu.so": so}
    tag = "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64"
    path = wheels.build_wheel(tmp_path / "a", "demo-pkg", "1.0", tag, members)
    assert path.name == f"demo_pkg-1.0-{tag}.whl"
    again = wheels.build_wheel(tmp_path / "b", "demo-pkg", "1.0", tag, members)
    assert path.read_bytes() == again.read_bytes()  # deterministic

    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        assert names[-1] == "demo_pkg-1.0.dist-info/RECORD"
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zf.infolist())
        rows = _read_record(zf, "demo_pkg-1.0.dist-info/RECORD")
        assert sorted(r[0] for r in rows) == sorted(names)
        for arc, digest, size in rows:
            if arc.endswith("RECORD"):
                assert digest == size == ""
                continue
            data = zf.read(arc)
            assert digest == wheels.record_hash(data) and int(size) == len(data)
            assert "=" not in digest[len("sha256="):]
        mode = zf.getinfo("pkg/_mod.cpython-311-x86_64-linux-gnu.so").external_attr >> 16
        assert stat.S_ISREG(mode) and stat.S_IMODE(mode) == 0o755
        assert stat.S_IMODE(zf.getinfo("pkg/__init__.py").external_attr >> 16) == 0o644
        wheel_file = zf.read("demo_pkg-1.0.dist-info/WHEEL").decode().splitlines()
        assert "Wheel-Version: 1.0" in wheel_file and "Root-Is-Purelib: false" in wheel_file
        assert [ln for ln in wheel_file if ln.startswith("Tag:")] == [
            "Tag: cp311-cp311-manylinux2014_x86_64", "Tag: cp311-cp311-manylinux_2_17_x86_64"]
        assert zf.read("pkg/_mod.cpython-311-x86_64-linux-gnu.so") == so.read_bytes()

    bare = wheels.build_wheel(tmp_path / "c", "bare", "1.0", wheels.TAG, {"x.py": b"1"}, record=False,
                              root_is_purelib=True)
    with zipfile.ZipFile(bare) as zf:
        assert "bare-1.0.dist-info/RECORD" not in zf.namelist()
        assert b"Root-Is-Purelib: true" in zf.read("bare-1.0.dist-info/WHEEL")


def test_hostile_unreadable(tmp_path):
    for make in (wheels.not_a_zip, wheels.truncated_zip):
        path = make(tmp_path)
        assert path.name.endswith("-0.1-cp311-cp311-linux_x86_64.whl")
        with pytest.raises(zipfile.BadZipFile):
            zipfile.ZipFile(path)
    assert (tmp_path / f"truncated-0.1-{wheels.TAG}.whl").read_bytes()[:4] == b"PK\x03\x04"


@pytest.mark.parametrize("make,name", [(wheels.member_with_dotdot, "../evil.so"),
                                       (wheels.member_absolute, "/etc/evil.so")])
def test_hostile_names(tmp_path, make, name):
    with zipfile.ZipFile(make(tmp_path)) as zf:
        assert name in zf.namelist()


def test_hostile_duplicate_and_symlink(tmp_path):
    with zipfile.ZipFile(wheels.duplicate_members(tmp_path)) as zf:
        names = zf.namelist()
        assert names.count(wheels.EXT_NAME) == 2
    with zipfile.ZipFile(wheels.symlink_member(tmp_path)) as zf:
        mode = zf.getinfo("pkg/link.so").external_attr >> 16
        assert stat.S_ISLNK(mode) and zf.read("pkg/link.so") == b"../../../../etc/passwd"


def test_hostile_bombs(tmp_path):
    with zipfile.ZipFile(wheels.zip_bomb_declared_size(tmp_path)) as zf:
        info = zf.getinfo(wheels.EXT_NAME)
        assert info.file_size == 2**40 and info.compress_size < 1000
    path = wheels.zip_bomb_ratio(tmp_path)
    assert path.stat().st_size < 1_000_000
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("pkg/_bomb.so")
        assert info.file_size == 200 * 2**20 and info.file_size / info.compress_size > 1000
        assert zf.testzip() is None  # honest: sizes and CRC are right


def test_hostile_members(build, tmp_path):
    real = build.compile_c(extension_source("_mod"), "_mod.so")
    with zipfile.ZipFile(wheels.so_not_elf(tmp_path)) as zf:
        assert zf.read(wheels.EXT_NAME)[:4] != b"\x7fELF"
    with zipfile.ZipFile(wheels.truncated_elf(tmp_path, real)) as zf:
        data = zf.read(wheels.EXT_NAME)
        assert data == real.read_bytes()[:100] and len(data) == 100
    with zipfile.ZipFile(wheels.record_mismatch(tmp_path, real)) as zf:
        assert zf.testzip() is None
        rows = {r[0]: r for r in _read_record(zf, "recordmismatch-0.1.dist-info/RECORD")}
        data = zf.read(wheels.EXT_NAME)
        assert rows[wheels.EXT_NAME][1] != wheels.record_hash(data)
        assert rows[wheels.EXT_NAME][2] == str(len(data))
        meta = "recordmismatch-0.1.dist-info/METADATA"
        assert rows[meta][1] == wheels.record_hash(zf.read(meta))


def test_processes_building_the_same_fixture_at_once_all_succeed(tmp_path):
    """Two fuzz campaigns started together build the same seed into one shared cache directory: each compiles into
    files of its own and renames the result into place (one used to delete the other's source mid-build)."""
    script = ("import sys; from pathlib import Path; from tests.fixtures.compile import compile_c; "
              "compile_c('int same(void) { return 7; }\\n', Path(sys.argv[1]) / 'libsame.so')")
    root = Path(__file__).resolve().parents[1]
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], cwd=root, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, errors
    assert sorted(f.name for f in tmp_path.iterdir()) == ["libsame.so"]  # no source or partial output left
