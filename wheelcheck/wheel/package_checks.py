"""The whole wheel as the index and installers take it, beyond its ELF files: every member in RECORD with its
hash and size, WHEEL and METADATA against the file name, and the zip's records as the index reads them.

The scanner hashes ELF members as they stream; this module reads the rest once each, in pieces (a member's
bytes are never held whole), and gathers the problems as (rule, member or None, sentence).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor

from packaging.tags import Tag

from wheelcheck.wheel.package_metadata import metadata_problems, wheel_file_problems
from wheelcheck.wheel.record import ACCEPTED_HASHES, Record, digest_field
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.zip_conformance import archive_problems

__all__ = ["Problem", "package_problems", "record_problems", "rewritten", "RECORD_EXEMPT"]

Problem = tuple[str, "str | None", str]  # (rule, member or None for the wheel, what is wrong)
RECORD_EXEMPT = ("RECORD", "RECORD.jws", "RECORD.p7s")  # RECORD lists no hash for itself or its signatures


def package_problems(reader: WheelReader) -> list[Problem]:
    """What the index's archive check and the installers' metadata checks refuse in this wheel."""
    dist_info = reader.dist_info
    out: list[Problem] = [("zip-layout", None, p) for p in archive_problems(
        reader.fileno(), os.fstat(reader.fileno()).st_size, reader.entries)]
    wheel_text = reader.metadata_text("WHEEL") or ""
    out += [("wheel-metadata", f"{dist_info}/WHEEL", p) for p in wheel_file_problems(wheel_text, frozenset(reader.tags))]
    out += [("wheel-metadata", f"{dist_info}/METADATA" if "METADATA" in p else None, p)
            for p in metadata_problems(reader.metadata_text("METADATA"), str(reader.name), str(reader.version),
                                       dist_info)]
    return out


def rewritten(problems: tuple[Problem, ...], wheel_member: str, wheel_text: str,
              tags: frozenset[Tag]) -> tuple[Problem, ...]:
    """``problems`` of a wheel once a repair wrote it again: its zip and RECORD are new, its WHEEL file
    (``wheel_member``) is ``wheel_text`` for the file name's ``tags``, and only what METADATA says stays."""
    kept = tuple(p for p in problems if p[0] == "wheel-metadata" and p[1] != wheel_member)
    return kept + tuple(("wheel-metadata", wheel_member, p) for p in wheel_file_problems(wheel_text, tags))


def record_problems(reader: WheelReader, record: Record,
                    hashed: dict[str, str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(member, problem) for each member RECORD does not list, or lists with another hash or size; and the members
    whose hash is right but written in hex. ``hashed`` holds the RECORD hash fields of members already hashed as
    they streamed (the ELF files); the others are read here."""
    dist_info = reader.dist_info
    if f"{dist_info}/RECORD" not in reader.file_sizes():
        return [(f"{dist_info}/RECORD", "is missing: installers refuse a wheel without RECORD")], []
    exempt = {f"{dist_info}/{name}" for name in RECORD_EXEMPT}
    to_hash = [m.filename for m in reader.members if m.filename not in exempt and m.filename not in hashed
               and record.rows.get(m.filename, ("", ""))[0].partition("=")[0] in ACCEPTED_HASHES]
    # inflating and hashing release the GIL: the members are read on threads, as the scanner reads ELF files
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        digests = {**hashed, **dict(zip(to_hash, pool.map(lambda n: _digest(reader, n, record.algorithm(n)),
                                                          to_hash)))}
    problems, in_hex = [], []
    for member in reader.members:
        name = member.filename
        if name in exempt:
            continue
        if name not in record.rows:
            problems.append((name, "has no RECORD entry"))
            continue
        digest = digests.get(name)
        problem = record.check(name, digest or "")
        size = record.rows[name][1]
        if problem and digest and record.matches_in_hex(name, digest):
            in_hex.append(name)
        elif problem:
            problems.append((name, problem))
        elif size not in ("", str(member.file_size)):
            problems.append((name, f"is {member.file_size} bytes, but RECORD says {size}"))
    return problems, in_hex


def _digest(reader: WheelReader, name: str, algorithm: str) -> str:
    hasher = hashlib.new(algorithm)
    for piece in reader.pieces(name):
        hasher.update(piece)
    return digest_field(algorithm, hasher.digest())
