"""CUDA device code in a host ELF file: the GPU architectures of the cubins and PTX in its fatbins.

nvcc links each compilation unit's device code into the host file as a fatbin container, in the read-only
section ``.nv_fatbin`` (``__nv_relfatbin`` for relocatable device code), which the CUDA runtime hands to the
driver. NVIDIA does not document the container; its layout, as the runtime and tools that read it use it and
as nvcc 13.0 writes it (tests/test_variant_gpu.py builds the cases)::

    container  u32 magic 0xBA55ED50, u16 version 1, u16 header size (16), u64 size of the entries after it
    entry      u16 kind (1 PTX, 2 ELF cubin), u16 version (0x0101), u32 header size (64 and more),
               u64 payload size, ... u32 architecture at byte 28 (90 for sm_90 / compute_90), ...
               u64 flags at byte 40 (0x100000: arch-specific code, sm_90a; 0x200000: family code, sm_100f)

Containers are found by their magic (with the version and header size, 8 bytes) as the read-only segments
stream past, and walked entry by entry: only the headers are read, the payloads (compressed or not) are
stepped over. A header that does not hold together ends that container's walk; the search goes on after it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["GpuCode", "DeviceImage", "FatbinScanner", "MAGIC"]

MAGIC = b"\x50\xed\x55\xba\x01\x00\x10\x00"  # 0xBA55ED50, version 1, header size 16, little-endian
_CONTAINER = struct.Struct("<IHHQ")
_ENTRY_FIXED = 48  # the part of an entry header read: through the flags at byte 40
_KINDS = {1: "ptx", 2: "sass"}
_ARCH_SPECIFIC, _FAMILY = 0x100000, 0x200000
_MAX_ENTRY_HEADER = 1 << 12  # nvcc 13 writes 64 to 112 bytes
_MAX_IMAGES = 512  # distinct (kind, arch, suffix): real files carry a few dozen
_MAX_ARCH = 10_000  # sm_1000 would be far beyond any GPU: a larger number is no architecture


@dataclass(frozen=True, order=True)
class DeviceImage:
    """One kind of device code a fatbin carries: SASS (a cubin, real code) or PTX, for one architecture."""

    kind: str  # sass, ptx
    arch: int  # 90: compute capability 9.0; 121: 12.1
    suffix: str = ""  # a: arch-specific (runs on that exact GPU); f: family-specific

    @property
    def major(self) -> int:
        return self.arch // 10

    @property
    def minor(self) -> int:
        return self.arch % 10

    def __str__(self) -> str:
        return f"{'sm' if self.kind == 'sass' else 'compute'}_{self.arch}{self.suffix}"

    def runs_on(self, major: int, minor: int) -> bool:
        """Does a GPU of compute capability major.minor run this code (the SASS directly, the PTX through the
        driver's JIT compiler)? SASS runs on its own major version at its minor or later; arch-specific code
        only on its exact GPU; PTX on its compute capability and every later one."""
        if self.suffix == "a":
            return (major, minor) == (self.major, self.minor)
        if self.kind == "sass" or self.suffix == "f":
            return major == self.major and minor >= self.minor
        return (major, minor) >= (self.major, self.minor)


@dataclass(frozen=True)
class GpuCode:
    """The device code of one host ELF file."""

    images: tuple[DeviceImage, ...]  # sorted, distinct
    containers: int  # fatbin containers found

    def to_dict(self) -> dict:
        return {"sass": [str(i) for i in self.images if i.kind == "sass"],
                "ptx": [str(i) for i in self.images if i.kind == "ptx"], "containers": self.containers}


class FatbinScanner:
    """Finds fatbin containers in the file bytes [start, end) fed to it in order, piece by piece."""

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end
        self.containers = 0
        self.images: set[DeviceImage] = set()
        self._search_from = start  # searching for a container from here; None while reading a header
        self._carry = b""  # the last bytes searched, for a magic cut between two pieces
        self._carry_at = start
        self._want: int | None = None  # where the header being read starts
        self._need = 0
        self._header = bytearray()
        self._container_end = 0
        self._reading = ""  # container or entry

    def feed(self, piece: bytes, at: int) -> None:
        i, stop = max(self.start - at, 0), min(self.end - at, len(piece))
        while i < stop:
            if self._want is None:
                i = self._search(piece, at, i, stop)
            else:
                i = self._collect(piece, at, i, stop)

    def result(self) -> GpuCode | None:
        if not self.containers:
            return None
        return GpuCode(tuple(sorted(self.images)), self.containers)

    def _search(self, piece: bytes, at: int, i: int, stop: int) -> int:
        i = max(i, self._search_from - at)
        if i >= stop:
            return stop
        carry = self._carry if self._carry_at + len(self._carry) == at + i else b""
        if carry:  # a magic cut where the last piece ended
            joined = carry + bytes(piece[i:i + len(MAGIC) - 1])
            found = joined.find(MAGIC)
            if 0 <= found < len(carry):
                self._carry = b""
                self._start_header(self._carry_at + found, "container", 16)
                self._header += joined[found:len(carry)]  # the header's first bytes, from the last piece
                return i
        found = piece.find(MAGIC, i, stop)
        if found < 0:
            tail = (carry + bytes(piece[i:stop]))[-(len(MAGIC) - 1):]  # pieces may be shorter than the magic
            self._carry, self._carry_at = tail, at + stop - len(tail)
            return stop
        self._carry = b""
        self._start_header(at + found, "container", 16)
        return found

    def _start_header(self, offset: int, what: str, need: int) -> None:
        self._want, self._need, self._reading = offset, need, what
        self._header = bytearray()

    def _collect(self, piece: bytes, at: int, i: int, stop: int) -> int:
        assert self._want is not None
        here = at + i
        start = self._want + len(self._header)  # the next byte the header needs
        if here < start:
            return min(stop, i + (start - here))
        take = min(self._want + self._need - here, stop - i)
        self._header += piece[i:i + take]
        i += take
        if len(self._header) == self._need:
            self._parsed()
        return i

    def _parsed(self) -> None:
        at, header = self._want, bytes(self._header)
        assert at is not None
        self._want = None
        if self._reading == "container":
            _magic, _version, size, entries = _CONTAINER.unpack(header)
            end = at + size + entries
            if size < 16 or size > _MAX_ENTRY_HEADER or end > self.end:
                self._search_from = at + 1  # no container after all: the magic was data
                return
            self.containers += 1
            self._container_end = end
            self._next_entry(at + size)
            return
        kind, _version, size, payload = struct.unpack_from("<HHIQ", header)
        arch = struct.unpack_from("<I", header, 28)[0]
        flags = struct.unpack_from("<Q", header, 40)[0]
        following = at + size + payload
        if size < _ENTRY_FIXED or size > _MAX_ENTRY_HEADER or following > self._container_end:
            self._search_from = max(at + 1, self._container_end)  # broken: the rest of the container is skipped
            return
        if kind in _KINDS and 0 < arch < _MAX_ARCH and len(self.images) < _MAX_IMAGES:
            suffix = "a" if flags & _ARCH_SPECIFIC else "f" if flags & _FAMILY else ""
            self.images.add(DeviceImage(_KINDS[kind], arch, suffix))
        self._next_entry(following)

    def _next_entry(self, offset: int) -> None:
        if offset + _ENTRY_FIXED <= self._container_end:
            self._start_header(offset, "entry", _ENTRY_FIXED)
        else:
            self._search_from = self._container_end
