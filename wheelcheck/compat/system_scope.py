"""The system's part of one load: the whitelisted system libraries it reaches (with their own needs, and the
glibc libraries every Python process has), what they export, and the libraries compat cannot see.

A name may be presumed the system's only when it can be: a library here exports it (the export lists of
policy/system_exports.py), or a library of the load is out of sight (missing, found where the search does not
look, a system library the lists do not hold, or one such a library needs). Then whatever is not defined is
"cannot tell"; with nothing out of sight it is "will fail".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from wheelcheck.policy.policy_model import Policy
from wheelcheck.policy.system_exports import SystemLibrary, system_library

__all__ = ["SystemScope", "system_scope", "PROCESS_LIBRARIES"]

# What the Python executable links (CPython's builds link libm, and before glibc 2.34 libpthread, libdl and
# libutil): in the global scope of every import
PROCESS_LIBRARIES = ("libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "libutil.so.1")


@dataclass
class SystemScope:
    libraries: list[SystemLibrary] = field(default_factory=list)
    unseen: list[str] = field(default_factory=list)  # libraries of the load compat cannot see, with why
    policy: Policy | None = None  # the systems judged: the subject's most compatible manylinux claim

    def lookup(self, name: str, version: str | None) -> tuple[SystemLibrary, bool] | None:
        """(the library that defines it, whether on every system of the policy), or None."""
        newer = None
        for library in self.libraries:
            if library.defines(name, version, self.policy):
                return library, True
            if newer is None and library.defines(name, version):
                newer = library
        return (newer, False) if newer is not None else None


def system_scope(system_links: Iterable[str], unseen: Iterable[str], arch: str | None, musl: bool,
                 policy: Policy | None) -> SystemScope:
    """``system_links``: the sonames the load takes from the system; ``unseen``: those it could not find."""
    scope = SystemScope(policy=policy)
    scope.unseen.extend(unseen)
    if musl:  # the export lists are glibc's
        scope.unseen.extend(dict.fromkeys(system_links))
        return scope
    todo = list(dict.fromkeys((*PROCESS_LIBRARIES, *system_links)))
    seen: set[str] = set()
    while todo:
        soname = todo.pop(0)
        if soname in seen:
            continue
        seen.add(soname)
        library = system_library(soname, arch)
        if library is None:
            scope.unseen.append(soname)
            continue
        scope.libraries.append(library)
        todo.extend(n for n in library.needed if n not in seen)
    return scope
