"""Carry out a plan: copy and patch the grafted libraries, patch the wheel's files, write the launchers.

Every changed ELF file is a file in the repair's private work directory (extracted from the wheel or copied
from the host in pieces, then patched in place), never a buffer: memory does not grow with the libraries.
The input wheel and the host libraries are only read. The result is a new ``Changes`` (the members to
replace and to add, the ELF files among them as their work files), and the model of the wheel they make
(each changed ELF file summarised again from its new bytes, so the re-audit judges what will be written).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from packaging.tags import Tag

from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.elf.elf_patch import ElfPatch, patch_file, strip_file
from wheelcheck.elf.elf_summary import summarize_file, summarize_hashed
from wheelcheck.errors import RepairError
from wheelcheck.host.host_library_search import Located
from wheelcheck.repair.graft_plan import Graft, RepairPlan, launcher
from wheelcheck.wheel.record import file_sha256
from wheelcheck.wheel.wheel_model import WheelModel
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.wheel_rebuild import Changes, Contents, NewMember

__all__ = ["apply_plan", "repaired_model", "summarize_contents"]

_COPY_PIECE = 1 << 20


def apply_plan(plan: RepairPlan, reader: WheelReader, located: Located, workdir: str | os.PathLike, *,
               workers: int = 0, strip: tuple[str, ...] | None = None) -> Changes:
    """Patch what ``plan`` says, in files under ``workdir``; extraction, strip and patchelf run in parallel
    threads (inflate and the tools' processes run outside the GIL).

    ``strip``: members to strip (``strip -s``) besides the grafted libraries, or None not to strip at all.
    """
    # (output path, where the bytes come from: ("member", name) or ("host", realpath, sha256), patch, name)
    jobs: list[tuple[str, tuple, ElfPatch, str]] = []
    for edit in plan.edits:
        jobs.append((edit.moved_to or edit.member, ("member", edit.member), edit.patch, edit.member))
    for graft in plan.grafts:  # one already in the wheel is made again, to be compared with it
        jobs.append((_check_name(graft) if graft.in_wheel else graft.member, ("host", graft.realpath, graft.sha256),
                     graft.patch, graft.source))
    edited = {edit.member for edit in plan.edits}
    extra = [m for m in strip or () if m not in edited]
    jobs += [(member, ("member", member), ElfPatch(), member) for member in extra]
    stripping: set[str] = set()
    if strip is not None:
        stripping = {edit.moved_to or edit.member for edit in plan.edits if edit.member in strip}
        stripping |= {_check_name(g) if g.in_wheel else g.member for g in plan.grafts} | set(extra)
    files = [Path(workdir) / f"patched-{i}.so" for i in range(len(jobs))]

    def run(job: tuple[tuple[str, tuple, ElfPatch, str], Path]) -> None:
        (path, source, patch, name), file = job
        if source[0] == "member":
            try:
                reader.extract(source[1], file)
            except OSError as exc:
                raise RepairError(name, f"cannot write its work copy ({exc.strerror or exc})") from None
        else:
            _copy_host(source[1], source[2], file)
        if path in stripping:
            strip_file(file, name)
        patch_file(file, patch, name)

    workers = workers or min(4, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs)))) as pool:
        list(pool.map(run, zip(jobs, files)))
    patched = {path: file for (path, _, _, _), file in zip(jobs, files)}
    for graft in plan.grafts:
        if graft.in_wheel:
            _check_in_wheel(reader, graft, patched[_check_name(graft)])
    modes = {e.filename: (e.external_attr >> 16) & 0o7777 for e in reader.entries}
    replace: dict[str, Contents] = {member: patched[member] for member in extra}
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
        elves.append(elf if path is None else summarize_contents(changes.changed_data(path), path))
    elves += [summarize_contents(changes.changed_data(g.member), g.member) for g in plan.grafts if not g.in_wheel]
    members = model.members + tuple(name for name in changes.add if name not in model.members)
    return replace(model, filename=filename, tags=tags, elves=tuple(elves), members=members,
                   root_is_purelib=False, record_problems=(),
                   package_problems=tuple(p for p in model.package_problems if p[0] == "wheel-metadata"))


def summarize_contents(contents: Contents, member: str) -> ElfInfo:
    """The summary (with its sha256) of a changed ELF file: bytes, or a work file read in pieces."""
    if not isinstance(contents, Path):
        return summarize_hashed(contents, member)
    try:
        return summarize_file(str(contents), member, sha256=True)
    except OSError as exc:
        raise RepairError(member, f"cannot read the patched file ({exc.strerror or exc})") from None


def _check_name(graft: Graft) -> str:
    return f"\0{graft.member}"  # a key no member can have: a NUL in a name is refused on reading


def _check_in_wheel(reader: WheelReader, graft: Graft, made: Path) -> None:
    """A member already under a graft's name is taken as that graft only if it holds the very bytes the graft
    would: its name promises the host library it names by hash, and the SBOM and the report will say so."""
    digest = hashlib.sha256()
    for piece in reader.pieces(graft.member):
        digest.update(piece)
    wanted = file_sha256(made)
    if digest.hexdigest() != wanted:
        raise RepairError(graft.member, f"is already in the wheel under the name a graft of {graft.source} takes, "
                                        f"but holds other bytes (sha256 {digest.hexdigest()[:16]}…, the graft "
                                        f"{wanted[:16]}…): refusing to vouch for it; repair the wheel as it was "
                                        "built, or with the options of its first repair")


def _copy_host(path: str, sha256: str, dest: Path) -> None:
    """Copy a host library to ``dest`` in pieces, checking it is still the file that was examined."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb", buffering=0) as source, open(dest, "wb") as out:
            for piece in iter(lambda: source.read(_COPY_PIECE), b""):
                digest.update(piece)
                out.write(piece)
    except OSError as exc:
        raise RepairError(path, f"cannot read the library to graft ({exc.strerror or exc})") from None
    if digest.hexdigest() != sha256:
        raise RepairError(path, "changed while the repair was running")
