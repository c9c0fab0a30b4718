"""manylinux_2_43: a wheel needing GLIBC_2.42/2.43 gets that tag, where auditwheel can only say linux.

The extension is linked at test time against Debian's glibc 2.43 libc.so.6 (fetched from
Debian's archive by tests/fixtures/debian.py), so it needs versions newer than this machine's glibc: pthread_gettid_np is
GLIBC_2.42 and umaxabs GLIBC_2.43 (both read from that libc's .dynsym by the test below).
"""
from __future__ import annotations

import subprocess
import sys

import pytest
from elftools.elf.elffile import ELFFile

from tests.fixtures.debian import debian_dir, debian_roots  # noqa: F401 (fixtures)
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import auditwheel_show, run_cli
from wheelcheck import audit

EXT = "newglibc/_new.cpython-311-x86_64-linux-gnu.so"
PRELUDE = """\
#include <pthread.h>
#include <stdint.h>
extern pid_t pthread_gettid_np(pthread_t);  /* GLIBC_2.42: not in this machine's headers */
extern uintmax_t umaxabs(intmax_t);         /* GLIBC_2.43 */
"""
BODY = "    return (long)umaxabs(-40) + (pthread_gettid_np(pthread_self()) > 0 ? 2 : 0);"


@pytest.fixture(scope="module")
def libc_2_43(debian_roots):
    root = debian_roots("libc6-2.43-amd64", "libc6-2.43-amd64")
    return root / "usr" / "lib" / "x86_64-linux-gnu" / "libc.so.6"


@pytest.fixture(scope="module")
def new_glibc_wheel(build, libc_2_43, tmp_path_factory):
    if sys.platform != "linux" or subprocess.run(["gcc", "-dumpmachine"], capture_output=True,
                                                 text=True).stdout.strip() != "x86_64-linux-gnu":
        pytest.skip("needs the host gcc for x86_64")
    ext = build.compile_c(extension_source("_new", BODY, prelude=PRELUDE), "_new.so",
                          flags=("-nostdlib",), libs=(libc_2_43,))
    return build_wheel(tmp_path_factory.mktemp("w243"), "newglibc", "1.0", "cp311-cp311-linux_x86_64", {EXT: ext})


def _defined_versions(libc, names):
    with open(libc, "rb") as f:
        elf = ELFFile(f)
        versym = elf.get_section_by_name(".gnu.version")
        dynsym = elf.get_section_by_name(".dynsym")
        verdef = {v["vd_ndx"]: next(iter(aux)).name for v, aux in elf.get_section_by_name(".gnu.version_d").iter_versions()}
        return {s.name: verdef[versym.get_symbol(i)["ndx"] & 0x7FFF]
                for i, s in enumerate(dynsym.iter_symbols()) if s.name in names and s["st_shndx"] != "SHN_UNDEF"}


def test_the_fixture_symbols_are_that_new(libc_2_43):
    assert _defined_versions(libc_2_43, {"pthread_gettid_np", "umaxabs"}) == {
        "pthread_gettid_np": "GLIBC_2.42", "umaxabs": "GLIBC_2.43"}


def test_wheel_gets_manylinux_2_43(new_glibc_wheel):
    [report] = audit(new_glibc_wheel).wheels
    assert report.deserved_tag == "manylinux_2_43_x86_64"
    assert report.versioned_symbols["libc.so.6"] == ["GLIBC_2.2.5", "GLIBC_2.42", "GLIBC_2.43"]
    [finding] = [f for f in report.findings if f.rule == "symbol-version" and "GLIBC_2.43" in f.message]
    assert list(finding.symbols) == ["umaxabs"]
    assert "manylinux_2_43 at best" in finding.message
    # the oracle: auditwheel 6.8.2 knows no policy past manylinux_2_41
    theirs = auditwheel_show(new_glibc_wheel)
    assert theirs["overall_tag"] == theirs["sym_tag"] == "linux_x86_64"
    assert theirs["versioned_symbols"] == report.versioned_symbols  # same reading, different policies


def test_plat_checks_against_2_43(new_glibc_wheel):
    proc = run_cli("audit", "--any-platform-tag", "--plat", "manylinux_2_43_x86_64", new_glibc_wheel)
    assert proc.returncode == 0, proc.stdout
    proc = run_cli("audit", "--plat", "manylinux_2_41_x86_64", new_glibc_wheel)
    assert proc.returncode == 1
    # both versions, their library and symbols, on the second line: the reason the wheel fails
    assert proc.stdout.splitlines()[1] == (f"  error symbol-version: {EXT}: needs GLIBC_2.42, GLIBC_2.43 of libc.so.6 "
                                           "(pthread_gettid_np, umaxabs) → manylinux_2_43 at best")
