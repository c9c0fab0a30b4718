"""Bad input: every hostile or broken wheel is one line on stderr naming the file and the problem, exit 2."""

from __future__ import annotations

import zipfile

import pytest

from tests.fixtures import wheels
from tests.helpers import AUDITWHEEL_BUNDLED, run_cli

CASES = {
    "not_a_zip": (wheels.not_a_zip, "not a zip file"),
    "truncated_zip": (wheels.truncated_zip, "truncated or corrupt zip"),
    "dotdot": (wheels.member_with_dotdot, "escapes the wheel"),
    "absolute": (wheels.member_absolute, "absolute path"),
    "duplicate": (wheels.duplicate_members, "appears twice"),
    "bomb_declared_size": (wheels.zip_bomb_declared_size, "absurd size"),
    "bomb_ratio": (wheels.zip_bomb_ratio, "compression ratio"),
    "truncated_elf": (wheels.truncated_elf, "truncated"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_wheel_is_one_line_exit_2(case, tmp_path):
    make, problem = CASES[case]
    wheel = make(tmp_path)
    proc = run_cli("audit", wheel)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert wheel.name in errors[0] and problem in errors[0], errors[0]


def test_bad_wheel_in_json_report(tmp_path):
    wheel = wheels.not_a_zip(tmp_path)
    proc = run_cli("audit", "--format", "json", wheel)
    assert proc.returncode == 2
    assert '"error"' in proc.stdout and "not a zip file" in proc.stdout


def test_missing_file_and_empty_glob(tmp_path):
    proc = run_cli("audit", tmp_path / "nope-1.0-py3-none-any.whl")
    assert proc.returncode == 2 and "no such file" in proc.stderr
    proc = run_cli("audit", str(tmp_path / "*.whl"))
    assert proc.returncode == 2 and "no file matches" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_record_mismatch_is_a_finding_not_an_error(tmp_path):
    wheel = wheels.record_mismatch(tmp_path)
    proc = run_cli("audit", "--format", "json", wheel)
    assert proc.returncode == 1, proc.stderr
    assert '"rule": "record-hash"' in proc.stdout


def test_record_hash_with_base64_padding_matches(tmp_path):
    """Some tools write the digest with its base64 padding ('='); the hash is the same, pip installs the wheel."""
    with zipfile.ZipFile(AUDITWHEEL_BUNDLED / "glibc/testsimple-0.0.1-cp313-cp313-linux_x86_64.whl") as zf:
        ext = next(zf.read(n) for n in zf.namelist() if n.endswith(".so"))
    padded = wheels.record_hash(ext) + "="
    assert len(padded.partition("=")[2]) == 44  # 32 bytes: 43 base64 characters and one "=" of padding
    wheel = wheels.build_wheel(tmp_path, "padded", "1.0", wheels.TAG, {wheels.EXT_NAME: ext},
                               record_override={wheels.EXT_NAME: (padded, len(ext))})
    proc = run_cli("audit", "--format", "json", wheel)
    assert '"rule": "record-hash"' not in proc.stdout
    broken = wheels.build_wheel(tmp_path / "broken", "padded", "1.0", wheels.TAG, {wheels.EXT_NAME: ext},
                                record_override={wheels.EXT_NAME: (padded[:-2] + "A=", len(ext))})
    assert '"rule": "record-hash"' in run_cli("audit", "--format", "json", broken).stdout


def test_unknown_plat_is_usage_error():
    wheel = AUDITWHEEL_BUNDLED / "glibc/testsimple-0.0.1-cp313-cp313-linux_x86_64.whl"
    proc = run_cli("audit", "--plat", "manylinux_9_99_x86_64", wheel)
    assert proc.returncode == 2 and "manylinux_9_99" in proc.stderr
    proc = run_cli("audit", "--plat", "manylinux_2_17_aarch64", wheel)
    assert proc.returncode == 2 and "aarch64" in proc.stderr


def test_bad_policy_file(tmp_path):
    wheel = AUDITWHEEL_BUNDLED / "glibc/testsimple-0.0.1-cp313-cp313-linux_x86_64.whl"
    bad = tmp_path / "policy.json"
    bad.write_text("{not json")
    proc = run_cli("audit", "--policy-file", bad, wheel)
    assert proc.returncode == 2 and "policy.json" in proc.stderr and "not valid JSON" in proc.stderr
    bad.write_text('{"name": "manylinux_2_17", "priority": "high"}')
    proc = run_cli("audit", "--policy-file", bad, wheel)
    assert proc.returncode == 2 and "priority" in proc.stderr
