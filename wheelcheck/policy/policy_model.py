"""What a policy promises: symbol versions, libraries and C++ ABIs a wheel may rely on, per arch."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Policy", "PolicySet", "LINUX", "musl_libc_soname"]

_MUSL_ARCH = {"i686": "x86", "armv7l": "armv7"}


def musl_libc_soname(arch: str) -> str:
    """The soname of musl's libc on ``arch`` (policies say "libc.so"; the loader is named per arch)."""
    return f"libc.musl-{_MUSL_ARCH.get(arch, arch)}.so.1"


@dataclass(frozen=True)
class Policy:
    """One platform policy (manylinux_2_17, musllinux_1_2, ...). Immutable; compared by priority."""

    name: str
    priority: int
    libc: str  # glibc or musl
    libc_version: str
    aliases: tuple[str, ...] = ()
    cxx_abi: frozenset[str] = frozenset({"old", "new"})
    symbol_versions: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    lib_whitelist: frozenset[str] = frozenset()
    blacklist: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    drivers: frozenset[str] = frozenset()  # system driver libraries (libcuda.so.1 ...) beyond the built-in list
    exposure: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # thresholds, by family
    rules: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # rule id -> severity or "off"
    source: str | None = None
    origin: str = "bundled"  # where it was loaded from
    document: MappingProxyType = field(default_factory=lambda: MappingProxyType({}), repr=False, compare=False)

    @property
    def is_linux(self) -> bool:
        return self.priority == 0

    def supports(self, arch: str) -> bool:
        return self.is_linux or arch in self.symbol_versions

    def tag(self, arch: str) -> str:
        return f"{self.name}_{arch}"

    def tags(self, arch: str) -> list[str]:
        """The policy's tag and its aliases' tags: manylinux_2_17_x86_64, manylinux2014_x86_64."""
        return [self.tag(arch)] + [f"{alias}_{arch}" for alias in self.aliases]

    def versions(self, arch: str) -> dict[str, frozenset[str]]:
        return dict(self.symbol_versions.get(arch, {}))

    def whitelist(self, arch: str) -> frozenset[str]:
        if self.libc != "musl" or "libc.so" not in self.lib_whitelist:
            return self.lib_whitelist
        return (self.lib_whitelist - {"libc.so"}) | {musl_libc_soname(arch)}


LINUX = Policy(name="linux", priority=0, libc="any", libc_version="")


class PolicySet:
    """The policies a wheel is judged against, most compatible (highest priority) first."""

    def __init__(self, policies: Iterable[Policy]) -> None:
        self._policies = sorted(policies, key=lambda p: -p.priority)

    def __iter__(self) -> Iterator[Policy]:
        return iter(self._policies)

    def __len__(self) -> int:
        return len(self._policies)

    def for_platform(self, libc: str, arch: str) -> list[Policy]:
        """Policies of ``libc`` that cover ``arch``, most compatible first, ending with linux.

        musl has no symbol versions, so nothing in a wheel tells one musl release from another:
        like auditwheel (on a host whose musl it cannot read), only the newest musl policy is judged.
        """
        found = [p for p in self._policies if p.libc == libc and p.supports(arch) and not p.is_linux]
        if libc == "musl" and found:
            found = [min(found, key=lambda p: p.priority)]
        return found + [LINUX]

    def find(self, name: str) -> Policy | None:
        """A policy by its name or an alias, with or without an arch suffix stripped by the caller."""
        for p in self._policies:
            if name == p.name or name in p.aliases:
                return p
        return LINUX if name == "linux" else None

    def names(self) -> list[str]:
        return [p.name for p in self._policies]
