"""The byte layouts of the zip records the writer emits (APPNOTE 6.3.x), kept apart from their use."""

from __future__ import annotations

import struct

__all__ = [
    "LOCAL", "CENTRAL", "EOCD", "EOCD64", "EOCD64_LOCATOR", "ZIP64_LIMIT", "ZIP64_COUNT_LIMIT",
    "ZIP64_EXTRA_ID", "UNICODE_PATH_EXTRA_ID", "FLAG_ENCRYPTED", "FLAG_DATA_DESCRIPTOR", "FLAG_UTF8",
    "dos_date_time", "extra_blocks", "strip_extra", "zip64_extra", "lzma_dictionary_size",
]

LOCAL = struct.Struct("<IHHHHHIIIHH")  # signature .. extra length (30 bytes)
LOCAL_SIGNATURE = 0x04034B50
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")  # 46 bytes
CENTRAL_SIGNATURE = 0x02014B50
EOCD = struct.Struct("<IHHHHIIH")  # 22 bytes
EOCD_SIGNATURE = 0x06054B50
EOCD64 = struct.Struct("<IQHHIIQQQQ")  # 56 bytes
EOCD64_SIGNATURE = 0x06064B50
EOCD64_LOCATOR = struct.Struct("<IIQI")  # 20 bytes
EOCD64_LOCATOR_SIGNATURE = 0x07064B50

ZIP64_LIMIT = 0xFFFFFFFF  # a size or offset at or above this goes in a zip64 extra field
ZIP64_COUNT_LIMIT = 0xFFFF
ZIP64_EXTRA_ID = 0x0001
UNICODE_PATH_EXTRA_ID = 0x7075  # Info-ZIP's Unicode Path field: a second name, which some readers prefer
ZIP64_VERSION = 45
FLAG_ENCRYPTED = 0x0001
FLAG_DATA_DESCRIPTOR = 0x0008
FLAG_UTF8 = 0x0800


def dos_date_time(date_time: tuple[int, int, int, int, int, int]) -> tuple[int, int]:
    """(dostime, dosdate) exactly as zipfile decodes them back (two-second resolution)."""
    year, month, day, hour, minute, second = date_time
    return (hour << 11) | (minute << 5) | (second // 2), ((year - 1980) << 9) | (month << 5) | day


def extra_blocks(extra: bytes) -> list[tuple[int, bytes]]:
    """The (header id, data) blocks of an extra field, in order; a block cut short ends the list."""
    blocks, pos = [], 0
    while pos + 4 <= len(extra):
        block_id, size = struct.unpack_from("<HH", extra, pos)
        blocks.append((block_id, extra[pos + 4:pos + 4 + size]))
        pos += 4 + size
    return blocks


def strip_extra(extra: bytes, header_ids: tuple[int, ...] = (ZIP64_EXTRA_ID, UNICODE_PATH_EXTRA_ID)) -> bytes:
    """``extra`` without the blocks of ``header_ids``: we write our own zip64 block when one is needed, and no
    second name beside the one checked. A block cut short keeps what it holds, with its length made true."""
    return b"".join(struct.pack("<HH", block_id, len(data)) + data
                    for block_id, data in extra_blocks(extra) if block_id not in header_ids)


def zip64_extra(*values: int) -> bytes:
    """A zip64 extended-information block holding ``values`` (sizes, then the offset) in order."""
    return struct.pack(f"<HH{len(values)}Q", ZIP64_EXTRA_ID, 8 * len(values), *values)


def lzma_dictionary_size(f, header_offset: int) -> int | None:
    """The dictionary size an LZMA member's properties claim (the decoder allocates it up front), or
    None when the header cannot be read (zipfile then reports the damage itself)."""
    f.seek(header_offset)
    head = f.read(LOCAL.size)
    if len(head) < LOCAL.size:
        return None
    name_length, extra_length = struct.unpack_from("<HH", head, 26)
    f.seek(header_offset + LOCAL.size + name_length + extra_length)
    props = f.read(9)  # version (2 bytes), properties size (2), then lc/lp/pb (1) and the dictionary size (4)
    if len(props) < 9:
        return None
    return struct.unpack_from("<I", props, 5)[0]
