#!/usr/bin/env python3
"""Check a commit message against the project's convention (CONTRIBUTING.md): a subject of at most 72
characters saying what changed, then, if there is a body, a blank line before it.

usage: check_commit_msg.py MESSAGE_FILE     (pre-commit's commit-msg stage passes .git/COMMIT_EDITMSG)

Lines git drops are not counted: comment lines ('#') and everything below `git commit -v`'s scissors line.
A "fixup! ", "squash! " or "amend! " prefix is not counted either: `git rebase --autosquash` removes it.
Exit status 0 when the message follows the convention, 1 with one line per problem otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path

MAX_SUBJECT = 72
SCISSORS = "# ------------------------ >8 ------------------------"
AUTOSQUASH = ("fixup! ", "squash! ", "amend! ")


def message_lines(text: str) -> list[str]:
    """The lines git keeps: up to the scissors line, without comment lines and trailing blank lines."""
    lines = []
    for line in text.splitlines():
        if line.rstrip() == SCISSORS:
            break
        if not line.startswith("#"):
            lines.append(line.rstrip())
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def problems(text: str) -> list[str]:
    lines = message_lines(text)
    if not lines:
        return ["the message is empty"]
    subject = lines[0]
    while subject.startswith(AUTOSQUASH):
        subject = subject.split(" ", 1)[1]
    found = []
    if len(subject) > MAX_SUBJECT:
        found.append(f"the subject is {len(subject)} characters, more than {MAX_SUBJECT}: say what changed in "
                     f"fewer words and put the why in the body: {subject[:MAX_SUBJECT]}...")
    if len(lines) > 1 and lines[1]:
        found.append("a blank line must separate the subject from the body")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_commit_msg.py MESSAGE_FILE", file=sys.stderr)
        return 2
    found = problems(Path(argv[0]).read_text(encoding="utf-8", errors="replace"))
    for problem in found:
        print(f"commit message: {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
