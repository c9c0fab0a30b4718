"""Zips written field by field, so a test can make any header say anything.

``explode(zip_bytes)`` turns a valid zip (written by zipfile) into ``RawMember``s that keep each member's
stored (compressed) bytes; change any field of a member, local or central, and ``assemble`` writes the
zip back. Sizes, CRCs and offsets are computed unless a field overrides them, so a shape changes exactly
what it means to change.
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass, field, replace

__all__ = ["RawMember", "Archive", "explode", "assemble", "stored_member", "deflated_member"]

LOCAL = struct.Struct("<IHHHHHIIIHH")
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
EOCD = struct.Struct("<IHHHHIIH")
EOCD64 = struct.Struct("<IQHHIIQQQQ")
EOCD64_LOCATOR = struct.Struct("<IIQI")
U32 = 0xFFFFFFFF


@dataclass
class RawMember:
    name: bytes
    payload: bytes  # the bytes after the local header, as stored (compressed)
    method: int = 8
    flags: int = 0
    crc: int = 0
    file_size: int = 0
    compress_size: int | None = None  # None: len(payload)
    version_needed: int = 20
    version_made: int = (3 << 8) | 20  # Unix
    external_attr: int = 0o100644 << 16
    extra: bytes = b""  # central directory extra field (a zip64 block is added when a value needs it)
    local_extra: bytes = b""
    comment: bytes = b""
    dos_time: int = 0
    dos_date: int = (40 << 9) | (2 << 5) | 2
    # the local header says the same unless told otherwise (field name -> value)
    local: dict = field(default_factory=dict)
    header_offset: int | None = None  # None: where the local header really is
    zip64: bool = False  # write sizes and offset in a zip64 extra block even when they fit

    @property
    def stored_size(self) -> int:
        return len(self.payload) if self.compress_size is None else self.compress_size


@dataclass
class Archive:
    members: list[RawMember]
    comment: bytes = b""
    prefix: bytes = b""  # bytes before the first local header (a self-extractor stub)
    between: bytes = b""  # bytes between the last member and the central directory
    eocd: dict = field(default_factory=dict)  # overrides: entries, cd_size(_delta), cd_offset, disk, cd_disk
    zip64_eocd: bool = False  # write the zip64 end records even when nothing needs them

    def copy(self) -> Archive:
        return replace(self, members=[replace(m, local=dict(m.local)) for m in self.members], eocd=dict(self.eocd))

    def member(self, suffix: str) -> RawMember:
        """The first member whose name ends with ``suffix``."""
        return next(m for m in self.members if m.name.decode("utf-8", "replace").endswith(suffix))


def stored_member(name: str | bytes, data: bytes, **fields) -> RawMember:
    name = name.encode() if isinstance(name, str) else name
    return RawMember(name=name, payload=data, method=0, crc=zlib.crc32(data), file_size=len(data), **fields)


def deflated_member(name: str | bytes, data: bytes, **fields) -> RawMember:
    name = name.encode() if isinstance(name, str) else name
    squeeze = zlib.compressobj(6, zlib.DEFLATED, -15)
    payload = squeeze.compress(data) + squeeze.flush()
    return RawMember(name=name, payload=payload, method=8, crc=zlib.crc32(data), file_size=len(data), **fields)


def explode(data: bytes) -> Archive:
    """The members of a valid zip, each with its stored bytes and header fields."""
    members = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            fields = LOCAL.unpack_from(data, info.header_offset)
            start = info.header_offset + LOCAL.size + fields[9] + fields[10]
            members.append(RawMember(
                name=info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437"),
                payload=data[start:start + info.compress_size], method=info.compress_type, flags=info.flag_bits,
                crc=info.CRC, file_size=info.file_size, version_needed=info.extract_version,
                version_made=(info.create_system << 8) | info.create_version, external_attr=info.external_attr,
                dos_time=fields[4], dos_date=fields[5]))
        comment = zf.comment
    return Archive(members, comment=comment)


def _zip64_block(values: list[int]) -> bytes:
    return struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values), *values) if values else b""


def assemble(archive: Archive) -> bytes:
    """The zip file ``archive`` describes."""
    out = bytearray(archive.prefix)
    offsets = []
    for m in archive.members:
        offsets.append(len(out))
        local = dict(method=m.method, flags=m.flags, crc=m.crc, compress_size=m.stored_size,
                     file_size=m.file_size, version_needed=m.version_needed, name=m.name, extra=m.local_extra,
                     time=m.dos_time, date=m.dos_date)
        local.update(m.local)
        sizes64 = m.zip64 or local["file_size"] >= U32 or local["compress_size"] >= U32
        extra = local["extra"] + (_zip64_block([local["file_size"], local["compress_size"]]) if sizes64 else b"")
        out += LOCAL.pack(0x04034B50, local["version_needed"] & 0xFFFF, local["flags"] & 0xFFFF,
                          local["method"] & 0xFFFF, local["time"] & 0xFFFF, local["date"] & 0xFFFF,
                          local["crc"] & U32, U32 if sizes64 else local["compress_size"],
                          U32 if sizes64 else local["file_size"], len(local["name"]) & 0xFFFF,
                          len(extra) & 0xFFFF)
        out += local["name"] + extra + m.payload
    out += archive.between
    cd_offset = len(out)
    for m, real_offset in zip(archive.members, offsets):
        offset = real_offset if m.header_offset is None else m.header_offset
        big = [m.zip64 or m.file_size >= U32, m.zip64 or m.stored_size >= U32, m.zip64 or offset >= U32]
        values = [v for v, b in zip((m.file_size, m.stored_size, offset), big) if b]
        extra = m.extra + _zip64_block(values)
        out += CENTRAL.pack(0x02014B50, m.version_made & 0xFFFF, m.version_needed & 0xFFFF, m.flags & 0xFFFF,
                            m.method & 0xFFFF, m.dos_time & 0xFFFF, m.dos_date & 0xFFFF, m.crc & U32,
                            U32 if big[1] else m.stored_size, U32 if big[0] else m.file_size,
                            len(m.name) & 0xFFFF, len(extra) & 0xFFFF, len(m.comment) & 0xFFFF, 0, 0,
                            m.external_attr & U32, U32 if big[2] else offset)
        out += m.name + extra + m.comment
    cd_size = len(out) - cd_offset
    eocd = dict(entries=len(archive.members), cd_size=cd_size, cd_offset=cd_offset, disk=0, cd_disk=0)
    eocd.update(archive.eocd)
    eocd["cd_size"] += eocd.pop("cd_size_delta", 0)
    need64 = archive.zip64_eocd or eocd["entries"] > 0xFFFF or eocd["cd_size"] >= U32 or eocd["cd_offset"] >= U32
    if need64:
        eocd64_at = len(out)
        out += EOCD64.pack(0x06064B50, EOCD64.size - 12, 45, 45, eocd["disk"], eocd["cd_disk"],
                           eocd["entries"], eocd["entries"], eocd["cd_size"], eocd["cd_offset"])
        out += EOCD64_LOCATOR.pack(0x07064B50, 0, eocd64_at, 1)
    out += EOCD.pack(0x06054B50, eocd["disk"] & 0xFFFF, eocd["cd_disk"] & 0xFFFF,
                     0xFFFF if need64 else eocd["entries"] & 0xFFFF, 0xFFFF if need64 else eocd["entries"] & 0xFFFF,
                     U32 if need64 else eocd["cd_size"] & U32, U32 if need64 else eocd["cd_offset"] & U32,
                     len(archive.comment) & 0xFFFF)
    out += archive.comment
    return bytes(out)
