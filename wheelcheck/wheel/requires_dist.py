"""The distributions a wheel's Requires-Dist lines name, read safely: a malformed line names none."""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

__all__ = ["required_name"]

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
