"""The RECORD file of a wheel: parsing it and checking the hashes of the members we read."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
from typing import NamedTuple

__all__ = ["Record", "RecordRow", "record_digest", "digest_field", "file_sha256", "record_rows", "render_record",
           "written_in_hex", "ACCEPTED_HASHES"]


class RecordRow(NamedTuple):
    """One row of RECORD: the member's path, ``<algo>=<urlsafe base64 digest>`` and its size in bytes
    (both empty for RECORD itself)."""

    path: str
    hash: str
    size: str

# PEP 376/427: sha256 or stronger; md5 and sha1 are not acceptable
ACCEPTED_HASHES = ("sha256", "sha384", "sha512")


def record_digest(data: bytes, algorithm: str = "sha256") -> str:
    """The RECORD form of a member's hash: <algo>=<urlsafe base64 without padding>."""
    return digest_field(algorithm, hashlib.new(algorithm, data).digest())


def digest_field(algorithm: str, digest: bytes) -> str:
    """The RECORD form of a digest already computed (for a member hashed as it streamed)."""
    return f"{algorithm}=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def written_in_hex(field: str) -> bool:
    """Whether a RECORD hash field gives its digest in hex rather than urlsafe base64 (uv_build before 0.8.13
    wrote sha256 so). Unambiguous: a digest of n bytes is 2n hex digits, and base64 of it is shorter."""
    algorithm, _, value = field.partition("=")
    if algorithm not in ACCEPTED_HASHES or len(value) != 2 * hashlib.new(algorithm).digest_size:
        return False
    return all(c in "0123456789abcdefABCDEF" for c in value)


def file_sha256(path: str | os.PathLike) -> str:
    """The hex sha256 of the file at ``path``, read a megabyte at a time."""
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


def record_rows(text: str) -> list[tuple[str, str, str]]:
    """The rows of a RECORD text in order, each padded to (path, hash, size)."""
    rows = []
    for row in csv.reader(io.StringIO(text)):
        if row:
            path, digest, size = (row + ["", ""])[:3]
            rows.append((path, digest, size))
    return rows


def render_record(rows: list[tuple[str, str, str]]) -> bytes:
    """RECORD text for ``rows``: CSV with newline line ends, as bdist_wheel writes it.

    Written by hand: csv.writer with "\n" line ends leaves a carriage return in a name unquoted (Python
    3.11), and csv.reader then refuses the RECORD it wrote.
    """
    return "".join(",".join(map(_csv_field, row)) + "\n" for row in rows).encode("utf-8")


def _csv_field(value: object) -> str:
    text = str(value)
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


class Record:
    """The rows of RECORD: path -> (hash field, size field)."""

    def __init__(self, rows: dict[str, tuple[str, str]]) -> None:
        self.rows = rows

    @classmethod
    def parse(cls, text: str) -> Record:
        rows = {}
        for row in csv.reader(io.StringIO(text)):
            if row:
                rows[row[0]] = (row[1] if len(row) > 1 else "", row[2] if len(row) > 2 else "")
        return cls(rows)

    def algorithm(self, path: str) -> str:
        """The hash algorithm RECORD uses for ``path`` (sha256 when it names none we accept)."""
        algo = self.rows.get(path, ("", ""))[0].partition("=")[0]
        return algo if algo in ACCEPTED_HASHES else "sha256"

    def check(self, path: str, digest: str) -> str | None:
        """None if ``digest`` (computed with ``algorithm(path)``) matches RECORD, else what is wrong."""
        if path not in self.rows:
            return "has no RECORD entry"
        expected = self.rows[path][0]
        if not expected:
            return "has no hash in RECORD"
        if expected.partition("=")[0] not in ACCEPTED_HASHES:
            return f"has an unacceptable RECORD hash ({expected.partition('=')[0]})"
        if expected.rstrip("=") != digest:  # base64 padding is no part of the hash, and installers ignore it
            return f"content does not match its RECORD hash ({expected} recorded, {digest} found)"
        return None

    def matches_in_hex(self, path: str, digest: str) -> bool:
        """Whether RECORD gives ``digest`` (a RECORD hash field) for ``path``, written in hex."""
        expected = self.rows.get(path, ("", ""))[0]
        if not written_in_hex(expected) or expected.partition("=")[0] != digest.partition("=")[0]:
            return False
        raw = base64.urlsafe_b64decode(digest.partition("=")[2] + "==")
        return expected.partition("=")[2].lower() == raw.hex()
