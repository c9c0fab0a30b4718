"""Findings about the wheel as a file the index and installers take: its zip records, WHEEL and METADATA against
its name, the platform tags the index accepts, and its size. None of them moves the tag it deserves."""

from __future__ import annotations

from wheelcheck.audit.audit_options import AuditOptions
from wheelcheck.audit.findings import Finding
from wheelcheck.wheel.wheel_model import WheelModel, split_platform

__all__ = ["package_findings", "index_refuses_platform"]

# The Linux platform tags the package index takes (its allow-list): the PEP 600 and PEP 656 families on every
# architecture they are built for, the legacy aliases on the architectures their PEPs name, and two linux_ tags
# kept for Raspberry Pi wheels. Any other linux_<arch> tag is refused at upload.
_LEGACY = {
    "manylinux1": {"x86_64", "i686"},
    "manylinux2010": {"x86_64", "i686"},
    "manylinux2014": {"x86_64", "i686", "aarch64", "armv7l", "ppc64", "ppc64le", "s390x"},
}
_ACCEPTED_LINUX_ARCHES = {"armv6l", "armv7l"}  # linux_armv6l, linux_armv7l


def package_findings(model: WheelModel, options: AuditOptions) -> list[Finding]:
    findings = [_zip_layout(problem) if rule == "zip-layout" else _wheel_metadata(member, problem)
                for rule, member, problem in model.package_problems]
    if not options.any_platform_tag:
        refused = sorted(p for p in model.platforms if index_refuses_platform(p))
        if refused:
            findings.append(Finding(
                "platform-tag-refused", "error", None,
                f"is tagged {', '.join(refused)}, which the package index refuses: a linux_ tag promises nothing "
                "about the systems the wheel runs on",
                "run `wheelcheck repair` to vendor what the wheel needs and tag it manylinux or musllinux; for a "
                "private index that takes such tags, set any-platform-tag (--any-platform-tag)",
                cause="has a platform tag the index refuses"))
    limit = options.max_wheel_size
    if model.size > limit * 1_000_000:
        findings.append(Finding(
            "wheel-size", "warning", None,
            f"is {model.size / 1_000_000:.1f} MB, over the {limit} MB the package index takes by default",
            "shrink it (strip debug information, ship data apart), or ask the index to raise the project's limit "
            "(and set max-wheel-size)", cause=f"is over {limit} MB"))
    return findings


def _zip_layout(problem: str) -> Finding:
    return Finding("zip-layout", "error", None, problem,
                   "rebuild the wheel with a standard tool (pip wheel, python -m build, uv build): they write zips "
                   "the index takes; `wheelcheck repair` writes one too", cause="the index refuses its zip records")


def _wheel_metadata(member: str | None, problem: str) -> Finding:
    return Finding("wheel-metadata", "error", member, problem,
                   "rebuild the wheel rather than rename or edit it: the file name, the WHEEL file and METADATA must "
                   "say the same", cause="its metadata and its name disagree")


def index_refuses_platform(platform: str) -> bool:
    """Does the package index refuse a Linux platform tag (linux_x86_64, manylinux1_aarch64)? Other tags
    (any, macOS, Windows) are not this audit's to judge."""
    split = split_platform(platform)
    if split is None:
        return False
    name, arch = split
    if name == "linux":
        return arch not in _ACCEPTED_LINUX_ARCHES
    return name in _LEGACY and arch not in _LEGACY[name]
