"""Separate debug-information files (objcopy --only-keep-debug) in a wheel: never loaded, left out of the verdict.

pyrealsense2 2.59.1 ships foo.so.debug beside foo.so. Such a file keeps the binary's program headers but none of
its contents: older objcopy leaves the segments' sizes, so they end past the file's end; newer objcopy (Debian 12's)
zeroes them. wheelcheck refused the wheel as a truncated ELF file; auditwheel 6.8.2 stops with a traceback.
"""

from __future__ import annotations

import struct
import subprocess
import zipfile

import pytest

from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one as one, auditwheel_show, by_rule, repair_json
from wheelcheck.elf.elf_summary import summarize
from wheelcheck.errors import BadElfError

TAG = "cp311-cp311-linux_x86_64"
EXT = "pkg/dbgmod.cpython-311-x86_64-linux-gnu.so"
PT_LOAD, PT_DYNAMIC = 1, 2


def readelf(*args) -> str:
    return subprocess.run(["readelf", *map(str, args)], capture_output=True, text=True, check=True).stdout


def debug_companion(build, tmp_path):
    """(the extension, its debug-information file as objcopy --only-keep-debug writes it here)."""
    ext = build.compile_c(extension_source("dbgmod"), "dbgmod.so", flags=("-g",))
    debug = tmp_path / "dbgmod.so.debug"
    subprocess.run(["objcopy", "--only-keep-debug", str(ext), str(debug)], check=True)
    return ext, debug


def with_segment_past_the_end(path, out):
    """A copy whose first PT_LOAD with no bytes in the file claims 1 MiB of them, as older objcopy leaves it."""
    data = bytearray(path.read_bytes())
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        at = phoff + i * phentsize
        ptype, = struct.unpack_from("<I", data, at)
        filesz, = struct.unpack_from("<Q", data, at + 32)
        if ptype == PT_LOAD and filesz == 0:
            struct.pack_into("<QQ", data, at + 32, 1 << 20, 1 << 20)  # p_filesz, p_memsz
            break
    else:
        raise AssertionError("no empty PT_LOAD to widen")
    out.write_bytes(bytes(data))
    return out


def test_a_debug_information_file_is_left_out_of_the_verdict(build, tmp_path):
    ext, debug = debug_companion(build, tmp_path)
    sections = readelf("-SW", debug)
    assert "NOBITS" in sections and ".debug_info" in sections and " .text             NOBITS" in sections
    members = {EXT: ext, EXT + ".debug": debug}
    wheel = build_wheel(tmp_path / "with", "dbgmod", "1.0", TAG, members)
    plain = build_wheel(tmp_path / "without", "dbgmod", "1.0", TAG, {EXT: ext})
    w = one(wheel)
    assert w.error is None and w.passed
    assert [f.path for f in w.files] == [EXT]  # only the extension is judged
    (info,) = by_rule(w, "debug-info-file")
    assert info.file == EXT + ".debug" and info.severity == "info"
    # the verdict is the one auditwheel gives the wheel without the debug file
    assert w.deserved_tag == auditwheel_show(plain)["overall_tag"] == one(plain).deserved_tag
    # repair carries the file over unchanged
    proc, report = repair_json(wheel, "-w", tmp_path / "out")
    assert proc.returncode == 0, proc.stdout
    (out,) = (tmp_path / "out").glob("*.whl")
    with zipfile.ZipFile(out) as zf:
        assert zf.read(EXT + ".debug") == debug.read_bytes()


def test_segments_past_the_end_of_a_debug_information_file(build, tmp_path):
    """Older objcopy keeps the segments' sizes: they end past the file's end. The sections tell it apart."""
    _ext, debug = debug_companion(build, tmp_path)
    old_style = with_segment_past_the_end(debug, tmp_path / "old.so.debug")
    assert summarize(old_style.read_bytes(), "old.so.debug").debug_only
    w = one(build_wheel(tmp_path, "dbgmod", "1.0", TAG, {EXT + ".debug": old_style}))
    assert w.error is None and by_rule(w, "debug-info-file") and not w.files


def test_a_library_with_a_segment_past_its_end_is_still_truncated(build, tmp_path):
    """The same edit on the library itself (its sections hold code): a truncated file, bad input."""
    ext, _debug = debug_companion(build, tmp_path)
    stripped = tmp_path / "stripped.so"  # no debug sections: its segments are all that is in the file
    subprocess.run(["objcopy", "--strip-debug", str(ext), str(stripped)], check=True)
    data = bytearray(stripped.read_bytes())
    phoff, = struct.unpack_from("<Q", data, 0x20)
    struct.pack_into("<Q", data, phoff + 32, len(data) + 4096)  # the first PT_LOAD's p_filesz
    assert struct.unpack_from("<I", data, phoff)[0] == PT_LOAD
    with pytest.raises(BadElfError, match="truncated ELF file: a segment ends at byte"):
        summarize(bytes(data), "stripped.so")
    cut = ext.read_bytes()[: ext.stat().st_size // 2]  # and a library cut in half: its section headers are gone
    with pytest.raises(BadElfError, match="truncated"):
        summarize(cut, "cut.so")
    assert not summarize(ext.read_bytes(), "dbgmod.so").debug_only
