"""The C++ boundary between a subject and the files it binds to: libstdc++ string ABI on each side, and
the libstdc++ each side needs at least (its highest GLIBCXX_ version, its "floor").

A subject built with the other string ABI than its host cannot call the host's functions that take or
return std::string: they are mangled differently (std::__cxx11::basic_string vs Ss), and the import
fails with 'undefined symbol' (the missing-symbol finding names the other ABI's twin). A subject whose
libstdc++ floor is above the host's loads only where the system's libstdc++ is that new; the host's
platform tag says how old a system it promises to run on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wheelcheck.audit.cxxabi import CxxAbi, classify, is_libstdcxx
from wheelcheck.compat.installed_layout import Placed
from wheelcheck.policy.policy_model import PolicySet
from wheelcheck.policy.versions import numeric, split_version_name
from wheelcheck.wheel.wheel_model import LEGACY_ALIASES, split_platform

__all__ = ["Side", "side_of", "libstdcxx_floor", "tag_glibcxx_limit", "cxx_flag"]


@dataclass(frozen=True)
class Side:
    abi: str  # none, old, new, mixed
    floor: str | None  # the highest GLIBCXX_ version needed, e.g. GLIBCXX_3.4.30
    examples: tuple[str, ...]  # ABI-tagged symbols that show it


def libstdcxx_floor(files: Iterable[Placed]) -> str | None:
    best: tuple[tuple[int, ...], str] | None = None
    for p in files:
        for need in p.elf.version_needs:
            split = split_version_name(need.version)
            number = numeric(split[1]) if split and split[0] == "GLIBCXX" else None
            if number is not None and (best is None or number > best[0]):
                best = (number, need.version)
    return best[1] if best else None


def side_of(files: Iterable[Placed], cache: dict[int, CxxAbi]) -> Side:
    """The string ABI the files use between them (libstdc++ itself left out) and their floor."""
    files = list(files)
    used: set[str] = set()
    examples: list[str] = []
    for p in files:
        if is_libstdcxx(p.elf):
            continue
        result = cache.get(id(p.elf))
        if result is None:
            result = cache[id(p.elf)] = classify(p.elf)
        used |= result.uses
        examples += list(result.new[:1] if "new" in result.uses else ()) + list(result.old[:1])
    abi = {0: "none", 2: "mixed"}.get(len(used)) or next(iter(used))
    return Side(abi, libstdcxx_floor(files), tuple(examples[:3]))


def tag_glibcxx_limit(tags, policies: PolicySet) -> tuple[str, str] | None:
    """(platform tag, highest GLIBCXX_ version its policy allows) for the most compatible manylinux tag."""
    best = None
    for tag in tags:
        split = split_platform(tag.platform)
        if not split or split[0].startswith("musllinux") or split[0] == "linux":
            continue
        policy = policies.find(LEGACY_ALIASES.get(split[0], split[0]))
        if policy is None:
            continue
        versions = policy.versions(split[1]).get("GLIBCXX")
        if not versions:
            continue
        top = max(versions, key=lambda v: numeric(v) or ())
        if best is None or policy.priority > best[0]:
            best = (policy.priority, tag.platform, f"GLIBCXX_{top}")
    return (best[1], best[2]) if best else None


def cxx_flag(abi: str) -> str:
    return f"-D_GLIBCXX_USE_CXX11_ABI={1 if abi == 'new' else 0}"
