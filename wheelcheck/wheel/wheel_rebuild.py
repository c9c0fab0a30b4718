"""Write a changed copy of a wheel: what did not change is copied raw, RECORD is regenerated.

The cost grows with what changed, not with the wheel: unchanged members keep their compressed bytes, their
local header fields and their RECORD rows (a row is recomputed only when it is missing, uses a hash we do not
accept or disagrees with the member's size). The output is reproducible:

- member order is the input's, with new members (sorted by name) placed before the .dist-info directory and
  RECORD last;
- changed and new members are stamped with ``SOURCE_DATE_EPOCH`` when it is set, otherwise with the newest
  timestamp already in the input (so the result depends only on the input, never on the clock);
- when the regenerated RECORD has exactly the rows of the old one (in any order), the old RECORD (and any
  signature of it) is copied raw, so rewriting a wheel with no changes gives back the same members.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from wheelcheck.errors import UsageError
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.record import ACCEPTED_HASHES, record_digest, record_rows, render_record
from wheelcheck.wheel.wheel_writer import ZipWriter, atomic_output

__all__ = ["NewMember", "RebuildStats", "rebuild_wheel", "reproducible_date_time"]

DateTime = tuple[int, int, int, int, int, int]
_ZIP_EPOCH: DateTime = (1980, 1, 1, 0, 0, 0)
_ZIP_END: DateTime = (2107, 12, 31, 23, 59, 58)
_SIGNATURES = ("RECORD.jws", "RECORD.p7s")


@dataclass(frozen=True)
class NewMember:
    data: bytes
    mode: int = 0o644  # permission bits


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
    return max((tuple(e.date_time) for e in reader.entries), default=_ZIP_EPOCH)


def rebuild_wheel(
    reader: WheelReader,
    out_path: Path,
    *,
    replace: Mapping[str, bytes] = {},
    add: Mapping[str, NewMember] = {},
    date_time: DateTime,
    level: int = 6,
    rehash: set[str] = frozenset(),
) -> RebuildStats:
    """Write ``reader``'s wheel to ``out_path`` with members replaced and added. Raises OSError on write.

    ``rehash``: unchanged members whose RECORD rows are known to be wrong (hashed again, not copied).
    """
    dist = reader.dist_info
    record_name = f"{dist}/RECORD"
    signatures = {f"{dist}/{s}" for s in _SIGNATURES}
    names = {e.filename for e in reader.entries}
    clash = sorted(set(add) & names)
    if clash:
        raise ValueError(f"{clash[0]}: already in the wheel")
    unknown = sorted(set(replace) - names - {record_name})
    if unknown:
        raise ValueError(f"{unknown[0]}: not in the wheel")
    order = _order(reader.entries, dict(add), dist)
    old_rows = _old_rows(reader, record_name)
    rows = _rows(reader, order, replace, old_rows, rehash, skip=signatures | {record_name}) + [(record_name, "", "")]
    # the same rows in another order are the same RECORD: keep the old one, byte for byte, where it was
    record_changed = not old_rows or sorted(rows) != sorted(r for r in old_rows if r[0] not in signatures)
    if record_changed:  # RECORD is written last; a signature of the old one no longer holds
        order = [i for i in order if not (isinstance(i, zipfile.ZipInfo) and i.filename in signatures | {record_name})]
        order.append((record_name, NewMember(render_record(rows))))
    copied = written = 0
    with open(reader.path, "rb", buffering=0) as source, atomic_output(out_path) as out:
        writer = ZipWriter(out)
        for item in order:
            if isinstance(item, zipfile.ZipInfo) and item.filename not in replace:
                writer.copy_raw(source, item, str(reader.path))
                copied += 1
            elif isinstance(item, zipfile.ZipInfo):
                writer.add(item.filename, replace[item.filename], mode=_mode(item), date_time=date_time, level=level)
                written += 1
            else:
                name, member = item
                writer.add(name, member.data, mode=member.mode, date_time=date_time, level=level)
                written += 1
        writer.finish(reader.comment)
    return RebuildStats(copied=copied, written=written, record_changed=record_changed)


def _rows(reader: WheelReader, order: list, replace: Mapping[str, bytes], old_rows, rehash: set[str],
          skip: set[str]) -> list[tuple[str, str, str]]:
    """A RECORD row for every file in ``order`` (not directories, RECORD or its signatures)."""
    old_by_name = {row[0]: row for row in old_rows}
    rows = []
    for item in order:
        if not isinstance(item, zipfile.ZipInfo):
            name, member = item
            rows.append((name, record_digest(member.data), str(len(member.data))))
        elif item.is_dir() or item.filename in skip:
            continue
        elif item.filename in replace:
            data = replace[item.filename]
            rows.append((item.filename, record_digest(data), str(len(data))))
        else:
            old = None if item.filename in rehash else old_by_name.get(item.filename)
            rows.append(_kept_row(reader, item, old))
    return rows


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
    if old is not None and old[1].partition("=")[0] in ACCEPTED_HASHES and old[2] == str(info.file_size):
        return old
    return (info.filename, record_digest(reader.read(info.filename)), str(info.file_size))


def _mode(info: zipfile.ZipInfo) -> int:
    mode = (info.external_attr >> 16) & 0o7777
    return mode if info.create_system == 3 and mode else 0o644
