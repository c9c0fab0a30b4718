"""Open a wheel safely and read members straight from the zip, never unpacking to disk."""

from __future__ import annotations

import csv
import os
import re
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path

from wheelcheck.errors import BadWheelError
from wheelcheck.wheel._zipformat import FLAG_ENCRYPTED, UNICODE_PATH_EXTRA_ID, extra_blocks, lzma_dictionary_size
from wheelcheck.wheel.member_stream import MEMBER_ERRORS, MemberStream
from wheelcheck.wheel.record import Record
from wheelcheck.wheel.wheel_filename import InvalidWheelFilename, parse_wheel_filename
from wheelcheck.wheel import _zlib

__all__ = ["WheelReader", "MAX_MEMBER_SIZE", "MAX_TOTAL_SIZE", "MAX_RATIO"]

MAX_MEMBER_SIZE = 8 << 30  # the largest real wheel members (CUDA libraries) are ~2-3 GiB
MAX_TOTAL_SIZE = 32 << 30
MAX_RATIO = 1000  # deflate tops out near 1032:1, reached only by runs of zeros: no real member
RATIO_FLOOR = 16 << 20  # small members may have any ratio
MAX_LZMA_DICTIONARY = 256 << 20  # xz's largest preset uses 64 MiB; the decoder allocates what is claimed
MAX_TEXT_SIZE = 64 << 20  # METADATA, WHEEL, RECORD: the largest real ones are a few MB
SO_NAME = re.compile(r"\.so(\.\d+)*$")
_DRIVE = re.compile(r"[A-Za-z]:")
_SEPARATORS = re.compile(r"[/\\]")


class WheelReader:
    """A wheel opened for reading. Every member name and size has been checked on open."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.filename = self.path.name
        if not self.path.exists():  # said first: a missing file's name is beside the point
            raise BadWheelError(str(path), "no such file")
        try:
            parsed = parse_wheel_filename(self.filename)
        except InvalidWheelFilename as exc:
            raise BadWheelError(str(path), f"not a wheel filename ({exc})") from None
        self.name, self.version, self.build, self.tags = parsed.name, parsed.version, parsed.build, parsed.tags
        self.variant_label = parsed.variant_label  # PEP 825; None for a non-variant wheel
        self._zip = _open_zip(self.path)
        self.members = _checked_members(str(path), self._zip)
        # members a Unix zip tool stored as symbolic links (their data is the target's path); installers write
        # them as regular files holding that path, and so are they read here: never followed
        self.links = frozenset(m.filename for m in self.members if _is_link(m))
        self.entries = self._zip.infolist()  # every entry, directories too, in central-directory order
        self.comment = self._zip.comment
        self._by_name = {m.filename: m for m in self.members}
        try:
            self._fd = os.open(self.path, os.O_RDONLY)  # for pread: members stream from any thread
        except OSError as exc:
            self._zip.close()
            raise BadWheelError(str(path), f"cannot read the zip ({exc.strerror or exc})") from None

    def close(self) -> None:
        self._zip.close()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def fileno(self) -> int:
        """The open wheel's file descriptor, for positional reads and raw copies (never moved by them)."""
        fp = self._zip.fp
        assert fp is not None, "read after the wheel was closed"  # a bug, not bad input
        return fp.fileno()

    def __enter__(self) -> WheelReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def dist_info(self) -> str:
        """The .dist-info directory name, found by its WHEEL file."""
        for m in self.members:
            parts = m.filename.split("/")
            if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "WHEEL":
                return parts[0]
        raise BadWheelError(str(self.path), "no .dist-info/WHEEL file")

    def data_dir(self) -> str:
        return self.dist_info[: -len(".dist-info")] + ".data"

    def file_sizes(self) -> dict[str, int]:
        return {m.filename: m.file_size for m in self.members}

    def head(self, name: str, size: int = 4) -> bytes:
        """The first ``size`` bytes of a member, inflating no more of it than that."""
        return self.stream(name).head(size)

    def stream(self, name: str) -> MemberStream:
        """The member's bytes in bounded pieces, checked against its declared size (and CRC, see MemberStream)."""
        info = self._by_name[name]
        if info.compress_type == zipfile.ZIP_LZMA:
            self._check_lzma(info)
        return MemberStream(str(self.path), self._fd, info, self._zip)

    def pieces(self, name: str) -> Iterator[bytes]:
        """The member's bytes in pieces, each checked as it comes (size) and all at the end (CRC)."""
        stream = self.stream(name)
        crc = 0
        for piece in stream:
            crc = _zlib.crc32(piece, crc)
            yield piece
        stream.check_crc(crc)

    def read(self, name: str) -> bytes:
        """The whole member in memory, for the small ones (metadata, Python files). The buffer grows with the
        bytes actually inflated, never with the size a header declares."""
        buffer = bytearray()
        for piece in self.pieces(name):
            buffer += piece
        return buffer  # a bytearray: no second copy

    def extract(self, name: str, dest: str | os.PathLike) -> None:
        """Write the member to the file ``dest`` in pieces (memory: one piece). Raises OSError on write."""
        with open(dest, "wb") as out:
            for piece in self.pieces(name):
                out.write(piece)

    def read_text(self, name: str) -> str:
        size = self._by_name[name].file_size
        if size > MAX_TEXT_SIZE:
            raise BadWheelError(str(self.path), f"{name!r} declares {size} bytes, too many for a metadata file")
        try:
            return self.read(name).decode("utf-8")
        except UnicodeDecodeError:
            raise BadWheelError(str(self.path), f"{name!r} is not UTF-8 text") from None

    def record(self) -> Record:
        name = f"{self.dist_info}/RECORD"
        if name not in self._by_name:
            return Record({})
        try:
            return Record.parse(self.read_text(name))
        except csv.Error as exc:
            raise BadWheelError(str(self.path), f"{name!r} is not valid CSV ({exc})") from None

    def metadata_text(self, basename: str) -> str | None:
        name = f"{self.dist_info}/{basename}"
        return self.read_text(name) if name in self._by_name else None

    def _check_lzma(self, info: zipfile.ZipInfo) -> None:
        """Refuse an LZMA member whose header claims a dictionary the decoder would allocate in full."""
        with open(self.path, "rb") as f:
            claimed = _guard(self.path, info.filename, lambda: lzma_dictionary_size(f, info.header_offset))
        if claimed is not None and claimed > MAX_LZMA_DICTIONARY:
            raise BadWheelError(str(self.path), f"member {info.filename!r} claims an LZMA dictionary of {claimed} "
                                                f"bytes (more than {MAX_LZMA_DICTIONARY})")


def _guard(path: Path, name: str, action):
    try:
        return action()
    except MEMBER_ERRORS as exc:
        raise BadWheelError(str(path), f"cannot read member {name!r} (truncated or corrupt: {exc})") from None


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except FileNotFoundError:
        raise BadWheelError(str(path), "no such file") from None
    except IsADirectoryError:
        raise BadWheelError(str(path), "is a directory, not a wheel") from None
    except zipfile.BadZipFile as exc:
        raise BadWheelError(str(path), _zip_problem(path, exc)) from None
    except NotImplementedError as exc:  # a central directory entry needs a zip version zipfile lacks
        raise BadWheelError(str(path), f"unsupported zip feature ({exc})") from None
    except (OSError, EOFError, ValueError, OverflowError) as exc:
        raise BadWheelError(str(path), f"cannot read the zip ({exc})") from None


def _zip_problem(path: Path, exc: Exception) -> str:
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic == b"PK\x03\x04":
        return f"truncated or corrupt zip: the central directory is missing or damaged ({exc})"
    return "not a zip file"


def _checked_members(path: str, zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    seen: set[str] = set()
    total = 0
    members = []
    for info in zf.infolist():
        name = info.filename
        problem = _name_problem(info.orig_filename) or _second_name_problem(info)
        if problem:
            raise BadWheelError(path, f"member {info.orig_filename!r}: {problem}")
        if name in seen:
            raise BadWheelError(path, f"member {name!r} appears twice")
        seen.add(name)
        if info.flag_bits & FLAG_ENCRYPTED:
            raise BadWheelError(path, f"member {name!r} is encrypted (installers cannot read it)")
        if info.file_size > MAX_MEMBER_SIZE:
            raise BadWheelError(path, f"member {name!r} declares an absurd size of {info.file_size} bytes")
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            ratio = info.file_size // max(info.compress_size, 1)
            raise BadWheelError(path, f"member {name!r} declares a compression ratio of {ratio}:1 (zip bomb)")
        total += info.file_size
        if total > MAX_TOTAL_SIZE:
            raise BadWheelError(path, f"members declare more than {MAX_TOTAL_SIZE} bytes in all (zip bomb)")
        if not name.endswith("/"):
            members.append(info)
    return members


def _is_link(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


def _second_name_problem(info: zipfile.ZipInfo) -> str | None:
    """A name that differs from the header's: zipfile's own (cut at a NUL, or, on newer Pythons, taken from the
    Unicode Path extra field) or the Unicode Path field's, which unzip and other readers prefer. The name
    checked must be the name every reader sees, and the one a repair writes."""
    if info.filename != info.orig_filename:
        return f"the zip reader reads it as {info.filename!r}"
    for block_id, data in extra_blocks(info.extra):
        if block_id == UNICODE_PATH_EXTRA_ID:
            unicode_name = data[5:].decode("utf-8", "replace")
            if unicode_name != info.orig_filename:
                return f"its Unicode Path extra field names it {unicode_name!r}"
    return None


def _name_problem(name: str) -> str | None:
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return "absolute path"
    parts = _SEPARATORS.split(name)
    if ".." in parts:
        return "path escapes the wheel with '..'"
    if "\0" in name:
        return "NUL byte in the name"
    return None


def looks_like_shared_object(name: str) -> bool:
    """Named like a shared library or extension (libfoo.so.1.2, mod.cpython-311-x86_64-linux-gnu.so)."""
    return bool(SO_NAME.search(name.rsplit("/", 1)[-1]))
