"""The distributions a wheel's Requires-Dist lines name, read safely: a malformed line names none."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from packaging.utils import canonicalize_name

if TYPE_CHECKING:
    from packaging.markers import Marker
    from packaging.requirements import Requirement

__all__ = ["required_name", "parsed_requirement", "marker_applies", "installed_requirements", "requested_extras"]

# packaging parses a marker's parentheses recursively: a METADATA line holding 3,000 of them raises
# RecursionError. Real markers nest two or three deep.
MAX_NESTING = 32
_PARENTHESIS = re.compile(r"[()]")
_EXTRA = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")
# what a marker is judged against where nothing more is known: a Linux machine, and no extra asked for
_LINUX = {"extra": "", "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}


def parsed_requirement(line: str) -> Requirement | None:
    """A Requires-Dist line as packaging reads it, or None when it is not a valid requirement (or nests its
    parentheses deeper than any real marker)."""
    depth = deepest = 0
    for match in _PARENTHESIS.finditer(line):
        depth += 1 if match.group() == "(" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_NESTING:
        return None
    # here: packaging's requirement parser costs ~20 ms to import, and most audits never read a line
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


def required_name(line: str) -> str | None:
    """The canonical name a Requires-Dist line declares, or None when it is not a valid requirement."""
    requirement = parsed_requirement(line)
    return canonicalize_name(requirement.name) if requirement is not None else None


def marker_applies(marker: Marker | None, environment: dict[str, str]) -> str | None | Literal[False]:
    """None: the requirement applies always; an extra's name: only with that extra; False: never here. A marker
    that cannot be judged applies, rather than hide a requirement."""
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName

    if marker is None:
        return None
    try:
        if marker.evaluate(environment):
            return None
        for extra in _EXTRA.findall(str(marker)):
            if marker.evaluate({**environment, "extra": extra}):
                return extra
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return None
    return False


@lru_cache(maxsize=4)
def installed_requirements(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The canonical names of the Requires-Dist lines an installer follows on Linux without extras: a line for an
    extra (``pytest ; extra == 'test'``) or another system (``pywin32 ; sys_platform == 'win32'``) is left out; one
    whose marker cannot be judged is kept. Malformed lines name none. Cached: asked once per finding, and
    parsing Requirements dominated tensorflow's audit."""
    names = []
    for line in lines:
        requirement = parsed_requirement(line)
        if requirement is not None and marker_applies(requirement.marker, _LINUX) is None:
            names.append(canonicalize_name(requirement.name))
    return tuple(dict.fromkeys(names))


@lru_cache(maxsize=4)
def requested_extras(lines: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(canonical name, the extras it is asked for, canonical) of each line ``installed_requirements`` keeps that
    asks for extras: ``cuda-toolkit[cublas,curand]`` installs nvidia-cublas and nvidia-curand through them."""
    found = []
    for line in lines:
        requirement = parsed_requirement(line)
        if requirement is not None and requirement.extras and marker_applies(requirement.marker, _LINUX) is None:
            found.append((canonicalize_name(requirement.name),
                          tuple(sorted(canonicalize_name(extra) for extra in requirement.extras))))
    return tuple(found)
