"""The rules reference, rendered from data/rules.json: Markdown for docs/rules.md, text for `wheelcheck rules`."""

from __future__ import annotations

from wheelcheck.data import load_table

__all__ = ["rule_ids", "find_rule", "decision", "render_markdown", "render_rule_text", "render_index_text"]


def _rules() -> list[dict]:
    return load_table("rules.json")["rules"]


def rule_ids() -> list[str]:
    return [r["id"] for r in _rules()]


def find_rule(rule_id: str) -> dict | None:
    return next((r for r in _rules() if r["id"] == rule_id), None)


def decision(rule: dict) -> str:
    """What the rule does to the platform tag and to the audit's result, and why."""
    return rule.get("decision") or "Never changes the tag."


def render_markdown() -> str:
    table = load_table("rules.json")
    out = ["# Rules reference", "",
           "Every finding has a stable rule id. This file is generated from `wheelcheck/data/rules.json` "
           "(`python tools/gen_rules_doc.py`); `wheelcheck rules [ID]` prints the same text.", "",
           "Each rule's **Decision** says whether it can lower the platform tag or fail the audit. The test: "
           "is there a real machine on which a wheel with this finding fails to install or load? Only then "
           "does a rule lower the tag (or, for rules that do not judge the tag, fail the audit); otherwise it "
           "warns. Verdict differences from auditwheel are listed in "
           "[differences.md](differences.md) with their reasons.", ""]
    groups: dict[str, list[dict]] = {}
    for rule in table["rules"]:
        groups.setdefault(rule["group"], []).append(rule)
    out += ["| rule | default severity | group |", "|---|---|---|"]
    out += [f"| [`{r['id']}`](#{r['id']}) | {r['severity']} | {r['group']} |" for r in table["rules"]]
    for group, rules in groups.items():
        out += ["", f"## {group}"]
        for rule in rules:
            out += ["", f"### {rule['id']}", "", f"Default severity: {rule['severity']}.", "",
                    f"**Detects.** {rule['detects']}", "", f"**Why it breaks programs.** {rule['why']}", "",
                    f"**Fix.** {rule['fix']}", "", f"**Decision.** {decision(rule)}"]
    out += ["", "## Policy settings", "", table["policy_note"], "",
            "| field | default | effect |", "|---|---|---|"]
    out += [f"| `{s['field']}` | {s['default']} | {s['effect']} |" for s in table["policy_settings"]]
    return "\n".join(out) + "\n"


def render_rule_text(rule: dict) -> str:
    return (f"{rule['id']} ({rule['group']}; default severity: {rule['severity']})\n"
            f"  Detects: {rule['detects']}\n  Why: {rule['why']}\n  Fix: {rule['fix']}\n"
            f"  Decision: {decision(rule)}\n")


def render_index_text() -> str:
    table = load_table("rules.json")
    width = max(len(r["id"]) for r in table["rules"])
    lines = [f"{r['id']:<{width}}  {r['severity']}" for r in table["rules"]]
    lines += ["", "Policy settings (" + table["policy_note"] + "):"]
    lines += [f"  {s['field']} (default {s['default']}): {s['effect']}" for s in table["policy_settings"]]
    lines += ["", "wheelcheck rules ID prints what a rule detects, why it breaks programs and how to fix it."]
    return "\n".join(lines) + "\n"
