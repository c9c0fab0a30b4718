"""Symbol families of commonly vendored libraries (data/families.json), counted over sorted names.

Every lookup works on a sorted list of names: a prefix is a contiguous range found with two bisections,
so counting a family costs O(prefixes · log n) whatever the size of the table, and a 400,000-symbol
library is sorted once (C speed) instead of being matched name by name in Python. Only a family with
exclude_patterns (a shape inside its prefix, e.g. SQLite's extension entry points) walks its own members.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch

from wheelcheck.symbols.mangling import MEMBER_QUALIFIERS, source_name_length
from wheelcheck.symbols.sonames import unhashed
from wheelcheck.data import load_table

__all__ = ["Family", "families", "count_prefix", "with_prefixes", "count_family", "family_examples", "group_counts",
           "cxx_lead_ins", "owns", "owns_or_loads", "family_members"]

# The mangled forms that start a name inside a C++ namespace: its functions (with cv/ref qualifiers), the
# statics local to them and their guard variables (_ZZN…, _ZGVZN…, same qualifiers), vtables, typeinfo, typeinfo
# names, VTTs, guard variables, thread_local init functions and wrappers, and reference temporaries.
_CXX_LEAD_INS = tuple(f"{start}N{q}" for start in ("_Z", "_ZZ", "_ZGVZ") for q in MEMBER_QUALIFIERS) + (
    "_ZTVN", "_ZTIN", "_ZTSN", "_ZTTN", "_ZGVN", "_ZTHN", "_ZTWN", "_ZGRN")
_HIGHEST = "\U0010ffff"


@dataclass(frozen=True)
class Family:
    id: str
    title: str
    prefixes: tuple[str, ...]  # minimal: none is a prefix of another
    exclude_prefixes: tuple[str, ...]
    exclude_patterns: tuple[re.Pattern, ...]  # members that match one are not the library (sqlite3_api)
    names: tuple[str, ...]
    patterns: tuple[re.Pattern, ...]
    owners: tuple[str, ...]
    min_symbols: int
    report: bool
    sentinels: tuple[str, ...]
    note: str
    pattern_anchors: tuple[str, ...] = ()  # the patterns count only where one of these exact names is exported


def cxx_lead_ins(namespace: str) -> tuple[str, ...]:
    """'google::protobuf' -> ('_ZN6google8protobuf', '_ZNK6google8protobuf', ...)."""
    mangled = "".join(f"{len(part)}{part}" for part in namespace.split("::"))
    return tuple(lead + mangled for lead in _CXX_LEAD_INS)


def _minimal(prefixes) -> tuple[str, ...]:
    out: list[str] = []
    for p in sorted(set(prefixes)):
        if not out or not p.startswith(out[-1]):
            out.append(p)
    return tuple(out)


@functools.lru_cache(maxsize=1)
def families() -> tuple[Family, ...]:
    """The shipped family table, compiled once per process."""
    out = []
    for fid, doc in load_table("families.json")["families"].items():
        prefixes = list(doc.get("prefixes", ()))
        for ns in doc.get("cxx_namespaces", ()):
            prefixes.extend(cxx_lead_ins(ns))
        out.append(Family(
            id=fid, title=doc.get("title", fid), prefixes=_minimal(prefixes),
            exclude_prefixes=tuple(doc.get("exclude_prefixes", ())),
            exclude_patterns=tuple(re.compile(p) for p in doc.get("exclude_patterns", ())),
            names=tuple(doc.get("names", ())),
            patterns=tuple(re.compile(p) for p in doc.get("patterns", ())), owners=tuple(doc.get("owners", ())),
            min_symbols=int(doc.get("min_symbols", 1)), report=bool(doc.get("report", True)),
            sentinels=tuple(doc.get("sentinels", ())), note=doc.get("note", ""),
            pattern_anchors=tuple(doc.get("pattern_anchors", ()))))
    return tuple(out)


def owns(family: Family, path: str, soname: str | None) -> bool:
    """Is this file the family's own library (its purpose is to export the family)?"""
    names = {path.rsplit("/", 1)[-1]} | ({soname} if soname else set())
    return any(fnmatch(n, glob) for n in names for glob in family.owners)


def owns_or_loads(family: Family, path: str, soname: str | None, needed) -> bool:
    """Is this file the family's own library, or one that loads it (NEEDED, under a repaired name or not)? Then
    what it exports of the family's names is not a copy: wrappers (HDF4's jpeg_HDF_*), its own types in the
    library's naming (YARA's d2i_Spc*), template instances of a C++ library it uses."""
    return owns(family, path, soname) or any(owns(family, unhashed(n), None) for n in needed)


def count_prefix(sorted_names: Sequence[str], prefix: str) -> int:
    lo = bisect_left(sorted_names, prefix)
    return bisect_left(sorted_names, prefix + _HIGHEST, lo) - lo


def with_prefixes(sorted_names: Sequence[str], prefixes: Iterable[str]) -> Iterator[str]:
    """The names of ``sorted_names`` that start with each of ``prefixes`` in turn, found by bisection."""
    for prefix in prefixes:
        i = bisect_left(sorted_names, prefix)
        while i < len(sorted_names) and sorted_names[i].startswith(prefix):
            yield sorted_names[i]
            i += 1


def _lowercase_range(sorted_names: list[str]) -> list[str]:
    return sorted_names[bisect_left(sorted_names, "a"):bisect_left(sorted_names, "{")]


def count_family(sorted_names: list[str], family: Family) -> int:
    if family.exclude_patterns:  # a pattern cannot be counted by bisection: list the members
        return len(family_members(sorted_names, family))
    count = sum(count_prefix(sorted_names, p) for p in family.prefixes)
    count -= sum(count_prefix(sorted_names, p) for p in family.exclude_prefixes)
    count += sum(1 for name in family.names if _contains(sorted_names, name) and not _has_prefix(name, family.prefixes))
    if _patterns_apply(sorted_names, family):
        candidates = _lowercase_range(sorted_names)
        matched: set[str] = set()
        for pattern in family.patterns:  # a name may match several patterns: count it once
            matched.update(filter(pattern.match, candidates))
        count += len(matched)
    return count


def family_examples(sorted_names: list[str], family: Family, most: int = 3) -> tuple[str, ...]:
    """A few exported names of the family, for messages (prefix matches first)."""
    out: list[str] = []
    for p in family.prefixes:
        i = bisect_left(sorted_names, p)
        while i < len(sorted_names) and sorted_names[i].startswith(p) and len(out) < most:
            if _kept(family, sorted_names[i]):
                out.append(sorted_names[i])
            i += 1
    out += [n for n in family.names if len(out) < most and _contains(sorted_names, n) and _kept(family, n)]
    for pattern in family.patterns if _patterns_apply(sorted_names, family) else ():
        matched = [n for n in filter(pattern.match, _lowercase_range(sorted_names)) if _kept(family, n)]
        out += matched[:max(0, most - len(out))]
    return tuple(out[:most])


def _patterns_apply(sorted_names: list[str], family: Family) -> bool:
    """Do the family's patterns count here: it has some, and exports one of its anchors when it names any (CSPICE's
    own chbase_ and str2et_ have LAPACK's shape; a real BLAS or LAPACK exports lsame_, xerbla_ or dgemm_)."""
    if not family.patterns:
        return False
    return not family.pattern_anchors or any(_contains(sorted_names, a) for a in family.pattern_anchors)


def _contains(sorted_names: list[str], name: str) -> bool:
    i = bisect_left(sorted_names, name)
    return i < len(sorted_names) and sorted_names[i] == name


def _has_prefix(name: str, prefixes: tuple[str, ...]) -> bool:
    return name.startswith(prefixes)


def _kept(family: Family, name: str) -> bool:
    """Not taken out of the family by its exclude_prefixes or exclude_patterns."""
    return not name.startswith(family.exclude_prefixes) and not _excluded_by_pattern(family, name)


def _excluded_by_pattern(family: Family, name: str) -> bool:
    return any(p.match(name) for p in family.exclude_patterns)


_CXX_GROUP = re.compile(r"_Z(?:N[KVRO]*|T[VISTh]N?|GVN|ZN[KVRO]*)?(St|([0-9]+))")
_C_GROUP = re.compile(r"_*[A-Za-z0-9]+?(?:_|(?<=[A-Z]{2})(?=[A-Z][a-z])|$)")


def _group_key(name: str) -> tuple[str, str]:
    """(prefix, label) grouping a name with its namespace or C prefix: ('_ZN4llvm', 'llvm::')."""
    m = _CXX_GROUP.match(name)
    if m:
        if m.group(1) == "St":
            return m.group(0), "std::"
        length = source_name_length(m.group(2))
        end = m.end()
        if length and end + length <= len(name):
            if m.start(2) == 2:  # _Z3barv: a function of the global namespace (bar()), not a namespace of its own
                return name[:end + length], "(global C++ functions)"
            return name[:end + length], name[end:end + length] + "::"
    if name.startswith("_Z"):
        return name, "(other C++)"
    m = _C_GROUP.match(name)
    if m and m.end() < len(name):
        key = m.group(0)
        return key, key + "*"
    return name, name


def group_counts(sorted_names: list[str], most: int = 20000) -> dict[str, int]:
    """Exported names grouped by namespace or C prefix, walking the sorted list one group at a time.

    Stops after ``most`` groups (a library of unrelated C names would otherwise be walked name by
    name); the rest is counted as '(other)'.
    """
    out: dict[str, int] = {}
    i, n, groups = 0, len(sorted_names), 0
    while i < n:
        if groups >= most:
            out["(other)"] = out.get("(other)", 0) + n - i
            break
        key, label = _group_key(sorted_names[i])
        j = bisect_left(sorted_names, key + _HIGHEST, i + 1) if key != sorted_names[i] else i + 1
        while j < n and sorted_names[j] == key:  # exact-name groups: equal names only
            j += 1
        out[label] = out.get(label, 0) + j - i
        i = j
        groups += 1
    return out


def family_members(sorted_names: list[str], family: Family) -> set[str]:
    """The names of ``sorted_names`` that belong to ``family``: its prefix ranges (by bisection, less the
    excluded prefixes), its exact names and its patterns, less what its exclude_patterns match."""
    out: set[str] = set()
    for p in family.prefixes:
        lo = bisect_left(sorted_names, p)
        out.update(sorted_names[lo:bisect_left(sorted_names, p + _HIGHEST, lo)])
    if family.exclude_prefixes:
        out = {n for n in out if not n.startswith(family.exclude_prefixes)}
    out.update(name for name in family.names if _contains(sorted_names, name))
    if _patterns_apply(sorted_names, family):
        candidates = _lowercase_range(sorted_names)
        for pattern in family.patterns:
            out.update(filter(pattern.match, candidates))
    if family.exclude_patterns:
        out = {n for n in out if not _excluded_by_pattern(family, n)}
    return out
