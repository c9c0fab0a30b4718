"""Exported-symbol exposure: what each ELF file exports, which vendored libraries leak through it,
STB_GNU_UNIQUE objects, and a statically linked libstdc++ that competes with the system's.

Works on the SymbolTable columns (st_info, st_other, defined) with bytes.translate and one big-integer
AND, so a 400,000-symbol library never becomes 400,000 Symbol objects.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatch

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.symbols.sonames import hashed_stem
from wheelcheck.symbols.families import Family, count_family, families, family_examples, group_counts, owns, \
    owns_or_loads, with_prefixes
from wheelcheck.elf.linker_made import LINKER_MADE
from wheelcheck.symbols.mangling import STD_STATICS, short_name
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.audit.findings import Finding

__all__ = ["Exposure", "ExposureSettings", "exposure_of", "settings_of", "check_exposure"]

# What only a copy of libstdc++'s runtime defines, never its pieces from libstdc++_nonshared.a
_EXCEPTION_RUNTIME = frozenset({"__gxx_personality_v0", "__cxa_throw", "__cxa_begin_catch", "__cxa_allocate_exception"})

# libstdc++'s own unique objects, which any C++ file using its headers defines (std::make_shared's
# _Sp_make_shared_tag::_S_ti()::__tag, basic_string::npos, __to_chars_10_impl::__digits): constants the same in
# every build, which libstdc++.so.6 exports as unique itself, and which libstdc++'s headers give default
# visibility whatever -fvisibility says. Members, variables (C++17's inline std::piecewise_construct), local statics
# and guard variables of std:: and __gnu_cxx::.
_LIBSTDCXX_UNIQUE = STD_STATICS + ("_ZNSt", "_ZNSs", "_ZNSb", "_ZSt", "_ZGVNSt", "_ZGVSt", "_ZN9__gnu_cxx",
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


def _carries_runtime(elf: ElfInfo, sentinels: tuple[str, ...]) -> bool:
    """Does a file that exports pieces of libstdc++'s runtime carry a copy of its own (a static libstdc++ or
    libsupc++)? Not when it uses the shared one and defines no exception runtime: then the pieces are libstdc++_nonshared.a's
    (gcc-toolset links the parts newer than the image's libstdc++ in from it) or an executable's copy
    relocations (std::cout defined in the executable, the library's copy unused)."""
    if not _EXCEPTION_RUNTIME.isdisjoint(sentinels):
        return True
    return not any(needed.startswith("libstdc++") for needed in elf.needed)


def check_exposure(ctx: CheckContext) -> Iterator[Finding | Fact]:
    settings = settings_of(ctx.policy.exposure)
    table = {f.id: f for f in families()}
    # how many links to each file other files of the wheel make: an extension module among them is a library too
    linked_by = Counter(provider for (needer, _), provider in ctx.resolution.provided.items() if needer != provider)
    for elf in ctx.elves:
        exp = ctx.analyses[elf.path].exposure
        yield Fact(elf.path, "exposure", exp.to_fact())
        yield from _extension_findings(elf, exp, settings, linked_by.get(elf.path, 0))
        yield from _family_findings(elf, exp, settings, table)
        own_unique = tuple(n for n in exp.unique if not n.startswith(_LIBSTDCXX_UNIQUE))
        if own_unique and not elf.is_program:  # a program is never unloaded, nor loaded beside a second copy
            yield Finding(
                "gnu-unique-symbols", "warning", elf.path,
                f"exports {len(own_unique)} STB_GNU_UNIQUE symbol{'s' if len(own_unique) != 1 else ''}",
                "build with -fvisibility=hidden -fvisibility-inlines-hidden (or -fno-gnu-unique) so inline "
                "functions' static locals and template static members stay private",
                symbols=own_unique, count=len(own_unique), cause="exports STB_GNU_UNIQUE symbols",
                explanation="One copy per process even under RTLD_LOCAL, and the file can never be unloaded.")
        if exp.sentinels and not owns(table["libstdcxx"], elf.path, elf.soname) and _carries_runtime(elf, exp.sentinels):
            yield Finding(
                "libstdcxx-exported", "warning", elf.path,
                f"exports libstdc++ runtime internals ({_names(exp.sentinels)}; {exp.families.get('libstdcxx', 0)} "
                f"std:: symbols in all)",
                "keep -static-libstdc++ private with -Wl,--exclude-libs,ALL (or a version script exporting only "
                "your API), or link libstdc++ dynamically",
                symbols=exp.sentinels, count=exp.families.get("libstdcxx", 0),
                cause="exports libstdc++ runtime internals (a statically linked libstdc++)",
                explanation="A statically linked libstdc++ competes with the system's in the process: exceptions, "
                            "locales and iostreams end up split between two runtimes.")


def _extension_findings(elf: ElfInfo, exp: Exposure, settings: ExposureSettings, linked_by: int) -> Iterator[Finding]:
    if not exp.beyond_init:
        return
    severity = "warning" if exp.beyond_init >= settings.extension_warn_above and not linked_by else "info"
    groups = ", ".join(f"{g} ({n})" for g, n in exp.groups)
    known = ", ".join(f"{fid} ({n})" for fid, n in sorted(exp.families.items(), key=lambda kv: -kv[1]))
    message = (f"exports {exp.beyond_init} symbol{'s' if exp.beyond_init != 1 else ''} besides {elf.python_init}"
               f" (top groups: {groups})" + (f"; known libraries: {known}" if known else ""))
    if linked_by:  # a library too: hiding everything but the init function breaks the files that link it
        message += (f"; {linked_by} other files of the wheel link it as a library" if linked_by != 1
                    else "; another file of the wheel links it as a library")
        hint = ("export the init function and what the wheel's other files use (a version script naming both); "
                "better, move the shared code into a plain library that both load")
    else:
        hint = ("a Python extension needs to export only its init function: build with -fvisibility=hidden, or link "
                "with a version script ({ global: PyInit_*; local: *; }) and -Wl,--exclude-libs,ALL")
    yield Finding("extension-exports", severity, elf.path, message, hint, count=exp.beyond_init,
                  cause="exports symbols besides its init function")


def _family_findings(elf: ElfInfo, exp: Exposure, settings: ExposureSettings, table: dict[str, Family]):
    for fid, count in sorted(exp.families.items()):
        fam = table[fid]
        severity = settings.family_severity(fid)
        if not fam.report or severity == "off" or owns_or_loads(fam, elf.path, elf.soname, elf.needed) \
                or settings.allowed(elf.path, fid):
            continue
        # no Python process loads a program: its exports meet only the plugins it loads itself (clang-tidy
        # exports its LLVM for them on purpose)
        if severity == "warning" and elf.is_program:
            severity = "info"
        yield Finding(
            "leaked-library-symbols", severity, elf.path,
            f"exports {count} {fam.title} symbol{'s' if count != 1 else ''} ({_names(exp.examples[fid])})",
            _hiding_hint(elf.path), symbols=exp.examples[fid], count=count, cause=f"exports {fam.title} symbols",
            subject=fam.title,
            explanation=f"A statically linked copy that other code in the process will bind to. {fam.note}")


def _hiding_hint(path: str) -> str:
    """How to hide a family's symbols: at link time for the wheel's own builds; with `repair --hide-symbols` for a
    library a repair vendored (``<dist>.libs/``, or a hashed name), which nobody here links."""
    folder, _, name = path.rpartition("/")
    if folder.endswith(".libs") or hashed_stem(name) is not None:
        return ("hide it with `wheelcheck repair --hide-symbols`, which hides and renames the vendored library's "
                "exports nothing else in the wheel uses")
    return "hide it: -Wl,--exclude-libs,ALL (or a version script) when linking"


def _names(symbols, most: int = 3) -> str:
    """A few of ``symbols`` as a person reads them (the mangled names are the finding's ``symbols``)."""
    shown = ", ".join(dict.fromkeys(short_name(s) for s in symbols[:most]))  # D1/D2 destructors read alike
    return shown + (f" and {len(symbols) - most} more" if len(symbols) > most else "")

