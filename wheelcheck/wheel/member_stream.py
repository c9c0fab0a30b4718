"""One zip member's bytes, inflated once, in order, in bounded pieces; and any range of them again later.

The compressed data is read straight from the file with ``os.pread`` (position-free, so several threads may
stream members of one wheel at once) and inflated with zlib (zlib-ng's where installed: ``_zlib.py``), whose
inflate runs without the GIL. While the member streams, the decompressor's state is saved every few megabytes
(a checkpoint: about 45 KB); a range needed again later (an ELF table found only when its dynamic section went
by) is inflated from the nearest checkpoint before it, not from the start. Stored members are re-read directly.

Members with another compression method (bzip2, lzma: no wheel builder writes them) go through ``zipfile``.
Every check ``zipfile`` makes on open is made here too: the local header's signature and name, encryption,
and on the data: the declared size (never more, never fewer bytes) and the CRC (see ``check_crc``).
"""

from __future__ import annotations

import bisect
import lzma
import os
import threading
import zipfile
from collections.abc import Iterator
from typing import Any

from wheelcheck.errors import BadWheelError
from wheelcheck.wheel import _zipformat as zf
from wheelcheck.wheel import _zlib

__all__ = ["MemberStream", "CHUNK", "MEMBER_ERRORS"]

CHUNK = 1 << 20  # most bytes one piece holds: the unit of memory per stream
_READ = 1 << 18  # compressed bytes read at a time: each read is one decompress call and one GIL hand-off on
# the inflating thread (64 KiB reads cost tensorflow 0.08 s more, 3 runs of 3; torch alike either way)
_MIN_CHECKPOINT_GAP = 8 << 20
_MAX_CHECKPOINTS = 256  # the gap grows on huge members: at most ~12 MB of saved states (twice that with rereads)
_REREAD_GAP = 1 << 20  # checkpoints left by a reread, this far apart
_FIRST_DATA = 256  # compressed bytes read with the local header: enough for most heads, in one read
_FLAG_PATCHED, _FLAG_STRONG = 0x20, 0x40
# What zipfile raises on a corrupt, truncated or unsupported member (a seek past 2**63, a name flagged
# UTF-8 that is not, an unknown compression method, bad LZMA or bzip2 data)
MEMBER_ERRORS: tuple[type[Exception], ...] = (zipfile.BadZipFile, *_zlib.ERRORS, lzma.LZMAError, EOFError,
                                              NotImplementedError, OSError, ValueError, OverflowError, RuntimeError)


class MemberStream:
    """Stream member ``info`` of the wheel at ``path`` (open as ``fd``, which the caller keeps open).

    Iterate for the pieces (bytes) in order, then call ``check_crc`` with their CRC-32 (the caller computes
    it as the bytes pass, often on another thread). ``reread(offset, size)`` yields a range again.
    """

    def __init__(self, path: str, fd: int, info: zipfile.ZipInfo, zip_file: zipfile.ZipFile | None = None) -> None:
        self.path, self.name, self.size = path, info.filename, info.file_size
        self._fd, self._info, self._zip = fd, info, zip_file
        # the local header and the first compressed bytes come in one read: a wheel of 12,000 members has
        # each one's head read to find its ELF files
        self._start, self._first = _data_start(path, fd, info)
        self._gap = max(_MIN_CHECKPOINT_GAP, info.file_size // _MAX_CHECKPOINTS)
        self._marks: list[int] = [0]  # output offsets of the checkpoints, ascending
        self._states: list[tuple[int, Any]] = [(0, None)]  # (compressed offset, decompressor copy)
        self._lock = threading.Lock()  # the first pass and rereads (another thread) both add checkpoints

    # -- the first pass

    def __iter__(self) -> Iterator[bytes]:
        method = self._info.compress_type
        if method == zipfile.ZIP_STORED:
            pieces = self._stored(0, self.size)
        elif method == zipfile.ZIP_DEFLATED:
            pieces = self._inflate(0, 0, _zlib.decompressobj(), 0, checkpoints=True)
        else:
            pieces = self._through_zipfile()
        got = 0
        for piece in pieces:
            got += len(piece)
            if got > self.size:
                raise self._error(f"holds more than the {self.size} bytes it declares")
            yield piece
        if got != self.size:
            raise self._error(f"holds {got} bytes, not the {self.size} it declares")

    def check_crc(self, crc: int) -> None:
        """Raise BadWheelError unless ``crc`` (of every byte streamed) is the one the zip records."""
        if crc != self._info.CRC:
            raise BadWheelError(self.path, f"cannot read member {self.name!r} (truncated or corrupt: "
                                           f"Bad CRC-32 for file {self.name!r})")

    def head(self, size: int) -> bytes:
        """The first ``size`` bytes (fewer if the member is shorter), inflating no more than needed."""
        size = min(size, self.size)
        method = self._info.compress_type
        if method != zipfile.ZIP_DEFLATED:
            return b"".join(self.reread(0, size))[:size]
        compressed = self._info.compress_size
        decompressor, out, want = _zlib.decompressobj(), b"", 4 * max(_FIRST_DATA, 256)
        data = self._first[:compressed]
        in_at = len(data)
        try:
            while len(out) < size and not decompressor.eof:
                if data:
                    out += decompressor.decompress(data, size - len(out))
                if len(out) >= size or in_at >= compressed or decompressor.eof:
                    break
                data = self._pread(min(want, compressed - in_at), self._start + in_at)
                if not data:
                    break
                in_at += len(data)
                want *= 4
        except _zlib.ERRORS as exc:
            raise self._error(f"(truncated or corrupt: {exc})", cannot_read=True) from None
        return out

    # -- ranges again

    def reread(self, offset: int, size: int) -> Iterator[bytes]:
        """The bytes [offset, offset + size) in pieces, inflated from the nearest checkpoint before them."""
        end = min(offset + size, self.size)
        if offset >= end:
            return
        method = self._info.compress_type
        if method == zipfile.ZIP_STORED:
            yield from self._stored(offset, end)
            return
        if method == zipfile.ZIP_DEFLATED:
            with self._lock:
                i = bisect.bisect_right(self._marks, offset) - 1
                out_at, (in_at, state) = self._marks[i], self._states[i]
            decompressor = state.copy() if state is not None else _zlib.decompressobj()
            # a range read again is often read again nearby (the strings of one table): leave finer
            # checkpoints on the way to it, so the next read starts close
            pieces = self._inflate(in_at, out_at, decompressor, out_at, checkpoints=True, gap=_REREAD_GAP)
        else:
            pieces, out_at = self._through_zipfile(), 0
        for piece in pieces:
            stop = out_at + len(piece)
            if stop > offset:
                yield piece[max(0, offset - out_at): end - out_at] if (out_at < offset or stop > end) else piece
            out_at = stop
            if out_at >= end:
                return

    def _checkpoint(self, out_at: int, in_at: int, decompressor) -> None:
        """Save the decompressor's state at output offset ``out_at`` (unless one is saved near it)."""
        with self._lock:
            i = bisect.bisect_right(self._marks, out_at)
            if out_at - self._marks[i - 1] < _REREAD_GAP or (i < len(self._marks) and
                                                             self._marks[i] - out_at < _REREAD_GAP):
                return
            if len(self._marks) >= _MAX_CHECKPOINTS * 2:
                return  # the memory they may take is spent: rereads start further back
            self._marks.insert(i, out_at)
            self._states.insert(i, (in_at, decompressor.copy()))

    # -- sources

    def _stored(self, start: int, end: int) -> Iterator[bytes]:
        if self._info.compress_size < self.size:
            raise self._error(f"holds {self._info.compress_size} bytes, not the {self.size} it declares")
        pos = start
        while pos < end:
            piece = self._pread(min(CHUNK, end - pos), self._start + pos)
            if not piece:
                raise self._error("is truncated (its data ends early)")
            yield piece
            pos += len(piece)

    def _inflate(self, in_at: int, out_at: int, decompressor, first_mark: int, *, checkpoints: bool,
                 gap: int = 0) -> Iterator[bytes]:
        compressed = self._info.compress_size
        gap = gap or self._gap
        next_mark = first_mark + gap
        try:
            while in_at < compressed and not decompressor.eof:
                data = self._pread(min(_READ, compressed - in_at), self._start + in_at)
                if not data:
                    raise self._error("is truncated (its data ends early)")
                in_at += len(data)
                while data:
                    piece = decompressor.decompress(data, CHUNK)
                    data = decompressor.unconsumed_tail
                    if piece:
                        out_at += len(piece)
                        yield piece
                if checkpoints and out_at >= next_mark and not decompressor.eof:
                    self._checkpoint(out_at, in_at, decompressor)
                    next_mark = out_at + gap
            while not decompressor.eof:  # input ended: whatever inflate still holds, in bounded pieces
                piece = decompressor.decompress(b"", CHUNK)
                if not piece:
                    break
                yield piece
        except _zlib.ERRORS as exc:
            raise self._error(f"(truncated or corrupt: {exc})", cannot_read=True) from None

    def _through_zipfile(self) -> Iterator[bytes]:
        zip_file = self._zip or zipfile.ZipFile(self.path)
        try:
            with zip_file.open(self._info) as member:
                while True:
                    piece = member.read(CHUNK)
                    if not piece:
                        return
                    yield piece
        except MEMBER_ERRORS as exc:
            raise self._error(f"(truncated or corrupt: {exc})", cannot_read=True) from None
        finally:
            if self._zip is None:
                zip_file.close()

    def _pread(self, size: int, at: int) -> bytes:
        try:
            return os.pread(self._fd, size, at)
        except (OSError, OverflowError) as exc:
            raise self._error(f"(truncated or corrupt: {exc})", cannot_read=True) from None

    def _error(self, problem: str, cannot_read: bool = False) -> BadWheelError:
        if cannot_read:
            return BadWheelError(self.path, f"cannot read member {self.name!r} {problem}")
        return BadWheelError(self.path, f"member {self.name!r} {problem}")


def _data_start(path: str, fd: int, info: zipfile.ZipInfo) -> tuple[int, bytes]:
    """Where the member's data begins, after its local header, checked as zipfile checks it on open; and the
    first (up to ``_FIRST_DATA``) bytes of the data, read with the header."""
    def bad(problem: str) -> BadWheelError:
        return BadWheelError(path, f"cannot read member {info.filename!r} (truncated or corrupt: {problem})")

    try:  # an offset past what a file position can hold raises OverflowError, not OSError
        # the local name is nearly always the central one, and its extra field short: read them all at once
        guess = zf.LOCAL.size + len(info.orig_filename.encode("utf-8")) + len(info.extra) + _FIRST_DATA
        chunk = os.pread(fd, guess, info.header_offset)
        if len(chunk) < zf.LOCAL.size:
            raise bad("Truncated file header")
        signature, _v, flags, _m, _t, _d, _c, _cs, _us, name_len, extra_len = zf.LOCAL.unpack_from(chunk)
        if signature != zf.LOCAL_SIGNATURE:
            raise bad("Bad magic number for file header")
        name_end = zf.LOCAL.size + name_len
        name = chunk[zf.LOCAL.size:name_end] if len(chunk) >= name_end or len(chunk) < guess else \
            os.pread(fd, name_len, info.header_offset + zf.LOCAL.size)
    except (OSError, OverflowError, ValueError) as exc:
        raise bad(str(exc)) from None
    try:
        decoded = name.decode("utf-8" if flags & zf.FLAG_UTF8 else "cp437")
    except UnicodeDecodeError:
        decoded = None
    if decoded != info.orig_filename:
        raise bad(f"File name in directory {info.orig_filename!r} and header {name!r} differ.")
    if info.flag_bits & (zf.FLAG_ENCRYPTED | _FLAG_STRONG):
        raise BadWheelError(path, f"member {info.filename!r} is encrypted")
    if info.flag_bits & _FLAG_PATCHED:
        raise bad("compressed patched data (flag bit 5)")
    data_at = zf.LOCAL.size + name_len + extra_len
    return info.header_offset + data_at, chunk[data_at:]

