"""The defined symbol nearest to a missing one: the same name at another version, the same qualified C++
name with another signature, another [abi:cxx11] tag or the other libstdc++ string ABI, or a C name that
differs only after its stem (__nvJitLinkComplete_12_1 for __nvJitLinkComplete_12_9). It usually tells
which release of the host the file was built against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import re
from bisect import bisect_left
from difflib import SequenceMatcher

from wheelcheck.compat.export_table import ExportCache
from wheelcheck.compat.installed_layout import Placed
from wheelcheck.symbols.demangle import QUALIFIERS_MAX, key_head, qualified_key
from wheelcheck.symbols.families import count_prefix, with_prefixes
from wheelcheck.symbols.mangling import abi_neutral, has_new_abi, has_old_abi

__all__ = ["Nearest", "nearest_symbol", "nearest_spelling", "KeyIndex", "names_with_head", "likeness"]

_C_STEM = re.compile(r"^_*[A-Za-z][A-Za-z0-9]*_")  # a C name up to its first underscore after the start
_MANGLING_START = re.compile(r"^(?:_Z[NLKVr]*\d*|_*)")  # what names of a kind share: _ZN4, a C name's underscores
_CANDIDATES = 200  # same-key names compared at most (a heavily overloaded name)
_MIDDLE_END = 16  # of the part where two names differ, this much of each end is aligned by difflib


@dataclass(frozen=True)
class Nearest:
    name: str
    version: str | None
    where: Placed
    difference: str  # other version, other string ABI, other ABI tag, other signature, other name suffix


class KeyIndex:
    """qualified_key -> exported names, per file, in the file's symbol order, built on first use for the names
    that share the wanted key's head only: keying every name of every file (562,000 in tensorflow's) took 30 s."""

    def __init__(self, exports: ExportCache) -> None:
        self._exports = exports
        # the Placed is kept beside what is known of it, so that its id is not reused
        self._groups: dict[tuple[int, str], tuple[Placed, dict[str, list[str]]]] = {}
        self._order: dict[int, tuple[Placed, dict[str, int]]] = {}

    def same_key(self, placed: Placed, key: str, head: str) -> list[str]:
        """``head``: key_head() of the wanted name, whose qualified_key is ``key``."""
        hit = self._groups.get((id(placed), head))
        if hit is None:
            exported = self._exports.of(placed.elf)
            group: dict[str, list[str]] = {}
            narrowed = names_with_head(exported.sorted_names, head)
            if len(narrowed) > 1:  # back in the symbol table's order, which breaks ties between equal matches
                narrowed.sort(key=self._order_of(placed).__getitem__)
            for name in narrowed:
                k = qualified_key(name)
                if k is not None:
                    group.setdefault(k, []).append(name)
            hit = (placed, group)
            self._groups[(id(placed), head)] = hit
        return hit[1].get(key, [])

    def _order_of(self, placed: Placed) -> dict[str, int]:
        hit = self._order.get(id(placed))
        if hit is None:
            hit = (placed, {name: i for i, name in enumerate(self._exports.of(placed.elf).versions)})
            self._order[id(placed)] = hit
        return hit[1]


def names_with_head(names: Sequence[str], head: str) -> list[str]:
    """The names of the sorted ``names`` that spell ``head`` where a key's head goes (see key_head): a superset
    of those whose key starts with it, found by bisect. The qualifier runs after ``_ZN`` (K, VK, KR ...) are
    those the names hold."""
    runs, todo = [""], [""]
    while todo:
        run = todo.pop()
        for qualifier in "rVKRO" if len(run) < QUALIFIERS_MAX else "":
            if count_prefix(names, f"_ZN{run}{qualifier}"):
                runs.append(run + qualifier)
                todo.append(run + qualifier)
    return list(with_prefixes(names, [f"_Z{head}", f"_ZL{head}"] +
                              [f"_ZN{run}{lead}{head}" for run in runs for lead in ("", "L")]))


def nearest_symbol(name: str, version: str | None, files: Sequence[Placed], exports: ExportCache,
                   keys: KeyIndex) -> Nearest | None:
    """Look in ``files`` in order (the file's own scope first, then every other given file)."""
    for placed in files:  # the very name, at another version
        found = exports.of(placed.elf).versions.get(name)
        if found:
            other = next((v for v in found if v != version), found[0])
            return Nearest(name, other, placed, "other version")
    key = qualified_key(name)
    if key is None:
        return None if name.startswith("_Z") else _same_stem(name, files, exports)
    head = key_head(name)
    assert head is not None, "a name with a key has a head"
    best: tuple[float, str, Placed] | None = None
    for placed in files:
        for candidate in keys.same_key(placed, key, head)[:_CANDIDATES]:
            score = likeness(name, candidate)
            if best is None or score > best[0]:
                best = (score, candidate, placed)
    if best is None:
        return None
    _, candidate, placed = best
    versions = exports.of(placed.elf).versions.get(candidate, (None,))
    return Nearest(candidate, versions[0], placed, _difference(name, candidate))


def _same_stem(name: str, files: Sequence[Placed], exports: ExportCache) -> Nearest | None:
    """A C name's neighbour that differs only after its stem: __nvJitLinkComplete_12_1 for a missing
    __nvJitLinkComplete_12_9 (libraries that put their release in the name)."""
    match = _C_STEM.match(name)
    if match is None:
        return None
    stem = match.group(0)
    best: tuple[int, str, Placed] | None = None
    for placed in files:
        names = exports.of(placed.elf).sorted_names
        i = bisect_left(names, name)
        for candidate in names[max(0, i - 1):i + 1]:
            if candidate != name and candidate.startswith(stem):
                common = _common_prefix(_bytes(name), _bytes(candidate))
                if best is None or common > best[0]:
                    best = (common, candidate, placed)
    if best is None:
        return None
    _, candidate, placed = best
    return Nearest(candidate, exports.of(placed.elf).versions[candidate][0], placed, "other name suffix")


def nearest_spelling(name: str, files: Sequence[Placed], exports: ExportCache) -> Nearest | None:
    """The exported name of ``files`` that starts the most like ``name`` (its neighbours in sorted order), when
    they share more than a leading underscore or mangling prefix: a function the host does not define at all
    (host_mul, built against a newer host) is shown beside what the host has of that spelling (host_add)."""
    best: tuple[int, float, str, Placed] | None = None
    wanted = _bytes(name)
    floor = len(_MANGLING_START.match(name).group(0)) + 1  # type: ignore[union-attr]
    for placed in files:
        names = exports.of(placed.elf).sorted_names
        i = bisect_left(names, name)
        for candidate in names[max(0, i - 1):i + 1]:
            common = _common_prefix(wanted, _bytes(candidate))
            if common < floor:
                continue
            key = (common, likeness(name, candidate))
            if best is None or key > best[:2]:
                best = (*key, candidate, placed)
    if best is None:
        return None
    candidate, placed = best[2], best[3]
    return Nearest(candidate, exports.of(placed.elf).versions[candidate][0], placed, "other name")


def likeness(a: str, b: str) -> float:
    """How alike two names are, from 0 to 1, in time linear in their length: the bytes they share at the
    start and at the end, and what difflib matches of the part between, cut to its first and last
    _MIDDLE_END bytes. Overloads and ABI variants differ in a short middle, where this is difflib's ratio;
    difflib on whole names is quadratic in their length (200 overloads of 3,000 characters: over 300 s)."""
    x, y = _bytes(a), _bytes(b)
    if not x and not y:
        return 1.0
    head = _common_prefix(x, y)
    tail = _common_prefix(x[head:][::-1], y[head:][::-1])
    middle = SequenceMatcher(None, _ends(x[head:len(x) - tail]), _ends(y[head:len(y) - tail]), autojunk=False)
    matched = head + tail + sum(block.size for block in middle.get_matching_blocks())
    return 2 * matched / (len(x) + len(y))


def _bytes(name: str) -> bytes:
    return name.encode("utf-8", "surrogatepass")  # any str: a name from an ABI manifest may hold a lone surrogate


def _common_prefix(x: bytes, y: bytes) -> int:
    """The length of the common prefix, at C speed: the first byte that differs is the highest byte set in the
    two read as big-endian integers and XORed."""
    n = min(len(x), len(y))
    differ = int.from_bytes(x[:n], "big") ^ int.from_bytes(y[:n], "big")
    return n - (differ.bit_length() + 7) // 8


def _ends(part: bytes) -> bytes:
    return part if len(part) <= 2 * _MIDDLE_END else part[:_MIDDLE_END] + part[-_MIDDLE_END:]


def _difference(wanted: str, found: str) -> str:
    if abi_neutral(wanted) == abi_neutral(found):
        if (has_new_abi(wanted) and has_old_abi(found)) or (has_old_abi(wanted) and has_new_abi(found)):
            return "other libstdc++ string ABI"
        return "other [abi:cxx11] tag"
    if wanted.replace("B5cxx11", "") == found.replace("B5cxx11", ""):
        return "other [abi:cxx11] tag"
    return "other signature"
