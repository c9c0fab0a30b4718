"""Streaming: members inflated once in bounded pieces, ranges read again from checkpoints, ELF summaries made
from pieces equal to those made from whole files, and memory that does not grow with a member's size."""

from __future__ import annotations

import os
import random
import re
import sys
import tracemalloc
import zipfile
import zlib
from array import array

import pytest

from tests.fixtures.compile import ZIG_TARGETS
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.test_elf_summary import USER_SRC
from wheelcheck.elf import _kept_bytes, _string_scan, _tables, version_strings
from wheelcheck.elf.elf_summary import _soname_matches, summarize, summarize_stream
from wheelcheck.elf.rodata_strings import _identifier_matches
from wheelcheck.elf.version_strings import version_patterns
from wheelcheck.errors import BadElfError, BadWheelError
from wheelcheck.wheel import _zlib, member_stream
from wheelcheck.wheel.scanner import scan_wheel
from wheelcheck.wheel.wheel_reader import WheelReader


def varied_bytes(size: int, seed: int = 1) -> bytes:
    """Compressible but not trivially so: words and numbers, with NULs."""
    rng = random.Random(seed)
    words = [b"lib", b"foo", b".so", b"\0", b"bar_", b"42", b"x" * 9, bytes(range(256))]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) if rng.random() < 0.9 else rng.randbytes(8)
    return bytes(out[:size])


@pytest.fixture(scope="module")
def zipped(tmp_path_factory):
    data = varied_bytes(3 << 20)
    path = tmp_path_factory.mktemp("zip") / "t.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo("deflated.bin"), data, compress_type=zipfile.ZIP_DEFLATED)
        zf.writestr(zipfile.ZipInfo("stored.bin"), data, compress_type=zipfile.ZIP_STORED)
    return path, data


def _has_zlib_ng() -> bool:
    try:
        import zlib_ng  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(params=["zlib", pytest.param("zlib-ng", marks=pytest.mark.skipif(
    not _has_zlib_ng(), reason="zlib-ng has no wheel for this platform"))])
def inflater(request):
    """Read with the standard library's zlib, then with zlib-ng's: the same bytes, the same errors."""
    before = _zlib.use(request.param)
    yield request.param
    _zlib.use(before)


def test_zlib_ng_reads_where_the_dependency_installs_it():
    import platform

    if not (platform.system() == "Linux" and platform.machine() in ("x86_64", "aarch64")
            and sys.version_info < (3, 15)):
        pytest.skip("pyproject.toml does not install zlib-ng here: the standard library's zlib reads")
    assert _zlib.BACKEND == "zlib-ng" and _zlib.inflater.__name__ == "zlib_ng.zlib_ng"


def open_stream(path, name):
    zf = zipfile.ZipFile(path)
    fd = os.open(path, os.O_RDONLY)  # closed with the test process
    return member_stream.MemberStream(str(path), fd, zf.getinfo(name), zf)


@pytest.mark.parametrize("name", ["deflated.bin", "stored.bin"])
def test_pieces_and_ranges_again(zipped, name, monkeypatch, inflater):
    monkeypatch.setattr(member_stream, "_MIN_CHECKPOINT_GAP", 64 << 10)  # many checkpoints on 3 MiB
    monkeypatch.setattr(member_stream, "_READ", 4096)  # (taken between reads of compressed data)
    monkeypatch.setattr(member_stream, "_REREAD_GAP", 32 << 10)
    path, data = zipped
    stream = open_stream(path, name)
    pieces = list(stream)
    assert b"".join(pieces) == data and max(map(len, pieces)) <= member_stream.CHUNK
    stream.check_crc(zlib.crc32(data))
    with pytest.raises(BadWheelError, match="CRC"):
        stream.check_crc(zlib.crc32(data) ^ 1)
    rng = random.Random(7)
    for _ in range(25):
        start = rng.randrange(len(data))
        size = rng.randrange(1, 300_000)
        assert b"".join(stream.reread(start, size)) == data[start:start + size]
    assert stream.head(4) == data[:4]
    if name == "deflated.bin":
        assert len(stream._marks) > 10  # the ranges above came from checkpoints, not from the start


@pytest.mark.parametrize("first", [0, 1, 3, 256])
def test_head_reads_on_past_the_bytes_read_with_the_local_header(tmp_path, monkeypatch, first):
    """The local header and the first compressed bytes come in one read; a head needing more (or a local
    extra field longer than that read) reads on, and a member shorter than it does not read into the next."""
    monkeypatch.setattr(member_stream, "_FIRST_DATA", first)
    rng = random.Random(3)
    data = bytes(rng.getrandbits(8) for _ in range(5000))  # incompressible: a head needs many compressed bytes
    path = tmp_path / "heads.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        padded = zipfile.ZipInfo("padded.bin")
        padded.compress_type = zipfile.ZIP_DEFLATED
        padded.extra = (0xCAFE).to_bytes(2, "little") + (3000).to_bytes(2, "little") + bytes(3000)
        zf.writestr(padded, data)
        zf.writestr("tiny.bin", b"\x7fELF")
        zf.writestr("after.bin", data)
    for name, content in (("padded.bin", data), ("tiny.bin", b"\x7fELF"), ("after.bin", data)):
        for size in (4, 256, 4096, 6000):
            assert open_stream(path, name).head(size) == content[:size]
        assert b"".join(open_stream(path, name)) == content


def test_truncated_member_is_one_error(zipped, tmp_path, inflater):
    path, data = zipped
    cut = tmp_path / "cut.zip"
    raw = path.read_bytes()
    info = zipfile.ZipFile(path).getinfo("deflated.bin")
    # damage the compressed data in the middle: inflate fails, or the bytes come out wrong
    middle = info.header_offset + 100 + info.compress_size // 2
    cut.write_bytes(raw[:middle] + bytes(4096) + raw[middle + 4096:])
    stream = open_stream(cut, "deflated.bin")
    with pytest.raises(BadWheelError, match="deflated.bin"):
        crc = 0
        for piece in stream:
            crc = zlib.crc32(piece, crc)
        stream.check_crc(crc)


def whole_and_streamed(data: bytes, piece: int, window: int) -> tuple:
    pieces = [data[i:i + piece] for i in range(0, len(data), piece)]
    reads = []

    def reread(offset, size):
        reads.append((offset, size))
        yield data[offset:offset + size]

    return summarize(data, "lib.so"), summarize_stream(iter(pieces), len(data), "lib.so", reread, window=window), reads


@pytest.mark.parametrize("arch", ["x86_64", "s390x", "i686", "aarch64"])
@pytest.mark.parametrize("piece,window,recent", [(1 << 20, 8 << 20, 8 << 20), (4096, 0, 0), (7, 64, 100)])
def test_streamed_summary_equals_whole(build, arch, piece, window, recent, monkeypatch):
    monkeypatch.setattr(_kept_bytes, "RECENT", recent)
    lib = build.compile_c(USER_SRC, "libuser.so.1", target=ZIG_TARGETS[arch],
                          flags=("-Wl,-soname,libuser.so.1", "-Wl,-rpath,$ORIGIN/../lib"))
    whole, streamed, reads = whole_and_streamed(lib.read_bytes(), piece, window)
    assert streamed == whole and len(whole.symtab) > 5
    assert bool(reads) == (window < len(lib.read_bytes()))  # nothing kept: the tables are read again


def test_names_cut_part_by_part_equal_names_cut_at_once(build, monkeypatch):
    ext = build.compile_c(extension_source("m0"), "m0.so")
    data = ext.read_bytes()
    at_once = summarize(data, "lib.so")
    monkeypatch.setattr(_tables, "_PART", 64)
    monkeypatch.setattr(_tables, "_OVERLAP", 16)  # some names are longer: read on their own
    for window in (0, len(data)):
        _, streamed, _ = whole_and_streamed(data, 1000, window)
        assert streamed == at_once


def test_truncated_stream_is_bad_elf(build):
    data = build.compile_c(USER_SRC, "libuser.so.1").read_bytes()
    with pytest.raises(BadElfError, match="truncated"):
        summarize_stream(iter([data[:len(data) // 2]]), len(data), "lib.so", lambda o, n: iter(()))
    with pytest.raises(BadElfError, match="not an ELF"):
        summarize_stream(iter([b"hello world" * 10]), 110, "x.so", lambda o, n: iter(()))


SONAME = re.compile(rb"lib[A-Za-z0-9_+\-][A-Za-z0-9_+.\-]*?\.so(?:\.[0-9]+)*(?=\x00)")
IDENT = re.compile(rb"(?<=\x00)[A-Za-z_][A-Za-z0-9_.$@]{1,200}(?=\x00)")


@pytest.mark.parametrize("pattern, finder", [(SONAME, _soname_matches), (IDENT, _identifier_matches)],
                         ids=["soname", "identifier"])
@pytest.mark.parametrize("seed", range(6))
def test_span_scanner_finds_what_one_search_finds(pattern, finder, seed):
    rng = random.Random(seed)
    parts = [b"libz.so.1", b"libfoo.so", b"\0", b"\0", b"abc", b"lib", b".so", b"_x1", b"$", b"\xff", b"libm.so.6"]
    data = b"".join(rng.choice(parts) for _ in range(3000))
    start, end = rng.randrange(50), len(data) - rng.randrange(50)
    want = list(dict.fromkeys(m.group() for m in pattern.finditer(data, start, end)))
    for size in (1, 5, 64, 1000, len(data)):
        scanner = _string_scan.SpanScanner(finder, start, end)
        for at in range(max(start - 1, 0), len(data), size):
            scanner.feed(data[at:at + size], at)
        assert list(scanner.found) == want, size


def _version_strings_at_once(data: bytes, spans) -> tuple[str, ...]:
    """elf/version_strings.py's search as one pass over the whole file (before it streamed), for reference."""
    wanted, found, examined = version_patterns(), set(), 0
    most, kept, longest = version_strings.MAX_CANDIDATES, version_strings.MAX_KEPT, version_strings.MAX_LENGTH
    anchor = re.compile(rb"\.[0-9]")
    unprintable = bytes(b if b in b"\t\n\r" + bytes(range(0x20, 0x7F)) else 0 for b in range(256))
    for lo, hi in spans:
        match = anchor.search(data, lo, hi)
        while match is not None and examined < most and len(found) < kept:
            examined += 1
            at = match.start()
            window = max(lo, at - longest)
            cut = data[window:at].translate(unprintable).rfind(b"\0")
            start = window + cut + 1 if cut >= 0 else (lo if window == lo else -1)
            end = data.find(b"\0", at, min(hi, at + longest))
            if end < 0 or start < 0:
                end = data.find(b"\0", at, hi)
                if end < 0:
                    break
            else:
                text = data[start:end]
                if re.fullmatch(rb"[\t\n\r -~]*", text) and wanted.search(text):
                    found.add(text.decode("ascii"))
            match = anchor.search(data, end, hi)
    return tuple(sorted(found))


@pytest.mark.parametrize("seed", range(8))
def test_version_strings_streamed_equal_one_pass(seed, monkeypatch):
    """Version strings found piece by piece (as a member streams) are those one pass over the file finds,
    however the pieces are cut, with candidates near span edges, strings too long, and the bounds reached."""
    if seed >= 6:  # the bounds: few candidates examined, few strings kept
        monkeypatch.setattr(version_strings, "MAX_CANDIDATES", 40)
        monkeypatch.setattr(version_strings, "MAX_KEPT", 3)
    rng = random.Random(seed)
    parts = [b"OpenSSL 3.0.13 30 Jan 2024", b"zlib 1.2.13", b"\0", b"\0", b"\xff", b"x" * 150, b".1", b"1.2.",
             b"SQLite 3.40.1", b"libpng version 1.6.43", b"\n", b"abc"]
    data = b"".join(rng.choice(parts) for _ in range(4000))
    cuts = sorted(rng.sample(range(len(data)), 6))
    spans = [(cuts[0], cuts[1]), (cuts[2], cuts[3]), (cuts[4], len(data))]
    want = _version_strings_at_once(data, spans)
    assert want or seed >= 6
    for size in (1, 7, 199, 4096, len(data)):
        scanner = version_strings.VersionScanner(spans)
        for at in range(0, len(data), size):
            scanner.feed(data[at:at + size], at)
        assert scanner.result() == want, size
    assert version_strings.version_strings(data, spans) == want


def test_memory_does_not_grow_with_a_member(build, tmp_path):
    """A 96 MiB extension module (a real one, padded after its last segment) is summarised holding far
    less than its size: the bytes pass, only the prefix and the tables stay."""
    small = build.compile_c(extension_source("m0"), "m0.so").read_bytes()
    big = tmp_path / "m0.cpython-311-x86_64-linux-gnu.so"
    big.write_bytes(small + varied_bytes(96 << 20, seed=3))
    wheel = build_wheel(tmp_path, "big", "1.0", "cp311-cp311-linux_x86_64", {f"pkg/{big.name}": big})
    big.unlink()
    for jobs in (1, 2):
        tracemalloc.start()
        model = scan_wheel(wheel, jobs=jobs)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert model.elves[0].python_init == "PyInit_m0" and not model.record_problems
        assert peak < 24 << 20, f"jobs={jobs}: {peak >> 20} MiB held while reading a 96 MiB member"
    with WheelReader(wheel) as reader:  # and the bytes read are the member's, hashed as RECORD says
        assert reader.read(f"pkg/{big.name}")[:len(small)] == small


def test_wheels_audited_on_processes_report_as_one_by_one(build, tmp_path):
    """`audit DIR` runs one process per wheel: the same reports, in the same order, as one at a time."""
    from wheelcheck.api import audit

    for i in range(3):
        ext = build.compile_c(extension_source(f"m{i}"), f"m{i}.so")
        build_wheel(tmp_path, f"pkg{i}", "1.0", "cp311-cp311-linux_x86_64",
                    {f"pkg{i}/m{i}.cpython-311-x86_64-linux-gnu.so": ext})
    (tmp_path / "broken-1.0-py3-none-any.whl").write_bytes(b"not a zip")
    serial, parallel = audit(tmp_path, jobs=1), audit(tmp_path, jobs=2)
    assert [w.filename for w in parallel.wheels] == [w.filename for w in serial.wheels]
    assert [_untimed(w.to_dict()) for w in parallel.wheels] == [_untimed(w.to_dict()) for w in serial.wheels]
    assert "not a zip" in parallel.wheels[0].error and parallel.wheels[1].best_tag


def test_either_zlib_audits_a_wheel_alike(build, tmp_path):
    """zlib-ng's inflate and CRC-32 replace the standard library's only for speed: the same report, RECORD
    checked, and the same error for a member whose CRC the zip misstates."""
    if not _has_zlib_ng():
        pytest.skip("zlib-ng has no wheel for this platform")
    from wheelcheck.api import audit

    ext = build.compile_c(extension_source("m0"), "m0.so")
    padded = tmp_path / "m0.cpython-311-x86_64-linux-gnu.so"
    padded.write_bytes(ext.read_bytes() + varied_bytes(40 << 20, seed=5))  # past the thresholds for threads
    wheel = build_wheel(tmp_path, "pkg", "1.0", "cp311-cp311-linux_x86_64", {f"pkg/{padded.name}": padded})
    raw = bytearray(wheel.read_bytes())
    central = raw.rfind(f"pkg/{padded.name}".encode()) - 46  # its central directory entry (46 bytes, then the name)
    assert raw[central:central + 4] == b"PK\x01\x02"
    raw[central + 16] ^= 1  # the CRC-32 the central directory states (zipfile checks that one)
    bad_crc = tmp_path / "bad" / wheel.name
    bad_crc.parent.mkdir()
    bad_crc.write_bytes(raw)
    reports = {}
    for backend in ("zlib", "zlib-ng"):
        before = _zlib.use(backend)
        try:
            reports[backend] = [_untimed(audit(wheel, jobs=jobs, any_platform_tag=True).wheels[0].to_dict())
                                for jobs in (1, 2)] + [
                audit(bad_crc, jobs=1).wheels[0].error]
        finally:
            _zlib.use(before)
    assert reports["zlib"] == reports["zlib-ng"]
    assert reports["zlib"][0]["passed"] and "Bad CRC-32" in reports["zlib"][2]


def _untimed(report: dict) -> dict:
    """A wheel's report without the seconds it took (the one field two runs need not share)."""
    if "summary" in report:
        report["summary"] = {k: v for k, v in report["summary"].items() if k != "seconds"}
    return report


@pytest.mark.parametrize("part", [8, 64, 1 << 20])
def test_string_table_names_equal_single_gets_ascii_or_not(monkeypatch, part):
    """The names cut at once (an ASCII table decoded once, or any other name by name, invalid UTF-8
    replaced) are those ``get`` reads one by one, tail-merged names and parts included (parts of 8 bytes:
    over 256 of them, so the parts grow to fit)."""
    monkeypatch.setattr(_tables, "_PART", part)
    monkeypatch.setattr(_tables, "_OVERLAP", 16)
    rng = random.Random(5)
    for extra in (b"", "caf\u00e9".encode(), b"bad\xff\xfe", "\u4e2d".encode()):
        words = [b"_ZN3foo3barEv", b"malloc", b"x" * 40, b"PyInit_m", extra or b"abc"] * 30
        rng.shuffle(words)
        table = b"\0" + b"\0".join(words) + b"\0"
        starts = [i + 1 for i in range(len(table) - 1) if table[i] == 0 and i + 1 < len(table)]
        offsets = starts + [s + 2 for s in starts[:20] if table[s + 2] != 0]  # tails of names too
        rng.shuffle(offsets)
        sparse = _kept_bytes.SparseFile.whole(table)
        want = [_tables.StringTable(sparse, 0, len(table)).get(o) for o in offsets]
        got = _tables.StringTable(sparse, 0, len(table)).names(array("I", offsets))
        assert list(got) == want
        assert any("\ufffd" in n for n in got) == (extra not in (b"", "caf\u00e9".encode()))  # tails cut "\u4e2d" too


def test_reads_that_alternate_between_two_places_fetch_each_once():
    """A version-need walk reads a record, then its name at the end of the string table, then the next
    record: with only the last range remembered, each step fetched (inflated) both again."""
    data = bytes(range(256)) * (64 << 10)  # 16 MiB
    fetched = []

    def reread(offset: int, size: int):
        fetched.append((offset, size))
        yield data[offset:offset + size]

    sparse = _kept_bytes.SparseFile(len(data), reread, window=0)
    for piece in range(0, len(data), 1 << 20):
        sparse.push(data[piece:piece + (1 << 20)])
    sparse._recent.clear()  # what the stream kept last is not what is read here
    records, strings = 1 << 20, 12 << 20
    for step in range(50):
        assert sparse.read(records + 16 * step, 16) == data[records + 16 * step:records + 16 * step + 16]
        assert sparse.read(strings + 8 * step, 8) == data[strings + 8 * step:strings + 8 * step + 8]
    assert len(fetched) == 2
    big = sparse.read(4 << 20, 3 << 20)  # a large read is kept alone: the bound on bytes holds
    assert big == data[4 << 20:7 << 20] and sum(len(c) for _a, c in sparse._cache) == 3 << 20
