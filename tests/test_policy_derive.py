"""`policy derive` on real distributions: Debian's glibc 2.41/2.43 packages and this machine's own root.

Expectations come from auditwheel 6.8.2's policy data (the oracle) and from pyelftools reading the same
libraries' version definitions; every difference from auditwheel is one that docs/policy-guide.md names.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerDefSection

from tests.fixtures.debian import debian_dir, debian_roots  # noqa: F401 (fixtures)
from tests.helpers import auditwheel_policies, run_cli
from wheelcheck.errors import UsageError
from wheelcheck.policy import bundled_policies
from wheelcheck.policy.derive import GLIBC_SONAMES, OTHER_SONAMES, derive_policy

AMD64 = ("libc6-2.41-amd64", "libstdc++6-amd64", "libgcc-s1-amd64", "libatomic1-amd64", "zlib1g-amd64")
ARM64 = ("libc6-2.41-arm64", "libstdc++6-arm64", "libgcc-s1-arm64")
AMD64_243 = ("libc6-2.43-amd64",) + AMD64[1:]
# The documented differences from auditwheel's manylinux_2_41 GLIBC lists (docs/policy-guide.md):
# Debian's x86_64 glibc 2.41-12 defines two ABI marker versions auditwheel does not list.
X86_64_MARKERS = {"ABI_DT_X86_64_PLT", "ABI_GNU2_TLS"}


@pytest.fixture(scope="session")
def roots(debian_roots):
    return debian_roots


def _defined(root: Path, arch_dir: str) -> dict[str, set[str]]:
    """pyelftools' view: namespace -> versions defined by the policy's libraries under usr/lib/ARCH_DIR."""
    out: dict[str, set[str]] = {}
    for soname in GLIBC_SONAMES + OTHER_SONAMES:
        path = root / "usr" / "lib" / arch_dir / soname
        if not path.exists():
            continue
        with open(path, "rb") as f:
            for section in ELFFile(f).iter_sections():
                if isinstance(section, GNUVerDefSection):
                    for verdef, aux in section.iter_versions():
                        name = next(iter(aux)).name
                        if not verdef["vd_flags"] & 1 and not name.endswith("_PRIVATE"):
                            ns, _, version = name.partition("_")
                            out.setdefault(ns, set()).add(version)
    return out


def _versions(document: dict, arch: str) -> dict[str, set[str]]:
    return {ns: set(v) for ns, v in document["symbol_versions"][arch].items()}


def test_x86_64_2_41_matches_auditwheel(roots):
    root = roots("amd64-2.41", *AMD64)
    result = derive_policy(root, bundled_policies())
    ours = _versions(result.document, "x86_64")
    assert ours == _defined(root, "x86_64-linux-gnu")  # exactly what the files define
    theirs = {ns: set(v) for ns, v in auditwheel_policies()["manylinux_2_41"]["symbol_versions"]["x86_64"].items()}
    assert ours["GLIBC"] - theirs["GLIBC"] == X86_64_MARKERS
    assert theirs["GLIBC"] <= ours["GLIBC"]
    # Debian's GCC 14.2 and zlib 1.3.1 define exactly auditwheel's other x86_64 namespaces
    assert {ns: v for ns, v in ours.items() if ns != "GLIBC"} == {ns: v for ns, v in theirs.items() if ns != "GLIBC"}
    assert result.excluded == {"GLIBC_PRIVATE": ["libc.so.6", "libresolv.so.2", "libnsl.so.1"]}
    doc = result.document
    assert (doc["name"], doc["libc_version"], doc["priority"], result.arch) == ("manylinux_2_41", "2.41", 51, "x86_64")


def test_aarch64_2_41_matches_auditwheel(roots):
    root = roots("arm64-2.41", *ARM64)
    result = derive_policy(root, bundled_policies())
    ours = _versions(result.document, "aarch64")
    defined = _defined(root, "aarch64-linux-gnu")
    theirs = {ns: set(v) for ns, v in auditwheel_policies()["manylinux_2_41"]["symbol_versions"]["aarch64"].items()}
    assert ours["GLIBC"] == theirs["GLIBC"] == defined["GLIBC"]  # including 2.0, from libgcc_s.so.1 (next test)
    for ns in ("CXXABI", "GCC", "GLIBCXX"):
        assert ours[ns] == theirs[ns] == defined[ns], ns
    # no arm64 libatomic1 or zlib1g package among the fixtures: those namespaces come from the base policy
    # (else the policy, which whitelists libz.so.1, would allow any ZLIB version), and the notes say so
    assert set(defined) == {"GLIBC", "CXXABI", "GCC", "GLIBCXX"}
    assert ours["LIBATOMIC"] == theirs["LIBATOMIC"] and ours["ZLIB"] == theirs["ZLIB"]
    assert result.notes == ["no libatomic.so.1 for aarch64 under the root: LIBATOMIC versions copied from manylinux_2_41",
                            "no libz.so.1 for aarch64 under the root: ZLIB versions copied from manylinux_2_41"]
    assert "LIBATOMIC, ZLIB versions from manylinux_2_41" in result.document["source"]


def test_aarch64_glibc_2_0_comes_from_libgcc_s(roots):
    libc_only = derive_policy(roots("arm64-libc-only", "libc6-2.41-arm64"), bundled_policies())
    with_gcc = derive_policy(roots("arm64-2.41", *ARM64), bundled_policies())
    assert "2.0" not in libc_only.document["symbol_versions"]["aarch64"]["GLIBC"]
    assert "2.0" in with_gcc.document["symbol_versions"]["aarch64"]["GLIBC"]
    gcc = next(lib for lib in with_gcc.libraries if lib.soname == "libgcc_s.so.1")
    assert "GLIBC_2.0" in gcc.version_defs


def test_this_machine_matches_manylinux_2_36():
    if not Path("/lib/x86_64-linux-gnu/libc.so.6").exists() and not Path("/usr/lib64/libc.so.6").exists():
        pytest.skip("not an x86_64 glibc machine")
    result = derive_policy("/", bundled_policies(), arch="x86_64")
    if result.glibc_release != "2.36":
        pytest.skip(f"this machine has glibc {result.glibc_release}, the test expects Debian 12's 2.36")
    theirs = auditwheel_policies()["manylinux_2_36"]["symbol_versions"]["x86_64"]["GLIBC"]
    assert set(result.document["symbol_versions"]["x86_64"]["GLIBC"]) == set(theirs)
    assert result.document["name"] == "manylinux_2_36"


def test_shipped_2_43_is_the_derivation(roots):
    root = roots("amd64-2.43", *AMD64_243)
    result = derive_policy(root, bundled_policies())
    shipped = bundled_policies().find("manylinux_2_43")
    assert shipped is not None and result.document["name"] == "manylinux_2_43"
    assert _versions(result.document, "x86_64") == {ns: set(v) for ns, v in shipped.versions("x86_64").items()}
    assert list(shipped.symbol_versions) == ["x86_64"]
    glibc = shipped.versions("x86_64")["GLIBC"]
    assert {"2.42", "2.43"} <= glibc and glibc >= bundled_policies().find("manylinux_2_41").versions("x86_64")["GLIBC"]
    assert shipped.priority == 49 and shipped.lib_whitelist == bundled_policies().find("manylinux_2_41").lib_whitelist


def test_links_resolve_inside_the_root(roots, tmp_path):
    """An absolute link means ROOT/...: reading the host's libc instead would give glibc 2.36."""
    source = roots("arm64-2.41", *ARM64)
    root = tmp_path / "root"
    lib = root / "usr" / "lib" / "aarch64-linux-gnu"
    lib.mkdir(parents=True)
    (root / "opt").mkdir()
    shutil.copy(source / "usr/lib/aarch64-linux-gnu/libc.so.6", root / "opt" / "libc-2.41.so")
    os.symlink("/opt/libc-2.41.so", lib / "libc.so.6")
    os.symlink("usr/lib", root / "lib")  # Debian's merged /usr
    result = derive_policy(root, bundled_policies())
    assert result.glibc_release == "2.41" and result.arch == "aarch64"
    assert [lib.path for lib in result.libraries] == ["lib/aarch64-linux-gnu/libc.so.6"]  # found once


def test_several_arches_need_a_choice(roots):
    root = roots("multiarch-2.41", *AMD64, *ARM64)
    with pytest.raises(UsageError, match="aarch64, x86_64"):
        derive_policy(root, bundled_policies())
    assert derive_policy(root, bundled_policies(), arch="aarch64").arch == "aarch64"
    with pytest.raises(UsageError, match="no library for s390x"):
        derive_policy(root, bundled_policies(), arch="s390x")


def test_cli_derive_writes_a_valid_policy(roots, tmp_path):
    root = roots("amd64-2.43", *AMD64_243)
    out = tmp_path / "derived.json"
    proc = run_cli("policy", "derive", "--root", root, "--name", "acme_2_43", "--priority", "7", "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "acme_2_43 for x86_64 (glibc 2.43), from 13 libraries" in proc.stderr
    assert "left out GLIBC_PRIVATE" in proc.stderr
    doc = json.loads(out.read_text())
    assert (doc["name"], doc["priority"], doc["libc_version"]) == ("acme_2_43", 7, "2.43")
    assert "usr/lib/x86_64-linux-gnu/libc.so.6" in doc["source"]
    assert run_cli("policy", "validate", out).returncode == 0
    stdout = run_cli("policy", "derive", "--root", root).stdout
    assert json.loads(stdout)["name"] == "manylinux_2_43"


def test_cli_derive_errors(tmp_path):
    proc = run_cli("policy", "derive", "--root", tmp_path)
    assert proc.returncode == 2 and "no libc.so.6" in proc.stderr
    proc = run_cli("policy", "derive", "--root", tmp_path / "absent")
    assert proc.returncode == 2 and "must be a directory" in proc.stderr
