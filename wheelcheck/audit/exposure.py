"""Exported-symbol exposure: what each ELF file exports, which vendored libraries leak through it,
STB_GNU_UNIQUE objects, and a statically linked libstdc++ that competes with the system's (the
checks that judge it: exposure_check.py).

Works on the SymbolTable columns (st_info, st_other, defined) with bytes.translate and one big-integer
AND, so a 400,000-symbol library never becomes 400,000 Symbol objects.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatch

from wheelcheck.symbols.families import count_family, families, family_examples, group_counts, with_prefixes
from wheelcheck.elf.linker_made import LINKER_MADE
from wheelcheck.symbols.mangling import STD_STATICS
from wheelcheck.elf.elf_info import ElfInfo

__all__ = ["Exposure", "ExposureSettings", "exposure_of", "settings_of", "carries_runtime", "LIBSTDCXX_UNIQUE"]

# What only a copy of libstdc++'s runtime defines, never its pieces from libstdc++_nonshared.a
_EXCEPTION_RUNTIME = frozenset({"__gxx_personality_v0", "__cxa_throw", "__cxa_begin_catch", "__cxa_allocate_exception"})

# libstdc++'s own unique objects, which any C++ file using its headers defines (std::make_shared's
# _Sp_make_shared_tag::_S_ti()::__tag, basic_string::npos, __to_chars_10_impl::__digits): constants the same in
# every build, which libstdc++.so.6 exports as unique itself, and which libstdc++'s headers give default
# visibility whatever -fvisibility says. Members, variables (C++17's inline std::piecewise_construct), local statics
# and guard variables of std:: and __gnu_cxx::.
LIBSTDCXX_UNIQUE = STD_STATICS + ("_ZNSt", "_ZNSs", "_ZNSb", "_ZSt", "_ZGVNSt", "_ZGVSt", "_ZN9__gnu_cxx",
                                   "_ZZN9__gnu_cxx", "_ZZNK9__gnu_cxx", "_ZGVN9__gnu_cxx", "_ZGVZN9__gnu_cxx")

# What an extension module exports by design: init functions (a Rust or C module may define several, one
# per submodule) and Cython's per-module __pyx_module_is_main_<name> flag.
_MODULE_API = ("PyInit_", "_cffi_pypyinit_", "__pyx_module_is_main_")


@dataclass(frozen=True)
class ExposureSettings:
    """The policy's ``exposure`` object, with the defaults documented in docs/rules.md."""

    extension_warn_above: int = 100  # an extension exporting this many extra symbols gets a warning
    families: Mapping[str, str] = field(default_factory=dict)  # family id -> severity or "off" (default warning)
    allow: Mapping[str, str | list[str]] = field(default_factory=dict)  # file glob -> family ids (or "*") it may export

    def family_severity(self, family: str) -> str:
        return self.families.get(family, "warning")

    def allowed(self, path: str, family: str) -> bool:
        for glob, fams in self.allow.items():
            if fnmatch(path, glob) or fnmatch(path.rsplit("/", 1)[-1], glob):
                if fams == "*" or family in fams:
                    return True
        return False


def settings_of(exposure: Mapping) -> ExposureSettings:
    return ExposureSettings(
        extension_warn_above=int(exposure.get("extension_warn_above", 100)),
        families=dict(exposure.get("families", {})), allow=dict(exposure.get("allow", {})))


@dataclass(frozen=True)
class Exposure:
    exports: int  # exported symbols, linker-made and version-definition symbols left out
    beyond_init: int | None  # for an extension module: exports other than its init function
    unique: tuple[str, ...]  # STB_GNU_UNIQUE exports, sorted
    families: dict[str, int]  # family id -> exported names of it (families at or above min_symbols)
    groups: list[tuple[str, int]]  # the largest namespace / C-prefix groups, largest first
    sentinels: tuple[str, ...]  # exported libstdc++ runtime internals (a static libstdc++)
    examples: dict[str, tuple[str, ...]] = field(default_factory=dict)  # family id -> a few of its names

    def to_fact(self) -> dict:
        return {"exports": self.exports, "beyond_init": self.beyond_init, "gnu_unique": len(self.unique),
                "families": dict(self.families), "top_groups": [[g, n] for g, n in self.groups]}


def exposure_of(elf: ElfInfo, top: int = 5) -> Exposure:
    unique = elf.symtab.unique_export_names()
    names = list(elf.sorted_exports)  # a copy: names are taken out of it below
    for name in LINKER_MADE.union(elf.version_defs):
        i = bisect_left(names, name)
        if i < len(names) and names[i] == name:
            del names[i]
    init = elf.python_init
    module_api = [n for n in names if n.startswith(_MODULE_API) or n == init] if init is not None else []
    beyond = None if init is None else len(names) - len(module_api)
    found = {}
    examples = {}
    sentinels: list[str] = []
    # a module that exports only its init function (most of them) belongs to no family: skip the table
    candidates = families() if len(names) > len(module_api) else ()
    for fam in candidates:
        n = count_family(names, fam)
        if n >= fam.min_symbols:
            found[fam.id] = n
            examples[fam.id] = family_examples(names, fam)
        if fam.sentinels and n:
            sentinels.extend(s for s in with_prefixes(names, fam.sentinels) if s not in _C_LIBRARY_CXA)
    grouped = names if init is None else [n for n in names if not (n.startswith(_MODULE_API) or n == init)]
    groups = sorted(group_counts(grouped).items(), key=lambda kv: (-kv[1], kv[0]))
    return Exposure(len(names), beyond, tuple(sorted(unique)), found, groups[:top], tuple(sorted(sentinels)),
                    examples)


# what every C library defines for the C runtime's destructors (glibc, musl): no piece of libstdc++
_C_LIBRARY_CXA = frozenset({"__cxa_atexit", "__cxa_finalize", "__cxa_thread_atexit_impl"})


def carries_runtime(elf: ElfInfo, sentinels: tuple[str, ...]) -> bool:
    """Does a file that exports pieces of libstdc++'s runtime carry a copy of its own (a static libstdc++ or
    libsupc++)? Not when it uses the shared one and defines no exception runtime: then the pieces are libstdc++_nonshared.a's
    (gcc-toolset links the parts newer than the image's libstdc++ in from it) or an executable's copy
    relocations (std::cout defined in the executable, the library's copy unused)."""
    if not _EXCEPTION_RUNTIME.isdisjoint(sentinels):
        return True
    return not any(needed.startswith("libstdc++") for needed in elf.needed)
