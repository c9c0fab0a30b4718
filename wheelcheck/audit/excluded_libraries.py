"""Libraries the wheel needs but does not ship, left out of the verdict by ``--exclude`` (or ``exclude =``).

An excluded library does not limit the tag: the user says the system or another distribution provides it.
A wheel repaired with ``--exclude X`` passes an audit under the same settings for that reason, and the
report says so, so a passing gate never hides what it was told to overlook.
"""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatch

from wheelcheck.audit.check_context import CheckContext
from wheelcheck.audit.findings import Finding

__all__ = ["check_excluded"]


def check_excluded(context: CheckContext) -> Iterator[Finding]:
    patterns = context.options.exclude
    if not patterns:
        return
    for path, soname in sorted(context.resolution.unresolved):
        pattern = next((p for p in patterns if fnmatch(soname, p)), None)
        if pattern is None or context.policy.provides(soname, context.arch):
            continue
        yield Finding(
            "excluded-library", "info", path,
            f"needs {soname}, which the wheel does not provide: excluded ({pattern!r}), so it is taken as "
            "provided by the system or another distribution and does not limit the tag",
            "make sure every machine that installs the wheel has it: declare the distribution that ships it "
            "in Requires-Dist, or document the system package", subject=soname)
