#!/usr/bin/env python3
"""Regenerate docs/rules.md from wheelcheck/data/rules.json (tests/test_rules_doc.py checks they agree)."""

from pathlib import Path

from wheelcheck.report.rules_doc import render_markdown

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
    target.write_text(render_markdown(), encoding="utf-8")
    print(f"wrote {target}")
