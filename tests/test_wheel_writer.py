"""The zip writer and the wheel rebuild: raw copies, zip64, data descriptors, RECORD, atomic output.

Every output is read back by zipfile (CRCs checked with testzip) and, where present, by Info-ZIP's unzip.
"""
from __future__ import annotations

import io
import random
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import DATE_TIME, build_wheel, record_hash
from wheelcheck.wheel import _zipformat
from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.wheel_rebuild import NewMember, rebuild_wheel, reproducible_date_time
from wheelcheck.wheel.wheel_writer import ZipWriter, atomic_output

TAG = "cp311-cp311-linux_x86_64"
NOW = (2024, 1, 2, 3, 4, 6)


def check_zip(path: Path) -> zipfile.ZipFile:
    zf = zipfile.ZipFile(path)
    assert zf.testzip() is None
    if shutil.which("unzip"):
        proc = subprocess.run(["unzip", "-tqq", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return zf


def compressed(path: Path, name: str) -> bytes:
    with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
        info = zf.getinfo(name)
        f.seek(info.header_offset + 26)
        n, m = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
        f.seek(info.header_offset + 30 + n + m)
        return f.read(info.compress_size)


@pytest.fixture
def wheel(tmp_path) -> Path:
    members = {
        "pkg/__init__.py": b"print('hello')\n" * 50,
        "pkg/data.bin": random.Random(1).randbytes(20_000),
        "pkg/ünïcode.txt": "non-ASCII name\n".encode(),
    }
    return build_wheel(tmp_path / "in", "pkg", "1.0", TAG, members)


def copy_all(source: Path, target: Path, **extra) -> None:
    with zipfile.ZipFile(source) as zf, open(source, "rb", buffering=0) as src, atomic_output(target) as out:
        writer = ZipWriter(out)
        for info in zf.infolist():
            writer.copy_raw(src, info)
        for name, data in extra.items():
            writer.add(name, data, mode=0o644, date_time=NOW, level=6)
        writer.finish(zf.comment)


def test_raw_copy_is_byte_identical_for_a_plain_zip(wheel, tmp_path):
    """zipfile writes no zip64 fields and no data descriptors here: a full raw copy is the same file."""
    out = tmp_path / "copy.whl"
    copy_all(wheel, out)
    assert out.read_bytes() == wheel.read_bytes()


def test_added_member_is_read_back(wheel, tmp_path):
    out = tmp_path / "added.whl"
    copy_all(wheel, out, **{"pkg/new.txt": b"new\n" * 100})
    zf = check_zip(out)
    assert zf.read("pkg/new.txt") == b"new\n" * 100
    info = zf.getinfo("pkg/new.txt")
    assert info.date_time == NOW and info.external_attr >> 16 == 0o100644 and info.create_system == 3
    assert zf.read("pkg/ünïcode.txt") == "non-ASCII name\n".encode()
    assert compressed(out, "pkg/data.bin") == compressed(wheel, "pkg/data.bin")


def test_data_descriptors_are_folded_into_the_headers(tmp_path):
    class Unseekable(io.RawIOBase):
        def __init__(self) -> None:
            self.buf = io.BytesIO()

        def writable(self) -> bool:
            return True

        def write(self, b) -> int:
            return self.buf.write(b)

    sink = Unseekable()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as zf:  # streaming: sizes follow the data
        zf.writestr("a.txt", b"alpha" * 1000)
        zf.writestr("b.txt", b"beta" * 1000)
    source = tmp_path / "stream.zip"
    source.write_bytes(sink.buf.getvalue())
    assert all(i.flag_bits & _zipformat.FLAG_DATA_DESCRIPTOR for i in zipfile.ZipFile(source).infolist())
    out = tmp_path / "out.zip"
    copy_all(source, out)
    zf = check_zip(out)
    assert zf.read("a.txt") == b"alpha" * 1000 and zf.read("b.txt") == b"beta" * 1000
    assert not any(i.flag_bits & _zipformat.FLAG_DATA_DESCRIPTOR for i in zf.infolist())


def test_zip64_records(wheel, tmp_path, monkeypatch):
    """With the zip64 threshold lowered, every size, offset and the count go through zip64 records."""
    monkeypatch.setattr(_zipformat, "ZIP64_LIMIT", 100)
    monkeypatch.setattr(_zipformat, "ZIP64_COUNT_LIMIT", 2)
    out = tmp_path / "z64.whl"
    copy_all(wheel, out, **{"pkg/new.txt": b"x" * 5000})
    with open(out, "rb") as f:
        data = f.read()
    assert data.count(_zipformat.EOCD64.pack(_zipformat.EOCD64_SIGNATURE, 44, 45, 45, 0, 0, 0, 0, 0, 0)[:4]) == 1
    zf = check_zip(out)
    assert zf.read("pkg/new.txt") == b"x" * 5000
    with zipfile.ZipFile(wheel) as original:
        for info in original.infolist():
            assert zf.read(info.filename) == original.read(info.filename)


def test_atomic_output_leaves_nothing_when_interrupted(tmp_path):
    target = tmp_path / "out.whl"
    with pytest.raises(KeyboardInterrupt):
        with atomic_output(target) as out:
            out.write(b"partial")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


# -- rebuild_wheel


def record_of(path: Path) -> list[list[str]]:
    with zipfile.ZipFile(path) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        return [line.split(",") for line in zf.read(name).decode().splitlines()]


def test_rebuild_without_changes_gives_back_the_same_wheel(wheel, tmp_path):
    out = tmp_path / "same.whl"
    with WheelReader(wheel) as reader:
        stats = rebuild_wheel(reader, out, date_time=NOW)
    assert (stats.copied, stats.written, stats.record_changed) == (6, 0, False)
    assert out.read_bytes() == wheel.read_bytes()


def test_rebuild_replaces_adds_and_regenerates_record(wheel, tmp_path):
    out = tmp_path / "changed.whl"
    with WheelReader(wheel) as reader:
        stats = rebuild_wheel(reader, out, replace={"pkg/__init__.py": b"print('bye')\n"},
                              add={"pkg.libs/libnew.so": NewMember(b"\x7fELF new", 0o755)}, date_time=NOW)
    assert (stats.copied, stats.written, stats.record_changed) == (4, 3, True)
    zf = check_zip(out)
    names = zf.namelist()
    assert names.index("pkg.libs/libnew.so") < names.index("pkg-1.0.dist-info/METADATA")  # before .dist-info
    assert names[-1] == "pkg-1.0.dist-info/RECORD"
    rows = {r[0]: r[1:] for r in record_of(out)}
    for name in names[:-1]:
        data = zf.read(name)
        assert rows[name] == [record_hash(data), str(len(data))]
    assert rows["pkg-1.0.dist-info/RECORD"] == ["", ""]
    assert zf.getinfo("pkg/__init__.py").date_time == NOW
    assert zf.getinfo("pkg/data.bin").date_time == DATE_TIME
    assert zf.getinfo("pkg.libs/libnew.so").external_attr >> 16 == 0o100755
    assert compressed(out, "pkg/data.bin") == compressed(wheel, "pkg/data.bin")


def test_rebuild_recomputes_rows_it_cannot_trust(tmp_path):
    data = b"payload\n" * 10
    bad = build_wheel(tmp_path / "in", "pkg", "1.0", TAG, {"pkg/a.txt": data, "pkg/b.txt": data},
                      record_override={"pkg/a.txt": ("md5=nothing", len(data)), "pkg/b.txt": (record_hash(b"x"), len(data))})
    out = tmp_path / "fixed.whl"
    with WheelReader(bad) as reader:
        rebuild_wheel(reader, out, date_time=NOW, rehash={"pkg/b.txt"})
    rows = {r[0]: r[1:] for r in record_of(out)}
    assert rows["pkg/a.txt"] == rows["pkg/b.txt"] == [record_hash(data), str(len(data))]


def test_signature_is_dropped_only_when_record_changes(tmp_path):
    wheel = build_wheel(tmp_path / "in", "pkg", "1.0", TAG,
                        {"pkg/a.txt": b"a", "pkg-1.0.dist-info/RECORD.jws": b"{}"})
    with WheelReader(wheel) as reader:
        rebuild_wheel(reader, tmp_path / "same.whl", date_time=NOW)
        rebuild_wheel(reader, tmp_path / "changed.whl", replace={"pkg/a.txt": b"b"}, date_time=NOW)
    assert "pkg-1.0.dist-info/RECORD.jws" in zipfile.ZipFile(tmp_path / "same.whl").namelist()
    assert "pkg-1.0.dist-info/RECORD.jws" not in zipfile.ZipFile(tmp_path / "changed.whl").namelist()


def test_reproducible_date_time(wheel):
    with WheelReader(wheel) as reader:
        assert reproducible_date_time(reader, {}) == DATE_TIME  # the input's newest
        assert reproducible_date_time(reader, {"SOURCE_DATE_EPOCH": "1700000000"}) == (2023, 11, 14, 22, 13, 20)
        assert reproducible_date_time(reader, {"SOURCE_DATE_EPOCH": "0"}) == (1980, 1, 1, 0, 0, 0)  # zip's floor
