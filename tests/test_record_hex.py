"""A RECORD whose hashes are right but written in hex (uv_build before 0.8.13, gmsh 4.15.2).

The bytes are those the build wrote: pip installs the wheel and it imports, so it is a warning, not the
``record-hash`` mismatch that fails an audit. What the warning says of the tools that check RECORD is
checked on pypa's installer itself, and so is repair's rewritten RECORD.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.repair_scenario import EXT_SUFFIX, python_tag
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import audit_one, auditwheel_show, by_rule, import_and_call, make_venv, pip_install, run_cli

EXT = f"pkg/_hexed{EXT_SUFFIX}"


def _hex(data: bytes) -> str:
    return "sha256=" + hashlib.sha256(data).hexdigest()


def _wheel(build, out: Path, ext_digest) -> Path:
    ext = build.compile_c(extension_source("_hexed"), "_hexed.so").read_bytes()
    init = b"# the package\n"
    tag = python_tag()
    return build_wheel(out, "hexed", "1.0", f"{tag}-{tag}-linux_x86_64", {"pkg/__init__.py": init, EXT: ext},
                       record_override={EXT: (ext_digest(ext), len(ext)), "pkg/__init__.py": (_hex(init), len(init))})


@pytest.fixture(scope="module")
def hexed(build, tmp_path_factory) -> Path:
    return _wheel(build, tmp_path_factory.mktemp("hexed"), _hex)


def _installer(wheel: Path, dest: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "installer", "--validate-record", "all", "--no-compile-bytecode",
                           "--destdir", str(dest), str(wheel)], capture_output=True, text=True, timeout=120)


def test_a_right_hash_written_in_hex_is_a_warning_and_the_tag_is_auditwheels(hexed):
    report = audit_one(hexed)
    assert report.error is None and report.passed
    assert not by_rule(report, "record-hash")
    found = by_rule(report, "record-hash-hex")  # every member's row is read, the Python file's too
    assert sorted(f.file for f in found) == sorted([EXT, "pkg/__init__.py"])
    assert all(f.severity == "warning" and "in hex" in f.message and "uv_build 0.8.13" in f.hint for f in found)
    assert report.deserved_tag == auditwheel_show(hexed)["overall_tag"]
    proc = run_cli("audit", "--any-platform-tag", hexed)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_wrong_hash_in_hex_is_still_a_mismatch(build, tmp_path):
    wrong = _wheel(build, tmp_path, lambda ext: _hex(ext + b"tampered"))
    report = audit_one(wrong)
    assert [f.file for f in by_rule(report, "record-hash")] == [EXT]
    assert [f.file for f in by_rule(report, "record-hash-hex")] == ["pkg/__init__.py"] and not report.passed


def test_pip_installs_it_installer_refuses_it_and_repair_writes_a_record_both_accept(hexed, tmp_path):
    python = make_venv(tmp_path / "venv")
    assert pip_install(python, hexed).returncode == 0
    proc = import_and_call(python, "pkg._hexed", tmp_path)
    assert proc.returncode == 0, proc.stderr
    refused = _installer(hexed, tmp_path / "refused")
    assert refused.returncode != 0 and "pkg/" in refused.stderr + refused.stdout
    out = tmp_path / "repaired"
    repaired = run_cli("repair", hexed, "-w", out)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        record = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))).decode()
    assert "sha256=" in record and hashlib.sha256(b"# the package\n").hexdigest() not in record
    accepted = _installer(wheel, tmp_path / "accepted")
    assert accepted.returncode == 0, accepted.stderr
    assert not by_rule(audit_one(wheel), "record-hash-hex")
