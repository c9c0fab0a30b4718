"""The libstdc++ string ABI (_GLIBCXX_USE_CXX11_ABI) of each ELF file and of the wheel (the check that
judges it: cxxabi_check.py).

An ELF file is ``new`` when its dynamic symbols (defined or undefined) name std::__cxx11 types or carry
the [abi:cxx11] tag, ``old`` when they name std::string (``Ss``), std::list and friends without them,
``mixed`` when both, ``none`` when no ABI-tagged std type crosses its interface. Findings: a C++ symbol
one file needs that another file of the wheel exports only in the other ABI (import fails with
"undefined symbol"), a file mixing both ABIs, and files whose ABI the policy (or --cxx-abi) forbids.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, repeat
from operator import or_

from wheelcheck.symbols.mangling import (LIBSTDCXX_PREFIXES, OLD_HINT, has_new_abi, has_old_abi)
from wheelcheck.elf.elf_info import ElfInfo

__all__ = ["CxxAbi", "classify", "classify_tagged", "interface", "abi_tagged", "sibling_defined",
           "wheel_abi", "is_libstdcxx", "EXAMPLES"]

EXAMPLES = 3
_OLD_CONFIRM_LIMIT = 5000  # old-ABI candidates confirmed by tokenizing, at most, per file
# Not evidence of the old ABI: what libstdc++'s own dual-ABI code references whatever ABI the file's code uses, when
# gcc-toolset links it in from libstdc++_nonshared.a. std::logic_error and kin keep their message in a
# reference-counted string under either ABI (__cow_string), and their move constructors (GLIBCXX_3.4.26) reference
# its empty representation (pyarrow, onnx, shapely, torchao import it and nothing else of the old ABI). And the
# std::ios_base::failure libstdc++ throws is one that a handler of either ABI catches: its __construct_ios_failure
# builds the old-ABI one too, through its constructor from the old std::string (matplotlib 3.11.2's cp314t
# extensions, gcc-toolset 14, import it and nothing else of the old ABI).
_LIBSTDCXX_OLD_INTERNALS = frozenset({"_ZNSs4_Rep20_S_empty_rep_storageE", "_ZNSt8ios_base7failureC1ERKSs",
                                      "_ZNSt8ios_base7failureC2ERKSs"})
# std:: names a file may define as a copy of libstdc++'s code: its members, their transaction-safe clones, and the
# typeinfo of the strings libstdc++ names by abbreviation (Ss: the old std::string; Sb: std::basic_string)
_LIBSTDCXX_DEFINES = LIBSTDCXX_PREFIXES + ("_ZGTtNSt", "_ZGTtNKSt", "_ZTISs", "_ZTSSs", "_ZTISb", "_ZTSSb")


@dataclass(frozen=True)
class CxxAbi:
    abi: str  # none, old, new, mixed
    old: tuple[str, ...]  # old-ABI symbols found (confirmed; capped, see old_count)
    new: tuple[str, ...]  # new-ABI symbols found
    old_count: int
    new_count: int

    def to_fact(self) -> dict:
        return {"abi": self.abi, "old_count": self.old_count, "new_count": self.new_count,
                "old_examples": list(self.old[:EXAMPLES]), "new_examples": list(self.new[:EXAMPLES])}

    @property
    def uses(self) -> frozenset[str]:
        return frozenset({"old", "new"} if self.abi == "mixed" else {self.abi} - {"none"})


def interface(elf: ElfInfo) -> tuple[list[str], list[str]]:
    """(exported names, undefined names), in table order."""
    exports = elf.export_names
    imports = list(compress(elf.symtab.names, elf.symtab.undefined_mask()))
    return exports, imports


def abi_tagged(names: list[str]) -> list[str]:
    """The mangled names of ``names`` that may name an ABI-tagged type, in order: "cxx11" in them, or an old-ABI
    hint (``OLD_HINT``). Only these can tell a file's ABI or be another file's counterpart in the other ABI.

    Every name is tested once, through ``map`` (a library may have 400,000 of them); the regex runs once per
    name, the tokenizer never."""
    marked = map(or_, map(str.__contains__, names, repeat("cxx11")), map(bool, map(OLD_HINT.search, names)))
    return [n for n in compress(names, marked) if n.startswith("_Z")]


def classify(elf: ElfInfo) -> CxxAbi:
    exports, imports = interface(elf)
    return classify_tagged(abi_tagged(exports), abi_tagged(imports))


def classify_tagged(exports: list[str], imports: list[str]) -> CxxAbi:
    """The ABI of a file whose ABI-tagged (``abi_tagged``) exported and undefined names are ``exports`` and
    ``imports`` (examples show the file's own interface first, then what it uses from libstdc++)."""
    tagged = exports + imports
    new = [n for n in tagged if "cxx11" in n and has_new_abi(n)]
    # these matched OLD_HINT: the tokenizer confirms them
    hinted = [n for n in tagged if "cxx11" not in n and n not in _LIBSTDCXX_OLD_INTERNALS]
    old = [n for n in hinted[:_OLD_CONFIRM_LIMIT] if has_old_abi(n)]
    defined = set(exports)
    new, old = _beyond_libstdcxx_copies(new, defined), _beyond_libstdcxx_copies(old, defined)
    abi = {(False, False): "none", (True, False): "old", (False, True): "new", (True, True): "mixed"}[
        (bool(old), bool(new))]
    return CxxAbi(abi, tuple(dict.fromkeys(old)), tuple(dict.fromkeys(new)), len(set(old)), len(set(new)))


def _beyond_libstdcxx_copies(evidence: list[str], defined: set[str]) -> list[str]:
    """``evidence`` of one ABI, or none when all of it is std:: code the file defines: a copy of libstdc++'s own
    (gcc-toolset links std::__cxx11::string and the exceptions' constructors in from libstdc++_nonshared.a on
    images whose libstdc++ predates them; a static libstdc++ carries both ABIs' strings). Those copies are there
    whatever ABI the file's code uses: its own names and its imports tell it (rtree, z3, dm-tree and
    levenshtein, old-ABI builds on manylinux2014, were called mixed for them)."""
    if all(n in defined and n.startswith(_LIBSTDCXX_DEFINES) for n in evidence):
        return []
    return evidence


def sibling_defined(tagged_imports: list[str]) -> list[str]:
    """The ABI-tagged imports (``abi_tagged`` of the undefined names) a sibling file could define: not std::
    members, which libstdc++ defines."""
    return [w for w in tagged_imports if not w.startswith(LIBSTDCXX_PREFIXES)]


def is_libstdcxx(elf: ElfInfo) -> bool:
    """libstdc++ itself (vendored, perhaps renamed) defines both ABIs on purpose."""
    return (elf.soname or elf.path.rsplit("/", 1)[-1]).startswith("libstdc++")


def wheel_abi(per_file: dict[str, CxxAbi], elves: list[ElfInfo]) -> str:
    used: set[str] = set()
    for elf in elves:
        if not is_libstdcxx(elf):
            used |= per_file[elf.path].uses
    return {0: "none", 2: "mixed"}.get(len(used)) or next(iter(used))
