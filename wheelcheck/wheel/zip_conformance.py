"""What the package index's archive check refuses in a zip that Python's zipfile (and so pip) reads happily.

PyPI reads an upload two ways, through its central directory (as zipfile does) and record by record from the
first byte (as a streaming unzipper does), and refuses a file the two readings could disagree on: bytes before
the first member, between members or after the end record; a second end record; a local header whose name,
sizes or method differ from its central directory entry; a member whose sizes follow its data (a data
descriptor); a comment on a central directory entry; a control character in a name; a ZIP64 or Unicode Path
extra field given twice. This module walks the records the same way and says what it finds.

The walk reads headers only (a member's data is skipped by its central size), each at most 64 kB, and moves
forward at least one header a step, so it is bounded by the file's size.
"""

from __future__ import annotations

import os
import struct
import zipfile

from wheelcheck.wheel import _zipformat as zf

__all__ = ["archive_problems"]

_LOCAL, _CENTRAL, _EOCD = b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06"
_EOCD64, _EOCD64_LOCATOR = b"PK\x06\x06", b"PK\x06\x07"
_UNPRINTABLE = frozenset(range(0x20)) | {0x7F}
_ONCE_ONLY_EXTRAS = (zf.ZIP64_EXTRA_ID, zf.UNICODE_PATH_EXTRA_ID)


def archive_problems(fd: int, size: int, entries: list[zipfile.ZipInfo]) -> list[str]:
    """The problems the index would refuse the zip open as ``fd`` for (``size`` bytes, ``entries`` its central
    directory as zipfile read it), in the order met; [] when it would accept it."""
    by_name = {_raw_name(info): info for info in entries}
    problems: list[str] = []
    pos = 0
    seen_local: set[bytes] = set()
    seen_central: set[bytes] = set()
    while pos < size:
        signature = os.pread(fd, 4, pos)
        if signature == _LOCAL:
            step = _local(fd, pos, by_name, seen_local, problems)
        elif signature == _CENTRAL:
            step = _central(fd, pos, seen_central, seen_local, problems)
        elif signature in (_EOCD64, _EOCD64_LOCATOR):
            step = _zip64_end(fd, pos, signature, problems)
        elif signature == _EOCD:
            end = pos + zf.EOCD.size + struct.unpack_from("<H", os.pread(fd, zf.EOCD.size, pos), 20)[0]
            if end < size:
                problems.append(f"{size - end} bytes follow the end record (another zip, or trailing data)")
            break
        else:
            where = "before the first member" if pos == 0 else f"at offset {pos}, where a record should begin"
            problems.append(f"holds bytes that belong to no record {where}")
            break
        if step is None:  # a record cut short, or one whose data cannot be skipped safely: nothing more to walk
            break
        pos += step
    return list(dict.fromkeys(problems))


def _raw_name(info: zipfile.ZipInfo) -> bytes:
    return info.orig_filename.encode("utf-8" if info.flag_bits & zf.FLAG_UTF8 else "cp437")


def _local(fd: int, pos: int, by_name: dict[bytes, zipfile.ZipInfo], seen: set[bytes],
           problems: list[str]) -> int | None:
    header = os.pread(fd, zf.LOCAL.size, pos)
    if len(header) < zf.LOCAL.size:
        problems.append(f"a local header at offset {pos} is cut short")
        return None
    (_sig, _version, flags, method, _time, _date, crc, csize, usize, name_len,
     extra_len) = zf.LOCAL.unpack(header)
    name = os.pread(fd, name_len, pos + zf.LOCAL.size)
    extra = os.pread(fd, extra_len, pos + zf.LOCAL.size + name_len)
    shown = name.decode("utf-8", "replace")
    _name_and_extras(name, extra, "local header", problems)
    if name in seen:
        problems.append(f"member {shown!r} has two local headers")
    seen.add(name)
    info = by_name.get(name)
    if info is None:
        problems.append(f"member {shown!r} has a local header but no central directory entry")
        return None
    if flags & zf.FLAG_DATA_DESCRIPTOR:
        problems.append(f"member {shown!r} gives its sizes after its data (a data descriptor), so a reader that "
                        "streams the zip cannot tell where it ends")
        return None
    csize, usize = _zip64_sizes(extra, csize, usize)
    if (method, crc, csize, usize) != (info.compress_type, info.CRC, info.compress_size, info.file_size):
        problems.append(f"member {shown!r}: its local header and its central directory entry disagree "
                        f"(method, CRC or sizes)")
    return zf.LOCAL.size + name_len + extra_len + info.compress_size


def _central(fd: int, pos: int, seen: set[bytes], local: set[bytes], problems: list[str]) -> int | None:
    header = os.pread(fd, zf.CENTRAL.size, pos)
    if len(header) < zf.CENTRAL.size:
        problems.append(f"a central directory entry at offset {pos} is cut short")
        return None
    name_len, extra_len, comment_len = struct.unpack_from("<HHH", header, 28)
    name = os.pread(fd, name_len, pos + zf.CENTRAL.size)
    extra = os.pread(fd, extra_len, pos + zf.CENTRAL.size + name_len)
    shown = name.decode("utf-8", "replace")
    _name_and_extras(name, extra, "central directory entry", problems)
    if comment_len:
        problems.append(f"member {shown!r} has a comment in the central directory")
    if name in seen:
        problems.append(f"member {shown!r} has two central directory entries")
    elif name not in local:
        problems.append(f"member {shown!r} has a central directory entry but no local header before it")
    seen.add(name)
    return zf.CENTRAL.size + name_len + extra_len + comment_len


def _zip64_end(fd: int, pos: int, signature: bytes, problems: list[str]) -> int | None:
    if signature == _EOCD64_LOCATOR:
        return zf.EOCD64_LOCATOR.size
    record = os.pread(fd, zf.EOCD64.size, pos)
    if len(record) < zf.EOCD64.size:
        problems.append(f"the ZIP64 end record at offset {pos} is cut short")
        return None
    record_size = struct.unpack_from("<Q", record, 4)[0]
    if record_size != zf.EOCD64.size - 12:
        problems.append("the ZIP64 end record carries extensible data")
        return None
    return zf.EOCD64.size


def _name_and_extras(name: bytes, extra: bytes, where: str, problems: list[str]) -> None:
    shown = name.decode("utf-8", "replace")
    if any(byte in _UNPRINTABLE for byte in name):
        problems.append(f"member {shown!r} has a control character in its name ({where})")
    ids = [block_id for block_id, _ in zf.extra_blocks(extra)]
    for block_id in _ONCE_ONLY_EXTRAS:
        if ids.count(block_id) > 1:
            problems.append(f"member {shown!r} has the extra field 0x{block_id:04x} twice ({where})")


def _zip64_sizes(extra: bytes, csize: int, usize: int) -> tuple[int, int]:
    """A local header's sizes, taken from its ZIP64 field where they say 0xFFFFFFFF (uncompressed first)."""
    for block_id, data in zf.extra_blocks(extra):
        if block_id != zf.ZIP64_EXTRA_ID:
            continue
        values = list(struct.unpack_from(f"<{len(data) // 8}Q", data)) if len(data) >= 8 else []
        if usize == zf.ZIP64_LIMIT and values:
            usize = values.pop(0)
        if csize == zf.ZIP64_LIMIT and values:
            csize = values.pop(0)
    return csize, usize
