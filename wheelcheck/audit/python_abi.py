"""Python-ABI truth: do the wheel's Python and ABI tags fit its extension modules?

Installers pick a wheel by its tags (cp311-cp311, cp38-abi3, cp313-cp313t, py3-none); CPython then imports a
module only from a file whose suffix it looks for (audit/module_suffix.py), and binds the module's C-API imports
to the interpreter with RTLD_NOW. Three things are checked here, each of which the platform verdict trusts:
the file-name suffix against the tags and the platform (extension-suffix), the C-API names a version-independent
(abi3, abi3t or none-ABI) file imports against CPython's Stable ABI manifest (abi3-symbol, abi3-version), and the
reference-counting functions a module imports against the build its name claims (free-threaded-build).
"""

from __future__ import annotations

import posixpath
import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from wheelcheck.audit.findings import Finding
from wheelcheck.audit.module_suffix import (
    LATEST_CPYTHON, STABLE_FROM, ModuleSuffix, PythonClaims, Version, module_suffix, platform_triplets,
    python_claims)
from wheelcheck.audit.stable_abi import format_version, is_c_api_name, stable_symbol
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["python_abi_findings", "FREE_THREADED_MARKERS"]

# What the free-threaded headers' Py_DECREF calls (Include/object.h, under Py_GIL_DISABLED): exported only by a
# free-threaded CPython, so a module importing them was built against free-threaded headers
FREE_THREADED_MARKERS = frozenset({"_Py_DecRefShared", "_Py_MergeZeroLocalRefcount", "_Py_DecRefSharedDebug"})
_SHOWN = 5  # names listed in a message; the finding's symbols hold them all


def python_abi_findings(model: WheelModel) -> list[Finding]:
    claims = python_claims(model.tags)
    if claims is None:  # tagged for PyPy or Python 2 alone: nothing of CPython 3 to check
        return []
    modules = [(elf, module_suffix(elf.path)) for elf in model.elves
               if not elf.debug_only and (elf.python_init or "").startswith("PyInit_")]
    findings = _suffix_findings(modules, claims, platform_triplets(model.linux_platforms),
                                _admitted(claims, model.requires_python))
    findings += [f for elf, suffix in modules for f in _free_threaded(elf, suffix, claims)]
    # every file bound to the C API, but modules named for one CPython build (judged by their name alone) and
    # Python 2 modules (init<name>)
    version_specific = {id(elf) for elf, suffix in modules if suffix.kind == "version"}
    version_specific |= {id(elf) for elf in _per_version_family(model.elves)}
    # a Py-named export of the wheel's own library (PySide's PySideProperty_TypeF) binds there, not to CPython
    own = frozenset(n for elf in model.elves if not _is_libpython(elf) for n in elf.export_names if is_c_api_name(n))
    for elf in model.elves:
        python2 = elf.python_init is not None and not elf.python_init.startswith("PyInit_")
        if not elf.debug_only and not python2 and id(elf) not in version_specific and not _is_libpython(elf):
            findings += _stable_abi(elf, claims, own)
    return findings


# -- the file name against the tags


def _admitted(claims: PythonClaims, requires_python: str | None) -> set[tuple[Version, str]] | None:
    """The released CPython builds (version, "" or "t") an abi3 or none-ABI wheel installs on, its Requires-Python
    heeded; None for a wheel of version-specific tags (judged by them) or an unreadable Requires-Python."""
    if claims.specific or not (claims.abi3 or claims.none):
        return None
    try:
        allowed = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        return None
    lowest = claims.lowest()
    builds = {((3, minor), "") for minor in range(max(lowest[1], 6), LATEST_CPYTHON[1] + 1)}
    if claims.none:  # a none-ABI wheel goes on free-threaded CPython too; abi3 does not (PEP 703)
        builds |= {((3, minor), "t") for minor in range(max(lowest[1], 13), LATEST_CPYTHON[1] + 1)}
    return {(v, f) for v, f in builds if allowed.contains(f"{v[0]}.{v[1]}", prereleases=True)}


def _covered(modules: list[tuple[ElfInfo, ModuleSuffix]],
             admitted: set[tuple[Version, str]] | None) -> set[int]:
    """The version-named files of modules that have a file for every build the wheel installs on (mosek 11.2.7,
    cp39-abi3 with Requires-Python <3.15: _msk.cpython-39 ... -314): each build imports its own, none fails."""
    if admitted is None:
        return set()
    families: dict[tuple[str, str], list[tuple[ElfInfo, ModuleSuffix]]] = {}
    for elf, suffix in modules:
        families.setdefault((posixpath.dirname(elf.path), elf.module_name or ""), []).append((elf, suffix))
    covered: set[int] = set()
    for members in families.values():
        builds = {(s.version, "t" if s.free_threaded else "") for _, s in members if s.kind == "version"}
        if admitted and admitted <= builds:
            covered |= {id(elf) for elf, s in members if s.kind == "version"}
    return covered


def _suffix_findings(modules: list[tuple[ElfInfo, ModuleSuffix]], claims: PythonClaims,
                     triplets: frozenset[str] | None, admitted: set[tuple[Version, str]] | None) -> list[Finding]:
    covered = _covered(modules, admitted)
    problems = {id(elf): None if id(elf) in covered else _suffix_problem(suffix, claims, triplets)
                for elf, suffix in modules}
    # a module name with a file the wheel's Pythons import: a misnamed sibling is left unused, not a failed import
    imported: dict[tuple[str, str], str] = {}
    for elf, _ in modules:
        if problems[id(elf)] is None:
            imported.setdefault((posixpath.dirname(elf.path), elf.module_name), elf.path)
    findings = []
    for elf, suffix in modules:
        problem = problems[id(elf)]
        if problem is None:
            continue
        severity, message, hint = problem
        sibling = imported.get((posixpath.dirname(elf.path), elf.module_name))
        if sibling is not None and severity == "error":
            severity = "warning"
            message += f"; {posixpath.basename(sibling)} is imported instead, and this file is never loaded"
        findings.append(Finding("extension-suffix", severity, elf.path, message, hint,
                                cause=f"is named {suffix.text}, which the wheel's Pythons do not import",
                                subject=suffix.text))
    return findings


def _suffix_problem(suffix: ModuleSuffix, claims: PythonClaims,
                    triplets: frozenset[str] | None) -> tuple[str, str, str] | None:
    """(severity, message, hint) when no CPython the wheel installs on imports the file by its module name."""
    tags = claims.describe()
    rename = "name the file with the EXT_SUFFIX of the Python it was built for (sysconfig.get_config_var('EXT_SUFFIX'))"
    if suffix.kind == "other":
        return ("warning", f"is named {suffix.text} after its module name, a suffix CPython on Linux does not look "
                "for (.cpython-3XY-<triplet>.so, .abi3.so, .so): importing the module does not find it", rename)
    if suffix.triplet and triplets and suffix.triplet not in triplets:
        return ("error", f"is named for {suffix.triplet}, but the wheel is for {' or '.join(sorted(triplets))}: "
                f"CPython there does not look for {suffix.text}, and importing the module fails", rename)
    lowest = claims.lowest()
    if suffix.kind == "version":
        return _version_problem(suffix, claims, tags)
    if suffix.kind == "abi3":
        if any("t" in flags for _, flags in claims.specific) or (claims.abi3t and not claims.abi3 and not claims.specific):
            return ("error", f"is a Stable ABI (abi3) module in a wheel for free-threaded CPython ({tags}): 3.13t "
                    "and 3.14t load it although abi3 assumes the GIL-enabled build's object layout, and 3.15t and "
                    "later do not look for .abi3.so (PEP 803)",
                    "build it for the free-threaded interpreter (cp3XYt) or for abi3t (Py_TARGET_ABI3T, CPython 3.15 "
                    "and later), or tag the wheel for the GIL-enabled build")
    if suffix.kind == "abi3t" or (suffix.kind == "abi3" and suffix.triplet):
        if lowest < STABLE_FROM:
            return ("error", f"is named {suffix.text}, which only CPython {format_version(STABLE_FROM)} and later "
                    f"look for (PEP 803), but the wheel is tagged {tags}: on CPython {format_version(lowest)} to "
                    f"3.{STABLE_FROM[1] - 1} importing the module does not find it",
                    f"tag the wheel cp{STABLE_FROM[0]}{STABLE_FROM[1]} or later, or name the module .abi3.so and "
                    "build it for abi3")
    return None


def _version_problem(suffix: ModuleSuffix, claims: PythonClaims, tags: str) -> tuple[str, str, str] | None:
    if suffix.version is None:
        return None
    build = suffix.build()
    if claims.specific:
        if claims.fits(suffix.version, suffix.flags):
            return None
        wanted = ", ".join(f".cpython-{v[0]}{v[1]}{f}-….so" for v, f in sorted(claims.specific))
        return ("error", f"is named for {build}, but the wheel is tagged {tags}: CPython there looks for "
                f"{wanted}, and importing the module fails",
                "build the module with the interpreter the wheel is tagged for, or tag the wheel for the one it was "
                "built with")
    if claims.none and claims.none_exact and claims.none == suffix.version and not suffix.free_threaded \
            and not (claims.abi3 or claims.abi3t):
        return None
    installs = f"every CPython from {format_version(claims.lowest())} on" if claims.lowest()[1] else "every CPython 3"
    return ("error", f"is for {build} alone, in a wheel tagged {tags}: pip installs it on {installs}, and on the "
            "others importing the module fails", "tag the wheel for that interpreter (cp3XY-cp3XY), or build the "
            "module for the Stable ABI (Py_LIMITED_API) and name it .abi3.so")


# -- which build the module was compiled for


def _free_threaded(elf: ElfInfo, suffix: ModuleSuffix, claims: PythonClaims) -> list[Finding]:
    imports = elf.symtab.undefined_names()
    markers = sorted(FREE_THREADED_MARKERS & imports)
    specific = {flags for _, flags in claims.specific}
    gil = suffix.kind == "version" and not suffix.free_threaded or suffix.kind == "abi3" or (
        suffix.kind == "plain" and bool(specific) and not any("t" in f for f in specific))
    free = suffix.kind == "version" and suffix.free_threaded or (
        suffix.kind == "plain" and bool(specific) and all("t" in f for f in specific))
    if markers and gil:
        return [Finding(
            "free-threaded-build", "error", elf.path,
            f"imports {', '.join(markers)}, which only a free-threaded CPython exports (its headers' Py_DECREF calls "
            f"them): it was built against free-threaded headers, but is named and tagged for the GIL-enabled build "
            f"({suffix.text}, {claims.describe()}), where importing it fails with 'undefined symbol'",
            "build it with the GIL-enabled interpreter, or name and tag it for the free-threaded one (cp3XYt)",
            symbols=tuple(markers), count=len(markers), cause="was built for free-threaded CPython")]
    if free and not markers and "_Py_Dealloc" in imports:
        return [Finding(
            "free-threaded-build", "warning", elf.path,
            "imports _Py_Dealloc and none of the free-threaded reference-counting functions "
            f"({', '.join(sorted(FREE_THREADED_MARKERS - {'_Py_DecRefSharedDebug'}))}): the GIL-enabled headers' "
            f"Py_DECREF, so it seems built against them, but it is named and tagged for free-threaded CPython "
            f"({suffix.text}, {claims.describe()}), whose objects have another layout: it reads and writes their "
            "reference counts and types in the wrong place",
            "build it with the free-threaded interpreter (python3.13t and later)",
            symbols=("_Py_Dealloc",), count=1, cause="was built against GIL-enabled headers")]
    return []


# -- the C API a version-independent file imports


_CPYTHON_VERSION = re.compile(r"(?<![0-9])3[._]?(?:[6-9]|1[0-9])(?![0-9])")


def _per_version_family(elves) -> list[ElfInfo]:
    """Files shipped once per CPython version under names that differ only by it (chdb's
    libpybind11nonlimitedapi_chdb_3.9.so ... _3.14.so): the package loads the one of the running interpreter, so each
    is judged, as a module named for one CPython is, by the version it is for, not against the Stable ABI."""
    family: dict[str, list[tuple[str, ElfInfo]]] = {}
    for elf in elves:
        name = elf.path.rsplit("/", 1)[-1]
        found = _CPYTHON_VERSION.findall(name)
        if len(found) == 1:
            key = elf.path[:len(elf.path) - len(name)] + _CPYTHON_VERSION.sub("{}", name)
            family.setdefault(key, []).append((found[0].replace(".", "").replace("_", ""), elf))
    return [elf for members in family.values() if len({v for v, _ in members}) > 1 for _, elf in members]


def _is_libpython(elf: ElfInfo) -> bool:
    return elf.symtab.defined_function(("Py_Initialize",)) is not None


def _stable_abi(elf: ElfInfo, claims: PythonClaims, own: frozenset[str]) -> list[Finding]:
    stable_claim = claims.abi3 or claims.abi3t
    if not (stable_claim or claims.none and not claims.none_exact):
        return []  # a wheel for one CPython version (cp311-cp311, cp311-none)
    names = sorted(n for n in elf.symtab.undefined_names() if is_c_api_name(n) and n not in own)
    if not names:
        return []
    tags = claims.describe()
    baseline = min(v for v in (claims.abi3, claims.abi3t) if v) if stable_claim else (
        claims.none if claims.none and claims.none[1] else None)
    findings = []
    outside = [n for n in names if stable_symbol(n) is None]
    if outside:
        # private names come and go with releases: an abi3 file needing one fails on some later CPython; a public
        # one outside the Stable ABI may stay exported
        severity = "error" if stable_claim and any(n.startswith("_Py") for n in outside) else "warning"
        private = " (_Py names are CPython's private API, renamed or removed in most releases)" \
            if any(n.startswith("_Py") for n in outside) else ""
        why = (f"the {tags} tag has pip install it on every CPython from {format_version(claims.lowest())} on, which "
               "need not export them" if stable_claim else
               f"the {tags} tag (no ABI) has pip install it on every CPython 3, and the C API outside the Stable ABI "
               "changes from version to version")
        findings.append(Finding(
            "abi3-symbol", severity, elf.path,
            f"imports {len(outside)} name{'s' if len(outside) != 1 else ''} of CPython's C API that the Stable ABI "
            f"does not hold ({_listed(outside)}){private}: {why}",
            "build it with Py_LIMITED_API set to the tag's version (-DPy_LIMITED_API=0x03080000 for cp38) and "
            "replace the calls the Limited API lacks, or publish version-specific wheels (cp3XY-cp3XY)"
            if stable_claim else "tag the wheel for the CPython it was built for (cp3XY-cp3XY), or build it against "
            "the Limited API and tag it abi3",
            symbols=tuple(outside), count=len(outside), cause="imports C-API names outside the Stable ABI"))
    later = sorted(((s.added, n) for n in names if (s := stable_symbol(n)) is not None)) if baseline else []
    if baseline and later and later[-1][0] > baseline:
        findings.append(_newer_than_tag(elf, [(a, n) for a, n in later if a > baseline], baseline, tags))
    return findings


def _newer_than_tag(elf: ElfInfo, later: list[tuple[tuple[int, int], str]], baseline: tuple[int, int],
                    tags: str) -> Finding:
    """abi3-version: Stable ABI names the file imports that joined it after the tag's version. A warning: some
    were exported before they joined (PyUnicode_AsUTF8AndSize since 3.3), most were new functions."""
    needed = later[-1][0]
    before = (needed[0], needed[1] - 1)
    versions = format_version(baseline) + (f" to {format_version(before)}" if before > baseline else "")
    return Finding(
        "abi3-version", "warning", elf.path,
        f"imports {_listed([f'{n} ({format_version(a)})' for a, n in later])}, added to the Stable ABI after "
        f"{format_version(baseline)}: the wheel is tagged {tags}, and CPython {versions} does not promise "
        f"{'it' if len(later) == 1 else 'them'}: where it does not export a name, importing the file fails with "
        "'undefined symbol'",
        f"tag the wheel cp{needed[0]}{needed[1]}-abi3 (and set Py_LIMITED_API to 0x{needed[0]:02x}{needed[1]:02x}"
        "0000), or do without these calls",
        symbols=tuple(n for _, n in later), count=len(later),
        cause=f"needs the Stable ABI of {format_version(needed)}", subject=format_version(needed))


def _listed(names: list[str]) -> str:
    return ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
