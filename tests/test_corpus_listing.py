"""The differential's listing, fetch script and comparison, checked without the network or the wheels.

The wheels themselves are judged by tests/test_differential_corpus.py (``pytest --corpus``).
"""
from __future__ import annotations

import json
import re
import sys

from bench.differential import (ANSWERS, LISTING, REASONS, Pinned, compare, meets, rank, read_listing,
                                summary_record)
from tests.helpers import ROOT
from wheelcheck.audit.findings import Finding, WheelReport

sys.path.insert(0, str(ROOT / "corpus"))
import fetch  # noqa: E402  (corpus/fetch.py is a script, not a package module)

ARCHES = {"x86_64", "aarch64", "i686", "ppc64le", "s390x", "armv7l", "riscv64"}


def test_the_listing_pins_at_least_100_varied_wheels():
    pinned = read_listing()
    names = [p.filename for p in pinned]
    assert len(names) >= 100 and len(set(names)) == len(names)
    assert ARCHES <= {p.kind.split()[0] for p in pinned}
    assert sum("musl" in p.kind for p in pinned) >= 5
    platforms = {tag for n in names for tag in n[:-4].rsplit("-", 1)[1].split(".")}
    assert {"manylinux1_x86_64", "manylinux2010_x86_64"} <= platforms
    assert any(t.startswith("manylinux_2_39_") for t in platforms)
    assert all(p.why for p in pinned), "every wheel says why it was chosen"


def test_every_row_has_a_hash_and_a_small_cached_auditwheel_answer():
    for filename, digest in fetch.rows(LISTING):
        assert digest and re.fullmatch(r"[0-9a-f]{64}", digest), filename
        answer = ANSWERS / (filename[:-4] + ".json")
        assert answer.is_file(), f"no auditwheel answer for {filename}: bench/differential.py --refresh-auditwheel"
        assert answer.stat().st_size < 100_000  # pyside6-essentials, with hundreds of Qt libraries, is 69 kB
        doc = json.loads(answer.read_text())
        assert doc["auditwheel"] == "6.8.2"
        assert (doc["show"] or {}).get("overall_tag") or doc["error"], filename


def test_fetch_asks_pip_for_exactly_the_pinned_tags(tmp_path):
    command = fetch.pip_command("foo-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", tmp_path)
    assert command[-1] == "foo==1.0"
    assert command[command.index("--python-version") + 1] == "3.11"
    assert command[command.index("--abi") + 1] == "cp311"
    platforms = [command[i + 1] for i, arg in enumerate(command) if arg == "--platform"]
    assert platforms == ["manylinux2014_x86_64", "manylinux_2_17_x86_64"]
    assert "--no-deps" in command and "--only-binary=:all:" in command
    # pinned files are fetched whatever Python runs pip (mitmproxy_linux 0.12.15 is py3 but requires 3.12)
    assert "--ignore-requires-python" in command

    pure = fetch.pip_command("bar-2.0-py3-none-manylinux_2_28_aarch64.whl", tmp_path)
    assert "--python-version" not in pure and pure[pure.index("--abi") + 1] == "none"

    py2 = fetch.pip_command("old-3.1.2-py2-none-manylinux1_x86_64.whl", tmp_path)  # not found without
    assert py2[py2.index("--python-version") + 1] == "2.7"

    requirements = tmp_path / "r.txt"
    hashed = fetch.pip_command("bar-2.0-py3-none-manylinux_2_28_aarch64.whl", tmp_path, requirements)
    assert hashed[-3:] == ["--require-hashes", "-r", str(requirements)]


def test_fetch_reads_hashes_from_any_column(tmp_path):
    listing = tmp_path / "l.tsv"
    listing.write_text("# comment\n\nfoo-1.0-py3-none-manylinux1_x86_64.whl\tx86_64\tsha256:" + "a" * 64
                       + "\nbar-1.0-py3-none-manylinux1_x86_64.whl\tdev\n")
    assert fetch.rows(listing) == [("foo-1.0-py3-none-manylinux1_x86_64.whl", "a" * 64),
                                   ("bar-1.0-py3-none-manylinux1_x86_64.whl", None)]


def test_tag_ranks_follow_glibc_and_legacy_aliases():
    assert rank("manylinux2014_x86_64") == rank("manylinux_2_17_x86_64") > rank("manylinux_2_28_x86_64")
    assert rank("linux_x86_64") is None
    assert meets("manylinux_2_17_x86_64", ["manylinux_2_28_x86_64"])
    assert not meets("manylinux_2_28_x86_64", ["manylinux2014_x86_64", "manylinux_2_17_x86_64"])
    assert not meets("linux_x86_64", ["manylinux_2_28_x86_64"])


def _report(tag: str, **kw) -> WheelReport:
    return WheelReport(filename="w-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", arch="x86_64", libc="glibc",
                       deserved_tag=tag, deserved_tags=[tag], claimed_tags=["manylinux_2_28_x86_64"],
                       required_tag="manylinux_2_28_x86_64", **kw)


PINNED = Pinned("w-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "x86_64", "test")


def _show(tag: str, external: dict | None = None, versioned: dict | None = None) -> dict:
    return {"exit": 0, "error": None, "show": {"overall_tag": tag, "external_libs": external or {},
                                               "versioned_symbols": versioned or {}}}


def test_compare_agreement_and_host_dependence():
    row = compare(PINNED, _show("manylinux_2_28_x86_64", {"libgomp.so.1": "/lib/libgomp.so.1"}),
                  _report("manylinux_2_28_x86_64", external_libs=["libgomp.so.1"]))
    assert row.same and row.host_dependent == ["libgomp.so.1 from /lib/libgomp.so.1"]


def test_compare_explains_an_auditwheel_crash_and_flags_the_unexplained():
    crash = {"exit": 1, "error": "AttributeError: 'Section' object has no attribute 'iter_versions'", "show": None}
    row = compare(PINNED, crash, _report("linux_x86_64", passed=False))
    assert [r for r, _ in row.differences] == ["d16"] and not row.false_fail

    stricter = _report("linux_x86_64", passed=False, external_libs=["libfoo.so.1"], findings=[
        Finding("external-library", "error", "w/x.so", "needs libfoo.so.1", limit="linux_x86_64")])
    row = compare(PINNED, _show("manylinux_2_28_x86_64"), stricter)
    assert row.unexplained and row.false_fail


def test_compare_names_a_driver_library_difference():
    row = compare(PINNED, _show("linux_x86_64", {"libcuda.so.1": None}), _report("manylinux_2_28_x86_64"))
    assert [r for r, _ in row.differences] == ["d12"]


def test_every_reason_links_to_a_row_of_differences_md():
    text = (ROOT / "docs" / "differences.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="(d\d+)"></a>', text))
    assert set(REASONS) <= anchors, sorted(set(REASONS) - anchors)


def test_compare_names_a_record_mismatch_d9_and_a_breaking_hygiene_error_d13():
    """eckitlib 2.5.0: 25 RECORD rows do not match their members; auditwheel never reads the hashes."""
    mismatch = Finding("record-hash", "error", "w.libs/libssl.so", "content does not match RECORD")
    stack = Finding("executable-stack", "error", "w/x.so", "asks for an executable stack")
    row = compare(PINNED, _show("manylinux_2_28_x86_64"),
                  _report("manylinux_2_28_x86_64", passed=False, findings=[mismatch]))
    assert [r for r, _ in row.differences] == ["d9"] and row.false_fail and not row.unexplained
    row = compare(PINNED, _show("manylinux_2_28_x86_64"),
                  _report("manylinux_2_28_x86_64", passed=False, findings=[mismatch, stack]))
    assert [r for r, _ in row.differences] == ["d9", "d13"]
    row = compare(PINNED, _show("manylinux_2_28_x86_64"), _report("manylinux_2_28_x86_64", passed=False))
    assert row.unexplained  # a FAIL with no error finding: nothing explains it


def test_compare_names_whole_wheel_and_instruction_errors_d24_d25():
    """A FAIL auditwheel's tags do not explain, on a rule it has no counterpart of: the WHEEL file's Tag lines
    (datatable 1.1.0 says linux_x86_64 under a manylinux name) or instructions beyond the level claimed."""
    tags = Finding("wheel-metadata", "error", None, "WHEEL Tag linux_x86_64 is not a tag of the file name")
    isa = Finding("isa-instructions", "error", "w/x.so", "vpaddd needs x86-64-v3; the ISA note claims x86-64-v2")
    row = compare(PINNED, _show("manylinux_2_28_x86_64"),
                  _report("manylinux_2_28_x86_64", passed=False, findings=[tags, isa]))
    assert [r for r, _ in row.differences] == ["d24", "d25"] and row.false_fail and not row.unexplained


def test_the_summary_counts_each_wheel_once():
    same = compare(PINNED, _show("manylinux_2_28_x86_64"), _report("manylinux_2_28_x86_64"))
    crash = compare(PINNED, {"exit": 1, "error": "ELFError", "show": None}, _report("manylinux_2_28_x86_64"))
    driver = compare(PINNED, _show("linux_x86_64", {"libcuda.so.1": None}), _report("manylinux_2_28_x86_64"))
    stack = compare(PINNED, _show("manylinux_2_28_x86_64"), _report("manylinux_2_28_x86_64", passed=False, findings=[
        Finding("executable-stack", "error", "w/x.so", "asks for an executable stack")]))
    lost = compare(PINNED, _show("manylinux_2_28_x86_64"), _report("manylinux_2_28_x86_64", passed=False))
    s = summary_record([same, crash, driver, stack, lost], ["skipped.whl"])
    assert (s["compared"], s["skipped"], s["agree"], s["auditwheel_failed"], s["documented"], s["unexplained"]) == (
        5, 1, 1, 1, 2, 1)
    assert s["fails_by_design"] == [{"wheel": PINNED.filename, "rows": ["d13"]}]
    assert s["auditwheel"] == "6.8.2" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", s["date"])
