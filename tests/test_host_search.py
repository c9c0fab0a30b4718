"""Finding libraries on the host the way ld.so does: search order, RPATH vs RUNPATH, ld.so.conf, and
skipping candidates of the wrong machine or libc. Where ld.so itself can answer, it is asked (ctypes)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.compile import ZIG_MUSL_TARGETS, zig_triple
from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from wheelcheck.errors import RepairError
from wheelcheck.host.search_paths import host_search_path, parse_ld_so_conf, split_search_list, trusted_dirs
from wheelcheck.policy.registry import bundled_policies
from wheelcheck.repair import RepairOptions, repair_wheel

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"
ALPHA_SRC = "extern int beta_value(void);\nint alpha_value(void) { return beta_value() * %d; }\n"
BETA_SRC = "int beta_value(void) { return 7; }\n"


def sha8(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:8]


def repair(wheel: Path, out: Path, *, lib_path=(), environ=None, exclude=()):
    options = RepairOptions(policies=bundled_policies(), out_dir=out, lib_path=tuple(map(str, lib_path)),
                            environ=environ if environ is not None else {}, exclude=tuple(exclude))
    return repair_wheel(wheel, options)


# -- ld.so.conf, LD_LIBRARY_PATH, trusted directories


def test_ld_so_conf_includes_comments_and_cycles(tmp_path):
    root = tmp_path / "root"
    for d in ("etc/ld.so.conf.d", "opt/one", "opt/two", "opt/three", "usr/lib/x86_64-linux-gnu", "lib64"):
        (root / d).mkdir(parents=True)
    (root / "etc/ld.so.conf").write_text(
        "# comment\ninclude ld.so.conf.d/*.conf\n/opt/one   # trailing comment\nhwcap 0 nosegneg\n"
        "include /etc/extra.conf\n")
    (root / "etc/ld.so.conf.d/a.conf").write_text("/opt/two\n\n/opt/missing\n")
    (root / "etc/ld.so.conf.d/b.conf").write_text("include ../ld.so.conf\n")  # a cycle: read once
    (root / "etc/extra.conf").write_text("/opt/three=libc6\n")
    dirs = parse_ld_so_conf(str(root / "etc/ld.so.conf"), root=str(root))
    assert dirs == [str(root / "opt/two"), str(root / "opt/missing"), str(root / "opt/one"), str(root / "opt/three")]
    search = host_search_path("glibc", "x86_64", lib_path=["/first"], environ={"LD_LIBRARY_PATH": "/env:/env2"},
                              root=str(root))
    # missing directories are dropped; the multiarch and lib64 directories follow the configured ones
    assert search.system == (str(root / "opt/two"), str(root / "opt/one"), str(root / "opt/three"),
                             str(root / "usr/lib/x86_64-linux-gnu"), str(root / "lib64"), str(root / "usr/lib"))
    assert search.lib_path == ("/first",) and search.env == ("/env", "/env2")


def test_ld_library_path_syntax():
    assert split_search_list("") == []
    assert split_search_list("/a::/b;/c") == ["/a", ".", "/b", "/c"]  # empty means the current directory


def test_musl_uses_its_path_file(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "custom").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "etc/ld-musl-x86_64.path").write_text("/custom\n/nowhere:/lib\n")
    search = host_search_path("musl", "x86_64", environ={}, root=str(tmp_path))
    assert search.system == (str(tmp_path / "custom"), str(tmp_path / "lib"))
    assert trusted_dirs("musl", "x86_64") == ["/lib", "/usr/local/lib", "/usr/lib"]


# -- order and inheritance, on real files


def _two_alphas(build, tmp_path: Path) -> tuple[Path, Path, Path]:
    """libalpha.so.1 in first/ (returns beta*2) and in second/ (beta*3), libbeta.so.2 in beta/."""
    beta = build.compile_c(BETA_SRC, "libbeta.so.2", flags=("-Wl,-soname,libbeta.so.2",))
    (tmp_path / "beta").mkdir()
    shutil.copy2(beta, tmp_path / "beta" / "libbeta.so.2")
    for name, factor in (("first", 2), ("second", 3)):
        built = build.compile_c(ALPHA_SRC % factor, "libalpha.so.1", flags=("-Wl,-soname,libalpha.so.1",), libs=(beta,))
        (tmp_path / name).mkdir()
        shutil.copy2(built, tmp_path / name / "libalpha.so.1")
    return tmp_path / "first", tmp_path / "second", tmp_path / "beta"


def _ext_wheel(build, tmp_path: Path, flags=(), name="orderly") -> Path:
    first = tmp_path / "first" / "libalpha.so.1"
    ext = build.compile_c(extension_source("_e", "    return alpha_value();", prelude="extern int alpha_value(void);"),
                          f"_e{EXT_SUFFIX}", flags=(*flags, f"-Wl,-rpath-link,{tmp_path / 'beta'}"), libs=(first,))
    return build_wheel(tmp_path / "dist" / name, name, "1.0", TAG, {f"{name}/_e{EXT_SUFFIX}": ext})


def _grafted(outcome) -> dict[str, str]:
    return {g.needed_as[0]: g.source for g in outcome.grafted}


def test_lib_path_comes_before_the_rpath(build, tmp_path):
    first, second, beta = _two_alphas(build, tmp_path)
    wheel = _ext_wheel(build, tmp_path, flags=("-Wl,--disable-new-dtags", f"-Wl,-rpath,{first}:{beta}"))
    by_rpath = repair(wheel, tmp_path / "a")
    assert _grafted(by_rpath) == {"libalpha.so.1": str(first / "libalpha.so.1"), "libbeta.so.2": str(beta / "libbeta.so.2")}
    by_lib_path = repair(wheel, tmp_path / "b", lib_path=[second])
    assert _grafted(by_lib_path)["libalpha.so.1"] == str(second / "libalpha.so.1")
    assert by_lib_path.grafted[0].member.endswith(f"libalpha-{sha8(second / 'libalpha.so.1')}.so.1")


def test_rpath_before_ld_library_path_before_runpath(build, tmp_path):
    first, second, beta = _two_alphas(build, tmp_path)
    env = {"LD_LIBRARY_PATH": f"{second}:{beta}"}
    rpath_wheel = _ext_wheel(build, tmp_path, flags=("-Wl,--disable-new-dtags", f"-Wl,-rpath,{first}"), name="rp")
    runpath_wheel = _ext_wheel(build, tmp_path, flags=("-Wl,--enable-new-dtags", f"-Wl,-rpath,{first}"), name="run")
    assert _grafted(repair(rpath_wheel, tmp_path / "a", environ=env))["libalpha.so.1"] == str(first / "libalpha.so.1")
    assert _grafted(repair(runpath_wheel, tmp_path / "b", environ=env))["libalpha.so.1"] == str(second / "libalpha.so.1")
    # and ld.so agrees: which libalpha a process loads shows in alpha_value() (7*2 from first, 7*3 from second)
    for wheel, expected in ((rpath_wheel, 14), (runpath_wheel, 21)):
        ext = tmp_path / "unpacked" / wheel.stem
        shutil.unpack_archive(wheel, ext, "zip")
        (so,) = ext.rglob(f"*{EXT_SUFFIX}")
        code = f"import ctypes; print(ctypes.CDLL({str(so)!r}).alpha_value())"  # dlsym searches its dependencies
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=dict(os.environ, **env), timeout=60)
        assert proc.stdout.strip() == str(expected), proc.stderr


def test_runpath_is_not_inherited_but_rpath_is(build, tmp_path):
    """libalpha has no paths of its own: its libbeta is found through the extension's DT_RPATH, never through
    its DT_RUNPATH. ld.so agrees: loading the extension with DT_RUNPATH fails on libbeta.so.2."""
    both = tmp_path / "both"
    both.mkdir()
    first, _, beta = _two_alphas(build, tmp_path)
    shutil.copy2(first / "libalpha.so.1", both)
    shutil.copy2(beta / "libbeta.so.2", both)
    wheels = {}
    for name, dtags in (("inherit", "--disable-new-dtags"), ("noinherit", "--enable-new-dtags")):
        wheels[name] = _ext_wheel(build, tmp_path, flags=(f"-Wl,{dtags}", f"-Wl,-rpath,{both}"), name=name)
        unpacked = tmp_path / "unpacked" / name
        shutil.unpack_archive(wheels[name], unpacked, "zip")
        (so,) = unpacked.rglob(f"*{EXT_SUFFIX}")
        proc = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(so)!r})"],
                              capture_output=True, text=True, env={"PATH": os.environ["PATH"]}, timeout=60)
        assert (proc.returncode == 0) == (name == "inherit"), proc.stderr
    assert sorted(_grafted(repair(wheels["inherit"], tmp_path / "out-inherit"))) == ["libalpha.so.1", "libbeta.so.2"]
    with pytest.raises(RepairError, match=r"\[libalpha.so.1\]: needs libbeta.so.2, which cannot be found"):
        repair(wheels["noinherit"], tmp_path / "out-noinherit")


def test_host_library_origin_is_its_own_directory(build, tmp_path):
    """A host library's $ORIGIN RUNPATH finds its neighbour (libalpha in lib/, libbeta in lib/../beta)."""
    beta = build.compile_c(BETA_SRC, "libbeta.so.2", flags=("-Wl,-soname,libbeta.so.2",))
    alpha = build.compile_c(ALPHA_SRC % 5, "libalpha.so.1",
                            flags=("-Wl,-soname,libalpha.so.1", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../beta"),
                            libs=(beta,))
    (tmp_path / "first").mkdir()
    (tmp_path / "beta").mkdir()
    shutil.copy2(alpha, tmp_path / "first" / "libalpha.so.1")
    shutil.copy2(beta, tmp_path / "beta" / "libbeta.so.2")
    wheel = _ext_wheel(build, tmp_path, flags=("-Wl,--enable-new-dtags", f"-Wl,-rpath,{tmp_path / 'first'}"))
    assert _grafted(repair(wheel, tmp_path / "out"))["libbeta.so.2"] == str(tmp_path / "beta" / "libbeta.so.2")


@pytest.mark.parametrize("wrong", ["aarch64", "musl"])
def test_candidates_of_another_machine_or_libc_are_skipped(build, tmp_path, wrong):
    first, second, beta = _two_alphas(build, tmp_path)
    target = zig_triple("aarch64") if wrong == "aarch64" else ZIG_MUSL_TARGETS["x86_64"]
    # the impostor calls into libc, so a musl build names musl's libc in DT_NEEDED
    impostor = build.compile_c('#include <stdlib.h>\nint alpha_value(void) { return getenv("WC_X") != 0; }\n',
                               "libalpha.so.1", target=target, flags=("-Wl,-soname,libalpha.so.1",))
    bad = tmp_path / "impostor"
    bad.mkdir()
    shutil.copy2(impostor, bad / "libalpha.so.1")
    wheel = _ext_wheel(build, tmp_path)
    outcome = repair(wheel, tmp_path / "out", lib_path=[bad, second, beta])
    assert _grafted(outcome)["libalpha.so.1"] == str(second / "libalpha.so.1")


def test_system_directories_and_real_file_names(build, tmp_path):
    """libffi.so.8 from the host's own directories; the graft is named after the file the link points to,
    and auditwheel (the oracle) picks the same file and name."""
    found = [Path(d) / "libffi.so.8" for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64")
             if (Path(d) / "libffi.so.8").exists()]
    if not found:
        pytest.skip("this host has no libffi.so.8")
    ext = build.compile_c(extension_source("_ffi", "    return ffi_type_sint32.size;", prelude="#include <ffi.h>"),
                          f"_ffi{EXT_SUFFIX}", libs=("ffi",))
    wheel = build_wheel(tmp_path / "dist", "ffiuser", "1.0", TAG, {f"ffiuser/_ffi{EXT_SUFFIX}": ext})
    outcome = repair(wheel, tmp_path / "ours", environ={})
    (graft,) = outcome.grafted
    real = Path(os.path.realpath(found[0]))
    assert graft.realpath == str(real) and graft.member == f"ffiuser.libs/libffi-{sha8(real)}.{real.name.split('.', 1)[1]}"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    env.pop("LD_LIBRARY_PATH", None)
    aw = subprocess.run([sys.executable, "-m", "auditwheel", "repair", "-w", str(tmp_path / "theirs"), str(wheel)],
                        capture_output=True, text=True, env=env, timeout=300)
    assert aw.returncode == 0, aw.stderr
    (theirs,) = (tmp_path / "theirs").glob("*.whl")
    assert Path(outcome.output).name == theirs.name
    assert graft.member in zipfile.ZipFile(theirs).namelist()


def test_cross_architecture_repair_from_a_library_directory(build, tmp_path):
    """An aarch64 wheel repaired on this host: --lib-path holds aarch64 libraries (zig, glibc 2.17); the host's
    own directories hold no aarch64 ELF files, so only those are taken. auditwheel show agrees on the result."""
    target = zig_triple("aarch64")
    alpha, beta = build.alpha_beta(target)
    libs = tmp_path / "aarch64-libs"
    libs.mkdir()
    shutil.copy2(alpha, libs / "libalpha.so.1")
    shutil.copy2(beta, libs / "libbeta.so.1")
    ext = build.compile_c(extension_source("_arm", "    return alpha_value();", prelude="extern int alpha_value(void);"),
                          "_arm.cpython-311-aarch64-linux-gnu.so", target=target, libs=(alpha,))
    wheel = build_wheel(tmp_path / "dist", "armdemo", "1.0", "cp311-cp311-linux_aarch64",
                        {"armdemo/_arm.cpython-311-aarch64-linux-gnu.so": ext})
    outcome = repair(wheel, tmp_path / "out", lib_path=[libs])
    assert outcome.status == "repaired", outcome.message
    assert sorted(g.member for g in outcome.grafted) == [
        f"armdemo.libs/libalpha-{sha8(libs / 'libalpha.so.1')}.so.1", f"armdemo.libs/libbeta-{sha8(libs / 'libbeta.so.1')}.so.1"]
    assert outcome.platform_tags == ["manylinux2014_aarch64", "manylinux_2_17_aarch64"]
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "show", "--json", outcome.output],
                          capture_output=True, text=True, timeout=300)
    assert json.loads(proc.stdout)["overall_tag"] == "manylinux_2_17_aarch64"
