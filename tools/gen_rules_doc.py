#!/usr/bin/env python3
"""Regenerate docs/rules.md from wheelcheck/data/rules.json (tests/test_rules_doc.py checks they agree).

Renders with this checkout's wheelcheck, not whichever one is installed (an editable install of another clone
would render that clone's rules into this one's docs)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wheelcheck.report.rules_doc import render_markdown  # noqa: E402

if __name__ == "__main__":
    target = ROOT / "docs" / "rules.md"
    target.write_text(render_markdown(), encoding="utf-8")
    print(f"wrote {target}")
