"""Libraries the wheel ships but a file cannot reach, libraries of another distribution, and ELF files in
purelib: built with gcc, judged by wheelcheck and auditwheel, repaired, pip-installed and imported.

- unreachable: ``pkg/_reach`` (RUNPATH ``$ORIGIN``) needs libalpha.so.1, shipped as ``pkg/lib/libalpha.so.1``.
  The finding names the shipped copy and the entry that reaches it; repair adds that entry instead of
  grafting a second copy, and the repaired wheel imports in a fresh venv.
- foreign: ``plugin/_plug`` (RPATH ``$ORIGIN/../hostdist/lib``) needs libalpha.so.1 from the distribution
  ``hostdist`` it requires. The finding says so and suggests --exclude; installed together, it imports.
- purelib: an extension in a Root-Is-Purelib wheel keeps its manylinux tag (auditwheel agrees), is
  warned about, and imports once pip-installed.
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import ALPHA_TIMES, extension_source
from tests.fixtures.wheels import build_wheel, dist_info
from tests.helpers import audit_one, auditwheel_show, by_rule, import_and_call, make_venv, pip_install, repair_json


def _clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH")}


def _metadata(name: str, requires: tuple[str, ...] = ()) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0"] + [f"Requires-Dist: {r}" for r in requires]
    return ("\n".join(lines) + "\n").encode()


def _imports_beside_provider(tmp_path: Path, dist: str, version: str, files: dict, wheel: Path, module: str):
    """``module`` imported (and called) in a venv holding ``wheel`` and a provider distribution ``dist`` that
    installs ``files`` (member -> bytes or path): the loader finds the library where the provider puts it."""
    provider = build_wheel(tmp_path / "provider", dist, version, "py3-none-manylinux_2_17_x86_64", {
        **files, f"{dist_info(dist, version)}/METADATA": _metadata(dist.replace("_", "-"))})
    python = make_venv(tmp_path / "venv")
    for each in (provider, wheel):
        proc = pip_install(python, each)
        assert proc.returncode == 0, proc.stderr
    return import_and_call(python, module, tmp_path)


@pytest.fixture(scope="module")
def unreachable(build, tmp_path_factory) -> Path:
    alpha, beta = build.alpha_beta()
    ext = build.alpha_extension("_reach", alpha, "$ORIGIN")
    tag = python_tag()
    return build_wheel(tmp_path_factory.mktemp("unreachable"), "reach", "1.0", f"{tag}-{tag}-linux_x86_64", {
        "pkg/__init__.py": b"",
        f"pkg/_reach{EXT_SUFFIX}": ext,
        "pkg/lib/libalpha.so.1": alpha,
        "pkg/lib/libbeta.so.1": beta,
    })


def test_unreachable_finding_names_the_shipped_copy_and_the_fix(unreachable):
    report = audit_one(unreachable)
    (finding,) = by_rule(report, "external-library")
    assert finding.file == f"pkg/_reach{EXT_SUFFIX}"
    assert finding.message.startswith(
        "needs libalpha.so.1; the wheel ships pkg/lib/libalpha.so.1, but this file's RUNPATH $ORIGIN "
        "($ORIGIN = pkg) does not reach it")
    assert "$ORIGIN/lib" in finding.hint
    # auditwheel does not find it either: the same tag and the same external library
    theirs = auditwheel_show(unreachable)
    assert report.deserved_tag == theirs["overall_tag"] == "linux_x86_64"
    assert report.external_libs == sorted(theirs["external_libs"]) == ["libalpha.so.1"]


def test_repair_reaches_the_shipped_copy_and_the_wheel_imports(unreachable, tmp_path):
    proc, doc = repair_json(unreachable, "-w", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    (wheel,) = doc["wheels"]
    assert wheel["grafted"] == []  # no second copy from the host
    (patched,) = wheel["patched"]
    assert patched["member"] == f"pkg/_reach{EXT_SUFFIX}"
    assert patched["rpath_after"] == ["$ORIGIN", "$ORIGIN/lib"]
    repaired = Path(wheel["output"])
    with zipfile.ZipFile(repaired) as zf:
        assert not [n for n in zf.namelist() if ".libs/" in n]
    assert auditwheel_show(repaired)["overall_tag"] == audit_one(repaired).deserved_tag != "linux_x86_64"

    python = make_venv(tmp_path / "venv")
    installed = pip_install(python, repaired)
    assert installed.returncode == 0, installed.stderr
    proc = import_and_call(python, "pkg._reach", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(ALPHA_TIMES)


def test_the_unrepaired_wheel_does_not_import(unreachable, tmp_path):
    """The control: the loader really does not find the shipped copy, so the finding is not a false alarm."""
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, unreachable).returncode == 0
    proc = import_and_call(python, "pkg._reach", tmp_path)
    assert proc.returncode != 0 and "libalpha.so.1" in proc.stderr


@pytest.fixture(scope="module")
def rpath_past_runpath(build, tmp_path_factory) -> Path:
    """psycopg2-binary 2.7's layout: ``pkg/_chain`` (DT_RPATH ``$ORIGIN/../pkg.libs``) -> ``liba.so`` (DT_RUNPATH
    ``$ORIGIN``) -> ``libb.so`` (no path of its own) -> ``libc3.so``. glibc finds libc3.so through _chain's DT_RPATH:
    for libb's names it walks the DT_RPATH of libb, of its loader liba and of liba's loader (dl-load.c); liba's
    DT_RUNPATH hides only liba's own DT_RPATH."""
    c3 = build.compile_c("int c3(void) { return 3; }\n", "libc3.so", flags=("-Wl,-soname,libc3.so",))
    b = build.compile_c("int c3(void);\nint b(void) { return c3(); }\n", "libb.so",
                        flags=("-Wl,-soname,libb.so",), libs=(c3,))
    a = build.compile_c("int b(void);\nint a(void) { return b(); }\n", "liba.so",
                        flags=("-Wl,-soname,liba.so", "-Wl,--enable-new-dtags,-rpath,$ORIGIN"), libs=(b,))
    ext = build.compile_c(extension_source("_chain", "return a();", prelude="int a(void);"), f"_chain{EXT_SUFFIX}",
                          flags=("-Wl,--disable-new-dtags,-rpath,$ORIGIN/../pkg.libs",), libs=(a,))
    tag = python_tag()
    return build_wheel(tmp_path_factory.mktemp("past-runpath"), "chain", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        "pkg/__init__.py": b"",
        f"pkg/_chain{EXT_SUFFIX}": ext,
        "pkg.libs/liba.so": a.read_bytes(),
        "pkg.libs/libb.so": b.read_bytes(),
        "pkg.libs/libc3.so": c3.read_bytes(),
    })


def test_a_loaders_rpath_reaches_past_a_library_with_runpath(rpath_past_runpath):
    """The shipped libraries are all reached: no external library, the claimed tag kept, as auditwheel says (without
    the loaders' DT_RPATH below liba, this wheel would fail: libb "does not reach" libc3.so)."""
    report = audit_one(rpath_past_runpath)
    assert by_rule(report, "external-library") == []
    theirs = auditwheel_show(rpath_past_runpath)
    assert report.external_libs == sorted(theirs["external_libs"]) == []
    assert report.deserved_tag == theirs["overall_tag"] != "linux_x86_64" and report.passed


def test_a_loaders_rpath_past_runpath_is_what_the_loader_does(rpath_past_runpath, tmp_path):
    """The control: installed, the module imports and libc3.so answers, found through _chain's DT_RPATH."""
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, rpath_past_runpath).returncode == 0
    proc = import_and_call(python, "pkg._chain", tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "3", proc.stderr


def test_repair_leaves_a_loaders_rpath_past_runpath_alone(rpath_past_runpath, tmp_path):
    """Nothing to reach, so nothing to rewrite: repair changes no file's search path."""
    proc, doc = repair_json(rpath_past_runpath, "-w", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    (wheel,) = doc["wheels"]
    assert wheel["grafted"] == [] and wheel["patched"] == []
    with zipfile.ZipFile(wheel["output"]) as out, zipfile.ZipFile(rpath_past_runpath) as before:
        for name in ("pkg.libs/liba.so", "pkg.libs/libb.so", "pkg.libs/libc3.so"):
            assert out.read(name) == before.read(name)


def _user_and_provider(build, root: Path, user: str, module: str, provider: str, libdir: str,
                       rpath: str) -> tuple[Path, Path]:
    """The wheel ``user`` with extension ``user/<module>`` (DT_RPATH ``rpath``) that needs libalpha.so.1 and requires
    ``provider``, whose wheel installs libalpha.so.1 and libbeta.so.1 as ``<libdir>/...``."""
    alpha, beta = build.alpha_beta()
    provided = build_wheel(root, provider, "1.0", "py3-none-manylinux_2_17_x86_64", {
        f"{provider}/__init__.py": b"",
        f"{libdir}/libalpha.so.1": alpha,
        f"{libdir}/libbeta.so.1": beta,
        f"{dist_info(provider, '1.0')}/METADATA": _metadata(provider),
    })
    tag = python_tag()
    using = build_wheel(root, user, "1.0", f"{tag}-{tag}-linux_x86_64", {
        f"{user}/__init__.py": b"",
        f"{user}/{module}{EXT_SUFFIX}": build.alpha_extension(module, alpha, rpath, new_dtags=False),
        f"{dist_info(user, '1.0')}/METADATA": _metadata(user, (f"{provider}>=1.0",)),
    })
    return using, provided


@pytest.fixture(scope="module")
def plugin_and_host(build, tmp_path_factory) -> tuple[Path, Path]:
    return _user_and_provider(build, tmp_path_factory.mktemp("foreign"), "plugin", "_plug", "hostdist",
                              "hostdist/lib", "$ORIGIN/../hostdist/lib")


def test_foreign_library_names_the_distribution_and_the_exclude(plugin_and_host):
    plugin, _ = plugin_and_host
    report = audit_one(plugin)
    (finding,) = by_rule(report, "external-library")
    assert "its RPATH leads to hostdist/lib, where hostdist (in Requires-Dist) installs its files" in finding.message
    assert "--exclude 'libalpha.so.1'" in finding.hint
    assert report.deserved_tag == auditwheel_show(plugin)["overall_tag"] == "linux_x86_64"
    excluded = audit_one(plugin, exclude=("libalpha.so.1",))
    assert excluded.deserved_tag.startswith("manylinux_") and not by_rule(excluded, "external-library")


def test_foreign_library_loads_from_the_required_distribution(plugin_and_host, tmp_path):
    plugin, host = plugin_and_host
    python = make_venv(tmp_path / "venv")
    for wheel in (host, plugin):
        proc = pip_install(python, wheel)
        assert proc.returncode == 0, proc.stderr
    proc = import_and_call(python, "plugin._plug", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(ALPHA_TIMES)


def test_a_directory_named_like_a_required_family_is_only_a_guess(build, tmp_path):
    """sherpa-onnx's RPATH names sherpa_onnx/lib/sherpa_onnx/lib, and it requires sherpa-onnx-core, which installs
    into sherpa_onnx/lib: a directory named like a family member is no proof of where that member installs."""
    alpha, _beta = build.alpha_beta()
    ext = build.alpha_extension("_ext", alpha, "$ORIGIN/sub")
    wheel = build_wheel(tmp_path, "famdist", "1.0", f"{python_tag()}-{python_tag()}-linux_x86_64", {
        "famdist/__init__.py": b"",
        f"famdist/_ext{EXT_SUFFIX}": ext,
        f"{dist_info('famdist', '1.0')}/METADATA": _metadata("famdist", ("famdist-core>=1.0",)),
    })
    report = audit_one(wheel)
    (finding,) = by_rule(report, "external-library")
    assert ("its RUNPATH leads to famdist/sub, named like famdist-core (in Requires-Dist), which may install it "
            "there") in finding.message
    assert "installs its files" not in finding.message
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"


def test_the_directory_named_like_the_library_is_the_one_named(build, tmp_path):
    """tilelang's RUNPATH leads to tvm_ffi/lib and z3/lib; it requires apache-tvm-ffi (which installs
    tvm_ffi/lib/libtvm_ffi.so) and z3-solver. libtvm_ffi.so is apache-tvm-ffi's, not z3-solver's; installed
    together, the module loads it from there."""
    lib = build.compile_c("int tvm_call(void) { return 7; }\n", "libtvm_ffi.so", flags=("-Wl,-soname,libtvm_ffi.so",))
    ext = build.compile_c(extension_source("_tl", "    return tvm_call();", prelude="extern int tvm_call(void);\n"),
                          "_tl.so", libs=(lib,),
                          flags=("-Wl,-rpath,$ORIGIN/../tvm_ffi/lib:$ORIGIN/../z3/lib", "-Wl,--enable-new-dtags"))
    tag = python_tag()
    user = build_wheel(tmp_path / "user", "tl", "1.0", f"{tag}-{tag}-linux_x86_64", {
        "tl/__init__.py": b"", f"tl/_tl{EXT_SUFFIX}": ext,
        f"{dist_info('tl', '1.0')}/METADATA": _metadata("tl", ("apache-tvm-ffi>=0.1", "z3-solver>=4")),
    })
    report = audit_one(user)
    (finding,) = by_rule(report, "external-library")
    assert ("its RUNPATH leads to tvm_ffi/lib, named like apache-tvm-ffi (in Requires-Dist), which may install it "
            "there") in finding.message
    assert "z3" not in finding.message and "--exclude 'libtvm_ffi.so'" in finding.hint
    assert report.deserved_tag == auditwheel_show(user)["overall_tag"] == "linux_x86_64"
    proc = _imports_beside_provider(tmp_path, "apache_tvm_ffi", "1.0", {
        "tvm_ffi/__init__.py": b"", "tvm_ffi/lib/libtvm_ffi.so": lib}, user, "tl._tl")
    assert proc.returncode == 0 and proc.stdout.strip() == "7", proc.stderr


def _namespace_needer(build, tmp_path, requires: tuple[str, ...]) -> tuple[Path, bytes]:
    """nvidia-cusolver's shape: nvidia/cusolver/lib/libsolver.so.11 needs libcublasLt.so.12 through RPATH
    $ORIGIN/../../cublas/lib:$ORIGIN/../../nvjitlink/lib; the wheel ships neither directory."""
    lt = build.compile_c("int lt_gemm(void) { return 12; }\n", "libcublasLt.so.12",
                         flags=("-Wl,-soname,libcublasLt.so.12",))
    solver = build.compile_c("extern int lt_gemm(void);\nint solve(void) { return lt_gemm() + 1; }\n",
                             "libsolver.so.11", libs=(lt,),
                             flags=("-Wl,-soname,libsolver.so.11",
                                    "-Wl,-rpath,$ORIGIN/../../cublas/lib:$ORIGIN/../../nvjitlink/lib"))
    ext = build.compile_c(extension_source("_solve", "    return solve();", prelude="extern int solve(void);\n"),
                          "_solve.so", libs=(solver,), flags=("-Wl,-rpath,$ORIGIN/lib",))
    tag = python_tag()
    wheel = build_wheel(tmp_path / "user", "nvsolver", "1.0", f"{tag}-{tag}-linux_x86_64", {
        "nvidia/cusolver/__init__.py": b"", f"nvidia/cusolver/_solve{EXT_SUFFIX}": ext,
        "nvidia/cusolver/lib/libsolver.so.11": solver,
        f"{dist_info('nvsolver', '1.0')}/METADATA": _metadata("nvsolver", requires),
    })
    return wheel, lt


def test_a_namespace_directory_named_like_the_library_names_its_own_distribution(build, tmp_path):
    """The RPATH leads to nvidia/cublas/lib and nvidia/nvjitlink/lib, both named like a requirement of the nvidia-*
    family: libcublasLt.so.12 is looked for in the one named like it, which nvidia-cublas-cu12 installs. Before,
    no directory's first part (nvidia) was named like the library, so both were named, and both requirements."""
    wheel, lt = _namespace_needer(build, tmp_path, ("nvidia-cublas-cu12", "nvidia-nvjitlink-cu12"))
    report = audit_one(wheel)
    (finding,) = by_rule(report, "external-library")
    assert "needs libcublasLt.so.12" in finding.message
    assert ("its RUNPATH leads to nvidia/cublas/lib, named like nvidia-cublas-cu12 (in Requires-Dist), which may "
            "install it there") in finding.message
    assert "nvjitlink" not in finding.message and "if nvidia-cublas-cu12 provides it" in finding.hint
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"
    proc = _imports_beside_provider(tmp_path, "nvidia_cublas_cu12", "1.0", {"nvidia/cublas/lib/libcublasLt.so.12": lt},
                                    wheel, "nvidia.cusolver._solve")
    assert proc.returncode == 0 and proc.stdout.strip() == "13", proc.stderr


def test_a_namespace_directory_of_an_extra_names_the_requirement_asking_for_it(build, tmp_path):
    """libraft requires cuda-toolkit[cublas,...] and nvidia-nvjitlink-cu12: nvidia/cublas/lib is installed through
    cuda-toolkit's extra cublas, not by nvidia-nvjitlink-cu12, the only nvidia-* it names (which was blamed)."""
    wheel, _lt = _namespace_needer(build, tmp_path, ("cuda-toolkit[cublas,curand]==12.*", "nvidia-nvjitlink-cu12"))
    (finding,) = by_rule(audit_one(wheel), "external-library")
    assert ("its RUNPATH leads to nvidia/cublas/lib, named like cuda-toolkit[cublas] (in Requires-Dist), which may "
            "install it there") in finding.message
    assert "nvjitlink" not in finding.message
    # neither an extra nor a distribution named like it: no distribution is blamed
    wheel, _lt = _namespace_needer(build, tmp_path / "none", ("nvidia-nvjitlink-cu12",))
    (finding,) = by_rule(audit_one(wheel), "external-library")
    assert "Requires-Dist" not in finding.message and "nvjitlink" not in finding.message


def test_a_directory_the_wheel_shares_with_a_requirement_names_it(build, tmp_path):
    """From a real wheel (nvidia-cusolver 12.4.1.2 for CUDA 13: every cu13 distribution installs into nvidia/cu13/lib,
    and libcusolver's RPATH $ORIGIN leads there): a directory the wheel installs into too was skipped, and the
    advice was to vendor cuBLAS. Installed beside the requirement, the library loads from the shared directory."""
    blas = build.compile_c("int blas_gemm(void) { return 13; }\n", "libblas13.so.13",
                           flags=("-Wl,-soname,libblas13.so.13",))
    solver = build.compile_c("extern int blas_gemm(void);\nint solve(void) { return blas_gemm() + 1; }\n",
                             "libsolver.so.12", libs=(blas,), flags=("-Wl,-soname,libsolver.so.12", "-Wl,-rpath,$ORIGIN"))
    ext = build.compile_c(extension_source("_cu13", "    return solve();", prelude="extern int solve(void);\n"),
                          "_cu13.so", libs=(solver,), flags=("-Wl,-rpath,$ORIGIN/lib",))
    tag = python_tag()
    wheel = build_wheel(tmp_path / "user", "nvsolve", "1.0", f"{tag}-{tag}-linux_x86_64", {
        "nvidia/cu13/__init__.py": b"", f"nvidia/cu13/_cu13{EXT_SUFFIX}": ext, "nvidia/cu13/lib/libsolver.so.12": solver,
        f"{dist_info('nvsolve', '1.0')}/METADATA": _metadata("nvsolve", ("nvidia-cublas==13.*",)),
    })
    report = audit_one(wheel)
    (finding,) = by_rule(report, "external-library")
    assert ("needs libblas13.so.13, which the wheel does not provide; its RUNPATH leads to nvidia/cu13/lib, which it "
            "shares with nvidia-cublas (in Requires-Dist), which may install it there") in finding.message
    assert finding.hint.startswith("if nvidia-cublas provides it, accept it with --exclude 'libblas13.so.13'")
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"
    proc = _imports_beside_provider(tmp_path, "nvidia_cublas", "13.0", {"nvidia/cu13/lib/libblas13.so.13": blas}, wheel,
                                    "nvidia.cu13._cu13")
    assert proc.returncode == 0 and proc.stdout.strip() == "14", proc.stderr


def test_what_a_library_no_tree_reaches_needs_from_outside_is_judged(build, tmp_path):
    """From a real wheel (foundry-local-sdk 2.2.1, whose package loads libfoundry_local.so with ctypes, and whose
    libfoundry_local.so needs onnxruntime's libonnxruntime.so.1): a shipped library that its needer does not reach
    was never a root, so what it needs was never judged, and --exclude of the unreached name (what a user of such
    a package is told to do) gave PASS. Loaded on its own, as ctypes loads it, it fails."""
    outside = build.compile_c("int outside(void) { return 5; }\n", "libnotthere.so.1",
                              flags=("-Wl,-soname,libnotthere.so.1",))
    lib = build.compile_c("extern int outside(void);\nint inner(void) { return outside(); }\n", "liba.so",
                          libs=(outside,), flags=("-Wl,-soname,liba.so",))
    ext = build.compile_c(extension_source("_orph", "    return inner();", prelude="extern int inner(void);\n"),
                          "_orph.so", libs=(lib,))
    tag = python_tag()
    wheel = build_wheel(tmp_path, "orph", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64", {
        "orph/__init__.py": b"", f"orph/_orph{EXT_SUFFIX}": ext, "orph/sub/liba.so": lib})
    report = audit_one(wheel)
    found = {(f.file, f.subject) for f in by_rule(report, "external-library")}
    assert found == {(f"orph/_orph{EXT_SUFFIX}", "liba.so"), ("orph/sub/liba.so", "libnotthere.so.1")}
    assert sorted(report.external_libs) == ["liba.so", "libnotthere.so.1"]
    excluded = audit_one(wheel, exclude=("liba.so",))
    assert not excluded.passed and excluded.deserved_tag == "linux_x86_64"
    assert [(f.file, f.subject) for f in by_rule(excluded, "external-library")] == [("orph/sub/liba.so",
                                                                                     "libnotthere.so.1")]
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"
    # for real: loaded by path, as the package's ctypes would load it, it cannot find libnotthere.so.1
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, wheel).returncode == 0
    proc = subprocess.run([str(python), "-c", "import ctypes, os, orph; "
                           "ctypes.CDLL(os.path.join(os.path.dirname(orph.__file__), 'sub', 'liba.so'))"],
                          capture_output=True, text=True, cwd=tmp_path, env=_clean_env(), timeout=120)
    assert proc.returncode != 0 and "libnotthere.so.1: cannot open shared object file" in proc.stderr


@pytest.fixture(scope="module")
def purelib(build, tmp_path_factory) -> Path:
    ext = build.compile_c(extension_source("_pure"), "_pure.so")
    return build_wheel(tmp_path_factory.mktemp("purelib"), "purebin", "1.0", "py3-none-manylinux_2_17_x86_64",
                       {"purebin/__init__.py": b"", "purebin/_pure.so": ext}, root_is_purelib=True)


def test_elf_in_purelib_warns_and_keeps_the_tag(purelib):
    report = audit_one(purelib)
    (finding,) = by_rule(report, "elf-in-purelib")
    assert finding.severity == "warning" and "Root-Is-Purelib: true" in finding.message
    assert report.passed
    assert report.deserved_tag == auditwheel_show(purelib)["overall_tag"]
    assert report.deserved_tag.startswith("manylinux_")


def test_elf_in_purelib_installs_and_imports(purelib, tmp_path):
    python = make_venv(tmp_path / "venv")
    proc = pip_install(python, purelib)
    assert proc.returncode == 0, proc.stderr
    proc = import_and_call(python, "purebin._pure", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "42"


def test_repair_moves_a_purelib_wheel_to_platlib(purelib, tmp_path):
    proc, doc = repair_json(purelib, "-w", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    with zipfile.ZipFile(doc["wheels"][0]["output"]) as zf:
        wheel_text = zf.read(f"{dist_info('purebin', '1.0')}/WHEEL").decode()
    assert "Root-Is-Purelib: false" in wheel_text
    assert not by_rule(audit_one(Path(doc["wheels"][0]["output"])), "elf-in-purelib")
    assert doc["wheels"][0]["status"] == "repaired"


TOOL_SRC = """\
#include <stdio.h>
extern int alpha_value(void);
int main(void) { printf("alpha=%d\\n", alpha_value()); return 0; }
"""


def test_a_script_that_cannot_reach_the_shipped_library_is_moved_and_reaches_it(build, tmp_path):
    """An ELF executable in .data/scripts lands at no fixed distance from site-packages: repair moves it
    beside the package (a launcher takes its place) and gives it the path to the shipped copy."""
    alpha, beta = build.alpha_beta()
    tool = build.compile_c(TOOL_SRC, "reach-tool", shared=False, libs=(alpha,),
                           flags=(f"-Wl,-rpath-link,{beta.parent}",))
    wheel = build_wheel(tmp_path, "reachtool", "1.0", "py3-none-linux_x86_64", {
        "reachtool/__init__.py": b"",
        "reachtool/lib/libalpha.so.1": alpha,
        "reachtool/lib/libbeta.so.1": beta,
        "reachtool-1.0.data/scripts/reach-tool": tool,
    })
    (finding,) = by_rule(audit_one(wheel), "external-library")
    assert finding.message.startswith("needs libalpha.so.1; the wheel ships reachtool/lib/libalpha.so.1, but this "
                                      "file, which has no RPATH or RUNPATH ($ORIGIN = the scripts directory),")
    proc, doc = repair_json(wheel, "-w", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    (patched,) = doc["wheels"][0]["patched"]
    assert patched["moved_to"] == "reachtool.scripts/reach-tool"
    assert patched["rpath_after"] == ["$ORIGIN/../reachtool/lib"] and doc["wheels"][0]["grafted"] == []
    python = make_venv(tmp_path / "venv")
    installed = pip_install(python, Path(doc["wheels"][0]["output"]))
    assert installed.returncode == 0, installed.stderr
    run = subprocess.run([str(python.parent / "reach-tool")], capture_output=True, text=True, cwd=tmp_path,
                         env=_clean_env(), timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"alpha={ALPHA_TIMES}"


def test_elf_under_data_purelib_is_not_sent_to_repair(build, tmp_path):
    # a platform wheel that names its ELF file into purelib by path (semgrep's semgrep-core): repair keeps
    # paths, so the fix must not send people there
    ext = build.compile_c(extension_source("_pure"), "_pure.so")
    wheel = build_wheel(tmp_path, "purebin", "1.0", "py3-none-manylinux_2_17_x86_64",
                        {"purebin/__init__.py": b"", f"purebin-1.0.data/purelib/purebin/_pure{EXT_SUFFIX}": ext})
    (finding,) = by_rule(audit_one(wheel), "elf-in-purelib")
    assert "under purebin-1.0.data/purelib/" in finding.message
    assert "repair" not in finding.hint and "purebin-1.0.data/platlib/" in finding.hint
    proc, doc = repair_json(wheel, "-w", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert doc["wheels"][0]["output"], doc  # written (retagged), not skipped
    with zipfile.ZipFile(doc["wheels"][0]["output"]) as zf:
        assert f"purebin-1.0.data/purelib/purebin/_pure{EXT_SUFFIX}" in zf.namelist()  # where repair left it


@pytest.fixture(scope="module")
def user_and_data_provider(build, tmp_path_factory) -> tuple[Path, Path]:
    """mkl_fft's shape: ``userdist/_user`` has RPATH ``$ORIGIN/../../..`` (site-packages is
    <prefix>/lib/pythonX.Y/site-packages, so that is <prefix>/lib) and requires ``datadist``, whose wheel installs
    libalpha.so.1 there as a data file (mkl installs libmkl_rt.so.3 so)."""
    return _user_and_provider(build, tmp_path_factory.mktemp("prefix"), "userdist", "_user", "datadist",
                              "datadist-1.0.data/data/lib", "$ORIGIN/../../..")


def test_an_rpath_into_the_environment_names_what_may_install_there(user_and_data_provider, build, tmp_path):
    user, provider = user_and_data_provider
    report = audit_one(user)
    (external,) = by_rule(report, "external-library")
    assert ("its RPATH leads to the environment's <prefix>/lib, where a distribution of its Requires-Dist "
            "(datadist) may install it as a data file") in external.message
    assert "--exclude 'libalpha.so.1'" in external.hint
    (escapes,) = by_rule(report, "rpath-escapes-wheel")
    assert "for the environment's <prefix>/lib" in escapes.message and escapes.hint.startswith("keep it only if")
    assert report.deserved_tag == auditwheel_show(user)["overall_tag"] == "linux_x86_64"
    # installed together, the module loads the data file through that RPATH, from any working directory
    python = make_venv(tmp_path / "venv")
    for wheel in (provider, user):
        proc = pip_install(python, wheel)
        assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "venv" / "lib" / "libalpha.so.1").is_file()
    proc = import_and_call(python, "userdist._user", tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == str(ALPHA_TIMES), proc.stderr
    # the control: without Requires-Dist, the same RPATH leads nowhere the wheel can count on
    alone = build_wheel(tmp_path / "alone", "userdist", "1.0", user.name.split("-", 2)[2][:-len(".whl")],
                        {n: zipfile.ZipFile(user).read(n) for n in zipfile.ZipFile(user).namelist()
                         if not n.endswith(("METADATA", "RECORD"))})
    report = audit_one(alone)
    assert "<prefix>" not in by_rule(report, "external-library")[0].message
    assert by_rule(report, "rpath-escapes-wheel")[0].message.endswith("leaves the wheel's install tree")


def test_environment_directory_follows_the_posix_install_layout():
    from wheelcheck.wheel.library_resolution import environment_directory
    from wheelcheck.wheel.wheel_model import WheelModel

    model = WheelModel(filename="", name="", version="", tags=frozenset(), elves=(), members=(),
                       root_is_purelib=False, data_dir="pkg-1.0.data")
    where = {entry: environment_directory(model, "pkg/sub/_m.so", entry) for entry in (
        "$ORIGIN/../../../..", "$ORIGIN/../../../../../lib64", "$ORIGIN/../../../../..", "$ORIGIN/../../other",
        "$ORIGIN/../../..", "${ORIGIN}/../../../../../share", "/opt/lib", "$ORIGIN/../../../../../../x",
        "$ORIGIN/../../../../$LIB")}
    # from site-packages/pkg/sub: up 2 is site-packages, 3 lib/pythonX.Y, 4 lib, 5 the prefix
    assert where == {"$ORIGIN/../../../..": "lib", "$ORIGIN/../../../../../lib64": "lib64",
                     "$ORIGIN/../../../../..": "", "$ORIGIN/../../other": None,  # other is in site-packages
                     "$ORIGIN/../../..": "lib/python3.X", "${ORIGIN}/../../../../../share": "share",
                     "/opt/lib": None, "$ORIGIN/../../../../../../x": None,
                     "$ORIGIN/../../../../$LIB": None}  # the machine fills $LIB in: no fixed place
    assert environment_directory(model, "pkg-1.0.data/scripts/tool", "$ORIGIN/../lib") is None  # not in site-packages


def test_only_what_an_installer_follows_on_linux_is_a_requirement():
    """mkl_fft with ``pytest ; extra == 'test'`` and ``pywin32 ; sys_platform == 'win32'``: neither is installed
    beside it on Linux, so neither may have put a library in <prefix>/lib."""
    from wheelcheck.wheel.requires_dist import installed_requirements

    assert installed_requirements(("mkl", "pytest ; extra == 'test'", "pywin32 ; sys_platform == 'win32'",
                                   "NumPy>=1.26 ; platform_system == 'Linux'", "not a requirement ((",
                                   "mkl>=2024")) == ("mkl", "numpy")


def test_an_rpath_into_the_environment_with_only_extras_required_says_nothing_of_them(user_and_data_provider, tmp_path):
    user, _provider = user_and_data_provider
    with zipfile.ZipFile(user) as zf:
        members = {n: zf.read(n) for n in zf.namelist() if not n.endswith(("METADATA", "RECORD"))}
    members[f"{dist_info('userdist', '1.0')}/METADATA"] = _metadata(
        "userdist", ("datadist ; extra == 'data'", "pywin32 ; sys_platform == 'win32'"))
    report = audit_one(build_wheel(tmp_path, "userdist", "1.0", user.name.split("-", 2)[2][:-len(".whl")], members))
    assert "<prefix>" not in by_rule(report, "external-library")[0].message
    assert by_rule(report, "rpath-escapes-wheel")[0].message.endswith("leaves the wheel's install tree")


def test_a_data_file_copy_reached_by_climbing_out_of_site_packages_says_where_it_holds(build, tmp_path):
    """The wheel installs libalpha.so.1 itself, as a data file into <prefix>/lib, and its extension reaches it
    through RPATH $ORIGIN/../../..: in a venv the module imports; installed with pip --target (data files go to
    the target's own data directory) it does not. The message says both, not that the RPATH does not reach it."""
    alpha, beta = build.alpha_beta()
    tag = python_tag()
    wheel = build_wheel(tmp_path, "selfdata", "1.0", f"{tag}-{tag}-linux_x86_64", {
        "selfdata/__init__.py": b"",
        f"selfdata/_self{EXT_SUFFIX}": build.alpha_extension("_self", alpha, "$ORIGIN/../../..", new_dtags=False),
        "selfdata-1.0.data/data/lib/libalpha.so.1": alpha,
        "selfdata-1.0.data/data/lib/libbeta.so.1": beta,
    })
    report = audit_one(wheel)
    (external,) = by_rule(report, "external-library")
    assert external.message.startswith(
        "needs libalpha.so.1; the wheel installs selfdata-1.0.data/data/lib/libalpha.so.1 into the environment's "
        "<prefix>/lib, which this file's RPATH entry $ORIGIN/../../.. reaches only where site-packages is "
        "<prefix>/lib/python3.X/site-packages")
    assert "does not reach" not in external.message and "ship it beside the file, in site-packages" in external.hint
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, wheel).returncode == 0
    proc = import_and_call(python, "selfdata._self", tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == str(ALPHA_TIMES), proc.stderr
    target = tmp_path / "target"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "-q",
                    "--disable-pip-version-check", "--target", str(target), str(wheel)], check=True, timeout=300)
    proc = subprocess.run([str(python), "-c", "import selfdata._self"], capture_output=True, text=True,
                          cwd=tmp_path, env={**_clean_env(), "PYTHONPATH": str(target)}, timeout=120)
    assert proc.returncode != 0 and "libalpha.so.1: cannot open shared object file" in proc.stderr


def test_a_directory_is_named_like_a_requirement_by_prefix_or_suffix_but_not_a_generic_one():
    from wheelcheck.audit.library_reach import _owners

    assert _owners("tvm_ffi/lib", ("apache-tvm-ffi", "z3-solver")) == ("apache-tvm-ffi",)
    assert _owners("z3/lib", ("apache-tvm-ffi", "z3-solver")) == ("z3-solver",)
    assert _owners("core/lib", ("pydantic-core",)) == ()  # a generic name is no one's
    assert _owners("meshlib_core.libs", ("meshlib-core",)) == ("meshlib-core",)  # where auditwheel grafts into it
    # PyQt6/Qt6/lib holds pyqt6-qt6's libraries and those of add-ons such as pyqt6-charts-qt6
    required = ("pyqt6-sip", "pyqt6-charts-qt6", "pyqt6")
    assert _owners("PyQt6/Qt6/lib", required, (), "qt6charts") == ("pyqt6-charts-qt6",)
    assert _owners("PyQt6/Qt6/lib", required, (), "qt6core") == ("pyqt6",)
    # a namespace: nvidia/cu13/lib is every nvidia-*'s; nvidia/cublas/lib is cublas's alone
    required = ("nvidia-nvjitlink-cu12", "nvidia-cusparse-cu12")
    assert _owners("nvidia/cu13/lib", required, (), "cublas") == required
    assert _owners("nvidia/cublas/lib", required, (), "cublaslt") == ()
    assert _owners("nvidia/cublas/lib", required, (("cuda-toolkit", ("cublas", "curand")),), "cublas") == \
        ("cuda-toolkit[cublas]",)
    assert _owners("lib", ("foo-lib",)) == ()


def test_a_requirement_is_not_blamed_for_a_library_another_directory_may_hold(build, tmp_path):
    """cutensornet-cu13 2.14.0: RUNPATH $ORIGIN/../../cutensor/lib and $ORIGIN/../../nvidia/cu13/lib, Requires-Dist
    cutensor-cu13 only. libcutensor.so.2 is cutensor-cu13's (its directory is named like both); libcublas.so.13 is in
    no directory named like it, and nvidia/cu13/lib, which a requirement's requirement fills, may hold it: the
    message must not say cutensor-cu13 may install it."""
    tensor = build.compile_c("int contract(void) { return 2; }\n", "libcutensor.so.2",
                             flags=("-Wl,-soname,libcutensor.so.2",))
    blas = build.compile_c("int gemm(void) { return 13; }\n", "libcublas.so.13", flags=("-Wl,-soname,libcublas.so.13",))
    ext = build.compile_c(extension_source("_tn", "    return contract() + gemm();",
                                           prelude="extern int contract(void);\nextern int gemm(void);\n"),
                          "_tn.so", libs=(tensor, blas),
                          flags=("-Wl,-rpath,$ORIGIN:$ORIGIN/../cutensor/lib:$ORIGIN/../nvidia/cu13/lib",
                                 "-Wl,--enable-new-dtags"))
    tag = python_tag()
    wheel = build_wheel(tmp_path / "user", "tnet", "1.0", f"{tag}-{tag}-linux_x86_64", {
        "tnet/__init__.py": b"", f"tnet/_tn{EXT_SUFFIX}": ext,
        f"{dist_info('tnet', '1.0')}/METADATA": _metadata("tnet", ("cutensor-cu13>=2.8",)),
    })
    report = audit_one(wheel)
    found = {f.subject: f for f in by_rule(report, "external-library")}
    assert set(found) == {"libcutensor.so.2", "libcublas.so.13"}
    assert "leads to cutensor/lib, named like cutensor-cu13 (in Requires-Dist)" in found["libcutensor.so.2"].message
    blas_finding = found["libcublas.so.13"]
    assert "cutensor" not in blas_finding.message and "cutensor" not in blas_finding.hint
    assert ("needs libcublas.so.13, which the wheel does not provide; its RUNPATH leads to nvidia/cu13/lib, which no "
            "distribution of its Requires-Dist is named like") in blas_finding.message
    assert "--exclude 'libcublas.so.13'" in blas_finding.hint
    assert report.deserved_tag == auditwheel_show(wheel)["overall_tag"] == "linux_x86_64"
    # installed with what the requirements bring, the module finds each library where the message says
    proc = _imports_beside_provider(tmp_path, "cutensor_cu13", "2.8", {
        "cutensor/lib/libcutensor.so.2": tensor, "nvidia/cu13/lib/libcublas.so.13": blas}, wheel, "tnet._tn")
    assert proc.returncode == 0 and proc.stdout.strip() == "15", proc.stderr
