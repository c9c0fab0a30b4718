"""What a CPython extension module's file name and a wheel's Python tags say about where it loads.

CPython imports module ``m`` from the first file of its directory named ``m`` plus one of its extension suffixes
(importlib.machinery.EXTENSION_SUFFIXES): on Linux ``.cpython-3XY[t]-<triplet>.so`` (its own version, build and
platform), ``.abi3.so`` (the Stable ABI; not on free-threaded 3.15+, PEP 803), ``.abi3t.so`` and, from 3.15,
``.abi3-<triplet>.so`` and ``.abi3t-<triplet>.so``, then plain ``.so``. A file of any other name is not found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.tags import Tag

__all__ = ["ModuleSuffix", "PythonClaims", "Version", "module_suffix", "python_claims", "platform_triplets", "STABLE_FROM",
           "LATEST_CPYTHON"]

Version = tuple[int, int]

_VERSIONED = re.compile(r"\.cpython-(?P<major>\d)(?P<minor>\d+)(?P<flags>[a-z]*)(?:-(?P<triplet>[^.]+))?\.so")
_STABLE = re.compile(r"\.(?P<abi>abi3t?)(?:-(?P<triplet>[^.]+))?\.so")
_ABI_TAG = re.compile(r"cp(?P<major>\d)(?P<minor>\d+)(?P<flags>[a-z]*)")
_INTERPRETER = re.compile(r"(?:cp|py)(?P<major>\d)(?P<minor>\d*)")
STABLE_FROM: Version = (3, 15)  # the first CPython to load .abi3t.so and the triplet-named stable suffixes
# the newest CPython released (3.15.0, October 2026): whether a module has a file for every CPython a tag admits is
# judged up to it, as pip would install the wheel there today
LATEST_CPYTHON: Version = (3, 15)

# PLATFORM_TRIPLET per wheel architecture (CPython's configure)
_GNU = {"x86_64": "x86_64-linux-gnu", "i686": "i386-linux-gnu", "aarch64": "aarch64-linux-gnu",
        "armv7l": "arm-linux-gnueabihf", "armv6l": "arm-linux-gnueabihf", "ppc64le": "powerpc64le-linux-gnu",
        "ppc64": "powerpc64-linux-gnu", "s390x": "s390x-linux-gnu", "riscv64": "riscv64-linux-gnu",
        "loongarch64": "loongarch64-linux-gnu"}
_MUSL = {"x86_64": "x86_64-linux-musl", "i686": "i386-linux-musl", "aarch64": "aarch64-linux-musl",
         "armv7l": "arm-linux-musleabihf", "armv6l": "arm-linux-musleabihf", "ppc64le": "powerpc64le-linux-musl",
         "s390x": "s390x-linux-musl", "riscv64": "riscv64-linux-musl", "loongarch64": "loongarch64-linux-musl"}


@dataclass(frozen=True)
class ModuleSuffix:
    """The suffix of an extension module's file name, as CPython's import reads it."""

    text: str  # as written: .cpython-312-x86_64-linux-gnu.so, .abi3.so, .so
    kind: str  # version (one CPython build), abi3, abi3t, plain, or other (no CPython on Linux looks for it)
    version: Version | None = None  # kind version: the CPython it is for
    flags: str = ""  # kind version: the ABI flags (t: free-threaded; m, d: pymalloc, debug)
    triplet: str | None = None

    @property
    def free_threaded(self) -> bool:
        return "t" in self.flags

    def build(self) -> str:
        """'CPython 3.13 (free-threaded)', 'the Stable ABI (abi3)'."""
        if self.kind == "version" and self.version is not None:
            return f"CPython {self.version[0]}.{self.version[1]}" + (" (free-threaded)" if self.free_threaded else "")
        return {"abi3": "the Stable ABI (abi3)", "abi3t": "the free-threading Stable ABI (abi3t)"}.get(
            self.kind, "any CPython")


def module_suffix(path: str) -> ModuleSuffix:
    """The suffix of ``path``'s file name after its module name (what precedes the first dot)."""
    name = path.rsplit("/", 1)[-1]
    text = name[len(name.split(".", 1)[0]):]
    if text == ".so":
        return ModuleSuffix(text, "plain")
    if match := _VERSIONED.fullmatch(text):
        return ModuleSuffix(text, "version" if match["triplet"] else "other",
                            (int(match["major"]), int(match["minor"])), match["flags"], match["triplet"])
    if match := _STABLE.fullmatch(text):
        return ModuleSuffix(text, match["abi"], triplet=match["triplet"])
    return ModuleSuffix(text, "other")


@dataclass(frozen=True)
class PythonClaims:
    """The CPython 3 builds a wheel's tags ask installers to put it on (PyPy and Python 2 tags aside)."""

    specific: frozenset[tuple[Version, str]]  # ABI tags of one build: cp311 -> ((3, 11), ""), cp313t -> "t"
    abi3: Version | None  # the lowest Python tag of an abi3 ABI tag (cp38-abi3: 3.8)
    abi3t: Version | None
    none: Version | None  # the lowest Python tag of a none ABI tag (py3: 3.0)
    none_exact: bool  # every none tag names one CPython version (cp311-none)

    def fits(self, version: Version, flags: str) -> bool:
        """Is ``version`` with ``flags`` one of the wheel's version-specific builds?"""
        return (version, flags) in self.specific

    def lowest(self) -> Version:
        """The oldest CPython 3 the tags install the wheel on."""
        versions = [v for v, _ in self.specific] + [v for v in (self.abi3, self.abi3t, self.none) if v]
        return min(versions, default=(3, 0))

    def describe(self) -> str:
        """The tags that matter here, as a wheel name writes them: cp311-cp311, cp38-abi3, py3-none."""
        parts = [f"cp{v[0]}{v[1]}{f}" for v, f in sorted(self.specific)]
        parts += [f"cp{v[0]}{v[1]}-{abi}" for abi, v in (("abi3", self.abi3), ("abi3t", self.abi3t)) if v]
        if self.none:
            parts.append(f"{'cp' if self.none_exact else 'py'}{self.none[0]}{self.none[1] or ''}-none")
        return ", ".join(parts)


def python_claims(tags: Iterable[Tag]) -> PythonClaims | None:
    """What ``tags`` claim of CPython 3; None when no tag is one a CPython 3 installs."""
    specific, abi3, abi3t, none, exact = set(), [], [], [], []
    for tag in tags:
        interp = _INTERPRETER.fullmatch(tag.interpreter)
        if not interp or interp["major"] != "3":
            continue
        version = (3, int(interp["minor"] or 0))
        if (abi := _ABI_TAG.fullmatch(tag.abi)) and abi["major"] == "3":
            specific.add(((3, int(abi["minor"])), abi["flags"]))
        elif tag.abi == "abi3":
            abi3.append(version)
        elif tag.abi == "abi3t":
            abi3t.append(version)
        elif tag.abi == "none":
            none.append(version)
            exact.append(tag.interpreter.startswith("cp") and bool(interp["minor"]))
    if not (specific or abi3 or abi3t or none):
        return None
    return PythonClaims(frozenset(specific), min(abi3, default=None), min(abi3t, default=None),
                        min(none, default=None), bool(exact) and all(exact))


def platform_triplets(linux_platforms: Iterable[tuple[str, str]]) -> frozenset[str] | None:
    """The triplets CPython names its modules with on the wheel's Linux platforms; None when a platform is one
    whose triplet is not known here, or there is none. CPython 3.10 and older name it -linux-gnu on musl too."""
    out: set[str] = set()
    for name, arch in linux_platforms:
        gnu, musl = _GNU.get(arch), _MUSL.get(arch)
        if gnu is None:
            return None
        out.add(gnu)
        if not name.startswith("manylinux") and musl:
            out.add(musl)
    return frozenset(out) or None
