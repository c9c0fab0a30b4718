"""The census's Parquet output: three tables (wheels, findings, elf_files), each a directory of parts.

A batch is written as one part per table, the wheels part last and each renamed into place whole, so a wheel
row on disk means its findings and ELF rows are there too. A run killed mid-batch leaves at most finding or
ELF parts with no wheels part of the same name; the next run removes them before it starts.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from wheelcheck.census.sources import source_key
from wheelcheck.errors import OutputError

__all__ = ["SCHEMAS", "TABLES", "Done", "ParquetSink", "read_done"]

_families = pa.list_(pa.struct([("family", pa.string()), ("symbols", pa.int64())]))
_strings = pa.list_(pa.string())

SCHEMAS: dict[str, pa.Schema] = {
    "wheels": pa.schema([
        ("sha256", pa.string()), ("source", pa.string()), ("filename", pa.string()), ("size", pa.int64()),
        ("declared_sha256", pa.string()), ("name", pa.string()), ("version", pa.string()), ("claimed_tags", _strings),
        ("deserved_tag", pa.string()),
        ("required_tag", pa.string()), ("passed", pa.bool_()), ("pure", pa.bool_()), ("arch", pa.string()),
        ("libc", pa.string()), ("cxx_abi", pa.string()), ("elf_files", pa.int64()),
        ("exported_symbols", pa.int64()), ("family_exports", _families), ("sbom_components", _strings),
        ("findings", pa.int64()), ("errors", pa.int64()), ("audit_seconds", pa.float64()), ("audit_cpu_seconds", pa.float64()),
        ("audited_at", pa.string()), ("wheelcheck_version", pa.string()), ("error", pa.string()),
    ]),
    "findings": pa.schema([
        ("sha256", pa.string()), ("filename", pa.string()), ("rule", pa.string()), ("severity", pa.string()),
        ("file", pa.string()), ("message", pa.string()), ("hint", pa.string()), ("symbols", _strings),
        ("limit_tag", pa.string()),
    ]),
    "elf_files": pa.schema([
        ("sha256", pa.string()), ("filename", pa.string()), ("path", pa.string()), ("arch", pa.string()),
        ("soname", pa.string()), ("needed", _strings), ("rpath", _strings), ("runpath", _strings),
        ("is_extension", pa.bool_()), ("isa_level", pa.int64()), ("exported_symbols", pa.int64()),
        ("cxx_abi", pa.string()), ("family_exports", _families),
        ("version_needs", pa.list_(pa.struct([("library", pa.string()), ("version", pa.string()),
                                              ("symbols", _strings)]))),
    ]),
}
TABLES = ("findings", "elf_files", "wheels")  # the order a batch is written in: wheels last


def _parts(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.parquet")) if directory.is_dir() else []


@dataclass
class Done:
    """What an output directory already holds: the key of every wheel row (``sources.source_key``), and the
    sha256 of every wheel audited without error, whose findings and ELF rows are written."""

    keys: set[tuple[str, ...]] = field(default_factory=set)
    hashes: set[str] = field(default_factory=set)


_KEY_COLUMNS = ("sha256", "source", "filename", "declared_sha256", "error")


def read_done(out_dir: str | Path) -> Done:
    done = Done()
    for part in _parts(Path(out_dir) / "wheels"):
        names = set(pq.read_schema(part).names)
        rows = pq.read_table(part, columns=[c for c in _KEY_COLUMNS if c in names]).to_pylist()
        for row in rows:
            done.keys.add(source_key(row["source"] or "", row["filename"] or "", row["sha256"],
                                     row.get("declared_sha256")))
            if row["sha256"] and row.get("error") is None:
                done.hashes.add(row["sha256"])
    return done


class ParquetSink:
    """Collects rows and writes them out a batch at a time (every ``batch_size`` wheels or ``batch_seconds``)."""

    def __init__(self, out_dir: str | Path, batch_size: int = 200, batch_seconds: float = 30.0) -> None:
        self.out_dir = Path(out_dir)
        self.batch_size = batch_size
        self.batch_seconds = batch_seconds
        # unique per sink: two runs of one process within a second must not write the same part names
        self.run = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}-{secrets.token_hex(4)}"
        self.parts = 0
        self.rows: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
        self.pending = 0
        self.last_flush = time.monotonic()
        try:
            for table in TABLES:
                (self.out_dir / table).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(str(self.out_dir), f"cannot create the output directory ({exc.strerror or exc})") \
                from None
        self._remove_orphans()

    def _remove_orphans(self) -> None:
        committed = {p.name for p in _parts(self.out_dir / "wheels")}
        for table in ("findings", "elf_files"):
            for part in _parts(self.out_dir / table):
                if part.name not in committed:
                    part.unlink()

    def add(self, rows: dict[str, list[dict[str, Any]]]) -> None:
        for table in TABLES:
            self.rows[table].extend(rows.get(table, ()))
        self.pending += 1
        if self.pending >= self.batch_size or time.monotonic() - self.last_flush >= self.batch_seconds:
            self.flush()

    def flush(self) -> None:
        self.last_flush = time.monotonic()
        if not self.pending:
            return
        name = f"part-{self.run}-{self.parts:05d}.parquet"
        for table in TABLES:
            self._write(table, name, self.rows[table])
            self.rows[table] = []
        self.parts += 1
        self.pending = 0

    def _write(self, table: str, name: str, rows: Iterable[dict[str, Any]]) -> None:
        schema = SCHEMAS[table]
        data = pa.Table.from_pylist([{k: row.get(k) for k in schema.names} for row in rows], schema=schema)
        final = self.out_dir / table / name
        tmp = final.with_name(f".{name}.tmp")
        try:
            pq.write_table(data, tmp, compression="zstd")
            os.replace(tmp, final)
        except OSError as exc:
            raise OutputError(str(final), f"cannot write the table part ({exc.strerror or exc})") from None
