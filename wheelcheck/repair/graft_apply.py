"""Carry out a plan: copy and patch the grafted libraries, patch the wheel's files, write the launchers.

Everything happens in memory and in private temporary files; the input wheel and the host libraries are
only read. The result is a new ``Changes`` (the members to replace and to add), and the model of the wheel
they make (each changed ELF file summarised again from its new bytes, so the re-audit judges what will be
written).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from packaging.tags import Tag

from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.elf.elf_patch import ElfPatch, patch_bytes, strip_bytes
from wheelcheck.elf.elf_summary import summarize_hashed
from wheelcheck.errors import RepairError
from wheelcheck.host.host_library_search import Located
from wheelcheck.repair.graft_plan import RepairPlan, launcher
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.wheel_rebuild import Changes, NewMember

__all__ = ["apply_plan", "repaired_model"]


def apply_plan(plan: RepairPlan, reader: WheelReader, located: Located, *, workers: int = 0,
               strip: tuple[str, ...] | None = None) -> Changes:
    """Patch what ``plan`` says; patchelf runs in parallel threads (each is its own process).

    ``strip``: members to strip (``strip -s``) besides the grafted libraries, or None not to strip at all.
    """
    jobs: list[tuple[str, bytes, ElfPatch, str]] = []  # (output path, bytes, patch, name for messages)
    for edit in plan.edits:
        jobs.append((edit.moved_to or edit.member, reader.read(edit.member), edit.patch, edit.member))
    for graft in plan.grafts:
        if not graft.in_wheel:
            jobs.append((graft.member, _host_bytes(graft.realpath, graft.sha256), graft.patch, graft.source))
    edited = {edit.member for edit in plan.edits}
    extra = [m for m in strip or () if m not in edited]
    jobs += [(member, reader.read(member), ElfPatch(), member) for member in extra]
    stripping: set[str] = set()
    if strip is not None:
        stripping = {edit.moved_to or edit.member for edit in plan.edits if edit.member in strip}
        stripping |= {g.member for g in plan.grafts if not g.in_wheel} | set(extra)

    def run(job: tuple[str, bytes, ElfPatch, str]) -> bytes:
        path, data, patch, name = job
        if path in stripping:
            data = strip_bytes(data, name)
        return patch_bytes(data, patch, name)

    workers = workers or min(4, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs)))) as pool:
        patched = {path: data for (path, _, _, _), data in zip(jobs, pool.map(run, jobs))}
    modes = {e.filename: (e.external_attr >> 16) & 0o7777 for e in reader.entries}
    replace: dict[str, bytes] = {member: patched[member] for member in extra}
    add: dict[str, NewMember] = {}
    for edit in plan.edits:
        if edit.moved_to:
            add[edit.moved_to] = NewMember(patched[edit.moved_to], modes.get(edit.member) or 0o755)
            replace[edit.member] = launcher(edit.moved_to)
        else:
            replace[edit.member] = patched[edit.member]
    for graft in plan.grafts:
        if not graft.in_wheel:
            add[graft.member] = NewMember(patched[graft.member], 0o755)
    return Changes(replace, add)


def repaired_model(model: WheelModel, plan: RepairPlan, changes: Changes, filename: str,
                   tags: frozenset[Tag]) -> WheelModel:
    """The model of the wheel that will be written: changed ELF files summarised from their new bytes."""
    edits = {e.member: e.moved_to or e.member for e in plan.edits}
    elf_paths = {elf.path for elf in model.elves}
    edits.update({m: m for m in changes.replace if m in elf_paths and m not in edits})  # stripped only
    elves = []
    for elf in model.elves:
        path = edits.get(elf.path)
        elves.append(elf if path is None else summarize_hashed(changes.data(path), path))
    elves += [summarize_hashed(changes.data(g.member), g.member) for g in plan.grafts if not g.in_wheel]
    members = model.members + tuple(name for name in changes.add if name not in model.members)
    return replace(model, filename=filename, tags=tags, elves=tuple(elves), members=members,
                   root_is_purelib=False, record_problems=())


def _host_bytes(path: str, sha256: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise RepairError(path, f"cannot read the library to graft ({exc.strerror or exc})") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RepairError(path, "changed while the repair was running")
    return data
