"""The bytes of one ELF file that a streaming summary keeps: a bounded prefix and a few small ranges.

Everything else passes by once. The dynamic tables are found through the dynamic section, which linkers put
after them, so the summary cannot know where they are while they stream past; the prefix (``window``) holds
them in nearly every file. What lies outside it is fetched again through ``reread`` (for a zip member: inflated
from a checkpoint; for a file on disk: read), a range at a time, never the whole file.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator

from wheelcheck.errors import ElfFormatError

__all__ = ["SparseFile", "Reread", "WINDOW", "FILE_PIECE", "pread_range"]

WINDOW = 8 << 20  # the prefix kept: the dynamic tables of all but the largest C++ libraries end within it
RECENT = 8 << 20  # the last bytes pushed, kept too: patchelf moves tables to the end, just before .dynamic
_FETCH_ALIGN = 1 << 16
_FETCH_MIN = 1 << 18  # a fetch brings at least this much: the version chains read 16 bytes at a time
# The last ranges fetched, kept: a walk that reads two places in turn (version records in one table, their
# names at the end of the string table) would otherwise fetch each again at every step. A fetch larger
# than the byte bound is kept alone.
_CACHED_RANGES = 4
_CACHED_BYTES = 4 * _FETCH_MIN

# reread(offset, size): the bytes [offset, offset + size) in pieces, in order
Reread = Callable[[int, int], Iterator[bytes]]
FILE_PIECE = 1 << 20  # a file on disk is read this much at a time


def pread_range(fd: int, size: int, offset: int, length: int) -> Iterator[bytes]:
    """A ``Reread`` for an open file of ``size`` bytes (``partial(pread_range, fd, size)``): positional reads,
    so threads may share ``fd``; stops early where the file does."""
    end = min(offset + length, size)
    while offset < end:
        piece = os.pread(fd, min(FILE_PIECE, end - offset), offset)
        if not piece:
            return
        yield piece
        offset += len(piece)


class SparseFile:
    """A file of ``size`` bytes, pushed in order; reads of kept bytes are slices, the rest is fetched again."""

    def __init__(self, size: int, reread: Reread, window: int = WINDOW) -> None:
        self.size = size
        self.position = 0  # bytes pushed so far
        self._reread = reread
        self._window_limit = window
        self._window = bytearray()
        self._ranges: list[tuple[int, int, bytearray]] = []  # (start, end, bytes of [start, start + len))
        self._cache: list[tuple[int, bytes]] = []  # (offset, bytes) of the last ranges fetched, newest last
        self._recent: deque[tuple[int, bytes]] = deque()  # (offset, piece) of the last RECENT bytes pushed
        self._recent_bytes = 0

    @property
    def prefix_limit(self) -> int:
        """Where the kept prefix ends (the file's end if it is shorter)."""
        return min(self._window_limit, self.size)

    @classmethod
    def whole(cls, data: bytes) -> SparseFile:
        """A file already in memory: every read is a slice of ``data``."""
        sparse = cls(len(data), lambda offset, size: iter((data[offset:offset + size],)), window=len(data))
        sparse._window = data  # type: ignore[assignment]
        sparse.position = len(data)
        return sparse

    def push(self, piece: bytes) -> None:
        start, end = self.position, self.position + len(piece)
        if end > self.size:
            raise ElfFormatError(f"more than the {self.size} bytes declared")
        if start < self._window_limit:
            self._window += piece[: self._window_limit - start]
        for first, last, kept in self._ranges:
            at = first + len(kept)
            if at < last and start <= at < end:
                kept += piece[at - start: min(last, end) - start]
        if end > self._window_limit:
            self._recent.append((start, piece))
            self._recent_bytes += len(piece)
            while self._recent and self._recent_bytes - len(self._recent[0][1]) >= RECENT:
                self._recent_bytes -= len(self._recent.popleft()[1])
        self.position = end

    def keep(self, start: int, end: int) -> None:
        """Keep [start, end) as it passes (its part already passed is fetched now)."""
        end = min(end, self.size)
        if start >= end or end <= len(self._window):
            return
        kept = bytearray(self.read(start, min(end, self.position) - start)) if start < self.position else bytearray()
        self._ranges.append((start, end, kept))

    def release(self) -> None:
        """Drop everything kept: the summary is made."""
        self.release_prefix()
        self._ranges = []
        self._recent = deque()

    def release_prefix(self) -> None:
        """Drop the kept prefix and the last ranges fetched (the small kept ranges stay)."""
        if self.position >= self._window_limit:  # no more pushes into it
            self._window = bytearray()
        self._cache = []

    def read(self, offset: int, size: int) -> bytes:
        """Bytes [offset, offset + size); ElfFormatError if any lies outside the file."""
        end = offset + size
        if offset < 0 or size < 0 or end > self.size:
            raise ElfFormatError(f"{size} bytes at offset {offset} lie outside the file ({self.size} bytes)")
        if end <= len(self._window):
            return self._window[offset:end]
        for first, _last, kept in self._ranges:
            if first <= offset and end <= first + len(kept):
                return kept[offset - first: end - first]
        recent = self._from_recent(offset, end)
        if recent is not None:
            return recent
        for at, cached in reversed(self._cache):
            if at <= offset and end <= at + len(cached):
                return cached[offset - at: end - at]
        at = offset - offset % _FETCH_ALIGN
        stop = min(self.size, max(end, at + _FETCH_MIN))
        cached = b"".join(self._reread(at, stop - at))
        if len(cached) != stop - at:
            raise ElfFormatError(f"could not read {stop - at} bytes at offset {at} again")
        self._remember(at, cached)
        return cached[offset - at: end - at]

    def _remember(self, at: int, cached: bytes) -> None:
        ranges = self._cache + [(at, cached)]
        while len(ranges) > 1 and (len(ranges) > _CACHED_RANGES or sum(len(c) for _a, c in ranges) > _CACHED_BYTES):
            del ranges[0]
        self._cache = ranges  # one assignment: another thread may be reading the list

    def _from_recent(self, offset: int, end: int) -> bytes | None:
        """[offset, end) from the last bytes pushed, if they hold all of it."""
        recent = list(self._recent)  # a snapshot: the stream may push while another thread reads
        if not recent or offset < recent[0][0] or end > recent[-1][0] + len(recent[-1][1]):
            return None
        parts = [piece[max(offset - at, 0):end - at] for at, piece in recent if at < end and at + len(piece) > offset]
        return b"".join(parts)

    def span(self, start: int, end: int) -> tuple[bytes, int]:
        """(buffer, shift): the bytes [start, end) at buffer[start - shift: end - shift], in one buffer.

        A span within the kept prefix is the prefix itself (no copy); any other is assembled once.
        """
        if start < 0 or end > self.size or start > end:
            raise ElfFormatError(f"bytes {start}..{end} lie outside the file ({self.size} bytes)")
        if end <= len(self._window):
            return self._window, 0
        buffer = bytearray(end - start)
        view, at = memoryview(buffer), 0
        for piece in self.pieces(start, end):
            view[at:at + len(piece)] = piece
            at += len(piece)
        return buffer, start

    def pieces(self, start: int, end: int) -> Iterator[bytes]:
        """[start, end) in pieces of at most a few megabytes, kept or fetched again; ElfFormatError past the end.

        The kept prefix is taken now: ``release`` may be called while the pieces are still being read.
        """
        if start < 0 or end > self.size or start > end:
            raise ElfFormatError(f"bytes {start}..{end} lie outside the file ({self.size} bytes)")
        return self._pieces(self._window, start, end)

    def _pieces(self, window: bytes, start: int, end: int) -> Iterator[bytes]:
        step = 8 << 20
        while start < min(end, len(window)):
            stop = min(end, len(window), start + step)
            yield window[start:stop]
            start = stop
        del window  # past the prefix: let it go
        while start < end:
            kept = next(((first, data) for first, _last, data in self._ranges
                         if first <= start < first + len(data)), None)
            if kept is not None:  # kept as it passed
                first, data = kept
                stop = min(end, first + len(data))
                yield data[start - first:stop - first]
                start = stop
                continue
            recent = list(self._recent)
            if recent and recent[0][0] <= start < recent[-1][0] + len(recent[-1][1]):
                stop = min(end, recent[-1][0] + len(recent[-1][1]))
                piece = self._from_recent(start, stop)
                if piece is not None:  # else the stream moved on meanwhile: fetch it again below
                    yield piece
                    start = stop
                    continue
            stop = min([end] + [first for first, _last, _data in self._ranges if start < first < end]
                       + [at for at, _piece in recent if start < at < end])
            got = 0
            for piece in self._reread(start, stop - start):
                got += len(piece)
                yield piece
            if got != stop - start:
                raise ElfFormatError(f"could not read {stop - start} bytes at offset {start} again")
            start = stop
