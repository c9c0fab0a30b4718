"""A zip writer for wheels: unchanged members are copied as their compressed bytes, never re-deflated.

``ZipWriter.copy_raw`` writes a fresh local header for a member of another zip and copies its compressed
data with ``copy_file_range`` (a kernel-side copy where the filesystem allows it), so rewriting a 1 GB wheel
to change one file costs about as much as copying the file. The central directory is built in memory and
written by ``finish``; zip64 records are written only where a size, an offset or the member count needs them.
Same calls, same bytes: nothing depends on the clock, the host or the order of a dict.

``atomic_output`` gives the file to write: a hidden temporary in the destination directory, renamed over
the destination only once everything is written, and removed if anything (an exception, Ctrl-C) interrupts.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Protocol

from wheelcheck.errors import BadWheelError, OutputError
from wheelcheck.wheel import _zipformat as zf
from wheelcheck.wheel.record import RecordRow, digest_field, record_digest

__all__ = ["ZipWriter", "atomic_output", "deflate"]

_COPY_CHUNK = 8 << 20
_DEFAULT_VERSION = 20  # 2.0: deflate, directories


def deflate(data: bytes, level: int) -> bytes:
    """Raw deflate (no zlib header), as zip stores it. Deterministic for a given zlib and level."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


class HasFileno(Protocol):
    """What a raw copy reads from: a file descriptor for positional reads (a file, or an open WheelReader)."""

    def fileno(self) -> int: ...


class ZipWriter:
    """Write a zip member by member to ``out`` (an unbuffered binary file open for writing at offset 0)."""

    def __init__(self, out: BinaryIO, where: str = "zip") -> None:
        self._out = out
        self._where = where  # the output's name, for messages
        self._offset = 0
        self._central: list[bytes] = []
        self._names: set[str] = set()

    @property
    def count(self) -> int:
        return len(self._central)

    def copy_raw(self, source: HasFileno, info: zipfile.ZipInfo, source_name: str = "") -> None:
        """Copy member ``info`` of the zip open as ``source``, its compressed data untouched."""
        where = source_name or getattr(source, "name", "zip")
        if info.flag_bits & zf.FLAG_ENCRYPTED:
            raise BadWheelError(str(where), f"member {info.filename!r} is encrypted")
        header = os.pread(source.fileno(), zf.LOCAL.size, info.header_offset)
        if len(header) != zf.LOCAL.size or zf.LOCAL.unpack(header)[0] != zf.LOCAL_SIGNATURE:
            raise BadWheelError(str(where), f"member {info.filename!r}: no local header where the central directory says")
        name_len, extra_len = zf.LOCAL.unpack(header)[9:11]
        local_extra = os.pread(source.fileno(), extra_len, info.header_offset + zf.LOCAL.size + name_len)
        data_start = info.header_offset + zf.LOCAL.size + name_len + extra_len
        flags = info.flag_bits & ~zf.FLAG_DATA_DESCRIPTOR  # sizes and CRC go in the header we write
        self._begin(info.filename)
        dostime, dosdate = zf.dos_date_time(info.date_time)
        offset = self._offset
        self._write_local(_name_bytes(info), flags, info.compress_type, dostime, dosdate, info.CRC,
                          info.compress_size, info.file_size, zf.strip_extra(local_extra), info.extract_version)
        self._copy(source, data_start, info.compress_size, where, info.filename)
        self._add_central(info.create_system << 8 | info.create_version, info.extract_version, flags,
                          info.compress_type, dostime, dosdate, info.CRC, info.compress_size, info.file_size,
                          _name_bytes(info), zf.strip_extra(info.extra), info.comment, info.internal_attr,
                          info.external_attr, offset)

    def add(self, name: str, data: bytes, *, mode: int, date_time: tuple[int, int, int, int, int, int],
            level: int) -> RecordRow:
        """Write a new member: deflated at ``level``, Unix permissions ``mode`` (e.g. 0o755).

        Returns its RECORD row, hashed from the very bytes deflated and CRC'd here: the row describes what
        was written, as pypa/installer's destinations return the RecordEntry of each file.
        """
        encoded, flags = _encode_name(name)
        self._begin(name)
        compressed = deflate(data, level)  # in one call: fed in pieces, level 0 would store other blocks
        crc = zlib.crc32(data)
        row = RecordRow(name, record_digest(data), str(len(data)))
        dostime, dosdate = zf.dos_date_time(date_time)
        offset = self._offset
        self._write_local(encoded, flags, zipfile.ZIP_DEFLATED, dostime, dosdate, crc, len(compressed),
                          len(data), b"", _DEFAULT_VERSION)
        self._write(compressed)
        self._add_central(3 << 8 | _DEFAULT_VERSION, _DEFAULT_VERSION, flags, zipfile.ZIP_DEFLATED, dostime,
                          dosdate, crc, len(compressed), len(data), encoded, b"", b"", 0,
                          (stat.S_IFREG | mode) << 16, offset)
        return row

    def add_file(self, name: str, path: str | os.PathLike, *, mode: int,
                 date_time: tuple[int, int, int, int, int, int], level: int) -> RecordRow:
        """Write a new member from a file, read, hashed and deflated in pieces, in bounded memory; return its
        RECORD row, as ``add`` does. At levels 1 to 9 these are the bytes ``add`` would write for the file's
        contents (deflate's output does not depend on how its input is cut); at level 0 the stored blocks
        are cut differently, the same way every time. The local header is written first and filled in once
        the sizes and CRC are known."""
        encoded, flags = _encode_name(name)
        self._begin(name)
        dostime, dosdate = zf.dos_date_time(date_time)
        offset = self._offset
        with open(path, "rb", buffering=0) as source:
            size = os.fstat(source.fileno()).st_size
            # a zip64 block when the sizes might need it (deflate adds at most ~0.03% to stored data)
            wide = size + (size >> 10) + (1 << 16) >= zf.ZIP64_LIMIT
            header = self._local_header(encoded, flags, dostime, dosdate, 0, 0, size, wide)
            self._write(header)
            compressor, crc, csize = zlib.compressobj(level, zlib.DEFLATED, -15), 0, 0
            digest = hashlib.sha256()
            while True:
                piece = source.read(_COPY_CHUNK)
                if not piece:
                    break
                crc = zlib.crc32(piece, crc)
                digest.update(piece)
                out = compressor.compress(piece)
                csize += len(out)
                self._write(out)
            out = compressor.flush()
            csize += len(out)
            self._write(out)
        filled = self._local_header(encoded, flags, dostime, dosdate, crc, csize, size, wide)
        if os.pwrite(self._out.fileno(), filled, offset) != len(filled):
            raise OutputError(self._where, f"short write of the local header of {name!r}")
        self._add_central(3 << 8 | _DEFAULT_VERSION, _DEFAULT_VERSION, flags, zipfile.ZIP_DEFLATED, dostime,
                          dosdate, crc, csize, size, encoded, b"", b"", 0, (stat.S_IFREG | mode) << 16, offset)
        return RecordRow(name, digest_field("sha256", digest.digest()), str(size))

    def _local_header(self, name: bytes, flags: int, dostime: int, dosdate: int, crc: int, csize: int, usize: int,
                      wide: bool) -> bytes:
        """A local header as ``_write_local`` makes it; ``wide`` forces the zip64 block (sizes not yet known)."""
        extra, version = b"", _DEFAULT_VERSION
        if wide or csize >= zf.ZIP64_LIMIT or usize >= zf.ZIP64_LIMIT:
            extra = zf.zip64_extra(usize, csize)
            csize = usize = 0xFFFFFFFF
            version = zf.ZIP64_VERSION
        return zf.LOCAL.pack(zf.LOCAL_SIGNATURE, version, flags, zipfile.ZIP_DEFLATED, dostime, dosdate, crc, csize,
                             usize, len(name), len(extra)) + name + extra

    def finish(self, comment: bytes = b"") -> None:
        """Write the central directory and its end records."""
        start = self._offset
        for record in self._central:
            self._write(record)
        size = self._offset - start
        count = len(self._central)
        if count >= zf.ZIP64_COUNT_LIMIT or start >= zf.ZIP64_LIMIT or size >= zf.ZIP64_LIMIT:
            eocd64_at = self._offset
            self._write(zf.EOCD64.pack(zf.EOCD64_SIGNATURE, zf.EOCD64.size - 12, zf.ZIP64_VERSION,
                                       zf.ZIP64_VERSION, 0, 0, count, count, size, start))
            self._write(zf.EOCD64_LOCATOR.pack(zf.EOCD64_LOCATOR_SIGNATURE, 0, eocd64_at, 1))
            count = 0xFFFF if count >= zf.ZIP64_COUNT_LIMIT else count
            size = 0xFFFFFFFF if size >= zf.ZIP64_LIMIT else size
            start = 0xFFFFFFFF if start >= zf.ZIP64_LIMIT else start
        self._write(zf.EOCD.pack(zf.EOCD_SIGNATURE, 0, 0, count, count, size, start, len(comment)) + comment)

    # -- records

    def _begin(self, name: str) -> None:
        if name in self._names:
            raise OutputError(self._where, f"member {name!r} would be written twice")
        self._names.add(name)

    def _write_local(self, name: bytes, flags: int, method: int, dostime: int, dosdate: int, crc: int,
                     csize: int, usize: int, extra: bytes, version: int) -> None:
        if csize >= zf.ZIP64_LIMIT or usize >= zf.ZIP64_LIMIT:
            extra = zf.zip64_extra(usize, csize) + extra
            csize = usize = 0xFFFFFFFF
            version = max(version, zf.ZIP64_VERSION)
        self._write(zf.LOCAL.pack(zf.LOCAL_SIGNATURE, version, flags, method, dostime, dosdate, crc, csize,
                                  usize, len(name), len(extra)) + name + extra)

    def _add_central(self, made_by: int, version: int, flags: int, method: int, dostime: int, dosdate: int,
                     crc: int, csize: int, usize: int, name: bytes, extra: bytes, comment: bytes,
                     internal_attr: int, external_attr: int, offset: int) -> None:
        big = [v for v in (usize, csize, offset) if v >= zf.ZIP64_LIMIT]
        if big:  # each field too big for 32 bits reads 0xFFFFFFFF and its value moves to the zip64 block
            extra = zf.zip64_extra(*big) + extra
            usize, csize, offset = (0xFFFFFFFF if v >= zf.ZIP64_LIMIT else v for v in (usize, csize, offset))
            version = max(version, zf.ZIP64_VERSION)
        self._central.append(zf.CENTRAL.pack(
            zf.CENTRAL_SIGNATURE, made_by, version, flags, method, dostime, dosdate, crc, csize, usize,
            len(name), len(extra), len(comment), 0, internal_attr, external_attr, offset) + name + extra + comment)

    # -- bytes

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = self._out.write(view)
            view = view[written:]
        self._offset += len(data)

    def _copy(self, source: HasFileno, start: int, count: int, where: str, member: str) -> None:
        src, dst = source.fileno(), self._out.fileno()
        left, pos = count, start
        while left:
            done = _copy_range(src, dst, pos, min(left, _COPY_CHUNK))
            if done == 0:
                raise BadWheelError(where, f"member {member!r} is truncated (its data ends early)")
            left -= done
            pos += done
        self._offset += count


def _copy_range(src: int, dst: int, offset: int, count: int) -> int:
    """Copy up to ``count`` bytes from ``src`` at ``offset`` to ``dst`` at its position; bytes copied."""
    if _COPY_FILE_RANGE[0]:
        try:
            return os.copy_file_range(src, dst, count, offset)
        except OSError:
            _COPY_FILE_RANGE[0] = False  # e.g. EXDEV on older kernels, or a filesystem without it
    data = os.pread(src, count, offset)
    view = memoryview(data)
    while view:
        view = view[os.write(dst, view):]
    return len(data)


_COPY_FILE_RANGE = [hasattr(os, "copy_file_range")]  # a fact about this process, learnt on first failure


def _name_bytes(info: zipfile.ZipInfo) -> bytes:
    """The member name as the source zip stored it (zipfile decoded it as cp437 unless flagged UTF-8)."""
    return info.orig_filename.encode("utf-8" if info.flag_bits & zf.FLAG_UTF8 else "cp437")


def _encode_name(name: str) -> tuple[bytes, int]:
    try:
        return name.encode("ascii"), 0
    except UnicodeEncodeError:
        return name.encode("utf-8"), zf.FLAG_UTF8


@contextmanager
def atomic_output(path: Path) -> Iterator[BinaryIO]:
    """An unbuffered file that becomes ``path`` only if the block completes; otherwise it disappears.

    The temporary is hidden (``.NAME.*.part``) and lives beside ``path``, so the rename is atomic and an
    interrupted run never leaves a file that looks like a wheel.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb", buffering=0) as out:
            yield out
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    """The process umask, read without changing it where Linux allows (os.umask can only swap it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
