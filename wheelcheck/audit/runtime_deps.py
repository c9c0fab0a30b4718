"""Libraries loaded at run time: dlopen candidates found in read-only data, and system driver libraries.

A soname-looking string in an ELF file's read-only data that is not in its NEEDED list is what it may
pass to dlopen. Each is shipped by the wheel, allowed by the policy, a system driver (which must come
from the machine: data/drivers.json plus the policy's own), or something no policy guarantees.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from fnmatch import fnmatch

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.wheel.library_resolution import LIBPYTHON
from wheelcheck.data import driver_loaders, system_drivers
from wheelcheck.elf.elf_info import ElfInfo, is_dynamic_loader
from wheelcheck.policy.policy_model import Policy
from wheelcheck.audit.findings import Finding
from wheelcheck.symbols.sonames import unhashed

__all__ = ["check_runtime_deps", "drivers_of", "runtime_candidates"]

_STEM = re.compile(r"^(.*?)\.so(?:\.|$)")


def drivers_of(policies) -> frozenset[str]:
    """The built-in system driver sonames plus every judged policy's own ``drivers``."""
    return system_drivers().union(*(p.drivers for p in policies))


def _stem(soname: str) -> str:
    m = _STEM.match(unhashed(soname))
    return m.group(1) if m else soname


def runtime_candidates(elf: ElfInfo) -> list[str]:
    """Soname strings of the file's read-only data that are neither NEEDED nor its own name."""
    own = {n for n in (elf.path.rsplit("/", 1)[-1], elf.soname) if n}
    own_stems = {_stem(n) for n in own}  # a library naming itself (libcrypto.so in libcrypto-ab12cd34.so.3)
    needed = set(elf.needed)
    return [s for s in elf.soname_strings
            if s not in needed and s not in own and _stem(s) not in own_stems and not is_dynamic_loader(s)
            and not LIBPYTHON.match(s)]


def _allowed(ctx: CheckContext, soname: str) -> bool:
    """May the wheel count on the system for ``soname``: the policy judged, or, for plain linux, any policy."""
    policy: Policy = ctx.policy
    return any(p.provides(soname, ctx.arch) for p in ((policy,) if not policy.is_linux else ctx.policies))


def check_runtime_deps(ctx: CheckContext) -> Iterator[Finding | Fact]:
    drivers = drivers_of(ctx.policies or (ctx.policy,))
    # libcuda.so.535.104.05 is libcuda.so.1 all the same; a vendor-neutral loader (libOpenCL) may be shipped
    driver_stems = {_stem(d): d for d in drivers - driver_loaders()}
    shipped: dict[str, str] = {}
    stems: dict[str, str] = {}
    for elf in ctx.model.elves:
        for name in (elf.path.rsplit("/", 1)[-1], elf.soname):
            if name:
                shipped.setdefault(name, elf.path)
                stems.setdefault(_stem(name), elf.path)
        driver = driver_stems.get(_stem(elf.soname or elf.path.rsplit("/", 1)[-1]))
        if driver is not None:
            yield Finding(
                "driver-vendored", "error", elf.path,
                f"is the system driver library {driver}",
                "remove it from the wheel (repair never grafts driver libraries); the system provides it",
                subject=driver,
                explanation="It must match the machine's kernel module or GPU driver and must never be vendored.")
    for path, soname in sorted(ctx.resolution.unresolved):
        if soname in drivers and not any(fnmatch(soname, p) for p in ctx.options.exclude):
            yield Finding(
                "driver-needed", "info", path,
                f"requires the system driver library {soname} (NEEDED)",
                "nothing to vendor; document the driver your users need", subject=soname,
                explanation="It comes from the machine, not the wheel: without it the import fails.")
    for elf in ctx.elves:
        rows = []
        unguaranteed, driver_hits = [], []
        for soname in runtime_candidates(elf):
            if soname in shipped:
                status = "shipped"
            elif _allowed(ctx, soname):
                status = "allowed"
            elif soname in drivers:
                status = "driver"
                driver_hits.append(soname)
            else:
                status = "unguaranteed"
                unguaranteed.append(soname)
            rows.append({"soname": soname, "status": status})
        yield Fact(elf.path, "runtime_libraries", rows)
        if driver_hits:
            yield Finding(
                "dlopen-driver", "info", elf.path,
                f"may load the system driver librar{'ies' if len(driver_hits) > 1 else 'y'} "
                f"{', '.join(driver_hits)} at run time (named in its read-only data)",
                "nothing to vendor: the system provides it", count=len(driver_hits))
        for soname in unguaranteed:
            renamed = stems.get(_stem(soname))
            extra = (f"; the wheel ships {renamed.rsplit('/', 1)[-1]}, but under a renamed file that "
                     f"dlopen(\"{soname}\") will not find") if renamed else ""
            cause = f"may load {soname} at run time (named in its read-only data, not in NEEDED)"
            yield Finding(
                "dlopen-unguaranteed", "warning", elf.path, cause + extra,
                "ship it in the wheel and load it by path ($ORIGIN), make the feature optional with a clear "
                "error, or declare it in the policy (drivers / lib_whitelist) if the system guarantees it",
                cause=cause, subject=soname,
                explanation="Neither the wheel nor the policy provides it, so it is there only if the user "
                            "installed it: the feature that loads it fails everywhere else.")

