"""The export lists of the policies' system libraries (wheelcheck/data/system_exports.json.gz) are whole and
true: every whitelisted soname has one, the packages they were read from are the pinned ones, and for the
libraries the policy-derivation tests fetch from Debian too, pyelftools reading the same files agrees name for
name and version for version."""

from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerDefSection, GNUVerSymSection

from tests.fixtures.debian import DEBS, debian_dir, debian_roots  # noqa: F401 (fixtures)
from wheelcheck.policy import bundled_policies
from wheelcheck.policy.system_exports import system_architectures, system_library
from wheelcheck.policy.versions import split_version_name

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "tools" / "system_exports_pins.tsv"


def document() -> dict:
    return json.loads(gzip.decompress(resources.files("wheelcheck.data").joinpath("system_exports.json.gz")
                                      .read_bytes()))


def whitelisted() -> set[str]:
    return set().union(*(p.lib_whitelist for p in bundled_policies() if p.libc == "glibc"))


def test_every_whitelisted_library_has_an_export_list():
    assert system_architectures() == {"x86_64", "aarch64", "i686", "armv7l"}
    for arch in system_architectures():
        # glibc builds libmvec for x86_64 and aarch64 only
        expected = whitelisted() - ({"libmvec.so.1"} if arch in ("i686", "armv7l") else set())
        have = {s for s in expected if system_library(s, arch) is not None}
        assert have == expected, (arch, expected - have)
    assert system_library("libc.so.6", "ppc64le") is None  # not read: such a library is out of sight


def test_the_data_names_the_pinned_packages_and_is_small():
    pinned: dict[str, set[str]] = {}
    debian = {"amd64": "x86_64", "arm64": "aarch64", "i386": "i686", "armhf": "armv7l"}
    for line in PINS.read_text().splitlines():
        if line and not line.startswith("#"):
            arch, _, pool, digest = line.split("\t")
            assert len(digest) == 64
            pinned.setdefault(debian[arch], set()).add(pool.rsplit("/", 1)[-1])
    assert {a: set(p) for a, p in document()["packages"].items()} == pinned
    assert (ROOT / "wheelcheck" / "data" / "system_exports.json.gz").stat().st_size < 300_000


def test_every_version_a_name_is_defined_at_is_one_a_library_defines():
    doc = document()
    for arch, libraries in doc["libraries"].items():
        for soname in libraries:
            library = system_library(soname, arch)
            assert library is not None and library.exports
            for versions in library.exports.values():
                for v in versions:
                    assert v is None or split_version_name(v) is not None or v.startswith(("GLIBC", "GCC", "Base")), v


def _pyelftools_exports(path: Path) -> dict[str, set[str | None]]:
    """name -> versions, as pyelftools reads .dynsym, .gnu.version and .gnu.version_d (the base version: None)."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        names = {}
        for section in elf.iter_sections():
            if isinstance(section, GNUVerDefSection):
                for verdef, aux in section.iter_versions():
                    names[verdef["vd_ndx"]] = None if verdef["vd_flags"] & 1 else next(iter(aux)).name
        versym = next(s for s in elf.iter_sections() if isinstance(s, GNUVerSymSection))
        out: dict[str, set[str | None]] = {}
        for i, sym in enumerate(elf.get_section_by_name(".dynsym").iter_symbols()):
            if sym["st_shndx"] == "SHN_UNDEF" or not sym.name:
                continue
            if sym["st_info"]["bind"] not in ("STB_GLOBAL", "STB_WEAK", "STB_GNU_UNIQUE", "STB_LOOS"):  # LOOS: UNIQUE
                continue
            if sym["st_other"]["visibility"] not in ("STV_DEFAULT", "STV_PROTECTED"):
                continue
            ndx = versym.get_symbol(i)["ndx"]
            ndx = ndx if isinstance(ndx, str) else ndx & 0x7FFF
            out.setdefault(sym.name, set()).add(names.get(ndx) if isinstance(ndx, int) else None)
        return out


@pytest.mark.parametrize("soname, package, pool", [
    ("libc.so.6", "libc6-2.43-amd64", "libc6_2.43-7_amd64.deb"),
    ("libstdc++.so.6", "libstdc++6-amd64", "libstdc++6_14.2.0-19_amd64.deb"),
    ("libgcc_s.so.1", "libgcc-s1-arm64", "libgcc-s1_14.2.0-19_arm64.deb"),
])
def test_the_lists_are_what_pyelftools_reads_in_the_same_package(debian_roots, soname, package, pool):
    assert DEBS[package].filename == pool
    doc = document()
    arch = "aarch64" if "arm64" in package else "x86_64"
    assert pool in doc["packages"][arch]
    root = debian_roots(f"exports-{package}", package)
    (path,) = [p for p in root.glob(f"usr/lib/*-linux-gnu/{soname}")]
    truth = _pyelftools_exports(path)
    library = system_library(soname, arch)
    assert library is not None
    assert set(library.exports) == set(truth)
    assert {n: set(v) for n, v in library.exports.items()} == truth
