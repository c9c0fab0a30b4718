"""The rules of a policy, turned into constraints: each says which policies it allows, and why.

A constraint is one fact about the wheel (a file needs GLIBC_2.29 for exp2; a file needs libfoo.so.1
that nothing provides) with a predicate over policies. The verdict is the most compatible policy
that every constraint allows; a constraint's own best policy explains the verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import partial

from wheelcheck.audit.data_twins import site_packages_twin
from wheelcheck.audit.library_reach import shipped_copies, why_missing
from wheelcheck.audit.preloaded_libraries import loaded_first
from wheelcheck.audit.runtime_deps import DriverNames, drivers_of
from wheelcheck.elf.elf_info import ElfInfo, is_dynamic_loader
from wheelcheck.policy.policy_model import Policy
from wheelcheck.symbols.mangling import has_new_abi, short_name
from wheelcheck.wheel.library_resolution import LIBPYTHON, Resolution
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["Constraint", "collect_constraints", "namespace_of"]

_PYFPE = ("PyFPE_jbuf", "PyFPE_dummy", "PyFPE_counter")


@dataclass(frozen=True)
class Constraint:
    rule: str
    file: str | None
    what: str  # the fact; the verdict adds "→ <tag> at best"
    hint: str
    allows: Callable[[Policy], bool]
    symbols: tuple[str, ...] = ()
    key: tuple = ()  # extra identity (library, version) for deduplication and sorting
    cause: str = ""  # ``what`` without what differs between files (the symbols); default: ``what``
    subject: str | None = None  # the library or version named in the cause (Finding.subject)


def namespace_of(version: str) -> str:
    """GLIBC_2.17 -> GLIBC, as auditwheel reads it (CXXABI_TM_1 -> CXXABI)."""
    return version.partition("_")[0]


def only_linux(policy: Policy) -> bool:
    return policy.is_linux


def collect_constraints(
    model: WheelModel,
    elves: list[ElfInfo],
    resolution: Resolution,
    arch: str,
    exclude: tuple[str, ...],
    external: Mapping[str, ElfInfo],
    policies: list[Policy],
    libc: str = "glibc",
) -> list[Constraint]:
    out: list[Constraint] = []
    for elf in elves:
        out.extend(_symbol_versions(elf, resolution, arch, policies[0]))
        out.extend(_blacklisted(elf, policies))
        out.extend(_linux_only_rules(elf))

    def always_allowed(soname: str) -> bool:
        return any(p.provides(soname, arch) for p in policies)

    drivers = drivers_of(policies)
    out.extend(_external_libraries(model, elves, resolution, arch, exclude, external, always_allowed, policies[0],
                                   drivers, libc))
    return out


def _symbol_versions(elf: ElfInfo, resolution: Resolution, arch: str, best: Policy,
                     origin: str | None = None) -> Iterator[Constraint]:
    """A constraint per version the file needs of a library the wheel does not ship. Where ``best`` (the first
    policy) allows the version, no finding will name it: it is told plainly, without the names of its symbols
    (a large library needs GLIBC_2.2.5 for thousands of them)."""
    for need in elf.version_needs:
        if is_dynamic_loader(need.library) or (elf.path, need.library) in resolution.provided:
            continue  # the wheel ships this library: the system's version does not matter
        ns, _, wanted = need.version.partition("_")

        def allows(policy: Policy, ns=ns, wanted=wanted) -> bool:
            versions = policy.versions(arch)
            return policy.is_linux or ns not in versions or wanted in versions[ns]

        moot = allows(best)
        yield Constraint(
            rule="symbol-version",
            file=origin or elf.path,
            what=f"{need.version} needed by "
                 f"{(_count(need.symbols) if moot else _names(need.symbols)) or '(a version reference, no symbol)'}",
            hint=_version_hint(ns, () if moot else need.symbols),
            allows=allows,
            symbols=need.symbols,
            key=(need.library, need.version),
            cause=f"needs {need.version} of {need.library}",
            subject=need.version,
        )


def _count(symbols: tuple[str, ...]) -> str:
    return f"{len(symbols)} symbol{'s' if len(symbols) != 1 else ''}" if symbols else ""


def _version_hint(ns: str, symbols: tuple[str, ...] = ()) -> str:
    if ns == "GLIBC":
        return ("rebuild against an older glibc (in the manylinux image of your target, or with "
                "`zig cc -target <arch>-linux-gnu.<glibc>`), or avoid the functions named")
    if ns in ("GLIBCXX", "CXXABI"):
        pulled = ", ".join(dict.fromkeys(short_name(s) for s in symbols[:3]))
        new_abi = ("the C++11 string ABI (std::__cxx11) exists only from GLIBCXX_3.4.21: for an older target "
                   "build with -D_GLIBCXX_USE_CXX11_ABI=0 (what manylinux2014's devtoolset does), or "
                   if any(has_new_abi(s) for s in symbols) else "")
        return ((f"{pulled} {'comes' if len(symbols) == 1 else 'come'} from a newer libstdc++ than the target "
                 f"guarantees; " if pulled else "") + new_abi
                + "build in the manylinux image of your target (its gcc-toolset links the newer parts statically "
                  "from libstdc++_nonshared.a), or link with -static-libstdc++ -Wl,--exclude-libs,ALL so the "
                  "copy stays private")
    if ns == "GCC":
        return ("build in the manylinux image of your target, or link with -static-libgcc "
                "(the unwinder and helpers named come from a newer libgcc_s)")
    return "rebuild against an older version of this library, or vendor the library (wheelcheck repair)"


def _allows_blacklisted(policy: Policy, hits: Callable[[Policy], frozenset[str]]) -> bool:
    return policy.is_linux or not hits(policy)


def _blacklisted(elf: ElfInfo, policies: list[Policy]) -> Iterator[Constraint]:
    # auditwheel's blacklist: symbols that some systems' builds of a whitelisted library lack
    listed_libs = {lib for p in policies for lib in p.blacklist} & set(elf.needed)
    if not listed_libs:
        return
    undefined = elf.symtab.undefined_names(strong_only=True)
    for lib in sorted(listed_libs):

        def hits(policy: Policy, lib=lib) -> frozenset[str]:
            listed = policy.blacklist.get(lib, frozenset())
            return listed if "*" in listed else listed & undefined

        used = sorted(set().union(*(hits(p) for p in policies)))
        if used:
            yield Constraint(
                rule="blacklisted-symbol",
                file=elf.path,
                what=f"uses {_names(tuple(used))} of {lib}, which the policy forbids",
                hint=f"these symbols are private to some builds of {lib}; vendor your own copy or avoid them",
                allows=partial(_allows_blacklisted, hits=hits),
                symbols=tuple(used),
                key=(lib,),
                cause=f"uses symbols of {lib} that the policy forbids",
                subject=lib,
            )


def _linux_only_rules(elf: ElfInfo) -> Iterator[Constraint]:
    for soname in elf.needed:
        if LIBPYTHON.match(soname):
            yield Constraint("libpython", elf.path, f"links {soname}",
                             "extensions must not link libpython; rebuild without -lpython (repair removes it)",
                             only_linux, key=(soname,), subject=soname)
    if elf.isa_level:
        yield Constraint("isa-level", elf.path, f"needs the x86-64-v{elf.isa_level} instruction set",
                         "rebuild for the x86-64 baseline (-march=x86-64) and dispatch to newer code at run time",
                         only_linux)
    if elf.isa_problem:
        yield Constraint("isa-level", elf.path, elf.isa_problem, "rebuild for the x86-64 baseline", only_linux)
    if elf.is_extension:
        table = elf.symtab
        undefined = table.undefined_names()
        used = sorted(n for n in _PYFPE if n in undefined and table.type_of_name(n) in ("FUNC", "NOTYPE"))
        if used:
            yield Constraint("pyfpe-jbuf", elf.path, f"uses {', '.join(used)} (an --with-fpectl Python)",
                             "rebuild against a Python built without fpectl", only_linux, tuple(used))
        if elf.python_init and elf.python_init.startswith("init"):
            ucs2 = sorted(n for n in undefined if "PyUnicodeUCS2_" in n and table.type_of_name(n) == "FUNC")
            if ucs2:
                yield Constraint("ucs2", elf.path, "built against a narrow-unicode (UCS2) Python",
                                 "rebuild against a wide-unicode (UCS4) Python", only_linux, tuple(ucs2))


def _external_libraries(
    model: WheelModel,
    elves: list[ElfInfo],
    resolution: Resolution, arch: str, exclude: tuple[str, ...], external: Mapping[str, ElfInfo],
    always_allowed: Callable[[str], bool], best: Policy, drivers: DriverNames, libc: str,
) -> Iterator[Constraint]:
    pending = sorted(resolution.unresolved)
    seen: set[str] = set()
    by_path = {e.path: e for e in elves}
    copies = shipped_copies(elves)
    extensions = frozenset(e.path for e in elves if e.is_extension)
    while pending:
        path, soname = pending.pop(0)
        if LIBPYTHON.match(soname) or is_dynamic_loader(soname) or any(fnmatch(soname, p) for p in exclude):
            continue
        if soname in drivers:
            continue  # a system driver: the machine provides it, nothing may vendor it (driver-needed)
        if loaded_first(model, by_path.get(path), soname, copies, resolution, extensions, libc) is not None:
            continue  # a plugin finds the wheel's copy already loaded (preloaded-library)
        if site_packages_twin(model, by_path.get(path), soname, elves, resolution) is not None:
            continue  # a data copy of a site-packages library that finds it (data-copy-unreached)

        def allows(policy: Policy, soname=soname) -> bool:
            return policy.is_linux or policy.provides(soname, arch)

        # what the best policy allows (libc.so.6, needed by every file) no finding will name: it is told plainly,
        # without working out why the wheel misses it (its directories, its requirements: tensorflow 0.1 s)
        moot = allows(best)
        what, hint = why_missing(model, None if moot else by_path.get(path), soname, copies)
        yield Constraint(
            rule="external-library",
            file=path,
            what=what,
            hint=hint,
            allows=allows,
            key=(soname,),
            subject=soname,
        )
        found = external.get(soname)
        if found is not None and soname not in seen and not always_allowed(soname):
            # --lib-path: what repair would graft brings its own needs along
            seen.add(soname)
            pending.extend((f"[{soname}]", dep) for dep in found.needed if dep not in seen)
            yield from _symbol_versions(found, resolution, arch, best, origin=f"[{soname}]")


def _names(symbols: tuple[str, ...], most: int = 6) -> str:
    """The symbols as a reader knows them (``std::__cxx11::basic_string::_M_replace``, not its mangled name; the
    report's ``symbols`` keep the names as the file has them), overloads once."""
    names = list(dict.fromkeys(map(short_name, symbols)))
    if len(names) <= most:
        return ", ".join(names)
    return ", ".join(names[:most]) + f" and {len(names) - most} more"
