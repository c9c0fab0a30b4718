"""Derive a policy from a root filesystem: the symbol versions its libraries *define* (DT_VERDEF).

The libraries read are the system ones a manylinux policy speaks for: glibc's (libc, libm, libdl, librt,
libpthread, libresolv, libutil, libanl, libnsl), libstdc++, libgcc_s, libatomic and zlib, each where
present. Every version they define becomes an allowed version of its namespace (GLIBC_2.17 -> GLIBC 2.17),
whichever library defines it: a binary's need for GLIBC_2.0 from libgcc_s.so.1 (aarch64) is judged in the
GLIBC namespace like any other. ``*_PRIVATE`` versions are left out: no policy may allow them.

The library whitelist, blacklist and priority cannot be read from files; they come from a base policy
(the bundled policy of the same name, else the newest bundled glibc policy not newer than the one found).
So do the versions of a namespace whose library is not under the root (no libz.so.1: ZLIB), because a
policy that whitelists a library but lists no namespace for it would allow any version; a note says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from wheelcheck.elf import summarize
from wheelcheck.errors import BadElfError, UsageError
from wheelcheck.policy._rootfs import library_dirs, resolve_in_root
from wheelcheck.policy.policy_model import Policy, PolicySet
from wheelcheck.policy.versions import NAMESPACE_LIBRARY, PRIVATE, numeric, sorted_versions, split_version_name

__all__ = ["GLIBC_SONAMES", "OTHER_SONAMES", "Derivation", "derive_policy", "find_libraries"]

GLIBC_SONAMES = ("libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libresolv.so.2",
                 "libutil.so.1", "libanl.so.1", "libnsl.so.1")
OTHER_SONAMES = ("libstdc++.so.6", "libgcc_s.so.1", "libatomic.so.1", "libz.so.1")
_RELEASE = re.compile(rb"release version ([0-9]+)\.([0-9]+)")  # gnu_get_libc_version's banner in libc.so.6


@dataclass(frozen=True)
class Library:
    soname: str
    path: str  # relative to the root, where it was found
    real: Path
    arch: str
    version_defs: tuple[str, ...]


@dataclass
class Derivation:
    """A derived policy document and how it was made (what was read, what was left out and why)."""

    document: dict
    arch: str
    libraries: list[Library]
    glibc_release: str  # from libc.so.6's banner, or from its newest GLIBC_ version
    base: str | None  # the bundled policy the whitelist, blacklist and priority came from
    excluded: dict[str, list[str]] = field(default_factory=dict)  # version name -> sonames defining it
    notes: list[str] = field(default_factory=list)


def find_libraries(root: str | Path, arch: str | None = None) -> tuple[str, list[Library], list[str]]:
    """(arch, the libraries found for it, notes). UsageError when none, or several arches and no ``arch``."""
    root = Path(root)
    if not root.is_dir():
        raise UsageError(str(root), "--root must be a directory")
    found: dict[str, dict[str, Library]] = {}  # arch -> soname -> first found
    notes: list[str] = []
    seen: set[Path] = set()
    for directory in library_dirs(root):
        for soname in GLIBC_SONAMES + OTHER_SONAMES:
            real = resolve_in_root(root, f"{directory}/{soname}")
            if real is None or real in seen:
                continue
            seen.add(real)
            library = _read(root, real, f"{directory}/{soname}", soname)
            if library is None:
                continue
            first = found.setdefault(library.arch, {}).get(soname)
            if first is None:
                found[library.arch][soname] = library
            elif set(first.version_defs) != set(library.version_defs):
                notes.append(f"{library.path}: another {soname} for {library.arch} with other versions; "
                             f"{first.path} (found first) is used")
    if not found:
        raise UsageError(str(root), "no libc.so.6, libstdc++.so.6, libgcc_s.so.1, libatomic.so.1 or libz.so.1 "
                                    "under lib/, lib64/, usr/lib/, usr/lib64/ or their multiarch directories")
    if arch is None:
        if len(found) > 1:
            raise UsageError(str(root), f"libraries for several architectures ({', '.join(sorted(found))}): "
                                        f"choose one with --arch")
        arch = next(iter(found))
    if arch not in found:
        raise UsageError(str(root), f"no library for {arch} (found: {', '.join(sorted(found))})")
    order = GLIBC_SONAMES + OTHER_SONAMES
    return arch, sorted(found[arch].values(), key=lambda lib: order.index(lib.soname)), notes


def derive_policy(root: str | Path, policies: PolicySet, *, name: str | None = None, arch: str | None = None,
                  base: str | None = None, priority: int | None = None, source: str | None = None) -> Derivation:
    """Derive a glibc policy for one arch from the libraries under ``root``; see the module docstring."""
    root = Path(root)
    arch, libraries, notes = find_libraries(root, arch)
    versions: dict[str, set[str]] = {}
    excluded: dict[str, list[str]] = {}
    for library in libraries:
        for version_name in library.version_defs:
            split = split_version_name(version_name)
            if split is None or split[1] == PRIVATE:
                excluded.setdefault(version_name, []).append(library.soname)
                continue
            versions.setdefault(split[0], set()).add(split[1])
    release = _glibc_release(root, libraries, versions, notes)
    name = name or f"manylinux_{release.replace('.', '_')}"
    base_policy = _base_policy(policies, name, release, base)
    _fill_missing(versions, libraries, base_policy, arch, notes)
    document = {
        "name": name,
        "priority": priority if priority is not None else _priority(base_policy, name, release),
        "libc": "glibc",
        "libc_version": release,
        "cxx_abi": sorted(base_policy.cxx_abi, reverse=True) if base_policy else ["old", "new"],
        "symbol_versions": {arch: {ns: sorted_versions(v) for ns, v in sorted(versions.items())}},
        "lib_whitelist": list(base_policy.document.get("lib_whitelist", [])) if base_policy else list(GLIBC_SONAMES),
        "blacklist": dict(base_policy.document.get("blacklist", {})) if base_policy else {},
        "source": source or _source(root, libraries, release, base_policy, arch),
    }
    return Derivation(document, arch, libraries, release, base_policy.name if base_policy else None,
                      excluded, notes)


def _fill_missing(versions: dict[str, set[str]], libraries: list[Library], base: Policy | None, arch: str,
                  notes: list[str]) -> None:
    found = {lib.soname for lib in libraries}
    inherited = base.versions(arch) if base is not None else {}
    for ns, soname in NAMESPACE_LIBRARY.items():
        if soname in found or ns in versions:
            continue
        if base is not None and ns in inherited:
            versions[ns] = set(inherited[ns])
            notes.append(f"no {soname} for {arch} under the root: {ns} versions copied from {base.name}")
        else:
            notes.append(f"no {soname} for {arch} under the root and no {ns} versions to copy: "
                         f"the policy does not limit {ns}")


def _read(root: Path, real: Path, path: str, soname: str) -> Library | None:
    try:
        data = real.read_bytes()
    except OSError:
        return None
    if not data.startswith(b"\x7fELF"):
        return None  # e.g. a linker script
    try:
        info = summarize(data, path)
    except BadElfError as exc:
        raise UsageError(str(root / path), f"cannot read this library ({exc.problem})") from None
    if info.arch is None:
        return None
    return Library(soname, path, real, info.arch, info.version_defs)


def _glibc_release(root: Path, libraries: list[Library], versions: dict[str, set[str]], notes: list[str]) -> str:
    libc = next((lib for lib in libraries if lib.soname == "libc.so.6"), None)
    if libc is None:
        raise UsageError(str(root), "no libc.so.6 for this architecture: a policy needs glibc's versions")
    match = _RELEASE.search(libc.real.read_bytes())
    if match:
        return f"{int(match.group(1))}.{int(match.group(2))}"
    newest = max(filter(None, map(numeric, versions.get("GLIBC", ()))), default=None)
    if newest is None:
        raise UsageError(str(root / libc.path), "libc.so.6 names no glibc release and defines no GLIBC_ version")
    notes.append(f"{libc.path} has no 'release version' banner; the glibc release is taken from its "
                 f"newest GLIBC_ version")
    return ".".join(map(str, newest[:2]))


def _base_policy(policies: PolicySet, name: str, release: str, base: str | None) -> Policy | None:
    if base is not None:
        policy = policies.find(base)
        if policy is None or policy.is_linux:
            raise UsageError(base, "--base names no known policy")
        return policy
    same = policies.find(name)
    if same is not None and not same.is_linux:
        return same
    wanted = _release_tuple(release)
    older = [p for p in policies if p.libc == "glibc" and _release_tuple(p.libc_version) <= wanted]
    return max(older, key=lambda p: _release_tuple(p.libc_version), default=None)


def _priority(base: Policy | None, name: str, release: str) -> int:
    """The base's priority, minus one per glibc minor release past it (manylinux_2_41: 51 -> 2_43: 49)."""
    if base is None:
        return 1
    if base.name == name:
        return int(base.priority)  # policy files' priorities are ints (only a policy made for a claim has another)
    steps = _release_tuple(release)[1] - _release_tuple(base.libc_version)[1]
    return max(1, int(base.priority) - max(steps, 1))


def _release_tuple(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return (int(major), int(minor or 0)) if major.isdigit() and (minor or "0").isdigit() else (0, 0)


def _source(root: Path, libraries: list[Library], release: str, base: Policy | None, arch: str) -> str:
    files = ", ".join(lib.path for lib in libraries)
    text = f"wheelcheck policy derive --root {root} (glibc {release}): {files}"
    if base is None:
        return text
    found = {lib.soname for lib in libraries}
    copied = sorted(ns for ns, soname in NAMESPACE_LIBRARY.items() if soname not in found and ns in base.versions(arch))
    text += f"; lib_whitelist, blacklist and priority from {base.name}"
    return text + (f"; {', '.join(copied)} versions from {base.name} (library not under the root)" if copied else "")
