"""Grouping, ordering and summing findings: hand-built findings, no compiler."""

from __future__ import annotations

from wheelcheck.audit.finding_groups import group_findings
from wheelcheck.audit.findings import summarize
from wheelcheck.audit.findings import FileReport, Finding, WheelReport
from wheelcheck.report.finding_lines import describe_files


def rpath(file: str, entry: str) -> Finding:
    return Finding("rpath-absolute", "warning", file, f"RUNPATH {entry} is an absolute path outside the wheel",
                   "drop it", subject=entry)


def unique(file: str, n: int) -> Finding:
    return Finding("gnu-unique-symbols", "warning", file, f"exports {n} STB_GNU_UNIQUE symbols", "hide them",
                   count=n, cause="exports STB_GNU_UNIQUE symbols")


def test_one_cause_on_many_files_is_one_group():
    findings = [unique(f"pkg/bin/t{i}", i + 1) for i in range(5)]
    (group,) = group_findings(findings)
    assert group.headline == "exports STB_GNU_UNIQUE symbols" and group.count == 15
    assert group.files == tuple(f"pkg/bin/t{i}" for i in range(5)) and group.findings == tuple(findings)


def test_lone_finding_keeps_its_own_words():
    (group,) = group_findings([unique("pkg/a.so", 6)])
    assert group.headline == "exports 6 STB_GNU_UNIQUE symbols"


def test_subjects_over_the_same_files_share_one_line():
    files = ["torch/bin/a", "torch/test/b"]
    findings = [rpath(f, e) for f in files for e in ("/lib/intel64", "/lib/win-x64")] + [rpath("torch/lib/c", "/x")]
    merged, alone = group_findings(findings)
    assert merged.headline == "RUNPATH /lib/intel64, /lib/win-x64 is an absolute path outside the wheel"
    assert merged.subjects == ("/lib/intel64", "/lib/win-x64") and merged.files == tuple(files)
    assert len(merged.findings) == 4 and alone.files == ("torch/lib/c",)  # other files: its own group


def test_different_fix_or_severity_is_never_merged():
    a, b = rpath("x.so", "/a"), rpath("x.so", "/b")
    b_error = Finding(b.rule, "error", b.file, b.message, b.hint, subject=b.subject)
    b_other_fix = Finding(b.rule, b.severity, b.file, b.message, "another fix", subject=b.subject)
    assert len(group_findings([a, b_error])) == 2 and len(group_findings([a, b_other_fix])) == 2
    assert len(group_findings([a, b])) == 1


def test_order_errors_then_reach_then_symbols_then_infos():
    error = Finding("external-library", "error", "pkg/one.so", "needs libx.so.1", "vendor it", subject="libx.so.1")
    info = Finding("symbol-version", "info", "pkg/one.so", "GLIBC_2.29 needed by exp2", "rebuild")
    wide = [unique(f"pkg/w{i}", 1) for i in range(3)]
    heavy = [Finding("leaked-library-symbols", "warning", f"pkg/h{i}", "exports 900 LLVM symbols", "hide it",
                     count=900, cause="exports LLVM symbols", subject="LLVM") for i in range(2)]
    light = [Finding("leaked-library-symbols", "warning", f"pkg/l{i}", "exports 3 zlib symbols", "hide it",
                     count=3, cause="exports zlib symbols", subject="zlib") for i in range(2)]
    groups = group_findings([info, *light, *heavy, *wide, error])
    assert [g.headline for g in groups] == ["needs libx.so.1", "exports STB_GNU_UNIQUE symbols",
                                            "exports LLVM symbols", "exports zlib symbols",
                                            "GLIBC_2.29 needed by exp2"]


def test_explanation_and_fix_are_separate_fields():
    own = Finding("executable-stack", "warning", "bin/tool", "needs an executable stack", "link with -z noexecstack",
                  explanation="Every stack of the program is executable.")
    default = Finding("rpath-absolute", "warning", "x.so", "RUNPATH /a is outside", "drop it")
    assert own.explanation == "Every stack of the program is executable." and own.hint.startswith("link")
    assert default.explanation.startswith("The loader searches it")  # the rules reference's why
    assert default.cause == default.message and "why" not in default.hint
    assert set(own.to_dict()) >= {"message", "explanation", "hint", "cause", "subject", "count"}


def test_summary_counts_rules_exposure():
    leak = Finding("leaked-library-symbols", "warning", "a.so", "exports 40 protobuf symbols", "hide it", count=40,
                   cause="exports protobuf symbols", subject="protobuf")
    files = [FileReport(p, "x86_64", None, [], [], [], False, {}, None, n) for p, n in (("a.so", 50), ("b.so", 7))]
    wheel = WheelReport("w-1.0-py3-none-linux_x86_64.whl", files=files, seconds=1.5,
                        findings=[leak, rpath("a.so", "/a"), rpath("b.so", "/a"), unique("b.so", 2)])
    s = summarize(wheel)
    assert s.severities == {"error": 0, "warning": 4, "info": 0} and s.groups == 3
    assert list(s.rules.items()) == [("rpath-absolute", 2), ("gnu-unique-symbols", 1), ("leaked-library-symbols", 1)]
    assert s.exported_symbols == 57 and s.leaked == {"protobuf": {"files": 1, "symbols": 40}}
    doc = wheel.to_dict()
    assert doc["summary"]["seconds"] == 1.5 and [g["findings"] for g in doc["groups"]] == [[1, 2], [0], [3]]


def test_files_are_described_by_count_and_directories():
    assert describe_files(("torch/bin/a",)) == "torch/bin/a" and describe_files((None,)) == ""
    assert describe_files(("torch/bin/a", "torch/bin/b", "torch/test/c")) == "3 files under torch/bin and torch/test"
    many = tuple(f"tf/{d}/x.so" for d in "abcde")
    assert describe_files(many) == "5 files under tf"
    assert describe_files(("a.so", "b/c.so")) == "2 files"  # one at the top: no common directory


def test_old_attribute_names_still_read_and_write():
    w = WheelReport("w-1.0-py3-none-any.whl")
    w.best_tag = "manylinux_2_17_x86_64"
    w.target_tag = "manylinux_2_17_x86_64"
    assert w.deserved_tag == w.best_tag and w.required_tag == w.target_tag
    assert "best_tag" not in w.to_dict() and w.to_dict()["deserved_tag"] == "manylinux_2_17_x86_64"
