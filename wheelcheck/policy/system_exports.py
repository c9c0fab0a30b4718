"""What the whitelisted system libraries export, per architecture and policy (wheelcheck/data/system_exports.json.gz,
read from Debian's packages by tools/gen_system_exports.py).

A name defined at a symbol version is on a policy's systems when the policy allows that version (GLIBC_2.34:
manylinux_2_34 and later); a name of a library without versions (libX11.so.6) is on every system that has the
library. A library the data does not hold (an architecture not read, a soname no policy whitelists) is not known:
callers treat it as a library they cannot see.
"""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from importlib import resources

from wheelcheck.policy.policy_model import Policy
from wheelcheck.policy.versions import split_version_name

__all__ = ["SystemLibrary", "system_library", "system_architectures"]

_DATA = "system_exports.json.gz"


@dataclass(frozen=True)
class SystemLibrary:
    soname: str
    arch: str
    needed: tuple[str, ...]
    exports: dict[str, tuple[str | None, ...]]  # name -> the versions it is defined at (None: unversioned)

    def defines(self, name: str, version: str | None, policy: Policy | None = None) -> bool:
        """Would a reference to ``name`` (at ``version``) bind here, on the systems of ``policy`` (None: the
        newest, the release read)? An unversioned reference binds to whichever version is the default."""
        found = self.exports.get(name)
        if found is None:
            return False
        if version is not None:
            if version not in found and None not in found:
                return False
            return policy is None or _allowed(version, policy, self.arch)
        return policy is None or any(v is None or _allowed(v, policy, self.arch) for v in found)


def _allowed(version: str, policy: Policy, arch: str) -> bool:
    """Is ``version`` on the systems of ``policy``? A namespace the policy does not list is not limited by it."""
    split = split_version_name(version)
    if split is None:
        return True
    allowed = policy.symbol_versions.get(arch, {})
    return split[0] not in allowed or split[1] in allowed[split[0]]


@functools.lru_cache(maxsize=1)
def _document() -> dict:
    raw = resources.files("wheelcheck.data").joinpath(_DATA).read_bytes()
    return json.loads(gzip.decompress(raw))


@functools.lru_cache(maxsize=1)
def _names() -> tuple[str, ...]:
    return tuple(_document()["names"].split("\n"))


def system_architectures() -> frozenset[str]:
    return frozenset(_document()["libraries"])


@functools.lru_cache(maxsize=256)
def system_library(soname: str, arch: str | None) -> SystemLibrary | None:
    """The exports of ``soname`` on ``arch``, or None when the data does not hold it."""
    entry = _document()["libraries"].get(arch or "", {}).get(soname)
    if entry is None:
        return None
    names, versions = _names(), (None, *_document()["versions"])
    exports: dict[str, tuple[str | None, ...]] = {}
    at = 0
    for delta, v in zip(entry["names"], entry["versions"]):
        at += delta
        exports[names[at]] = tuple(versions[i] for i in v) if isinstance(v, list) else (versions[v],)
    return SystemLibrary(soname, arch or "", tuple(entry["needed"]), exports)
