"""Where every ELF file of the given distributions lands once they are installed side by side.

Paths are virtual and absolute: ``/sp/...`` for site-packages (purelib and platlib are one directory in a
virtual environment), ``/bin/...`` for scripts, ``/data/...`` and ``/headers/...`` for the other schemes.
A wheel's member path and an installed distribution's RECORD path (relative to site-packages) both map
here, so a plugin's ``$ORIGIN/../../nvidia/cublas/lib`` lands in the directory another distribution fills.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.elf.elf_info import ElfInfo

__all__ = ["Placed", "Layout", "install_path"]

_DATA_MEMBER = re.compile(r"^[^/]+\.data/(purelib|platlib|scripts|headers|data)/(.*)$")
# $ORIGIN/../lib/python3.X/site-packages/... from bin/ lands back in site-packages
_SITE = re.compile(r"^/lib/python[^/]+/site-packages(?=/|$)")
_KIND = {"purelib": "/sp/", "platlib": "/sp/", "scripts": "/bin/", "headers": "/headers/", "data": "/data/"}


def install_path(member: str) -> str:
    """The virtual install path of a wheel member or of a path relative to site-packages."""
    match = _DATA_MEMBER.match(member)
    if match:
        return posixpath.normpath(_KIND[match.group(1)] + match.group(2))
    path = posixpath.normpath("/sp/" + member)
    return _SITE.sub("/sp", path)


@dataclass(frozen=True, eq=False)
class Placed:
    """One loadable ELF file of one distribution, at its install path."""

    dist: Distribution
    elf: ElfInfo
    path: str  # virtual install path

    @property
    def name(self) -> str:
        """The name the loader knows it by once loaded: its SONAME, else its file name."""
        return self.elf.soname or posixpath.basename(self.path)

    @property
    def directory(self) -> str:
        return posixpath.dirname(self.path)

    @property
    def label(self) -> str:
        return f"{self.dist.name} {self.dist.version}: {self.elf.path}"


@dataclass
class Layout:
    """Every loadable file of the given distributions, by install path and by soname."""

    placed: list[Placed]
    by_path: dict[str, Placed] = field(default_factory=dict)
    by_name: dict[str, list[Placed]] = field(default_factory=dict)

    @classmethod
    def of(cls, dists: Iterable[Distribution], arch: str | None = None) -> Layout:
        placed = [Placed(d, e, install_path(e.path)) for d in dists for e in d.loadable(arch)]
        layout = cls(placed)
        for p in placed:
            layout.by_path.setdefault(p.path, p)
            for name in {p.name, posixpath.basename(p.path)}:
                layout.by_name.setdefault(name, []).append(p)
        return layout

    def files_of(self, dist: Distribution) -> list[Placed]:
        return [p for p in self.placed if p.dist is dist]

    def own_tops(self, dist: Distribution) -> set[str]:
        """The top-level install directories a distribution's files occupy (/sp/torch, /sp/torch.libs)."""
        return {"/".join(p.path.split("/")[:3]) for p in self.files_of(dist)}
