"""Differential tests against auditwheel over the real-wheel corpus (opt-in: ``--corpus``, from conftest.py).

Every wheel of corpus/dev-wheels.tsv found in the corpus directory is audited by
``auditwheel show --json`` and by wheelcheck's Python API; both must give the same tag, the same versioned
symbols and the same external libraries (libpython aside: wheelcheck reports it as a finding instead).

auditwheel resolves libraries that are not in the wheel from the host it runs on. When its answer shows it
did (an external library with a path), or it lists versioned symbols of a library wheelcheck does not, its
answer depends on this machine: then only what depends on the wheel alone is compared, and the reason is
reported as a warning in the test summary.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tests.helpers import run_cli
from wheelcheck.api import audit

pytestmark = pytest.mark.corpus

SCHEMA = Path(__file__).resolve().parents[1] / "wheelcheck" / "report" / "audit-schema.json"


def _auditwheel_show(path: Path) -> dict:
    pytest.importorskip("auditwheel")
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "show", "--json", str(path)],
                          capture_output=True, text=True)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"auditwheel show --json {path.name} printed no JSON (exit {proc.returncode}):\n{proc.stderr}")


def _is_libpython(soname: str) -> bool:
    return soname.startswith("libpython")


def _host_dependence(aw: dict, wc_versioned: dict[str, list[str]]) -> list[str]:
    """Why auditwheel's answer depends on this host, or [] when it depends on the wheel alone."""
    reasons = [f"auditwheel found {soname} on this host at {where}"
               for soname, where in aw.get("external_libs", {}).items() if where is not None]
    extra = sorted(set(aw.get("versioned_symbols", {})) - set(wc_versioned))
    if extra:
        reasons.append(f"auditwheel lists versioned symbols of {', '.join(extra)}, which no ELF file of the wheel needs")
    return reasons


def test_agrees_with_auditwheel(corpus_wheel: Path) -> None:
    wheel = corpus_wheel
    aw = _auditwheel_show(wheel)
    assert "error" not in aw, f"auditwheel: {aw['error']}"
    report = audit([wheel])
    (wc,) = report.wheels
    assert wc.error is None, wc.error

    aw_external = {soname for soname in aw["external_libs"] if not _is_libpython(soname)}
    reasons = _host_dependence(aw, wc.versioned_symbols)
    if not reasons:
        assert wc.deserved_tag == aw["overall_tag"]
        assert wc.versioned_symbols == aw["versioned_symbols"]
        assert set(wc.external_libs) == aw_external
        return

    # Host-dependent: auditwheel saw more than the wheel. What the wheel alone decides must still be there.
    warnings.warn(f"{wheel.name}: only host-independent facts compared: {'; '.join(reasons)} "
                  f"(tags: auditwheel {aw['overall_tag']}, wheelcheck {wc.deserved_tag})", stacklevel=1)
    assert set(wc.external_libs) <= aw_external
    for soname, versions in wc.versioned_symbols.items():
        assert set(versions) <= set(aw["versioned_symbols"].get(soname, ())), soname


def test_json_matches_schema(corpus_wheel: Path) -> None:
    wheel = corpus_wheel
    jsonschema = pytest.importorskip("jsonschema")
    proc = run_cli("audit", "--format", "json", wheel)
    assert proc.returncode in (0, 1), f"exit {proc.returncode}: {proc.stderr}"
    schema = json.loads(SCHEMA.read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator_class(schema).validate(json.loads(proc.stdout))
