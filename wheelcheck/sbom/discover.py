"""Find the third-party code in a wheel, from its ELF summaries alone (pure: no host, no clock).

- A **vendored** library is a shared library that is not an extension module and was renamed by a repair
  (auditwheel's hash in its name), sits in a ``.libs`` directory, or is named like a known upstream's
  library. Its component is the upstream of its unhashed name (libcrypto-5409cd36.so.3 -> openssl), or the
  unhashed stem itself when the upstream is not known (libXau).
- A **static** copy is code of an upstream linked into another file: the exposure analysis recognises its
  exported symbols (a symbol family of data/families.json that the file does not own), or the file states
  the upstream's version in a string. Neither counts in a file that loads that upstream's library: a
  program that links libz dynamically may hold zlib's version from zlib.h, and one that links libstdc++.so.6
  exports std:: template instances (old-ABI std::string's _S_terminal among them).
- The version is what the binary states (data/components.json ``versions``); never guessed from a soname.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from wheelcheck.audit.exposure import Exposure, exposure_of
from wheelcheck.symbols.sonames import unhashed
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.sbom.bill_of_materials import BillOfMaterials, Component, Evidence
from wheelcheck.sbom.upstreams import (StatedVersion, Upstream, library_stem, stated_versions,
                                       upstream_of_family, upstream_of_library, upstreams)
from wheelcheck.symbols.families import families, owns_or_loads
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["bill_of_materials", "components_of", "is_vendored"]

_SHOWN_SYMBOLS = 3


def bill_of_materials(model: WheelModel, exposures: Mapping[str, Exposure] | None = None) -> BillOfMaterials:
    """``exposures``: the files' exposures by path where an audit has made them already."""
    return BillOfMaterials(model.filename, model.name, model.version, components_of(model, exposures or {}))


def components_of(model: WheelModel, exposures: Mapping[str, Exposure] | None = None) -> tuple[Component, ...]:
    """Every component, file by file in path order: the file's own (if vendored), then its static copies."""
    out: list[Component] = []
    exposures = exposures or {}
    for elf in sorted(model.elves, key=lambda e: e.path):
        vendored = is_vendored(elf)
        own = upstream_of_library(elf.path, elf.version_strings) if vendored else None
        if vendored:
            out.append(_vendored(elf, own))
        exposure = exposures.get(elf.path)
        out.extend(_static(elf, own, exposure if exposure is not None else exposure_of(elf)))
    return tuple(out)


def is_vendored(elf: ElfInfo) -> bool:
    """A shared library, not an extension module, renamed by a repair, in a .libs directory, or named like
    a known upstream's library."""
    if elf.elf_type != "ET_DYN" or elf.is_extension or not _is_library_name(elf.path):
        return False
    name = elf.path.rsplit("/", 1)[-1]
    hashed = library_stem(name) != name.split(".", 1)[0]
    in_libs = any(part == ".libs" or part.endswith(".libs") for part in elf.path.split("/")[:-1])
    return hashed or in_libs or any(u.owns_library(library_stem(name)) for u in upstreams())


def _is_library_name(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith("lib") and (".so." in name or name.endswith(".so"))


def _vendored(elf: ElfInfo, upstream: Upstream | None) -> Component:
    name = elf.path.rsplit("/", 1)[-1]
    stem = library_stem(name)
    original = _original_name(name, elf.soname)
    evidence = [Evidence("filename", name if original == name else f"{name} ({original} before a repair renamed it)")]
    version = None
    if upstream is not None:
        stated = [s for s in stated_versions(elf.version_strings) if s.upstream is upstream]
        evidence += [Evidence("string", s.text) for s in stated]
        version = _one_version(stated)
    return Component(
        name=upstream.id if upstream else stem, version=version, kind="vendored", file=elf.path,
        title=upstream.title if upstream else stem, sha256=elf.sha256 or None, soname=original,
        upstream=upstream.id if upstream else None,
        cpe=upstream.cpe_for(version) if upstream and version else None, evidence=tuple(evidence))


def _original_name(name: str, soname: str | None) -> str:
    """The library's name before a repair renamed it: its SONAME less the hash, else its file name less it."""
    return unhashed(soname) if soname else unhashed(name)


def _static(elf: ElfInfo, own: Upstream | None, exposure: Exposure) -> list[Component]:
    """Upstreams linked into ``elf``: by exported symbol families and by stated versions."""
    found: dict[str, tuple[str, Upstream | None, list[Evidence], list[StatedVersion]]] = {}  # key -> ...
    table = {f.id: f for f in families()}
    for fid, count in sorted(exposure.families.items()):
        family = table[fid]
        if owns_or_loads(family, elf.path, elf.soname, elf.needed):
            continue  # the family's own library, or a file that loads it (wrappers, template instances)
        if fid == "libstdcxx" and not exposure.sentinels:
            continue  # std:: templates any C++ library exports, not a runtime
        upstream = upstream_of_family(fid)
        if upstream is not None and upstream is own:
            continue
        shown = ", ".join(exposure.examples.get(fid, ())[:_SHOWN_SYMBOLS])
        evidence = Evidence("symbols", f"exports {count} {family.title} symbol{'s' * (count != 1)} ({shown})")
        key = upstream.id if upstream else fid
        entry = found.setdefault(key, (family.title if upstream is None else upstream.title, upstream, [], []))
        entry[2].append(evidence)
    for stated in stated_versions(elf.version_strings):
        if stated.upstream is own or _loads(elf, stated.upstream):
            continue
        entry = found.setdefault(stated.upstream.id, (stated.upstream.title, stated.upstream, [], []))
        entry[3].append(stated)
    out = []
    for key, (title, upstream, symbol_evidence, statements) in sorted(found.items()):
        versions: list[str | None] = [*sorted({s.version for s in statements})] or [None]
        for version in versions:  # two copies at two versions in one file are two components
            strings = [Evidence("string", s.text) for s in statements if s.version == version]
            out.append(Component(
                name=key, version=version, kind="static", file=elf.path, title=title,
                upstream=upstream.id if upstream else None,
                cpe=upstream.cpe_for(version) if upstream and version else None,
                evidence=tuple(symbol_evidence + strings)))
    return out


def _loads(elf: ElfInfo, upstream: Upstream) -> bool:
    """Does ``elf`` load one of ``upstream``'s libraries (DT_NEEDED)? Then its strings may be the headers'."""
    return any(upstream.owns_library(library_stem(needed)) for needed in elf.needed)


def _one_version(stated: list[StatedVersion]) -> str | None:
    """The version a library file states of itself: the one most of its strings state (ties: the first in
    sorted order). A library file is one version; every string is kept as evidence."""
    counts = Counter(s.version for s in stated)
    return min(counts, key=lambda v: (-counts[v], v)) if counts else None
