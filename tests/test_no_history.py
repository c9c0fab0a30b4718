"""What wheelcheck ships and prints says what the tool does, not how it came to be (docs/architecture.md's
rooms aside, the Prose section of the design): no numbered development session or round, no sweep letter, no
finding code of a sweep report, no "until session N" sentence. History lives in CHANGELOG.md and in git.

The texts checked: README.md, CHANGELOG.md, CONTRIBUTING.md, docs/, docker/README.md, the action's and the
hook's descriptions, the data wheelcheck ships (wheelcheck/data/*.json, policies/*.json), the report schemas,
and what `wheelcheck rules` prints for every rule; and the code's comments and docstrings (wheelcheck/, tools/,
bench/), which say what the code does and why, with a real wheel as the evidence. corpus/ holds the records of
past runs and is not checked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_cli

# Each pattern names one habit of a lab journal; each is narrow enough that the docs' own words pass
# (tests below show both sides).
HISTORY = {
    "a numbered session or round": re.compile(r"\b(?:session|round)s?\s+\d+\b", re.IGNORECASE),
    "a sweep named by letter": re.compile(r"\b(?i:sweeps?)\s?[A-Z]\b"),
    "a session or sweep told as a time": re.compile(r"\b(?:this|that|last|previous|earlier|next)\s+(?:session|sweep)\b",
                                                    re.IGNORECASE),
    "a finding code of a sweep report": re.compile(
        r"\bfindings?\b[^.\n]{0,40}\b[WMDF]\d{1,2}\b|\b[WMDF]\d{1,2}\b(?:'s)?[^.\n]{0,40}\bfindings?\b"),
    "what the tool used to do": re.compile(r"\b(?:wheelcheck|the rule|it) used to (?!be\b)\w+", re.IGNORECASE),
}


def shipped_texts() -> list[Path]:
    paths = [ROOT / name for name in ("README.md", "CHANGELOG.md", "CONTRIBUTING.md", "action.yml",
                                      ".pre-commit-hooks.yaml")]
    paths += [ROOT / "docker" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    paths += sorted((ROOT / "wheelcheck" / "data").glob("*.json")) + sorted((ROOT / "policies").glob("*.json"))
    paths += sorted((ROOT / "wheelcheck" / "report").glob("*-schema.json"))
    return [p for p in paths if p.exists()]


def history_in(text: str) -> list[str]:
    """Each match, with its kind and the words around it."""
    found = []
    for kind, pattern in HISTORY.items():
        for match in pattern.finditer(text):
            start, end = max(match.start() - 40, 0), match.end() + 40
            found.append(f"{kind}: ...{text[start:end]}...".replace("\n", " "))
    return found


@pytest.mark.parametrize("path", shipped_texts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_text_tells_no_history(path):
    assert history_in(path.read_text(encoding="utf-8")) == []


def source_files() -> list[Path]:
    paths = sorted((ROOT / "wheelcheck").rglob("*.py")) + sorted((ROOT / "tools").glob("*.py"))
    return paths + sorted((ROOT / "bench").glob("*.py")) + sorted((ROOT / "bench").glob("*.sh"))


def test_code_comments_tell_no_history():
    told = {str(p.relative_to(ROOT)): found for p in source_files()
            if (found := history_in(p.read_text(encoding="utf-8")))}
    assert told == {}


def test_rules_printed_tell_no_history():
    rules = json.loads((ROOT / "wheelcheck" / "data" / "rules.json").read_text(encoding="utf-8"))["rules"]
    listing = run_cli("rules")
    assert listing.returncode == 0 and history_in(listing.stdout) == []
    for rule in rules:
        proc = run_cli("rules", rule["id"])
        assert proc.returncode == 0 and rule["id"] in proc.stdout, rule["id"]
        assert history_in(proc.stdout) == [], rule["id"]


def test_sarif_rule_help_tells_no_history():
    sample = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-linux_x86_64.whl"
    proc = run_cli("audit", "--format", "sarif", "--fail-on", "info", str(sample))
    rules = json.loads(proc.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert rules and history_in(json.dumps(rules)) == []


@pytest.mark.parametrize("text", [
    "Until session 22 it was reported as a `record-hash` mismatch.",
    "the speed as sessions 27 and 28 measured it",
    "in round 3 of the review",
    "Until sweep N a file needing a bare libc.so counted for neither libc",
    "bench/sweepK/verify.sh repeats each check",
    "in repair sweep M's fixture (finding W2), an extension counts twice",
    "the plans that broke W1's and W2's fixtures, the findings of the review",
    "as measured this session",
    "wheelcheck used to refuse the wheel as bad input",
])
def test_history_is_found(text):
    assert history_in(text), text


@pytest.mark.parametrize("text", [
    "symbol-version: GLIBC_2.29 needed by exp2 → manylinux_2_31 at best",
    "a DT_RUNPATH with an empty entry; each round of the loop is bounded by the bytes that hold it",
    "the test session's fixtures are cached; a session-scoped fixture",
    "Rounded to 2 decimals: 0.15 s",
    "Apple M1 and M2 machines run aarch64 macOS wheels, not these",
    "docs/differences.md R9; rows d16 and d19 ([16](#d16))",
    "a finding has a rule id, a severity, the file and a hint",
    "the repair sweep's table is corpus/repair-sweep.md",
    "the C library used to build the wheel; libraries used to be loaded",
    "findings grouped by cause; W^X pages and x86-64-v2 ISA levels",
])
def test_legitimate_text_passes(text):
    assert history_in(text) == [], text


VERSION_NAMED = re.compile(r"\bwheelcheck(?:==|\s+v?)(\d+\.\d+(?:\.\d+)?)\b|\brev:\s+v(\d+\.\d+(?:\.\d+)?)\b")


def test_changelog_tops_with_unreleased_and_dates_each_release():
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.MULTILINE)
    assert headings and headings[0] == "[Unreleased]"
    for heading in headings[1:]:
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", heading), heading


def test_versions_named_are_this_one_or_a_release_the_changelog_lists():
    """A doc that speaks of "wheelcheck 0.2" while the package is 0.1.0 and no 0.2 was released misleads."""
    from wheelcheck._version import __version__

    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"),
                          re.MULTILINE)
    known = {__version__, *released}
    for path in shipped_texts():
        for match in VERSION_NAMED.finditer(path.read_text(encoding="utf-8")):
            named = match.group(1) or match.group(2)
            assert named in known, f"{path.relative_to(ROOT)} names wheelcheck {named}; known: {sorted(known)}"
