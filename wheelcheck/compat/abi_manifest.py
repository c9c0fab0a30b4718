"""A host's exported interface as data (`wheelcheck abi`), and the Distribution read back from it, so that
a plugin can be checked against a host release without the host's wheel.

Per loadable ELF file: where it installs, its SONAME, NEEDED, RPATH and RUNPATH (what importing the host
loads), the versions it defines and needs, its exported symbols (name, version, binding, type), its
libstdc++ string ABI, its libstdc++ floor and the compilers named in .comment. Read back, each file
becomes an ElfInfo whose symbol table holds only those exports: all that binding a plugin needs.
"""

from __future__ import annotations

import gzip
import io
import json
from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.tags import parse_tag

from wheelcheck.audit.cxxabi import classify
from wheelcheck.compat.cxx_boundary import libstdcxx_floor
from wheelcheck.compat.installed_layout import Placed, install_path
from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.elf.elf_info import ElfInfo, SymbolTable, VersionNeed
from wheelcheck.errors import UsageError

__all__ = ["MANIFEST_KIND", "MANIFEST_VERSION", "build_manifest", "read_manifest", "is_manifest_path"]

MANIFEST_KIND = "wheelcheck-abi-manifest"
MANIFEST_VERSION = 1
_BINDS = {1: "GLOBAL", 2: "WEAK", 10: "GNU_UNIQUE"}
_BIND_CODES = {v: k for k, v in _BINDS.items()}
_TYPES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 6: "TLS", 10: "GNU_IFUNC"}
_TYPE_CODES = {v: k for k, v in _TYPES.items()}


def is_manifest_path(path: str | Path) -> bool:
    return str(path).endswith((".json", ".json.gz"))


def build_manifest(dist: Distribution, comments: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """The manifest of a distribution's loadable files; ``comments``: ELF path -> .comment strings."""
    from wheelcheck._version import __version__

    files = []
    for elf in dist.loadable():
        placed = Placed(dist, elf, install_path(elf.path))
        st = elf.symtab
        exports = []
        for i in st.export_indices():
            version = st.version_names[st.version_index[i]][0]
            exports.append([st.names[i], version, _BINDS.get(st.info[i] >> 4, "GLOBAL"),
                            _TYPES.get(st.info[i] & 0xF, "NOTYPE")])
        abi = classify(elf)
        needs: dict[str, list[str]] = {}
        for need in elf.version_needs:
            needs.setdefault(need.library, []).append(need.version)
        files.append({
            "path": elf.path, "install_path": placed.path, "soname": elf.soname, "arch": elf.arch,
            "machine": elf.machine, "elf_class": elf.elf_class, "endianness": elf.endianness,
            "is_extension": elf.is_extension, "needed": list(elf.needed), "rpath": list(elf.rpath),
            "runpath": list(elf.runpath), "version_definitions": list(elf.version_defs),
            "version_needs": needs, "cxx_abi": abi.abi, "libstdcxx_floor": libstdcxx_floor([placed]),
            "compiler": list(comments.get(elf.path, ())), "exports": exports})
    return {"kind": MANIFEST_KIND, "schema_version": MANIFEST_VERSION,
            "tool": {"name": "wheelcheck", "version": __version__},
            "distribution": {"name": dist.name, "version": dist.version, "source": dist.source,
                             "requires_dist": list(dist.requires), "tags": sorted(str(t) for t in dist.tags),
                             "rtld_global_loaders": list(dist.global_loaders),
                             "rtld_global_libraries": None if dist.global_libraries is None else
                             list(dist.global_libraries)},
            "files": files}


MAX_MANIFEST_SIZE = 512 << 20  # a manifest of the largest host libraries is tens of MB


def _gunzipped(raw: bytes, origin: str) -> bytes:
    """A gzip-compressed manifest inflated, refusing one that would inflate past MAX_MANIFEST_SIZE."""
    with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
        text = f.read(MAX_MANIFEST_SIZE + 1)
    if len(text) > MAX_MANIFEST_SIZE:
        raise UsageError(origin, f"inflates to more than {MAX_MANIFEST_SIZE} bytes: not an ABI manifest")
    return text


def read_manifest(path: str | Path) -> Distribution:
    """The Distribution a manifest describes. UsageError when it is not one."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        text = _gunzipped(raw, str(path)) if raw[:2] == b"\x1f\x8b" else raw
        doc = json.loads(text)
    except OSError as exc:
        raise UsageError(str(path), f"cannot read it ({exc.strerror or exc})") from None
    except (ValueError, EOFError, gzip.BadGzipFile) as exc:
        raise UsageError(str(path), f"not a JSON ABI manifest ({exc})") from None
    except RecursionError:  # the json module recurses once per level of nesting
        raise UsageError(str(path), "not a JSON ABI manifest (nested too deep)") from None
    if not isinstance(doc, dict) or doc.get("kind") != MANIFEST_KIND:
        kind = doc.get("kind") if isinstance(doc, dict) else None
        raise UsageError(str(path), f"not a wheelcheck ABI manifest (kind {kind!r})")
    if doc.get("schema_version") != MANIFEST_VERSION:
        raise UsageError(str(path), f"manifest schema version {doc.get('schema_version')!r} is not "
                                    f"{MANIFEST_VERSION}: regenerate it with this wheelcheck's `abi` command")
    try:
        meta = doc["distribution"]
        tags = frozenset(t for text in meta.get("tags", ()) for t in parse_tag(text))
        elves = tuple(_elf(entry) for entry in doc["files"])
        return Distribution(meta["name"], meta["version"], f"{path.name} (manifest of {meta.get('source', '?')})",
                            tuple(meta.get("requires_dist", ())), tags, elves,
                            tuple(meta.get("rtld_global_loaders", ())),
                            None if meta.get("rtld_global_libraries") is None else
                            tuple(meta["rtld_global_libraries"]))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise UsageError(str(path), f"malformed ABI manifest ({type(exc).__name__}: {exc})") from None


def _elf(entry: dict) -> ElfInfo:
    exports = entry["exports"]
    version_names: list[tuple[str | None, str | None]] = [(None, None)]
    slot: dict[str, int] = {}
    index = array("H")
    for name, version, _bind, _type in exports:
        if version is None:
            index.append(0)
            continue
        if version not in slot:
            slot[version] = len(version_names)
            version_names.append((version, None))
        index.append(slot[version])
    symtab = SymbolTable(
        names=tuple(str(e[0]) for e in exports),
        info=bytes((_BIND_CODES.get(e[2], 1) << 4) | _TYPE_CODES.get(e[3], 0) for e in exports),
        other=bytes(len(exports)), defined=bytes([1]) * len(exports), sizes=array("Q", [0] * len(exports)),
        version_index=index, version_names=tuple(version_names))
    needs = tuple(VersionNeed(lib, v, False, (), ()) for lib, versions in entry.get("version_needs", {}).items()
                  for v in versions)
    path = entry["path"]
    return ElfInfo(path=path, size=0, elf_class=int(entry["elf_class"]), endianness=entry["endianness"],
                   machine=entry["machine"], osabi="ELFOSABI_SYSV", elf_type="ET_DYN", arch=entry.get("arch"),
                   arch_problem=None, soname=entry.get("soname"), needed=tuple(entry.get("needed", ())),
                   rpath=tuple(entry.get("rpath", ())), runpath=tuple(entry.get("runpath", ())),
                   version_needs=needs, version_defs=tuple(entry.get("version_definitions", ())),
                   symtab=symtab, has_dynamic=True)
