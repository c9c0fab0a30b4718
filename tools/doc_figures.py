"""The figures README.md and docs/ give that come from data in the repository, each written between
``<!-- generated: NAME -->`` and ``<!-- end -->`` by tools/gen_docs.py (so they cannot drift from the data):

- ``differential``, ``differential-table``: the last full run of the differential against auditwheel, as
  ``python bench/differential.py --write-summary`` recorded it in corpus/differential-summary.json, and the
  number of wheels corpus/differential.tsv pins;
- ``policies``: the bundled policies, from policies/*.json (their names and ``source``);
- ``report-screen``: how many lines one wheel's default text report fits (wheelcheck/report/audit_text.py);
- ``memory-budget``, ``processes-from``: in MB, the memory forked children may take in all
  (wheelcheck/wheel/forked.py) and the ELF bytes from which a wheel's members are shared out between processes
  (wheelcheck/wheel/scanner.py);
- ``policy-validate``, ``policy-mistakes``: what ``wheelcheck policy validate`` prints on the bundled policies
  and on copies of them with mistakes made on purpose.

A block whose markers stand on lines of their own is replaced by whole lines; one inside a line, by a phrase.
Measurements that need big wheels or a stopwatch (speed, memory, report sizes of torch) are not made here: the
docs give them with the command that measures them, the machine and the date.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"(<!-- generated: ([a-z-]+) -->)(.*?)(<!-- end -->)", re.DOTALL)
SUMMARY = ROOT / "corpus" / "differential-summary.json"
LISTING = ROOT / "corpus" / "differential.tsv"


def fill(text: str, page: str) -> str:
    """``text`` with every generated block rendered anew; an unknown block name is an error naming the page."""
    def render(match: re.Match) -> str:
        name, body = match.group(2), match.group(3)
        if name not in BLOCKS:
            raise SystemExit(f"{page}: unknown generated block {name!r} (known: {', '.join(sorted(BLOCKS))})")
        rendered = BLOCKS[name](page)
        if body.startswith("\n"):
            rendered = "\n" + rendered.strip("\n") + "\n"
        return match.group(1) + rendered + match.group(4)

    return BLOCK.sub(render, text)


def names_blocks(text: str) -> list[str]:
    return [m.group(2) for m in BLOCK.finditer(text)]


# ---- the differential -------------------------------------------------------------------------------------

def pinned_wheels() -> int:
    lines = LISTING.read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.strip() and not line.startswith("#"))


def _prose(text: str) -> str:
    return textwrap.fill(text, 115, break_long_words=False, break_on_hyphens=False)


def differential_summary() -> dict:
    return json.loads(SUMMARY.read_text(encoding="utf-8"))


def _rows_link(page: str) -> str:
    """How ``page`` links to a row of docs/differences.md."""
    return "" if page == "docs/differences.md" else "docs/differences.md" if page == "README.md" else "differences.md"


def _project(wheel: str) -> str:
    name, version = wheel.split("-")[:2]
    return f"{name} {version}"


def _by_design(summary: dict, page: str) -> str:
    link = _rows_link(page)
    return ", ".join(f"{_project(f['wheel'])} (" + ", ".join(f"[{row[1:]}]({link}#{row})" for row in f["rows"]) + ")"
                     for f in summary["fails_by_design"])


def _run(summary: dict) -> str:
    commit = f", wheelcheck at commit {summary['commit']}" if summary.get("commit") else ""
    return f"the full run of {summary['date']}{commit}, auditwheel {summary['auditwheel']}"


def differential_paragraph(page: str) -> str:
    s, pinned = differential_summary(), pinned_wheels()
    link = _rows_link(page) or "#"
    scope = (f"On the {s['compared']} wheels `corpus/differential.tsv` pins" if s["compared"] == pinned else
             f"On {s['compared']} of the {pinned} wheels `corpus/differential.tsv` pins")
    unexplained = f", and on {s['unexplained']} for no documented reason" if s["unexplained"] else ""
    fails = s["fails_by_design"]
    return _prose(f"{scope} (real wheels from the package index; {_run(s)}; `python bench/differential.py` prints "
            f"every wheel's row), wheelcheck gives auditwheel's tag and external libraries on {s['agree']}, answers "
            f"the {s['auditwheel_failed']} that auditwheel crashes on or refuses, and differs on {s['documented']} "
            f"for the reasons [docs/differences.md]({link}) gives{unexplained}. Among those, it fails {len(fails)} "
            f"whose tags auditwheel accepts, by design: {_by_design(s, page)}.")


def differential_table(page: str) -> str:
    s, pinned = differential_summary(), pinned_wheels()
    compared = f"{s['compared']}" + ("" if s["compared"] == pinned else f" of the {pinned} pinned")
    rows = ["| | wheels |", "|---|---|",
            f"| compared ({_run(s)}) | {compared} |",
            f"| same tag and same external libraries | {s['agree']} |",
            f"| auditwheel fails, wheelcheck answers ([16](#d16)) | {s['auditwheel_failed']} |",
            f"| different, for a row above | {s['documented']} |",
            f"| of those, FAILs of tags auditwheel accepts | {len(s['fails_by_design'])}: {_by_design(s, page)} |",
            f"| different, unexplained | {s['unexplained']} |"]
    return "\n".join(rows)


# ---- policies ---------------------------------------------------------------------------------------------

def _policies() -> list[dict]:
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "policies").glob("*.json"))]
    return sorted((d for d in docs if isinstance(d, dict) and "name" in d), key=lambda d: -d["priority"])


def _span(names: list[str]) -> str:
    return f"{names[0]} … {names[-1]}" if len(names) > 2 else " and ".join(names)


def policies_paragraph(page: str) -> str:
    policies = _policies()
    theirs = [d for d in policies if d.get("source", "").startswith("auditwheel ")]
    ours = [d for d in policies if d not in theirs]
    version = theirs[0]["source"].split()[1]
    glibc = _span([d["name"] for d in theirs if d["name"].startswith("manylinux")])
    musl = _span([d["name"] for d in theirs if d["name"].startswith("musllinux")])
    own = "; ".join(f"`{d['name']}` ({', '.join(sorted(d['symbol_versions']))}) goes past auditwheel: "
                    f"made with `wheelcheck policy derive`, its `source` says from which packages" for d in ours)
    return _prose(f"The {len(policies)} bundled policies are under `policies/`, one JSON file each, validated by "
            f"`policies/schema.json`: the {len(theirs)} auditwheel {version} ships ({glibc}, {musl}), which a test "
            f"keeps equal to auditwheel's data" + (f"; {own}." if own else "."))


# ---- the audit report -------------------------------------------------------------------------------------

def report_screen(page: str) -> str:
    sys.path.insert(0, str(ROOT))
    from wheelcheck.report.audit_text import SCREEN

    return str(SCREEN)


def memory_budget(page: str) -> str:
    sys.path.insert(0, str(ROOT))
    from wheelcheck.wheel.forked import MEMORY_BUDGET

    return str(MEMORY_BUDGET >> 20)


def processes_from(page: str) -> str:
    sys.path.insert(0, str(ROOT))
    from wheelcheck.wheel.scanner import _PROCESSES_MIN

    return str(_PROCESSES_MIN >> 20)


# ---- policy validate --------------------------------------------------------------------------------------

def _wheelcheck(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wheelcheck", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def policy_validate(page: str) -> str:
    out = ["```console", "$ wheelcheck policy validate"]
    out += _wheelcheck("policy", "validate").stdout.splitlines()
    out += ["$ wheelcheck policy validate policies/manylinux_2_43.json"]
    out += _wheelcheck("policy", "validate", "policies/manylinux_2_43.json").stdout.splitlines()
    return "\n".join(out + ["```"])


# One mistake per file: the jq command the page shows, and the same edit made here.
MISTAKES = [
    ("manylinux_2_24", ".symbol_versions.x86_64.GLIBCXX += [\"3.4.30\"]",
     lambda d: d["symbol_versions"]["x86_64"]["GLIBCXX"].append("3.4.30")),
    ("manylinux_2_28", ".libc_version = \"2.27\"", lambda d: d.update(libc_version="2.27")),
    ("manylinux_2_31", ".priority = 64", lambda d: d.update(priority=64)),
    ("manylinux_2_34", ".aliases = [\"manylinux2014\"]", lambda d: d.update(aliases=["manylinux2014"])),
    ("manylinux_2_36", ".symbol_versions.aarch64.GLIBC += [\"PRIVATE\", \"2..36\"]",
     lambda d: d["symbol_versions"]["aarch64"]["GLIBC"].extend(["PRIVATE", "2..36"])),
    ("manylinux_2_37", ".blacklist = {}", lambda d: d.update(blacklist={})),
    ("manylinux_2_39", ".priority = \"high\"", lambda d: d.update(priority="high")),
]
SHOWN_DIR = "/tmp/mistakes"


def policy_mistakes(page: str) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "mistakes"
        work.mkdir()
        for path in sorted((ROOT / "policies").glob("m*linux_*.json")):
            shutil.copy(path, work / path.name)
        for name, _, edit in MISTAKES:
            target = work / f"{name}.json"
            doc = json.loads(target.read_text(encoding="utf-8"))
            edit(doc)
            target.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        every = _wheelcheck("policy", "validate", *sorted(str(p) for p in work.glob("*.json")))
        one = _wheelcheck("policy", "validate", "--format", "json", str(work / "manylinux_2_39.json"))
        shown = [line.replace(str(work), SHOWN_DIR) for line in every.stdout.splitlines()]
        shown_json = [line.replace(str(work), SHOWN_DIR) for line in one.stdout.splitlines()]
    out = ["```console", f"$ rm -rf {SHOWN_DIR} && mkdir {SHOWN_DIR} && cp policies/m*linux_*.json {SHOWN_DIR}/",
           f"$ cd {SHOWN_DIR}"]
    out += [f"> jq '{jq}' {name}.json > t && mv t {name}.json" for name, jq, _ in MISTAKES]
    out += [f"$ wheelcheck policy validate {SHOWN_DIR}/*.json; echo \"exit status $?\"", *shown,
            f"exit status {every.returncode}",
            f"$ wheelcheck policy validate --format json {SHOWN_DIR}/manylinux_2_39.json", *shown_json, "```"]
    return "\n".join(out)


BLOCKS = {
    "differential": differential_paragraph,
    "differential-table": differential_table,
    "policies": policies_paragraph,
    "report-screen": report_screen,
    "memory-budget": memory_budget,
    "processes-from": processes_from,
    "policy-validate": policy_validate,
    "policy-mistakes": policy_mistakes,
}
