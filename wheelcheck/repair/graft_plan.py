"""The repair plan: which host libraries to graft, under which names, and what to edit in which file. Pure.

For a policy P, the libraries to graft are those the wheel needs from outside that P does not whitelist,
with their own such needs, transitively; never the dynamic loader, libpython (its DT_NEEDED entry is removed
instead), a system driver library or an ``--exclude`` match. Each is copied to ``<dist>.libs/`` under a name
made unique by its content hash, auditwheel's scheme: ``libfoo.so.1.2`` with sha256 ``1a2b3c4d…`` becomes
``libfoo-1a2b3c4d.so.1.2``. Its SONAME becomes that name; every file that needs it gets the new name in
DT_NEEDED (and in its version needs) and a DT_RPATH that reaches ``<dist>.libs`` through ``$ORIGIN``, keeping
the RPATH entries that point inside the wheel and dropping those that point outside.

A file that needs a library the wheel ships elsewhere, out of reach of its RPATH/RUNPATH (``torch/bin/x``
needs ``torch/lib/libc10.so``, RUNPATH ``$ORIGIN``), gets the ``$ORIGIN``-relative entry that reaches the
shipped copy (``$ORIGIN/../lib``) rather than a second copy from the host.

An ELF executable in ``<name>.data/scripts/`` is installed into a bin directory whose distance from
site-packages is not fixed, so no ``$ORIGIN`` path can reach the libraries from there. Like auditwheel, the
plan moves it into ``<dist>.scripts/`` (in site-packages) and leaves a Python launcher in its place.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.library_resolution import LIBPYTHON, Resolution, rpath_directory
from wheelcheck.elf.elf_info import ElfInfo, is_dynamic_loader
from wheelcheck.elf.elf_patch import ElfPatch
from wheelcheck.audit.library_reach import shipped_copies, unreached
from wheelcheck.errors import RepairError
from wheelcheck.host.host_library_search import HostLibrary, Located
from wheelcheck.policy.policy_model import Policy
from wheelcheck.symbols.sonames import hashed_name

__all__ = ["Graft", "MemberEdit", "RepairPlan", "make_plan", "never_grafted", "launcher", "with_graft_names"]


@dataclass(frozen=True)
class Graft:
    member: str  # <dist>.libs/<new name>
    new_name: str  # also its new SONAME
    source: str  # where the loader found it on this host
    realpath: str
    sha256: str
    needed_as: tuple[str, ...]  # the sonames the wheel needed it by
    patch: ElfPatch
    in_wheel: bool = False  # an earlier repair already put it there: neither copied nor patched again


@dataclass(frozen=True)
class MemberEdit:
    member: str  # the member as it is in the input
    patch: ElfPatch
    moved_to: str | None = None  # an ELF script moved into <dist>.scripts/ (a launcher takes its place)
    rpath_before: tuple[str, ...] = ()
    dropped_rpath: tuple[str, ...] = ()  # entries pointing outside the wheel
    reached: tuple[tuple[str, str], ...] = ()  # (soname, shipped member) that a new RPATH entry now finds


@dataclass(frozen=True)
class RepairPlan:
    policy: Policy  # whose library whitelist decided what to graft
    libs_dir: str
    grafts: tuple[Graft, ...] = ()
    edits: tuple[MemberEdit, ...] = ()
    renames: dict[str, str] = field(default_factory=dict)  # needed soname -> grafted name
    kept: tuple[tuple[str, str], ...] = ()  # (soname, why it stays outside the wheel)
    missing: tuple[tuple[str, str], ...] = ()  # (soname, the file that needs it): not on this host

    @property
    def graft_key(self) -> frozenset[str]:
        """What this plan grafts (or would, were nothing missing): plans with equal keys are the same plan."""
        return frozenset(self.renames) | frozenset(s for s, _ in self.missing)


def never_grafted(soname: str, exclude: Iterable[str], drivers: Container[str]) -> str | None:
    """Why ``soname`` must never be copied into a wheel, or None."""
    if is_dynamic_loader(soname):
        return "the dynamic loader"
    if LIBPYTHON.match(soname):
        return "libpython (the entry is removed: the interpreter provides it)"
    if soname in drivers:
        return "a system driver library (it must match the machine's driver)"
    if any(fnmatch(soname, pattern) for pattern in exclude):
        return "excluded (--exclude)"
    return None


def launcher(moved_to: str) -> bytes:
    """auditwheel's launcher for a moved ELF script; installers rewrite ``#!python`` to their interpreter."""
    return f"""\
#!python
import os
import sys
import sysconfig


if __name__ == "__main__":
    os.execv(
        os.path.join(sysconfig.get_path("platlib"), {moved_to!r}),
        sys.argv,
    )
""".encode()


def make_plan(
    model: WheelModel,
    elves: list[ElfInfo],
    resolution: Resolution,
    located: Located,
    policy: Policy,
    arch: str,
    *,
    exclude: tuple[str, ...] = (),
    drivers: Container[str] = frozenset(),
    lib_sdir: str = ".libs",
) -> RepairPlan:
    """The plan that makes the wheel need nothing from outside but what ``policy`` whitelists.

    Grafted libraries go to ``<dist><lib_sdir>/`` (auditwheel's -L/--lib-sdir, default ".libs")."""
    dist = model.filename.split("-", 1)[0]
    libs_dir = f"{dist}{lib_sdir}"
    kept: dict[str, str] = {}

    def graftable(soname: str) -> bool:
        why = never_grafted(soname, exclude, drivers) or (
            "whitelisted: the policy lets the system provide it" if policy.provides(soname, arch) else None)
        if why:
            kept.setdefault(soname, why)
        return why is None

    for soname in located.skipped + tuple(n for e in elves for n in e.needed if LIBPYTHON.match(n)):
        graftable(soname)  # records why it stays outside
    chosen, missing = _closure(located, graftable, exclude, kept)
    grafts, renames = _grafts(chosen, libs_dir, set(model.members))
    copies = shipped_copies(elves)
    edits = [edit for elf in elves
             if (edit := _edit(model, elf, resolution, renames, libs_dir, dist, copies)) is not None]
    return RepairPlan(policy=policy, libs_dir=libs_dir, grafts=grafts, edits=tuple(edits), renames=renames,
                      kept=tuple(sorted(kept.items())), missing=tuple(sorted(missing.items())))


def with_graft_names(plan: RepairPlan, names: Mapping[str, str]) -> RepairPlan:
    """``plan`` with grafted libraries renamed (their name -> new name): the member, the SONAME, and every
    DT_NEEDED that named them. Libraries an earlier repair put in the wheel keep their names."""
    def new(name: str) -> str:
        return names.get(name, name)

    def patched(patch: ElfPatch) -> ElfPatch:
        return replace(patch, soname=patch.soname and new(patch.soname),
                       replace_needed=tuple((old, new(name)) for old, name in patch.replace_needed))

    grafts = tuple(g if g.in_wheel else replace(g, member=f"{plan.libs_dir}/{new(g.new_name)}",
                                                new_name=new(g.new_name), patch=patched(g.patch))
                   for g in plan.grafts)
    edits = tuple(replace(e, patch=patched(e.patch)) for e in plan.edits)
    return replace(plan, grafts=grafts, edits=edits, renames={s: new(n) for s, n in plan.renames.items()})


def _closure(located: Located, graftable, exclude: tuple[str, ...], kept: dict[str, str]):
    wanted = deque(sorted({s for _, s in located.roots if graftable(s)}))
    chosen: dict[str, HostLibrary] = {}
    missing: dict[str, str] = {}
    while wanted:
        soname = wanted.popleft()
        if soname in chosen or soname in missing:
            continue
        lib = located.libraries.get(soname)
        if lib is None:
            missing[soname] = located.missing.get(soname, "?")
            continue
        if any(fnmatch(lib.realpath, p) or fnmatch(lib.path, p) for p in exclude):
            kept.setdefault(soname, f"excluded (--exclude matches {lib.realpath})")
            continue
        chosen[soname] = lib
        wanted.extend(d for d in lib.needs if graftable(d))
    return chosen, missing


def _grafts(chosen: dict[str, HostLibrary], libs_dir: str, members: set[str]):
    by_file: dict[str, list[HostLibrary]] = {}
    for lib in chosen.values():
        by_file.setdefault(lib.realpath, []).append(lib)
    renames: dict[str, str] = {}
    for libs in by_file.values():
        base = posixpath.basename(libs[0].realpath)
        if not base.isprintable():  # it would become a member name of the published wheel
            raise RepairError(libs[0].path, f"has a file name with control characters ({base!r}): not grafted")
        new_name = hashed_name(base, libs[0].sha256)
        for lib in libs:
            renames[lib.soname] = new_name
    grafts = []
    for realpath, libs in sorted(by_file.items(), key=lambda item: renames[item[1][0].soname]):
        lib = libs[0]
        new_name = renames[lib.soname]
        needs = tuple((n, renames[n]) for n in lib.info.needed if n in renames)
        patch = ElfPatch(soname=new_name, replace_needed=needs, rpath=("$ORIGIN",) if needs else ())
        member = f"{libs_dir}/{new_name}"
        grafts.append(Graft(member, new_name, lib.path, realpath, lib.sha256, tuple(sorted(x.soname for x in libs)),
                            patch, in_wheel=member in members))
    return tuple(grafts), renames


def _edit(model: WheelModel, elf: ElfInfo, resolution: Resolution, renames: dict[str, str], libs_dir: str,
          dist: str, copies: dict[str, list[ElfInfo]]) -> MemberEdit | None:
    direct = tuple((n, renames[n]) for n in elf.needed if n in renames and (elf.path, n) not in resolution.provided)
    removed = tuple(n for n in elf.needed if LIBPYTHON.match(n))
    # copies in site-packages, for files in site-packages or scripts (moved there); other files under .data/
    # are at no fixed distance from anything
    reachable = model.install_path(elf.path).startswith("/sp/") or _script_home(model, elf.path, dist)
    shipped = tuple((n, found.shipped) for n in elf.needed if reachable and (elf.path, n) in resolution.unresolved
                    and (found := unreached(model, elf, n, copies)) is not None
                    and model.install_path(found.shipped).startswith("/sp/"))
    if not direct and not removed and not shipped:
        return None
    moved_to = _script_home(model, elf.path, dist) if direct or shipped else None
    location = moved_to or elf.path
    before = tuple(dict.fromkeys(elf.rpath + elf.runpath))
    rpath = None
    dropped: tuple[str, ...] = ()
    if direct or shipped:
        home = model.install_path(location)
        if not home.startswith("/sp/"):
            raise RepairError(elf.path, "is installed outside site-packages, so no $ORIGIN path can reach "
                                        + ("the vendored libraries" if direct else
                                           f"{', '.join(m for _, m in shipped)}"))
        kept = tuple(e for e in before if rpath_directory(model, location, e) is not None)
        dropped = tuple(e for e in before if e not in kept)
        own = ("$ORIGIN/" + posixpath.relpath("/sp/" + libs_dir, posixpath.dirname(home)),) if direct else ()
        reach = tuple(_origin_entry(posixpath.dirname(home), posixpath.dirname(model.install_path(member)))
                      for _, member in shipped)
        wanted = tuple(dict.fromkeys(kept + reach + own))
        rpath = wanted if (wanted != elf.rpath or elf.runpath) else None
    patch = ElfPatch(replace_needed=direct, remove_needed=removed, rpath=rpath)
    return MemberEdit(elf.path, patch, moved_to, before, dropped, shipped)


def _origin_entry(home: str, there: str) -> str:
    relative = posixpath.relpath(there, home)
    return "$ORIGIN" if relative == "." else f"$ORIGIN/{relative}"


def _script_home(model: WheelModel, member: str, dist: str) -> str | None:
    """``<dist>.scripts/NAME`` for an ELF file installed as a script (``<name>.data/scripts/NAME``)."""
    parts = member.split("/")
    if model.data_dir and len(parts) == 3 and parts[0] == model.data_dir and parts[1] == "scripts":
        return f"{dist}.scripts/{parts[2]}"
    return None
