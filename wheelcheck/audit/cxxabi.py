"""The libstdc++ string ABI (_GLIBCXX_USE_CXX11_ABI) of each ELF file and of the wheel.

An ELF file is ``new`` when its dynamic symbols (defined or undefined) name std::__cxx11 types or carry
the [abi:cxx11] tag, ``old`` when they name std::string (``Ss``), std::list and friends without them,
``mixed`` when both, ``none`` when no ABI-tagged std type crosses its interface. Findings: a C++ symbol
one file needs that another file of the wheel exports only in the other ABI (import fails with
"undefined symbol"), a file mixing both ABIs, and files whose ABI the policy (or --cxx-abi) forbids.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import compress, repeat
from operator import or_

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.symbols.demangle import abi_free
from wheelcheck.symbols.mangling import (LIBSTDCXX_PREFIXES, OLD_HINT, abi_neutral, has_new_abi, has_old_abi, lead,
                                        short_name)
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.audit.findings import Finding

__all__ = ["CxxAbi", "classify", "classify_tagged", "interface", "abi_tagged", "sibling_defined",
           "wheel_abi", "check_cxx_abi", "is_libstdcxx"]

_EXAMPLES = 3
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
                "old_examples": list(self.old[:_EXAMPLES]), "new_examples": list(self.new[:_EXAMPLES])}

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


def check_cxx_abi(ctx: CheckContext) -> Iterator[Finding | Fact]:
    per_file = {elf.path: ctx.analyses[elf.path].cxx_abi for elf in ctx.elves}
    for path, result in per_file.items():
        yield Fact(path, "cxx_abi", result.to_fact())
    yield Fact(None, "cxx_abi", wheel_abi(per_file, ctx.elves))
    forced = getattr(ctx.options, "cxx_abi", None)
    allowed = frozenset({forced}) if forced else ctx.policy.cxx_abi
    source = f"--cxx-abi {forced}" if forced else f"the policy {ctx.policy.name}"
    for elf in ctx.elves:
        result = per_file[elf.path]
        if is_libstdcxx(elf) or result.abi == "none":
            continue
        if result.abi == "mixed":
            yield Finding(
                "cxx-abi-mixed", "warning", elf.path,
                f"uses both libstdc++ string ABIs: old ({_examples(result.old)}) and new ({_examples(result.new)})",
                "build every object file of it with the same -D_GLIBCXX_USE_CXX11_ABI (and the same for "
                "the static libraries it links)",
                symbols=result.old[:_EXAMPLES] + result.new[:_EXAMPLES], cause="uses both libstdc++ string ABIs")
        forbidden = sorted(result.uses - allowed)
        if forbidden:
            evidence = result.old if "old" in forbidden else result.new
            yield Finding(
                "cxx-abi-policy", "error", elf.path,
                f"uses the {' and '.join(forbidden)} libstdc++ string ABI ({_examples(evidence)}), but "
                f"{source} allows only {' or '.join(sorted(allowed)) or 'none'}",
                f"rebuild with -D_GLIBCXX_USE_CXX11_ABI={1 if 'new' in allowed else 0} (and the libraries it "
                f"links: torch >= 2.7 uses the new ABI)",
                symbols=evidence[:_EXAMPLES],
                cause=f"uses the {' and '.join(forbidden)} libstdc++ string ABI, but {source} allows only "
                      f"{' or '.join(sorted(allowed)) or 'none'}")
    yield from _mismatches(ctx, per_file)


def _mismatches(ctx: CheckContext, per_file: dict[str, CxxAbi]) -> Iterator[Finding]:
    """Undefined C++ symbols that the wheel defines only in the other ABI's mangling."""
    tagged_files = [elf for elf in ctx.elves if per_file[elf.path].abi != "none"]
    if len(tagged_files) < 2:
        return
    tagged = {elf.path: ctx.analyses[elf.path].abi_imports for elf in tagged_files}
    wanted_anywhere = set().union(*tagged.values())
    if not wanted_anywhere:
        return
    # a wanted name is ABI-tagged, so an export equal to it is among the ABI-tagged exports the analysis kept
    defined = set().union(*(wanted_anywhere.intersection(ctx.analyses[elf.path].abi_exports) for elf in tagged_files))
    undefined = [(path, wanted, abi) for path, wanted_here in tagged.items() for wanted in wanted_here
                 if wanted not in defined
                 and (abi := "new" if has_new_abi(wanted) else "old" if has_old_abi(wanted) else None)]
    if not undefined:
        return
    sorted_exports = {elf.path: sorted(ctx.analyses[elf.path].abi_exports) for elf in tagged_files}
    for path, wanted, wanted_abi in undefined:
        for other, exports in sorted_exports.items():
            if other == path:
                continue
            found = _counterpart(wanted, exports, has_old_abi if wanted_abi == "new" else has_new_abi)
            if found is None:
                continue
            together = set(ctx.resolution.loaded_from.get(path, ())) & set(
                ctx.resolution.loaded_from.get(other, ()))
            other_abi = "old" if wanted_abi == "new" else "new"
            yield Finding(
                "cxx-abi-mismatch", "error" if together else "warning", path,
                f"needs {short_name(wanted)} in the {wanted_abi} string ABI ({wanted}), but {other} exports "
                f"it only in the {other_abi} ABI ({found})",
                f"build both with the same -D_GLIBCXX_USE_CXX11_ABI (the {other_abi} ABI to match {other})",
                symbols=(wanted, found),
                explanation="Importing it fails with 'undefined symbol'." if together
                else "The two are not loaded together here, so another library may provide it.")
            break


def _counterpart(wanted: str, sorted_exports: list[str], in_other_abi: Callable[[str], bool]) -> str | None:
    """The first of ``sorted_exports`` that mangles what ``wanted`` does in the other ABI.

    The key equates every substitution reference with the old std::string abbreviation (the ABIs number
    substitutions differently), so A::f(A, std::string) keys like A::f(std::string, std::string): a candidate
    must also be in the other ABI and, demangled with the ABI erased, be the same function, or an overload
    would pass for the counterpart (a mismatch claimed where the function is simply missing)."""
    prefix = lead(wanted)
    if prefix is None:
        return None
    key = abi_neutral(wanted)
    i = bisect_left(sorted_exports, prefix)
    while i < len(sorted_exports) and sorted_exports[i].startswith(prefix):
        candidate = sorted_exports[i]
        if candidate != wanted and abi_neutral(candidate) == key and in_other_abi(candidate) \
                and _same_function(wanted, candidate):
            return candidate
        i += 1
    return None


def _same_function(wanted: str, candidate: str) -> bool:
    """Do the two manglings name one function in the two ABIs? When either cannot be demangled (too long,
    too costly), the mangled key's word stands."""
    a, b = abi_free(wanted), abi_free(candidate)
    return a is None or b is None or a == b


def _examples(symbols: tuple[str, ...]) -> str:
    """A few of ``symbols`` as a person reads them (the mangled names are the finding's ``symbols``)."""
    shown = ", ".join(dict.fromkeys(short_name(s) for s in symbols[:_EXAMPLES]))
    return shown + (f" and {len(symbols) - _EXAMPLES} more" if len(symbols) > _EXAMPLES else "")
