"""The meaning checks of ``policy validate``: pure functions of a set of loaded policies.

Each check yields (policy, field, message, severity); the caller adds the file. Errors break the
contract; a warning marks what is legitimate only for a reason a reviewer should know (a GLIBC version
newer than the policy's glibc is real on manylinux2014's aarch64, whose glibc 2.17 defines GLIBC_2.18).
"More compatible" means a higher priority: the audit gives a wheel the most compatible policy it satisfies,
so a more compatible policy that allowed something a less compatible one forbids would make the order of
the tags a lie.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import groupby

from wheelcheck.policy.policy_model import Policy
from wheelcheck.policy.versions import NAMESPACE_LIBRARY, PRIVATE, is_version, numeric, sorted_versions

__all__ = ["check"]

Issue = tuple[Policy, str, str, str]  # policy, field, message, severity
# what a check yields: an Issue, or one without its severity (an error)
Found = tuple[Policy, str, str] | tuple[Policy, str, str, str]
_NAME = re.compile(r"^(manylinux|musllinux)_([0-9]+)_([0-9]+)$")
_FAMILY_LIBC = {"manylinux": "glibc", "musllinux": "musl"}
_LEGACY = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}


def check(policies: list[Policy]) -> list[Issue]:
    found = []
    for policy in policies:
        found += [*_name_agrees(policy), *_versions_parse(policy), *_unlimited_libraries(policy)]
    found += _unique_names(policies)
    for _, family in groupby(sorted(policies, key=lambda p: p.libc), key=lambda p: p.libc):
        members = list(family)
        found += [*_priorities_order(members), *_more_compatible_allows_less(members)]
    return [item if len(item) == 4 else (*item, "error") for item in found]  # errors unless marked


def _name_agrees(p: Policy) -> Iterator[Found]:
    match = _NAME.match(p.name)
    if match:
        libc = _FAMILY_LIBC[match.group(1)]
        version = f"{match.group(2)}.{match.group(3)}"
        if p.libc != libc:
            yield p, "libc", f"is {p.libc}, but the name {p.name} means {libc}"
        if p.libc_version != version:
            yield p, "libc_version", f"is {p.libc_version}, but the name {p.name} means {version}"
    for alias in p.aliases:
        legacy = _LEGACY.get(alias)
        if legacy is not None and (p.libc != "glibc" or p.libc_version != legacy):
            yield p, "aliases", f"{alias} means glibc {legacy}, but the policy is {p.libc} {p.libc_version}"
    if p.priority <= 0:
        yield p, "priority", "must be above 0 (priority 0 is the generic linux tag's)"


def _versions_parse(p: Policy) -> Iterator[Found]:
    release = numeric(p.libc_version)
    for arch, namespaces in sorted(p.symbol_versions.items()):
        for ns, versions in sorted(namespaces.items()):
            field = f"symbol_versions.{arch}.{ns}"
            for version in sorted_versions(versions):
                if version == PRIVATE:
                    yield p, field, f"allows {ns}_{PRIVATE}, which is internal to the library defining it: " \
                                    f"no policy may allow it"
                elif not is_version(version):
                    yield p, field, f"{version!r} is not a version (a number such as 2.17, a qualified " \
                                    f"number such as LDBL_3.4, or a marker such as ABI_DT_RELR)"
                elif ns == "GLIBC" and p.libc == "glibc" and release and (numeric(version) or ()) > release:
                    yield p, field, f"allows {version}, newer than the policy's glibc {p.libc_version} " \
                                    f"(right only if that glibc defines it, e.g. by a backport)", "warning"


def _unlimited_libraries(p: Policy) -> Iterator[Found]:
    """A whitelisted libstdc++/libgcc_s/libatomic/libz whose namespace is not listed allows any version."""
    if p.libc != "glibc":
        return
    for arch, namespaces in sorted(p.symbol_versions.items()):
        for ns, soname in NAMESPACE_LIBRARY.items():
            if soname in p.lib_whitelist and ns not in namespaces:
                yield p, f"symbol_versions.{arch}", f"lists no {ns} versions although {soname} is whitelisted: " \
                                                    f"any {ns} version is allowed", "warning"


def _unique_names(policies: list[Policy]) -> Iterator[Found]:
    owner: dict[str, Policy] = {}
    for p in policies:
        for field, label in [("name", p.name)] + [("aliases", a) for a in p.aliases]:
            first = owner.setdefault(label, p)
            if first is not p:
                yield p, field, f"{label} is already {'the name' if label == first.name else 'an alias'} " \
                                f"of {first.name} ({first.origin})"
            elif field == "aliases" and label == p.name:
                yield p, field, f"{label} is the policy's own name"


def _priorities_order(members: list[Policy]) -> Iterator[Found]:
    by_priority = sorted(members, key=lambda p: -p.priority)
    for more, less in zip(by_priority, by_priority[1:]):
        if more.priority == less.priority:
            yield less, "priority", f"{less.priority} is also {more.name}'s ({more.origin}): priorities must " \
                                    f"order the policies"
        else:
            more_version, less_version = numeric(more.libc_version), numeric(less.libc_version)
            if more_version and less_version and more_version > less_version:
                yield more, "priority", f"{more.priority} ranks it above {less.name} ({less.priority}), " \
                                        f"which targets an older {less.libc} ({less.libc_version})"


def _more_compatible_allows_less(members: list[Policy]) -> Iterator[Found]:
    """Compare each policy with the next less compatible one (per arch: the next that covers it)."""
    ordered = sorted(members, key=lambda p: -p.priority)
    for more, less in zip(ordered, ordered[1:]):
        extra = sorted((more.lib_whitelist | more.drivers) - (less.lib_whitelist | less.drivers))
        if extra:
            yield more, "lib_whitelist", f"allows {', '.join(extra)}, which the less compatible " \
                                         f"{less.name} forbids"
        abis = sorted(more.cxx_abi - less.cxx_abi)
        if abis:
            yield more, "cxx_abi", f"allows the {'/'.join(abis)} C++ ABI, which the less compatible " \
                                   f"{less.name} forbids"
        for lib, symbols in sorted(less.blacklist.items()):
            if lib in more.lib_whitelist:
                allowed = sorted(symbols - more.blacklist.get(lib, frozenset()))
                if allowed:
                    yield more, f"blacklist.{lib}", f"allows {_few(allowed)}, which the less compatible " \
                                                    f"{less.name} blacklists"
    arches = sorted({arch for p in members for arch in p.symbol_versions})
    for arch in arches:
        covering = [p for p in ordered if arch in p.symbol_versions]
        for more, less in zip(covering, covering[1:]):
            yield from _versions_subset(more, less, arch)


def _versions_subset(more: Policy, less: Policy, arch: str) -> Iterator[Found]:
    mine, theirs = more.versions(arch), less.versions(arch)
    for ns in sorted(set(mine) | set(theirs)):
        field = f"symbol_versions.{arch}.{ns}"
        if ns not in mine:
            yield more, field, f"is absent, so any {ns} version is allowed, but the less compatible " \
                               f"{less.name} limits {ns}"
        elif ns in theirs:  # (unparsable and PRIVATE versions are reported once, by _versions_parse)
            extra = sorted_versions(v for v in mine[ns] - theirs[ns] if is_version(v) and v != PRIVATE)
            if extra:
                yield more, field, f"allows {_few(extra)}, which the less compatible {less.name} forbids"


def _few(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
