"""The checks of exported-symbol exposure (exposure.py measures it): an extension module exporting more than its
init function, vendored library families leaking through a file, STB_GNU_UNIQUE objects, and a statically linked
libstdc++ runtime."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.audit.exposure import LIBSTDCXX_UNIQUE, Exposure, ExposureSettings, carries_runtime, settings_of
from wheelcheck.audit.findings import Finding
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.symbols.families import Family, families, owns, owns_or_loads
from wheelcheck.symbols.mangling import short_name
from wheelcheck.symbols.sonames import hashed_stem

__all__ = ["check_exposure"]


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
        own_unique = tuple(n for n in exp.unique if not n.startswith(LIBSTDCXX_UNIQUE))
        if own_unique and not elf.is_program:  # a program is never unloaded, nor loaded beside a second copy
            yield Finding(
                "gnu-unique-symbols", "warning", elf.path,
                f"exports {len(own_unique)} STB_GNU_UNIQUE symbol{'s' if len(own_unique) != 1 else ''}",
                "build with -fvisibility=hidden -fvisibility-inlines-hidden (or -fno-gnu-unique) so inline "
                "functions' static locals and template static members stay private",
                symbols=own_unique, count=len(own_unique), cause="exports STB_GNU_UNIQUE symbols",
                explanation="One copy per process even under RTLD_LOCAL, and the file can never be unloaded.")
        if exp.sentinels and not owns(table["libstdcxx"], elf.path, elf.soname) and carries_runtime(elf, exp.sentinels):
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

