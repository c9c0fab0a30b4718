"""New platform tags for a repaired wheel: its file name and the ``Tag`` lines of its WHEEL file. Pure.

As auditwheel's ``add_platforms``: the policy reached and its aliases are added (then the requested policy
and its aliases, when the wheel reaches a better one), ``linux_<arch>`` (and ``any``) is removed, the file
name lists the platforms sorted, and the WHEEL file gains a ``Tag`` line per interpreter-ABI pair and new
platform. Unlike auditwheel, a Linux platform tag the repaired wheel does not meet is removed too, so the
result never claims more than it delivers; and ``Root-Is-Purelib`` is always ``false`` (ELF files belong in
platlib). Nothing changes when nothing needs to: retagging a retagged wheel gives back the same text.
"""

from __future__ import annotations

from collections.abc import Callable

from wheelcheck.wheel.wheel_filename import platform_component, with_platforms
from wheelcheck.wheel.wheel_model import split_platform
from wheelcheck.policy.policy_model import Policy

__all__ = ["added_platforms", "removed_platforms", "retag_filename", "retag_wheel_text"]


def added_platforms(verdict: Policy, requested: Policy | None, arch: str) -> list[str]:
    tags = verdict.tags(arch)
    if requested is not None and requested != verdict:
        tags += [t for t in requested.tags(arch) if t not in tags]
    return tags


def removed_platforms(current: list[str], arch: str, verdict: Policy, policy_of,
                      meets: Callable[[Policy], bool] | None = None) -> set[str]:
    """``linux_<arch>``, ``any``, and every claimed Linux tag of ``arch`` whose policy ``verdict`` does not meet
    (``meets(policy)``, when given, tells instead: a policy made for a claim is judged rule by rule)."""
    removed = {f"linux_{arch}", "any"}
    for platform in current:
        split = split_platform(platform)
        if split is None or split[1] != arch:
            continue
        policy = policy_of(split[0])
        if policy is not None and not policy.is_linux and not (meets or verdict.meets)(policy):
            removed.add(platform)
    return removed


def retag_filename(filename: str, add: list[str], remove: set[str]) -> str:
    """The file name with the platforms of ``add`` and without those of ``remove``; a variant label (PEP 825)
    stays last, as it was."""
    kept = [p for p in sorted(set(platform_component(filename).split("."))) if p not in remove]
    return with_platforms(filename, sorted(dict.fromkeys(kept + add)))


def retag_wheel_text(text: str, add: list[str], remove: set[str]) -> str:
    """The WHEEL file with its Tag lines updated and ``Root-Is-Purelib: false``; ``text`` itself if unchanged."""
    lines = text.splitlines()
    positions = [i for i, line in enumerate(lines) if _key(line) == "tag"]
    tags = [lines[i].split(":", 1)[1].strip() for i in positions]
    interpreters = list(dict.fromkeys(t.rsplit("-", 1)[0] for t in tags))
    updated = [t for t in tags if t.rsplit("-", 1)[-1] not in remove]
    updated += [f"{pair}-{p}" for pair in interpreters for p in add if f"{pair}-{p}" not in updated]
    out = list(lines)
    if updated != tags:
        first = positions[0] if positions else len(out)
        for i in reversed(positions):
            del out[i]
        out[first:first] = [f"Tag: {t}" for t in updated]
    purelib = [i for i, line in enumerate(out) if _key(line) == "root-is-purelib"]
    if not purelib:
        out.append("Root-Is-Purelib: false")
    for i in purelib:
        if out[i].split(":", 1)[1].strip().lower() != "false":
            out[i] = "Root-Is-Purelib: false"
    if out == lines:
        return text
    return "\n".join(out) + "\n"


def _key(line: str) -> str:
    return line.split(":", 1)[0].strip().lower() if ":" in line and not line[:1].isspace() else ""
