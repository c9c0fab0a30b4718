"""The whole wheel as the index and installers take it: WHEEL and METADATA against the file name, RECORD for
every member, the zip's records as the index walks them, the platform tags it accepts, and the size budget.

Each wheel is built here: with zipfile (tests/fixtures/wheels.py), then changed field by field where a test
needs a zip no tool writes (tests/fuzz/zipcraft.py).
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel, dist_info, record_hash
from tests.fuzz.zipcraft import assemble, explode
from tests.helpers import run_cli

TAG = f"{python_tag()}-{python_tag()}-manylinux_2_17_x86_64"
PURE = {"pkg/__init__.py": b"x = 1\n", "pkg/data.txt": b"some data\n"}


def findings(wheel: Path, *args: str) -> list[tuple[str, str, str | None, str]]:
    """(rule, severity, file, message) of each finding of the audit of ``wheel``, with -v's infos."""
    proc = run_cli("audit", "--format", "json", *args, wheel)
    doc = json.loads(proc.stdout)
    (report,) = doc["wheels"]
    assert report.get("error") is None, report
    return [(f["rule"], f["severity"], f["file"], f["message"]) for f in report["findings"]]


def rules(wheel: Path, *args: str) -> dict[str, list[tuple[str, str | None, str]]]:
    out: dict[str, list] = {}
    for rule, severity, file, message in findings(wheel, *args):
        out.setdefault(rule, []).append((severity, file, message))
    return out


@pytest.fixture
def ext(build) -> Path:
    return build.compile_c(extension_source("_m", "    return 1;"), f"_m{EXT_SUFFIX}")


# -- WHEEL and METADATA against the file name


def test_wheel_tag_lines_must_match_the_file_name(tmp_path, ext):
    """implicit 0.7.3 on the index: WHEEL says cp311-cp311-linux_x86_64, the file name manylinux2014."""
    wheel_text = b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"
    wheel = build_wheel(tmp_path, "pkg", "1.0", TAG, {f"pkg/_m{EXT_SUFFIX}": ext,
                                                     f"{dist_info('pkg', '1.0')}/WHEEL": wheel_text})
    (problem,) = rules(wheel)["wheel-metadata"]
    assert problem[0] == "error" and problem[1] == "pkg-1.0.dist-info/WHEEL"
    assert "cp311-cp311-linux_x86_64, which the file name lacks" in problem[2]
    assert f"{TAG}, which the file name has" in problem[2]


@pytest.mark.parametrize(("wheel_text", "said"), [
    (b"Root-Is-Purelib: true\nTag: py3-none-any\n", "has no Wheel-Version"),
    (b"Wheel-Version: 2.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n", "Wheel-Version 2.0"),
    (b"Wheel-Version: 1.0\nTag: py3-none-any\n", "has no Root-Is-Purelib"),
    (b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\n", "has no Tag line"),
])
def test_wheel_file_fields(tmp_path, wheel_text, said):
    wheel = build_wheel(tmp_path, "pkg", "1.0", "py3-none-any", {**PURE, f"{dist_info('pkg', '1.0')}/WHEEL": wheel_text})
    assert any(said in message for _, _, message in rules(wheel)["wheel-metadata"])


def test_metadata_name_version_and_directory_must_match_the_file_name(tmp_path):
    wrong = b"Metadata-Version: 2.1\nName: other-project\nVersion: 2.0\n"
    wheel = build_wheel(tmp_path, "pkg", "1.0", "py3-none-any", {**PURE, f"{dist_info('pkg', '1.0')}/METADATA": wrong})
    messages = [m for _, _, m in rules(wheel)["wheel-metadata"]]
    assert any("names the project 'other-project'" in m for m in messages)
    assert any("says version 2.0" in m for m in messages)
    # the same project and version spelt otherwise (Pkg_Name, 1.0.0) is the same
    same = b"Metadata-Version: 2.1\nName: Pkg.Name\nVersion: 1.0.0\n"
    wheel = build_wheel(tmp_path / "same", "pkg_name", "1.0", "py3-none-any",
                        {**PURE, f"{dist_info('pkg_name', '1.0')}/METADATA": same})
    assert "wheel-metadata" not in rules(wheel)


# -- RECORD lists every member


def test_record_covers_every_member_not_only_elf_files(tmp_path):
    wheel = build_wheel(tmp_path / "a", "pkg", "1.0", "py3-none-any", PURE,
                        record_override={"pkg/data.txt": (record_hash(b"other data\n"), 11)})
    ((severity, file, message),) = rules(wheel)["record-hash"]
    assert (severity, file) == ("error", "pkg/data.txt") and "does not match its RECORD hash" in message
    wheel = build_wheel(tmp_path / "b", "pkg", "1.0", "py3-none-any", PURE,
                        record_override={"pkg/data.txt": (record_hash(b"some data\n"), 999)})
    ((_, file, message),) = rules(wheel)["record-hash"]
    assert file == "pkg/data.txt" and "RECORD says 999" in message

    def add_unlisted(zf: zipfile.ZipFile) -> None:
        zf.writestr("pkg/smuggled.py", b"import os\n")

    wheel = build_wheel(tmp_path / "c", "pkg", "1.0", "py3-none-any", PURE, before_close=add_unlisted)
    assert ("error", "pkg/smuggled.py", "has no RECORD entry") in rules(wheel)["record-hash"]


# -- the zip as the index walks it


def _zip_variant(wheel: Path, out: Path, change) -> Path:
    archive = explode(wheel.read_bytes())
    data = change(archive)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data if isinstance(data, bytes) else assemble(archive))
    return out


@pytest.mark.parametrize(("change", "said"), [
    (lambda a: setattr(a, "prefix", b"#!/bin/sh\nexit 0\n"), "before the first member"),
    (lambda a: assemble(a) + b"trailing", "8 bytes follow the end record"),
    (lambda a: setattr(a, "between", b"\0" * 16), "where a record should begin"),
    (lambda a: a.member("data.txt").local.update(compress_size=1), "disagree"),
    (lambda a: setattr(a.member("data.txt"), "comment", b"hi"), "has a comment in the central directory"),
    (lambda a: setattr(a.member("data.txt"), "flags", 0x08), "data descriptor"),
])
def test_zip_records_the_index_refuses(tmp_path, change, said):
    wheel = build_wheel(tmp_path / "src", "pkg", "1.0", "py3-none-any", PURE)
    odd = _zip_variant(wheel, tmp_path / "odd" / wheel.name, change)
    problems = rules(odd).get("zip-layout", [])
    assert any(said in message and severity == "error" for severity, _, message in problems), problems
    assert "zip-layout" not in rules(wheel)


def test_repair_writes_a_zip_the_index_takes(build, tmp_path):
    """A wheel with trailing data and a METADATA that names another version: repair writes a clean zip and
    RECORD, and what METADATA says stays said."""
    lib = build.compile_c("int x_value(void) { return 42; }\n", "libx.so.1", flags=("-Wl,-soname,libx.so.1",))
    ext = build.compile_c(extension_source("_x", "    return x_value();", prelude="extern int x_value(void);"),
                          f"_x{EXT_SUFFIX}", libs=(lib,))
    meta = b"Metadata-Version: 2.1\nName: pkg\nVersion: 9.9\n"
    tag = f"{python_tag()}-{python_tag()}-linux_x86_64"
    wheel = build_wheel(tmp_path / "src", "pkg", "1.0", tag,
                        {f"pkg/_x{EXT_SUFFIX}": ext, f"{dist_info('pkg', '1.0')}/METADATA": meta})
    odd = tmp_path / "odd" / wheel.name
    odd.parent.mkdir()
    odd.write_bytes(wheel.read_bytes() + b"trailing")
    assert "zip-layout" in rules(odd)
    proc = run_cli("repair", "--format", "json", "--lib-path", lib.parent, "-w", tmp_path / "out", odd)
    report = json.loads(proc.stdout)["wheels"][0]
    assert proc.returncode == 0 and report["status"] == "repaired", proc.stdout
    assert {f["rule"] for f in report["findings"]} & {"zip-layout", "record-hash"} == set()
    assert [f["rule"] for f in report["findings"] if f["severity"] == "error"] == ["wheel-metadata"]
    (repaired,) = (tmp_path / "out").glob("*.whl")
    after = rules(repaired)
    assert "zip-layout" not in after and "record-hash" not in after and "platform-tag-refused" not in after


# -- the platform tags the index takes, and the size it takes


def test_a_linux_tag_fails_unless_the_index_takes_it(tmp_path, ext):
    tag = f"{python_tag()}-{python_tag()}-linux_x86_64"
    wheel = build_wheel(tmp_path, "pkg", "1.0", tag, {f"pkg/_m{EXT_SUFFIX}": ext})
    ((severity, _, message),) = rules(wheel)["platform-tag-refused"]
    assert severity == "error" and "linux_x86_64" in message
    assert run_cli("audit", wheel).returncode == 1
    assert "platform-tag-refused" not in rules(wheel, "--any-platform-tag")
    assert run_cli("audit", "--any-platform-tag", wheel).returncode == 0
    for accepted in ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "musllinux_1_2_x86_64"):
        renamed = wheel.with_name(wheel.name.replace("linux_x86_64", accepted))
        renamed.write_bytes(wheel.read_bytes())
        assert "platform-tag-refused" not in rules(renamed)


def test_any_platform_tag_from_pyproject_is_named(tmp_path, ext):
    tag = f"{python_tag()}-{python_tag()}-linux_x86_64"
    wheel = build_wheel(tmp_path / "dist", "pkg", "1.0", tag, {f"pkg/_m{EXT_SUFFIX}": ext})
    (tmp_path / "pyproject.toml").write_text("[tool.wheelcheck]\nany-platform-tag = true\n")
    proc = run_cli("audit", "--format", "json", wheel, cwd=tmp_path)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and [r["setting"] for r in doc["relaxed_by"]] == ["any-platform-tag"]


def test_a_wheel_over_the_size_budget_is_warned(tmp_path):
    import os

    big = {**PURE, "pkg/blob.bin": os.urandom(1_200_000)}
    wheel = build_wheel(tmp_path, "pkg", "1.0", "py3-none-any", big)
    assert "wheel-size" not in rules(wheel)
    ((severity, _, message),) = rules(wheel, "--max-wheel-size", "1")["wheel-size"]
    assert severity == "warning" and "over the 1 MB" in message


# -- the C library is the system's


def test_a_wheel_shipping_the_c_library_fails_whatever_its_tag(tmp_path, ext):
    """A copy of the machine's own libm.so.6 (as milvus-lite 2.5.2rc1 ships one), under its name and under a
    repair's hashed name, is an error; the fix is to stop shipping it, not to rebuild against an older glibc."""
    import glob

    found = [p for p in glob.glob("/lib/*-linux-gnu/libm.so.6") + glob.glob("/usr/lib64/libm.so.6")]
    if not found:
        pytest.skip("this machine has no glibc libm.so.6")
    libm = Path(found[0]).read_bytes()
    wheel = build_wheel(tmp_path, "pkg", "1.0", TAG, {f"pkg/_m{EXT_SUFFIX}": ext, "pkg/lib/libm.so.6": libm,
                                                      "pkg.libs/libm-1a2b3c4d.so.6": libm})
    found_rules = rules(wheel)
    assert sorted(file for _, file, _ in found_rules["libc-vendored"]) == ["pkg.libs/libm-1a2b3c4d.so.6",
                                                                           "pkg/lib/libm.so.6"]
    assert all(severity == "error" and "libm.so.6, a part of the C library" in message
               for severity, _, message in found_rules["libc-vendored"])
    assert "libc-vendored" not in rules(build_wheel(tmp_path / "clean", "pkg", "1.0", TAG, {f"pkg/_m{EXT_SUFFIX}": ext}))


def test_a_pure_wheel_claiming_a_platform_reports_it_as_required(tmp_path):
    """docs/json-report.md: required_tag is the most compatible claim; a wheel without ELF files meets it."""
    wheel = build_wheel(tmp_path, "pkg", "1.0", "py3-none-manylinux2014_x86_64", PURE)
    doc = json.loads(run_cli("audit", "--format", "json", wheel).stdout)
    (report,) = doc["wheels"]
    assert report["pure"] and report["required_tag"] == "manylinux_2_17_x86_64" and report["required_met"] is True
    plain = build_wheel(tmp_path / "any", "pkg", "1.0", "py3-none-any", PURE)
    (report,) = json.loads(run_cli("audit", "--format", "json", plain).stdout)["wheels"]
    assert report["required_tag"] is None and report["required_met"] is None
