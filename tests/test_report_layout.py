"""The audit report a person reads: verdict first, findings grouped by cause, most important first, a summary.

The wheel here is built like torch's: dozens of files sharing the same few causes (the same absolute
RUNPATH entries, a statically linked libstdc++ with STB_GNU_UNIQUE objects, a leaked protobuf), and one
extension that needs two libraries the wheel does not ship, the one reason it fails. Every file is built
with gcc/g++ at test time.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.fixtures.hygiene_sources import USES_VENDORED, VENDORED_NS_SRC
from tests.fixtures.sources import extension_source
from tests.fixtures.wheels import build_wheel
from tests.helpers import run_cli

RUNPATH = ("/opt/build/lib", "/opt/build/lib64")
RUNPATH_FLAGS = ("-Wl,--enable-new-dtags", *(f"-Wl,-rpath,{d}" for d in RUNPATH))
CXX_FILES = [f"pkg/bin/test_{i:02}.so" for i in range(12)] + [f"pkg/test/case_{i:02}.so" for i in range(12)]
C_FILES = [f"pkg/tools/tool_{i:02}.so" for i in range(16)]
PROTO_FILES = [f"pkg/lib/proto_{i}.so" for i in range(5)]
CORE = "pkg/_core.cpython-311-x86_64-linux-gnu.so"
EXTRA = "pkg/_extra.cpython-311-x86_64-linux-gnu.so"  # an extension exporting one function more: an info
MISSING = ("libmissing.so.1", "libother.so.2")

# A C++ test binary of the kind torch ships by the dozen: a static libstdc++ it exports, an inline
# function's static local (STB_GNU_UNIQUE), absolute RUNPATH entries from the build machine.
CXX_SRC = extension_source(
    "cxxtest", "    try { throw std::runtime_error(\"x\"); } catch (const std::exception &) { return ++seed(); }\n"
               "    return 0;",
    prelude="#include <stdexcept>\ninline int &seed() { static int s = 41; return s; }\n"
            "__attribute__((visibility(\"default\"))) int bump() { return ++seed(); }\n")
CORE_SRC = extension_source("_core", "    return missing_one() + other_one();",
                            prelude="extern int missing_one(void);\nextern int other_one(void);\n")


@pytest.fixture(scope="module")
def big_wheel(build, tmp_path_factory):
    """(wheel, the tag it would deserve without the two missing libraries)."""
    tmp = tmp_path_factory.mktemp("bigwheel")
    cxx = build.compile_c(CXX_SRC, "cxxtest.so", cxx=True, flags=("-static-libstdc++", *RUNPATH_FLAGS))
    tool = build.compile_c(extension_source("tool"), "tool.so", flags=RUNPATH_FLAGS)
    obj = build.compile_c(VENDORED_NS_SRC, "vendored.o", cxx=True, shared=False, flags=("-c", "-fPIC"))
    archive = tmp / "libvendored.a"
    subprocess.run(["ar", "rcs", str(archive), str(obj)], check=True)
    proto = build.compile_c(USES_VENDORED, "vendoring.so", cxx=True, libs=(archive,))
    stubs = [build.compile_c(f"int {name.split('.')[0][3:]}_one(void) {{ return 1; }}\n", name,
                             flags=(f"-Wl,-soname,{name}",)) for name in MISSING]
    core = build.compile_c(CORE_SRC, "_core.so", libs=stubs)
    extra = build.compile_c(extension_source("_extra", prelude="int extra_api(void) { return 1; }\n"), "_extra.so")
    members = {**{p: cxx for p in CXX_FILES}, **{p: tool for p in C_FILES}, **{p: proto for p in PROTO_FILES},
               CORE: core, EXTRA: extra}
    wheel = build_wheel(tmp, "bigpkg", "1.0", "cp311-cp311-linux_x86_64", members)
    proc = run_cli("audit", wheel, "--format", "json", *(f"--exclude={m}" for m in MISSING))
    deserved = json.loads(proc.stdout)["wheels"][0]["deserved_tag"]
    assert deserved.startswith("manylinux_"), proc.stdout[:2000]
    return wheel, deserved


def audit(wheel, *args):
    return run_cli("audit", "--any-platform-tag", wheel, *args)  # the wheel is unrepaired: linux_x86_64


def test_default_report_fits_and_says_why_first(big_wheel):
    wheel, deserved = big_wheel
    report = json.loads(audit(wheel, "--plat", deserved, "--format", "json").stdout)["wheels"][0]
    assert len(report["findings"]) > 120  # one line each would be far more than a screen
    proc = audit(wheel, "--plat", deserved)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1 and len(lines) <= 60, proc.stdout
    assert lines[0] == f"{wheel.name}: FAIL deserves linux_x86_64, required {deserved}"
    reason = next(i for i, line in enumerate(lines) if line.lstrip().startswith("error "))
    assert reason < 5
    assert lines[reason] == (f"  error external-library: {CORE}: needs {', '.join(MISSING)}, which the wheel does "
                             "not provide → linux at best")


def test_repeats_are_one_group_with_a_count_and_the_first_files(big_wheel):
    wheel, deserved = big_wheel
    lines = audit(wheel, "--plat", deserved).stdout.splitlines()
    rpath = [i for i, line in enumerate(lines) if line.startswith("  warning rpath-absolute")]
    assert len(rpath) == 1  # two entries on the same 40 files: one group
    assert lines[rpath[0]] == (f"  warning rpath-absolute: 40 files under pkg/bin, pkg/test and pkg/tools: RUNPATH "
                               f"{', '.join(RUNPATH)} is an absolute path outside the wheel, searched on every "
                               "machine that installs it")
    assert lines[rpath[0] + 1] == "    pkg/bin/test_00.so, pkg/bin/test_01.so, pkg/bin/test_02.so and 37 more " \
                                  "(-v lists every file)"
    assert lines[rpath[0] + 2].startswith("    why: ") and lines[rpath[0] + 3].startswith("    fix: drop it")
    unique = next(line for line in lines if line.startswith("  warning gnu-unique-symbols"))
    assert unique.startswith("  warning gnu-unique-symbols: 24 files under pkg/bin and pkg/test: ")
    protobuf = next(line for line in lines if line.startswith("  warning leaked-library-symbols"))
    assert protobuf == "  warning leaked-library-symbols: 5 files under pkg/lib: exports protobuf symbols"


def test_nothing_is_lost_in_verbose_text_and_json(big_wheel):
    wheel, deserved = big_wheel
    doc = json.loads(audit(wheel, "--plat", deserved, "--format", "json").stdout)["wheels"][0]
    verbose = audit(wheel, "--plat", deserved, "-v").stdout
    assert {f["path"] for f in doc["files"]} == set(CXX_FILES + C_FILES + PROTO_FILES + [CORE, EXTRA])
    for group in doc["groups"]:  # its headline, then every file with what differs from the headline
        start = verbose.index(f"  {group['severity']} {group['rule']}: ")
        block = verbose[start:].split("\n  ", 1)[0] + "\n" + "".join(
            line + "\n" for line in verbose[start:].splitlines()[1:] if line.startswith("    "))
        assert group["cause"] in block
        for i in group["findings"]:
            finding = doc["findings"][i]
            assert finding["file"] in block and (finding["message"] in block or finding["message"] == finding["cause"])
    members = sorted(i for g in doc["groups"] for i in g["findings"])
    assert members == list(range(len(doc["findings"])))  # every finding in exactly one group
    for group in doc["groups"]:
        assert sorted({doc["findings"][i]["file"] for i in group["findings"]}) == group["files"]


def test_order_errors_then_warnings_by_reach_then_infos(big_wheel):
    wheel, deserved = big_wheel
    groups = json.loads(audit(wheel, "--plat", deserved, "--format", "json").stdout)["wheels"][0]["groups"]
    rank = {"error": 0, "warning": 1, "info": 2}
    keys = [(rank[g["severity"]], -len(g["files"]), -g["count"]) for g in groups]
    assert keys == sorted(keys) and groups[0]["severity"] == "error" and groups[-1]["severity"] == "info"
    shown = [line.split(": ")[0].strip() for line in audit(wheel, "--plat", deserved, "-v").stdout.splitlines()
             if re.match(r"  (error|warning|info) ", line)]
    assert shown == [f"{g['severity']} {g['rule']}" for g in groups]  # the text follows the same order


def test_summary_counts_by_severity_and_rule_exposure_and_time(big_wheel):
    wheel, deserved = big_wheel
    doc = json.loads(audit(wheel, "--plat", deserved, "--format", "json").stdout)["wheels"][0]
    s = doc["summary"]
    counts = {sev: sum(f["severity"] == sev for f in doc["findings"]) for sev in ("error", "warning", "info")}
    assert s["severities"] == counts and sum(s["rules"].values()) == len(doc["findings"])
    assert s["leaked"]["protobuf"]["files"] == 5 and s["elf_files"] == len(doc["files"])
    assert s["exported_symbols"] == sum(f["exported_symbols"] for f in doc["files"]) and s["seconds"] > 0
    tail = audit(wheel, "--plat", deserved).stdout.splitlines()[-3:]
    assert re.fullmatch(rf"  summary: {counts['error']} errors, {counts['warning']} warnings(, {counts['info']} "
                        rf"infos? \(shown with -v\))? in \d+ groups; {len(doc['files'])} ELF files audited in "
                        r"[0-9.]+ s", tail[0]), tail[0]
    assert tail[1] == "  by rule: " + ", ".join(f"{rule} {n}" for rule, n in s["rules"].items())
    # the static libstdc++ of the C++ files (libstdcxx-exported) counts as a leaked library beside protobuf
    leaked = ", ".join(f"{name} ({e['symbols']:,} symbols in {e['files']} files)" for name, e in s["leaked"].items())
    assert list(s["leaked"]) == ["libstdc++", "protobuf"]
    assert tail[2] == f"  exposure: {s['exported_symbols']:,} exported symbols; leaked library families: {leaked}"


def test_several_wheels_end_with_one_table(big_wheel, tmp_path):
    wheel, deserved = big_wheel
    missing = tmp_path / "gone-1.0-py3-none-any.whl"
    proc = audit(wheel, missing)
    assert proc.returncode == 2
    lines = proc.stdout.splitlines()
    table = lines[lines.index("summary of 2 wheels:") + 1:]
    assert table[0].split() == ["wheel", "result", "deserves", "errors", "warnings", "infos", "seconds"]
    assert table[1].split()[:3] == [wheel.name, "PASS", "linux_x86_64"]  # no claim and no --plat: it passes
    assert table[2].split() == [missing.name, "ERROR"] and len(table) == 3
    assert "no such file" not in proc.stdout and proc.stderr.count("no such file") == 1


def test_a_rules_why_is_said_once_however_its_fixes_differ():
    """Groups of one rule whose fixes name different libraries share one why: it was repeated per fix."""
    from wheelcheck.report.text_lines import explanation_lines

    explained: set[tuple] = set()
    first = explanation_lines("external-library", "It is missing.", "vendor liba", explained, "    ")
    second = explanation_lines("external-library", "It is missing.", "vendor libb", explained, "    ")
    again = explanation_lines("external-library", "It is missing.", "vendor libb", explained, "    ")
    assert [line.text for line in first] == ["    why: It is missing.", "    fix: vendor liba"]
    assert [line.text for line in second] == ["    fix: vendor libb"] and again == []


def test_a_rule_shows_its_first_groups_and_counts_the_rest(build, tmp_path):
    """Six external libraries, one group each: the default report shows the first four and says two more are
    behind -v, which shows all six."""
    from tests.fixtures.repair_scenario import EXT_SUFFIX
    from tests.fixtures.sources import extension_source

    members = {}
    for i in range(6):
        lib = build.compile_c(f"int f{i}(void) {{ return {i}; }}\n", f"libgone{i}.so.1",
                              flags=(f"-Wl,-soname,libgone{i}.so.1",))
        members[f"pkg/_m{i}{EXT_SUFFIX}"] = build.compile_c(
            extension_source(f"_m{i}", f"    return f{i}();", prelude=f"extern int f{i}(void);"), f"_m{i}.so", libs=(lib,))
    wheel = build_wheel(tmp_path, "many", "1.0", "cp311-cp311-manylinux_2_17_x86_64", members)
    lines = audit(wheel).stdout.splitlines()
    heads = [line for line in lines if line.startswith("  error external-library: ")]
    assert len(heads) == 5 and heads[-1] == "  error external-library: 2 more groups like these (-v shows each)"
    verbose = audit(wheel, "-v").stdout.splitlines()
    assert len([line for line in verbose if line.startswith("  error external-library: ")]) == 6


def test_the_default_report_fits_a_screen_however_many_rules_fire():
    """Fifteen rules with five causes each: the default report shows fewer groups per rule, then fewer groups, until
    it fits 60 lines, and counts what it leaves to -v; -v shows every group."""
    from wheelcheck.audit.findings import AuditReport, Finding, WheelReport
    from wheelcheck.report.audit_text import SCREEN, render_audit_text
    from wheelcheck.report.rules_doc import rule_ids

    findings = [Finding(rule, "error" if n % 2 else "warning", f"pkg/lib{rule}{cause}.so",
                        f"cause {cause} of {rule}", f"fix {cause}", cause=f"cause {cause} of {rule}")
                for n, rule in enumerate(rule_ids()[:15]) for cause in range(5)]
    wheel = WheelReport("many-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", arch="x86_64", libc="glibc",
                        deserved_tag="linux_x86_64", passed=False, findings=findings)
    lines = [line.text for line in render_audit_text(AuditReport([wheel]))]
    assert len(lines) <= SCREEN and lines[0].startswith(wheel.filename)
    assert any("more group" in line and "(-v shows each)" in line for line in lines)
    assert any(line.startswith("  summary: ") for line in lines)  # the summary always stays
    verbose = "\n".join(line.text for line in render_audit_text(AuditReport([wheel]), verbosity=1))
    assert all(f.message in verbose for f in findings)
