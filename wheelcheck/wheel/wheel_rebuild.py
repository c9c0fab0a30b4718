"""Write a changed copy of a wheel: what did not change is copied raw, RECORD is regenerated.

The cost grows with what changed, not with the wheel: unchanged members keep their compressed bytes, their
local header fields and their RECORD rows (a row is recomputed only when it is missing, uses a hash we do not
accept or disagrees with the member's size). The row of a member written anew is the one the writer returns
for the bytes it wrote. The output is reproducible:

- member order is the input's, with new members (sorted by name) placed before the .dist-info directory and
  RECORD last;
- changed and new members are stamped with ``SOURCE_DATE_EPOCH`` when it is set, otherwise with the newest
  timestamp already in the input (so the result depends only on the input, never on the clock);
- when the regenerated RECORD has exactly the rows of the old one (in any order), the old RECORD (and any
  signature of it) is copied raw, so rewriting a wheel with no changes gives back the same members.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Iterator, Mapping, Set
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Union

from wheelcheck.errors import OutputError, UsageError
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.record import ACCEPTED_HASHES, RecordRow, digest_field, record_rows, render_record, written_in_hex
from wheelcheck.wheel.wheel_writer import ZipWriter, atomic_output
from wheelcheck.wheel import _zlib

__all__ = ["Changes", "Contents", "NewMember", "RebuildStats", "rebuild_wheel", "reproducible_date_time"]

DateTime = tuple[int, int, int, int, int, int]
_ZIP_EPOCH: DateTime = (1980, 1, 1, 0, 0, 0)
_ZIP_END: DateTime = (2107, 12, 31, 23, 59, 58)
_SIGNATURES = ("RECORD.jws", "RECORD.p7s")
_PIECE = 1 << 20


# A member's new contents: bytes in memory, or a file (read in pieces, never whole: a patched library)
Contents = Union[bytes, Path]


@dataclass(frozen=True)
class NewMember:
    data: Contents
    mode: int = 0o644  # permission bits


def _write_new(writer: ZipWriter, name: str, contents: Contents, **how) -> RecordRow:
    if isinstance(contents, Path):
        return writer.add_file(name, contents, **how)
    return writer.add(name, contents, **how)


@dataclass(frozen=True)
class Changes:
    """How the output wheel differs from the input: members with new contents, and new members."""

    replace: Mapping[str, Contents] = field(default_factory=dict)
    add: Mapping[str, NewMember] = field(default_factory=dict)

    def data(self, member: str) -> Contents | None:
        """The new contents of ``member`` (replaced or added); None when it is the input's."""
        if member in self.replace:
            return self.replace[member]
        new = self.add.get(member)
        return None if new is None else new.data

    def changed_data(self, member: str) -> Contents:
        """The new contents of a member known to have changed (asking for any other is a bug)."""
        data = self.data(member)
        assert data is not None, f"{member!r} has not changed"
        return data

    def with_data(self, updates: Mapping[str, Contents]) -> Changes:
        """These changes with ``updates`` (member -> contents) on top; a new member keeps its mode."""
        replace, add = dict(self.replace), dict(self.add)
        for member, data in updates.items():
            if member in add:
                add[member] = NewMember(data, add[member].mode)
            else:
                replace[member] = data
        return Changes(replace, add)


@dataclass(frozen=True)
class RebuildStats:
    copied: int  # members copied as compressed bytes
    written: int  # members deflated anew (changed, new, and RECORD when it changed)
    record_changed: bool


def reproducible_date_time(reader: WheelReader, environ: Mapping[str, str] = os.environ) -> DateTime:
    """The timestamp for changed members: SOURCE_DATE_EPOCH (UTC) if set, else the input's newest one."""
    raw = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if raw:
        try:
            stamp = datetime.fromtimestamp(int(raw), tz=timezone.utc).timetuple()[:6]
        except (ValueError, OverflowError, OSError):
            raise UsageError("SOURCE_DATE_EPOCH", f"{raw!r} is not a number of seconds since 1970") from None
        return min(max(stamp, _ZIP_EPOCH), _ZIP_END)
    return max((e.date_time for e in reader.entries), default=_ZIP_EPOCH)


def rebuild_wheel(
    reader: WheelReader,
    out_path: Path,
    *,
    replace: Mapping[str, Contents] = {},
    add: Mapping[str, NewMember] = {},
    date_time: DateTime,
    level: int = 6,
    rehash: Set[str] = frozenset(),
) -> RebuildStats:
    """Write ``reader``'s wheel to ``out_path`` with members replaced and added. Raises OSError on write.

    ``rehash``: unchanged members whose RECORD rows are known to be wrong (hashed again, not copied).
    A replacement with the member's very bytes is no change: the member is copied.
    """
    dist = reader.dist_info
    record_name = f"{dist}/RECORD"
    signatures = {f"{dist}/{s}" for s in _SIGNATURES}
    names = {e.filename for e in reader.entries}
    clash = sorted(set(add) & names)
    if clash:
        raise OutputError(str(out_path), f"{clash[0]!r} would be added, but the wheel has it already")
    unknown = sorted(set(replace) - (names - {record_name}))
    if unknown:
        raise OutputError(str(out_path), f"{unknown[0]!r} would be replaced, but the wheel has no such file "
                                         "(or it is RECORD, which is regenerated)")
    replace = _changed_only(reader, replace)
    order = _order(reader.entries, dict(add), dist)
    old_rows = _old_rows(reader, record_name)
    skip = signatures | {record_name}
    kept = _kept_rows(reader, old_rows, rehash, skip | set(replace))
    # the same rows in another order are the same RECORD: keep the old one, byte for byte, where it was
    record_changed = bool(replace or add) or not old_rows or \
        sorted([*kept.values(), (record_name, "", "")]) != sorted(r for r in old_rows if r[0] not in signatures)
    rows: list[tuple[str, str, str]] = []  # in member order: kept rows, and the writer's rows of what it wrote
    copied = written = 0
    with atomic_output(out_path) as out:
        writer = ZipWriter(out, str(out_path))
        for item in order:
            if isinstance(item, zipfile.ZipInfo) and item.filename not in replace:
                if record_changed and item.filename in skip:
                    continue  # RECORD is written last; a signature of the old one no longer holds
                writer.copy_raw(reader, item, str(reader.path))
                copied += 1
                if item.filename in kept:
                    rows.append(kept[item.filename])
                continue
            if isinstance(item, zipfile.ZipInfo):
                name, data, mode = item.filename, replace[item.filename], _mode(item)
            else:
                name, data, mode = item[0], item[1].data, item[1].mode
            rows.append(_write_new(writer, name, data, mode=mode, date_time=date_time, level=level))
            written += 1
        if record_changed:
            writer.add(record_name, render_record([*rows, (record_name, "", "")]), mode=0o644,
                       date_time=date_time, level=level)
            written += 1
        writer.finish(reader.comment)
    return RebuildStats(copied=copied, written=written, record_changed=record_changed)


def _changed_only(reader: WheelReader, replace: Mapping[str, Contents]) -> dict[str, Contents]:
    """``replace`` without the members whose new bytes are their old ones (size and CRC first, then bytes)."""
    entries = {e.filename: e for e in reader.entries}
    return {name: data for name, data in replace.items() if not _same_bytes(reader, entries[name], data)}


def _same_bytes(reader: WheelReader, entry: zipfile.ZipInfo, contents: Contents) -> bool:
    if not isinstance(contents, Path):
        return (len(contents) == entry.file_size and _zlib.crc32(contents) == entry.CRC
                and reader.read(entry.filename) == contents)
    if contents.stat().st_size != entry.file_size:
        return False
    crc = 0
    for piece in _file_pieces(contents):
        crc = _zlib.crc32(piece, crc)
    if crc != entry.CRC:
        return False
    with open(contents, "rb") as f:  # the sizes agree: compare each piece of the member with as many bytes
        return all(f.read(len(piece)) == piece for piece in reader.pieces(entry.filename))


def _file_pieces(path: Path) -> Iterator[bytes]:
    with open(path, "rb", buffering=0) as f:
        yield from iter(lambda: f.read(_PIECE), b"")


def _kept_rows(reader: WheelReader, old_rows: list[tuple[str, str, str]], rehash: Set[str],
               skip: set[str]) -> dict[str, tuple[str, str, str]]:
    """The RECORD row of each file member copied unchanged (not directories, nor those in ``skip``)."""
    old_by_name = {row[0]: row for row in old_rows}
    return {item.filename: _kept_row(reader, item, None if item.filename in rehash else old_by_name.get(item.filename))
            for item in reader.entries if not item.is_dir() and item.filename not in skip}


def _order(entries: list[zipfile.ZipInfo], add: dict[str, NewMember], dist: str) -> list:
    """The input's entries in order, with the new members (sorted) just before the .dist-info directory."""
    at = next((i for i, e in enumerate(entries) if e.filename.startswith(dist + "/")), len(entries))
    new = [(name, add[name]) for name in sorted(add)]
    return entries[:at] + new + entries[at:]


def _old_rows(reader: WheelReader, record_name: str) -> list[tuple[str, str, str]]:
    if record_name not in {m.filename for m in reader.members}:
        return []
    return record_rows(reader.read_text(record_name))


def _kept_row(reader: WheelReader, info: zipfile.ZipInfo, old: tuple[str, str, str] | None) -> tuple[str, str, str]:
    """The old RECORD row of an unchanged member when it is usable, else one computed from its bytes."""
    if old is not None and old[1].partition("=")[0] in ACCEPTED_HASHES and not written_in_hex(old[1]) \
            and old[2] == str(info.file_size):
        return old
    digest = hashlib.sha256()
    for piece in reader.pieces(info.filename):
        digest.update(piece)
    return (info.filename, digest_field("sha256", digest.digest()), str(info.file_size))


def _mode(info: zipfile.ZipInfo) -> int:
    mode = (info.external_attr >> 16) & 0o7777
    return mode if info.create_system == 3 and mode else 0o644
