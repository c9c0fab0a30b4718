"""The distributions a wheel's Requires-Dist lines name, read safely: a malformed line names none."""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

__all__ = ["required_name", "installed_requirements"]

# packaging parses a marker's parentheses recursively: a METADATA line holding 3,000 of them raises
# RecursionError. Real markers nest two or three deep.
MAX_NESTING = 32
_PARENTHESIS = re.compile(r"[()]")


def required_name(line: str) -> str | None:
    """The canonical name a Requires-Dist line declares, or None when it is not a valid requirement."""
    depth = deepest = 0
    for match in _PARENTHESIS.finditer(line):
        depth += 1 if match.group() == "(" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_NESTING:
        return None
    # here: packaging's requirement parser costs ~20 ms to import, and most audits never read a line
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return canonicalize_name(Requirement(line).name)
    except InvalidRequirement:
        return None


# what a marker is judged against: a Linux machine, and no extra asked for
_LINUX = {"extra": "", "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}


def installed_requirements(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The canonical names of the Requires-Dist lines an installer follows on Linux without extras: a line for an
    extra (``pytest ; extra == 'test'``) or another system (``pywin32 ; sys_platform == 'win32'``) is left out; one
    whose marker cannot be judged is kept. Malformed lines name none."""
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement

    names = []
    for line in lines:
        name = required_name(line)  # the nesting check first: packaging parses parentheses recursively
        if name is None:
            continue
        try:
            marker = Requirement(line).marker
            if marker is not None and not marker.evaluate(_LINUX):
                continue
        except (InvalidRequirement, InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
            pass
        names.append(name)
    return tuple(dict.fromkeys(names))
