"""The rules reference: docs/rules.md, `wheelcheck rules` and the rule ids in the code agree."""

from __future__ import annotations

import re

from tests.helpers import ROOT, run_cli
from wheelcheck.report.rules_doc import find_rule, render_markdown, rule_ids

# every way the code names a rule: Finding("id", ...), Finding(rule="id"), Constraint("id", ...), rule="id"
_RULE_LITERAL = re.compile(r'(?:Finding\(\s*|Constraint\(\s*|rule=)"([a-z][a-z0-9-]*)"')


def test_docs_rules_md_is_generated_from_the_table():
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == render_markdown(), \
        "docs/rules.md is stale: run python tools/gen_rules_doc.py"


def test_every_rule_in_the_code_is_documented():
    used = set()
    for path in (ROOT / "wheelcheck").rglob("*.py"):
        used |= set(_RULE_LITERAL.findall(path.read_text(encoding="utf-8")))
    assert len(used) >= 25
    assert used <= set(rule_ids()), sorted(used - set(rule_ids()))
    ids = rule_ids()
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"[a-z][a-z0-9-]*", i) for i in ids)
    assert set(ids) <= used | {"musl-version"}  # nothing documented that the code never reports


def test_cli_rules_prints_the_same_text():
    proc = run_cli("rules", "executable-stack")
    rule = find_rule("executable-stack")
    assert proc.returncode == 0 and rule["why"] in proc.stdout and rule["fix"] in proc.stdout
    listing = run_cli("rules")
    assert listing.returncode == 0 and all(i in listing.stdout for i in rule_ids())
    bad = run_cli("rules", "no-such-rule")
    assert bad.returncode == 2 and "no-such-rule" in bad.stderr
