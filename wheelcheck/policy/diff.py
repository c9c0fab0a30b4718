"""What one policy allows that another does not: per arch, namespace and library, for a reviewer.

Symbol versions are grouped by (namespace, version) with the arches they apply to, so a new glibc
release reads as one line ("GLIBC 2.40 on all 8 arches") rather than eight.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from wheelcheck.policy.policy_model import Policy
from wheelcheck.policy.versions import version_key

__all__ = ["PolicyDiff", "diff_policies"]

_SCALARS = ("priority", "libc", "libc_version", "aliases", "cxx_abi", "exposure", "rules")


@dataclass
class Allowance:
    """What one side allows and the other does not."""

    arches: list[str] = field(default_factory=list)  # covered by this side only
    versions: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # namespace -> version -> arches
    libraries: list[str] = field(default_factory=list)  # whitelisted here only
    drivers: list[str] = field(default_factory=list)
    unblocked: dict[str, list[str]] = field(default_factory=dict)  # library -> symbols the other blacklists
    cxx_abi: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.arches or self.versions or self.libraries or self.drivers or self.unblocked
                    or self.cxx_abi)

    def as_dict(self) -> dict:
        return {"arches": self.arches, "symbol_versions": self.versions, "lib_whitelist": self.libraries,
                "drivers": self.drivers, "blacklisted_by_other": self.unblocked, "cxx_abi": self.cxx_abi}


@dataclass
class PolicyDiff:
    a: Policy
    b: Policy
    only_a: Allowance
    only_b: Allowance
    changed: dict[str, tuple[object, object]]  # other fields that differ: name -> (a's, b's)
    shared_arches: list[str]

    @property
    def same(self) -> bool:
        return not (self.only_a or self.only_b or self.changed)

    def as_dict(self) -> dict:
        return {"a": self.a.name, "b": self.b.name, "same": self.same,
                "only_a": self.only_a.as_dict(), "only_b": self.only_b.as_dict(),
                "changed": {k: {"a": v[0], "b": v[1]} for k, v in self.changed.items()}}

    def text_lines(self) -> list[str]:
        lines = [f"--- {_label(self.a)}", f"+++ {_label(self.b)}"]
        for key, (old, new) in self.changed.items():
            lines.append(f"  {key}: {_show(old)} → {_show(new)}")
        same_name = self.a.name == self.b.name
        for side, other, allowance in ((self.a, self.b, self.only_a), (self.b, self.a, self.only_b)):
            mine, theirs = (f"{p.name} ({p.origin})" if same_name else p.name for p in (side, other))
            lines.append(f"allowed by {mine}, not by {theirs}:")
            lines += self._allowance_lines(allowance) or ["  nothing"]
        return lines

    def _allowance_lines(self, allowance: Allowance) -> list[str]:
        lines = []
        if allowance.arches:
            lines.append(f"  arches: {', '.join(allowance.arches)}")
        for ns, versions in sorted(allowance.versions.items()):
            for version, arches in sorted(versions.items(), key=lambda kv: version_key(kv[0])):
                lines.append(f"  {ns} {version}: {self._arches(arches)}")
        if allowance.libraries:
            lines.append(f"  libraries: {', '.join(allowance.libraries)}")
        if allowance.drivers:
            lines.append(f"  driver libraries: {', '.join(allowance.drivers)}")
        for library, symbols in sorted(allowance.unblocked.items()):
            lines.append(f"  {library} symbols the other blacklists: {', '.join(symbols)}")
        if allowance.cxx_abi:
            lines.append(f"  C++ ABI: {', '.join(allowance.cxx_abi)}")
        return lines

    def _arches(self, arches: list[str]) -> str:
        if len(self.shared_arches) > 1 and arches == self.shared_arches:
            return f"all {len(arches)} shared arches"
        return ", ".join(arches)


def diff_policies(a: Policy, b: Policy) -> PolicyDiff:
    shared = sorted(set(a.symbol_versions) & set(b.symbol_versions))
    changed = {}
    for key in _SCALARS:
        old, new = _plain(getattr(a, key)), _plain(getattr(b, key))
        if old != new:
            changed[key] = (old, new)
    return PolicyDiff(a, b, _allowance(a, b, shared), _allowance(b, a, shared), changed, shared)


def _allowance(mine: Policy, other: Policy, shared: list[str]) -> Allowance:
    out = Allowance(arches=sorted(set(mine.symbol_versions) - set(other.symbol_versions)))
    for arch in shared:
        theirs = other.versions(arch)
        for ns, versions in mine.versions(arch).items():
            if ns not in theirs:
                continue  # the other policy does not limit this namespace at all
            for version in versions - theirs[ns]:
                out.versions.setdefault(ns, {}).setdefault(version, []).append(arch)
        for ns in set(theirs) - set(mine.versions(arch)):
            out.versions.setdefault(ns, {}).setdefault("(any version: not limited)", []).append(arch)
    out.libraries = sorted(mine.lib_whitelist - other.lib_whitelist)
    out.drivers = sorted(mine.drivers - other.drivers)
    for library, symbols in other.blacklist.items():
        free = sorted(symbols - mine.blacklist.get(library, frozenset()))
        if free and library in mine.lib_whitelist:
            out.unblocked[library] = free
    out.cxx_abi = sorted(mine.cxx_abi - other.cxx_abi)
    return out


def _plain(value: object) -> object:
    if isinstance(value, (frozenset, set)):
        return sorted(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _label(policy: Policy) -> str:
    return f"{policy.name} (priority {policy.priority}, {policy.libc} {policy.libc_version}, {policy.origin})"


def _show(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)
