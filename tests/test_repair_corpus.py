"""Repairing the real, already compliant wheels of the corpus (opt-in: ``--corpus``).

Nothing needs grafting, so the output must be the input byte for byte, unless a tag is added (the alias of
a policy the file name lacks: numpy 1.16.6's manylinux1 gains manylinux_2_5, as auditwheel adds it); then
repairing the output gives the output back. The re-audit of the output agrees with the audit of the input.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from wheelcheck.api import audit, repair

pytestmark = pytest.mark.corpus


def test_compliant_wheel_passes_through(corpus_wheel, tmp_path):
    wheel = corpus_wheel
    report = repair(wheel, tmp_path / "once")
    (outcome,) = report.wheels
    assert outcome.status == "repaired", outcome.message
    assert outcome.grafted == [] and outcome.patched == []
    out = Path(outcome.output)
    if out.name == wheel.name:
        assert out.read_bytes() == wheel.read_bytes()
    else:
        (again,) = repair(out, tmp_path / "twice").wheels
        assert Path(again.output).read_bytes() == out.read_bytes()
    before, after = audit(wheel).wheels[0], audit(out).wheels[0]
    assert after.passed and after.deserved_tag == before.deserved_tag
