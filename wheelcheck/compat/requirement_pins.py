"""Requires-Dist against the distributions given: which are declared (always, or only under an extra),
which pins the given versions break, and which required distributions were not given.

Markers are evaluated for the process the distributions meet in: Linux, CPython of the interpreter
their tags name, the architecture of their ELF files. A requirement whose marker names an extra applies
only when that extra is asked for (``pip install plugin[cuda]``), so it is reported with the extra.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from wheelcheck.conflicts.distribution import Distribution
from wheelcheck.wheel.requires_dist import marker_applies, parsed_requirement

__all__ = ["Declared", "PinCheck", "declared_requirements", "marker_environment", "pin_checks", "declared_closure"]

_CPYTHON = re.compile(r"^cp3(\d+)$")


@dataclass(frozen=True)
class Declared:
    line: str  # the Requires-Dist line
    key: str  # canonical name
    requirement: Requirement
    extra: str | None  # None: always; else only with this extra


@dataclass(frozen=True)
class PinCheck:
    line: str
    name: str  # as the requirement spells it
    given: str  # the version given
    satisfied: bool
    extra: str | None

    def message(self, subject: Distribution) -> str:
        cond = f" (with [{self.extra}])" if self.extra else ""
        if self.satisfied:
            return f"{subject.label} requires {self.line}{cond}; {self.given} given: satisfied"
        return f"{subject.label} requires {self.line}{cond}; {self.given} given"


def marker_environment(dists: Sequence[Distribution], arch: str | None) -> dict[str, str]:
    """The marker variables of the process: the newest CPython a given wheel names, Linux, ``arch``."""
    minors = sorted(int(m.group(1)) for d in dists for t in d.tags for m in [_CPYTHON.match(t.interpreter)] if m)
    version = f"3.{minors[-1]}" if minors else "3.12"
    return {"implementation_name": "cpython", "implementation_version": f"{version}.0", "os_name": "posix",
            "platform_machine": arch or "x86_64", "platform_python_implementation": "CPython",
            "platform_release": "", "platform_system": "Linux", "platform_version": "",
            "python_full_version": f"{version}.0", "python_version": version, "sys_platform": "linux",
            "extra": ""}


def declared_requirements(dist: Distribution, environment: dict[str, str]) -> list[Declared]:
    """The Requires-Dist lines that apply in ``environment``, each with the extra it needs, if any."""
    out = []
    for line in dist.requires:
        req = parsed_requirement(line)
        if req is None:
            continue
        extra = marker_applies(req.marker, environment)
        if extra is not False:
            out.append(Declared(line, canonicalize_name(req.name), req, extra))
    return out


def pin_checks(subject: Distribution, declared: Sequence[Declared], given: dict[str, Distribution]) -> list[PinCheck]:
    """Each declared requirement on a given distribution, checked against the version given."""
    out = []
    for d in declared:
        other = given.get(d.key)
        if other is None or other is subject:
            continue
        try:
            ok = d.requirement.specifier.contains(Version(other.version), prereleases=True)
        except InvalidVersion:
            ok = d.requirement.specifier.contains(other.version, prereleases=True)
        out.append(PinCheck(d.line, d.requirement.name, other.version, bool(ok), d.extra))
    return sorted(out, key=lambda p: (p.satisfied, p.extra is not None, p.line))


def declared_closure(subject: Distribution, given: dict[str, Distribution],
                     environment: dict[str, str]) -> dict[str, str | None]:
    """Canonical names the subject depends on, directly or through given distributions: name -> None when
    declared unconditionally along the way, else the subject's extra that brings it in."""
    out: dict[str, str | None] = {}
    todo = [(d.key, d.extra) for d in declared_requirements(subject, environment)]
    while todo:
        key, extra = todo.pop()
        if key == subject.key or (key in out and (out[key] is None or extra is not None)):
            continue
        out[key] = extra
        dist = given.get(key)
        if dist is not None:
            todo.extend((d.key, extra) for d in declared_requirements(dist, environment) if d.extra is None)
    return out
