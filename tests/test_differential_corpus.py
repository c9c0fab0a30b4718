"""The 100-wheel differential against auditwheel 6.8.2 (opt-in: ``pytest --corpus``).

corpus/differential.tsv pins the wheels (fetched with corpus/fetch.py into $WHEELCHECK_DIFFERENTIAL or
~/.cache/wheelcheck-differential on first use); corpus/auditwheel/ holds auditwheel's cached answers.
bench/differential.py compares them; here each wheel must:
- agree with auditwheel, or differ only for a reason docs/differences.md lists;
- never FAIL where auditwheel accepts its claimed tags, unless the rules that fail it are those whose row
  in docs/differences.md says the wheel really breaks;
- be answered by wheelcheck where auditwheel itself fails (a traceback): there wheelcheck must be better.
"""
from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

from bench.differential import LISTING, auditwheel_answer, compare, default_wheel_dir, read_listing
from tests.helpers import ROOT
from wheelcheck.api import audit

pytestmark = pytest.mark.corpus

# Rules of severity error that make wheelcheck fail a wheel auditwheel accepts, each because the wheel
# breaks on real machines (docs/differences.md, row 13, says how), or because RECORD does not match what the
# wheel holds (row 9: pypa's installer and `wheel unpack` refuse it; pip installs it unchecked)
BREAKING_RULES = {"executable-stack", "cxx-abi-mismatch", "driver-vendored", "record-hash"}

PINNED = read_listing(LISTING) if LISTING.is_file() else []


@pytest.fixture(scope="session")
def differential_dir() -> Path:
    dest = default_wheel_dir()
    dest.mkdir(parents=True, exist_ok=True)
    with open(dest / ".fetch.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if any(not (dest / p.filename).is_file() for p in PINNED):
            proc = subprocess.run([sys.executable, str(ROOT / "corpus" / "fetch.py"), str(LISTING), str(dest)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                pytest.fail(f"fetching the differential corpus into {dest} failed:\n{proc.stdout}\n{proc.stderr}")
    return dest


@pytest.mark.parametrize("pinned", PINNED, ids=[p.filename for p in PINNED])
def test_agrees_with_auditwheel_or_differs_for_a_documented_reason(pinned, differential_dir):
    aw = auditwheel_answer(pinned.filename, differential_dir, refresh=False)
    assert aw is not None, f"no cached auditwheel answer for {pinned.filename}"
    (wc,) = audit([differential_dir / pinned.filename]).wheels
    row = compare(pinned, aw, wc)
    assert not row.unexplained, row.unexplained
    if row.false_fail:
        failing = {f.rule for f in wc.findings if f.severity == "error"}
        assert failing <= BREAKING_RULES, (failing, [f.message for f in wc.findings if f.severity == "error"])
    if row.auditwheel_error is not None:  # auditwheel could not answer: wheelcheck must (a tag, or a pure wheel)
        assert wc.error is None and (wc.deserved_tag or not wc.files), wc.error
