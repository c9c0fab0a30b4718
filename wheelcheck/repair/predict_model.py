"""The wheel a plan would make, as the analyses see it: the same summaries with the plan's edits applied.

Judging this model tells what tag a plan reaches without running patchelf, so the repair can compare the
plans of several policies cheaply. After the real edits, the changed files are summarised again from their
bytes and judged once more: the prediction chooses, the real bytes decide.
"""

from __future__ import annotations

from dataclasses import replace

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.elf.elf_info import ElfInfo, VersionNeed
from wheelcheck.elf.elf_patch import ElfPatch
from wheelcheck.host.host_library_search import Located
from wheelcheck.repair.graft_plan import RepairPlan

__all__ = ["predict", "patched_info"]


def predict(model: WheelModel, plan: RepairPlan, located: Located) -> WheelModel:
    edits = {e.member: e for e in plan.edits}
    elves = []
    for elf in model.elves:
        edit = edits.get(elf.path)
        elves.append(elf if edit is None else patched_info(elf, edit.patch, edit.moved_to or elf.path))
    new_members = []
    for graft in plan.grafts:
        if graft.in_wheel:
            continue
        host = located.libraries[graft.needed_as[0]]
        elves.append(patched_info(host.info, graft.patch, graft.member))
        new_members.append(graft.member)
    new_members += [e.moved_to for e in plan.edits if e.moved_to]
    return replace(model, elves=tuple(elves), members=model.members + tuple(new_members),
                   root_is_purelib=False, record_problems=(),
                   package_problems=tuple(p for p in model.package_problems if p[0] == "wheel-metadata"))


def patched_info(info: ElfInfo, patch: ElfPatch, path: str) -> ElfInfo:
    """``info`` as patchelf leaves it after ``patch``, found at ``path``."""
    renames = dict(patch.replace_needed)
    removed = set(patch.remove_needed)
    needed = tuple(renames.get(n, n) for n in info.needed if n not in removed)
    needs = tuple(VersionNeed(renames.get(v.library, v.library), v.version, v.weak, v.symbols, v.weak_symbols)
                  for v in info.version_needs)
    names = tuple((version, renames.get(lib, lib) if lib else lib) for version, lib in info.symtab.version_names)
    rpath, runpath = info.rpath, info.runpath
    if patch.rpath is not None:
        rpath, runpath = patch.rpath, ()
    return replace(info, path=path, soname=patch.soname or info.soname, needed=needed, version_needs=needs,
                   symtab=replace(info.symtab, version_names=names) if renames else info.symtab,
                   rpath=rpath, runpath=runpath)
