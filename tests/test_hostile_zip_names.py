"""The name checked is the name written: a member name that zipfile reads otherwise than it is stored (cut at a
NUL byte; replaced by the Info-ZIP Unicode Path extra field on newer Pythons, and by unzip everywhere) is
refused, and a repair writes the validated name without a second one beside it.

Wheels are built with zipfile, then their names and extra fields rewritten byte by byte (tests/fuzz/zipcraft).
"""
from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from tests.fuzz.zipcraft import assemble, explode
from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli
from wheelcheck.errors import BadWheelError
from wheelcheck.wheel.wheel_reader import WheelReader

TAG = f"{python_tag()}-{python_tag()}-linux_x86_64"
UNICODE_PATH_EXTRA_ID = 0x7075  # APPNOTE 4.6.9


def extra_ids(extra: bytes) -> set[int]:
    ids, pos = set(), 0
    while pos + 4 <= len(extra):
        block_id, size = struct.unpack_from("<HH", extra, pos)
        ids.add(block_id)
        pos += 4 + size
    return ids


def _unicode_path(name: bytes, shown: str) -> bytes:
    """An Info-ZIP Unicode Path block: version 1, the CRC-32 of the header name, then the name it gives."""
    data = struct.pack("<BI", 1, zlib.crc32(name)) + shown.encode("utf-8")
    return struct.pack("<HH", UNICODE_PATH_EXTRA_ID, len(data)) + data


def _rewritten(wheel: Path, suffix: str, out: Path, *, name: bytes | None = None, shown: str | None = None) -> Path:
    archive = explode(wheel.read_bytes())
    member = archive.member(suffix)
    if name is not None:
        member.name = name
    if shown is not None:
        member.extra = member.local_extra = _unicode_path(member.name, shown)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(assemble(archive))
    return out


@pytest.fixture
def plain_wheel(tmp_path) -> Path:
    return build_wheel(tmp_path / "src", "victim", "1.0", TAG, {"victim/__init__.py": b"", "victim/ok.py": b"x = 1\n"})


def test_a_nul_in_a_member_name_is_refused(plain_wheel, tmp_path):
    """zipfile cuts 'victim/ok.py\\0.so' to 'victim/ok.py'; the raw header name must be what is checked."""
    hostile = _rewritten(plain_wheel, "ok.py", tmp_path / "bad" / plain_wheel.name,
                         name=b"victim/ok.py\x00.so")
    with pytest.raises(BadWheelError, match="NUL byte"):
        WheelReader(hostile)
    proc = run_cli("audit", hostile)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "NUL byte" in proc.stderr


def test_a_unicode_path_field_that_names_another_file_is_refused(plain_wheel, tmp_path):
    hostile = _rewritten(plain_wheel, "ok.py", tmp_path / "bad" / plain_wheel.name, shown="../../evil.py")
    with pytest.raises(BadWheelError, match="Unicode Path extra field names it '../../evil.py'"):
        WheelReader(hostile)
    proc = run_cli("audit", hostile)
    assert proc.returncode == 2 and "Unicode Path" in proc.stderr


def test_repair_writes_the_validated_name_without_a_second_one(build, tmp_path):
    """An agreeing Unicode Path field is no attack, but it is a second name: the repaired wheel carries the
    validated header name alone, in the local header and in the central directory."""
    lib = build.compile_c("int x_value(void) { return 42; }\n", "libx.so.1", flags=("-Wl,-soname,libx.so.1",))
    ext = build.compile_c(extension_source("_x", "    return x_value();", prelude="extern int x_value(void);"),
                          f"_x{EXT_SUFFIX}", libs=(lib,))
    wheel = build_wheel(tmp_path / "src", "victim", "1.0", TAG,
                        {"victim/__init__.py": b"", "victim/ok.py": b"x = 1\n", f"victim/_x{EXT_SUFFIX}": ext})
    marked = _rewritten(wheel, "ok.py", tmp_path / "marked" / wheel.name, shown="victim/ok.py")
    assert UNICODE_PATH_EXTRA_ID in extra_ids(zipfile.ZipFile(marked).getinfo("victim/ok.py").extra)
    proc = run_cli("repair", "--lib-path", lib.parent, "-w", tmp_path / "out", marked)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (repaired,) = (tmp_path / "out").glob("*.whl")
    data = repaired.read_bytes()
    with zipfile.ZipFile(repaired) as zf:
        info = zf.getinfo("victim/ok.py")
        assert info.orig_filename == "victim/ok.py"
        assert UNICODE_PATH_EXTRA_ID not in extra_ids(info.extra)
        name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
        local_extra = data[info.header_offset + 30 + name_length:][:extra_length]
        assert UNICODE_PATH_EXTRA_ID not in extra_ids(local_extra)
