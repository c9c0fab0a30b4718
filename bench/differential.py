#!/usr/bin/env python3
"""The differential: wheelcheck against auditwheel 6.8.2 on the real wheels corpus/differential.tsv pins.

usage: python bench/differential.py [--wheels DIR] [--listing TSV] [--refresh-auditwheel] [--only SUBSTRING]
                                   [--write-summary]

Prints one row per wheel: auditwheel's tag, wheelcheck's tag, same or different, and for each difference the
rule or library behind it with a link to its row in docs/differences.md; then the summary (N agree, each
difference with its reason, auditwheel's own failures, wheelcheck FAILs where auditwheel accepts the wheel's
claimed tag, and wheelcheck FAILs that auditwheel cannot confirm because it stopped). A difference that no
documented row explains is printed as UNEXPLAINED; the corpus test (tests/test_differential_corpus.py,
`pytest --corpus`) fails on those. --write-summary records the run's counts in corpus/differential-summary.json,
from which `python tools/gen_docs.py` writes the figures README.md and docs/differences.md give.

auditwheel's answers are cached in corpus/auditwheel/<wheel>.json (`auditwheel show --json`, run once per
wheel, one at a time, because it takes minutes on large wheels); --refresh-auditwheel computes the missing
ones. Wheels are fetched with `python corpus/fetch.py corpus/differential.tsv DIR` (default DIR:
$WHEELCHECK_DIFFERENTIAL or ~/.cache/wheelcheck-differential).
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from wheelcheck.audit.runtime_deps import drivers_of  # noqa: E402
from wheelcheck.policy.policy_model import musl_answers_itself  # noqa: E402
from wheelcheck.audit.findings import WheelReport  # noqa: E402

LISTING = ROOT / "corpus" / "differential.tsv"
sys.path.insert(0, str(ROOT / "bench"))
from rule_counts import RULES  # noqa: E402

WHOLE_WHEEL_RULES = RULES
ANSWERS = ROOT / "corpus" / "auditwheel"
SUMMARY = ROOT / "corpus" / "differential-summary.json"  # the last full run's counts, which the docs quote
DIFFERENCES = "docs/differences.md"
AUDITWHEEL_VERSION = "6.8.2"

# The rows of docs/differences.md a differential difference can be explained by: id -> short reason.
REASONS = {
    "d1": "auditwheel read a library from this host",
    "d2": "libpython is a finding, not an external library",
    "d4": "a symbol version of a library the wheel ships is not the system's",
    "d5": "x86-64 ISA level of an in-wheel library that is not a load root",
    "d6": "blacklisted symbols used by an in-wheel library that is not a load root",
    "d7": "libraries resolved as ld.so does (RPATH inheritance, RUNPATH not inherited)",
    "d8": "musl has no symbol versions",
    "d9": "RECORD hashes are checked: a member that does not match is an error",
    "d11": "glibc 2.42/2.43 wheels get manylinux_2_43",
    "d12": "a system driver library is not an external library",
    "d13": "hygiene finding of severity error (the wheel breaks although its tag is right)",
    "d16": "auditwheel stops with a traceback; wheelcheck answers",
    "d17": "musl's loader answers libc.so, libm.so.6 and kin with itself",
    "d19": "a wheel claiming no platform carries several architectures: each tool judges another",
    "d21": "a NEEDED path with $ORIGIN names a file of the wheel (glibc opens it)",
    "d22": "a plugin finds the wheel's own library already loaded (preloaded-library)",
    "d23": "the needs of a shipped library no file's search reaches are judged (an orphan)",
    "d24": "the wheel as the index and installers take it: an error on its metadata, zip or Python tags",
    "d25": "x86-64 instructions beyond the level the wheel claims",
}


def default_wheel_dir() -> Path:
    return Path(os.environ.get("WHEELCHECK_DIFFERENTIAL") or Path.home() / ".cache" / "wheelcheck-differential")


@dataclass(frozen=True)
class Pinned:
    filename: str
    kind: str
    why: str


def read_listing(path: Path = LISTING) -> list[Pinned]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        rest = [f for f in fields[1:] if not f.startswith("sha256:")]
        out.append(Pinned(fields[0], rest[0] if rest else "", rest[1] if len(rest) > 1 else ""))
    return out


def answer_path(filename: str) -> Path:
    return ANSWERS / (filename[: -len(".whl")] + ".json")


def run_auditwheel(wheel: Path) -> dict:
    """auditwheel show --json, once: its JSON, or how it failed (exit status and the last line of stderr)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)],
                          capture_output=True, text=True)
    seconds = round(time.monotonic() - start, 1)
    try:
        show = json.loads(proc.stdout)
    except json.JSONDecodeError:
        show = None
    lines = proc.stderr.strip().splitlines()
    error = lines[-1].strip() if (proc.returncode or show is None) and lines else None
    return {"auditwheel": AUDITWHEEL_VERSION, "exit": proc.returncode, "seconds": seconds, "error": error,
            "show": show}


def auditwheel_answer(filename: str, wheel_dir: Path, refresh: bool) -> dict | None:
    cached = answer_path(filename)
    if cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    if not refresh or not (wheel_dir / filename).is_file():
        return None
    answer = run_auditwheel(wheel_dir / filename)
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(answer, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return answer


# ---- comparing one wheel ----------------------------------------------------------------------------------

_LEGACY = {"manylinux1": "manylinux_2_5", "manylinux2010": "manylinux_2_12", "manylinux2014": "manylinux_2_17"}
_TAG = re.compile(r"^(manylinux|musllinux)_(\d+)_(\d+)_")


def rank(tag: str | None) -> tuple[int, int] | None:
    """A platform tag's compatibility: higher is more compatible; None for linux_* and other platforms."""
    if tag is None:
        return None
    for old, new in _LEGACY.items():
        if tag.startswith(old + "_"):
            tag = new + tag[len(old):]
    match = _TAG.match(tag)
    if match is None:
        return None
    return (-int(match.group(2)), -int(match.group(3)))


def meets(tag: str | None, claimed: list[str]) -> bool:
    """Does ``tag`` satisfy the most compatible claimed tag (what both tools require of a wheel)?"""
    claims = [r for r in (rank(c) for c in claimed) if r is not None]
    if not claims:
        return True
    have = rank(tag)
    return have is not None and have >= max(claims)


@dataclass
class Row:
    filename: str
    kind: str
    auditwheel_tag: str | None = None
    wheelcheck_tag: str | None = None
    auditwheel_error: str | None = None
    wheelcheck_error: str | None = None
    wheelcheck_passed: bool = True
    auditwheel_passed: bool | None = None  # None until auditwheel's answer is compared (it may have none)
    differences: list[tuple[str, str]] = field(default_factory=list)  # (reason id or "?", detail)
    host_dependent: list[str] = field(default_factory=list)  # what auditwheel read from this machine
    seconds: float = 0.0
    whole_wheel: list[tuple[str, str]] = field(default_factory=list)  # (rule, severity) of WHOLE_WHEEL_RULES findings

    @property
    def same(self) -> bool:
        return not self.differences

    @property
    def unexplained(self) -> list[str]:
        return [detail for reason, detail in self.differences if reason == "?"]

    @property
    def false_fail(self) -> bool:
        """wheelcheck fails a wheel whose claimed tags auditwheel confirms."""
        return self.auditwheel_error is None and self.auditwheel_passed is True and not self.wheelcheck_passed


def compare(pinned: Pinned, aw: dict, wc: WheelReport) -> Row:
    row = Row(pinned.filename, pinned.kind, wheelcheck_tag=wc.deserved_tag, wheelcheck_error=wc.error,
              wheelcheck_passed=wc.passed)
    if wc.error is not None:
        row.differences.append(("?", f"wheelcheck could not read the wheel: {wc.error}"))
        return row
    show = aw.get("show")
    if show is None or "error" in show:
        row.auditwheel_error = aw.get("error") or (show or {}).get("error") or f"exit {aw.get('exit')}"
        row.differences.append(("d16", f"auditwheel: {row.auditwheel_error}"))
        return row
    row.auditwheel_tag = show["overall_tag"]
    row.auditwheel_passed = meets(row.auditwheel_tag, wc.claimed_tags)
    row.host_dependent = [f"{s} from {show['external_libs'][s]}" for s in _host_found(show)]
    _explain_tags(row, show, wc)
    _explain_external(row, show, wc)
    if not wc.passed and meets(wc.deserved_tag, [wc.required_tag] if wc.required_tag else []):
        errors = sorted({f.rule for f in wc.findings if f.severity == "error"})
        if not errors:
            row.differences.append(("?", "fails on nothing"))
        for reason in ("d9", "d24", "d25", "d13"):
            rules = [rule for rule in errors if _error_row(rule) == reason]
            if rules:
                row.differences.append((reason, f"fails on {', '.join(rules)}"))
    return row


def _error_row(rule: str) -> str:
    """The row of docs/differences.md that explains an error auditwheel cannot give: RECORD's hashes (d9), the
    instructions' x86-64 level (d25), the other whole-wheel and Python-ABI rules (d24), the hygiene rules (d13)."""
    if rule == "record-hash":
        return "d9"
    if rule == "isa-instructions":
        return "d25"
    return "d24" if rule in WHOLE_WHEEL_RULES else "d13"


def _host_found(show: dict) -> list[str]:
    return sorted(s for s, where in show.get("external_libs", {}).items() if where)


def _shipped_sonames(wc: WheelReport) -> set[str]:
    names = set()
    for f in wc.files:
        names.add(f.path.rsplit("/", 1)[-1])
        if f.soname:
            names.add(f.soname)
    return names


def _explain_tags(row: Row, show: dict, wc: WheelReport) -> None:
    aw_tag, wc_tag = row.auditwheel_tag, row.wheelcheck_tag
    if aw_tag == wc_tag or wc_tag in wc.deserved_tags and aw_tag in wc.deserved_tags:
        return
    if wc.arch and not aw_tag.endswith("_" + wc.arch) and not any(t.startswith(("manylinux", "musllinux", "linux"))
                                                                  for t in wc.claimed_tags):
        row.differences.append(("d19", f"auditwheel judged {aw_tag.rsplit('_', 1)[-1]} (its first ELF file), "
                                       f"wheelcheck {wc.arch} (most of its ELF files)"))
        return
    ours, theirs = rank(wc_tag), rank(aw_tag)
    if wc.libc == "musl" and ours is not None and theirs is not None:
        row.differences.append(("d8", f"musl: {aw_tag} vs {wc_tag}"))
        return
    if ours is not None and (theirs is None or ours > theirs):  # wheelcheck more lenient
        row.differences.extend(_why_auditwheel_is_stricter(show, wc))
    else:  # wheelcheck stricter
        row.differences.extend(_why_wheelcheck_is_stricter(show, wc))


def _why_auditwheel_is_stricter(show: dict, wc: WheelReport) -> list[tuple[str, str]]:
    out = []
    shipped = _shipped_sonames(wc)
    ours = set(wc.external_libs)
    for soname in sorted(set(show.get("external_libs", {})) - ours):
        if soname.startswith("libpython"):
            out.append(("d2", f"{soname}: wheelcheck's libpython finding"))
        else:
            out += _why_not_external(soname, show, wc, shipped)
    for soname, versions in show.get("versioned_symbols", {}).items():
        if soname in shipped and soname not in ("libc.so.6", "libm.so.6"):
            out.append(("d4", f"{', '.join(versions)} of {soname}, which the wheel ships"))
    extra = sorted(set(show.get("versioned_symbols", {})) - set(wc.versioned_symbols))
    if extra:
        out.append(("d1", f"auditwheel judged versions of {', '.join(extra)}, read from this host"))
    newer = rank(wc.deserved_tag) is not None and rank(wc.deserved_tag) < rank("manylinux_2_41_x")
    if newer and show["overall_tag"].startswith("linux"):
        out.append(("d11", "glibc 2.42/2.43"))
    return out or [("?", f"auditwheel {show['overall_tag']}, wheelcheck {wc.deserved_tag}: no reason found")]


def _why_not_external(soname: str, show: dict, wc: WheelReport, shipped: set[str]) -> list[tuple[str, str]]:
    """Why a library auditwheel lists as external is not one of wheelcheck's: [] when no row explains it."""
    if soname in drivers_of(()):
        return [("d12", f"{soname} is a system driver library")]
    if wc.libc == "musl" and musl_answers_itself(soname):
        return [("d17", f"{soname}: musl's loader answers it with itself")]
    if show["external_libs"][soname]:
        return [("d1", f"{soname} found on this host at {show['external_libs'][soname]}")]
    if any(f.rule == "preloaded-library" and f.subject == soname for f in wc.findings):
        return [("d22", f"{soname}: a plugin finds the wheel's copy already loaded")]
    if soname in shipped:  # e.g. found through a loader's DT_RPATH, which auditwheel ignores
        return [("d7", f"{soname} is in the wheel and ld.so finds it")]
    if "$ORIGIN" in soname and soname.rsplit("/", 1)[-1] in shipped:
        return [("d21", f"{soname} is a file of the wheel")]
    return []


def _why_wheelcheck_is_stricter(show: dict, wc: WheelReport) -> list[tuple[str, str]]:
    binding = [f for f in wc.findings if f.limit == wc.deserved_tag and f.limit is not None]
    out = []
    for f in binding:
        if f.rule == "isa-level":
            out.append(("d5", f"{f.file}: {f.message}"))
        elif f.rule == "blacklisted-symbol":
            out.append(("d6", f"{f.file}: {f.message}"))
        elif f.rule == "external-library" and _needed(f.message) in _shipped_sonames(wc) \
                and _needed(f.message) not in show.get("external_libs", {}):
            out.append(("d7", f"{f.file}: {f.message}"))  # auditwheel found the wheel's copy, ld.so does not
        elif f.rule == "libpython":
            out.append(("d2", f"{f.file}: {f.message}"))
        else:
            out.append(("?", f"{f.rule} {f.file}: {f.message}"))
    if _host_found(show):
        out = [("d1", f"auditwheel found {', '.join(_host_found(show))} on this host")] + out
    return out or [("?", f"auditwheel {show['overall_tag']}, wheelcheck {wc.deserved_tag}: no reason found")]


def _needed(message: str) -> str | None:
    match = re.match(r"needs (\S+?)(?:[;,]|$)", message)
    return match.group(1) if match else None


def _explain_external(row: Row, show: dict, wc: WheelReport) -> None:
    if row.differences:
        return  # a tag difference is already explained, external libraries with it
    theirs = {s for s in show.get("external_libs", {}) if not s.startswith("libpython")}
    ours = set(wc.external_libs)
    shipped = _shipped_sonames(wc)
    for soname in sorted(theirs - ours):
        row.differences += _why_not_external(soname, show, wc, shipped) or [
            ("?", f"auditwheel lists {soname} as external, wheelcheck does not")]
    named = {n for f in wc.files for n in f.needed}
    for soname in sorted(ours - theirs):
        needers = [f for f in wc.files if soname in f.needed and not f.is_extension]
        if needers and all(posixpath.basename(f.path) in named or f.soname in named for f in needers):
            # needed only by libraries that some file names: auditwheel never judges their needs (d23)
            row.differences.append(("d23", f"{soname}: needed by {needers[0].path}, which no file's search reaches"))
        else:
            row.differences.append(("?", f"wheelcheck lists {soname} as external, auditwheel does not"))


# ---- the whole corpus -------------------------------------------------------------------------------------

def differential(wheel_dir: Path, listing: Path = LISTING, refresh: bool = False,
                 only: str | None = None) -> tuple[list[Row], list[str]]:
    """A row per wheel of the listing found in ``wheel_dir`` with an auditwheel answer; and the file names
    skipped (not downloaded, or no cached answer)."""
    from wheelcheck.api import audit

    rows, skipped = [], []
    for pinned in read_listing(listing):
        if only and only not in pinned.filename:
            continue
        wheel = wheel_dir / pinned.filename
        aw = auditwheel_answer(pinned.filename, wheel_dir, refresh)
        if aw is None or not wheel.is_file():
            skipped.append(pinned.filename)
            continue
        start = time.monotonic()
        (wc,) = audit([wheel]).wheels
        row = compare(pinned, aw, wc)
        row.seconds = time.monotonic() - start
        row.whole_wheel = [(f.rule, f.severity) for f in wc.findings if f.rule in WHOLE_WHEEL_RULES]
        rows.append(row)
    return rows, skipped


def _short(tag: str | None) -> str:
    return tag or "-"


def render(rows: list[Row], skipped: list[str]) -> str:
    width = max((len(r.filename) for r in rows), default=10)
    width = min(width, 72)
    out = [f"{'wheel':<{width}}  {'auditwheel':<24} {'wheelcheck':<24} {'':<9} reason"]
    for r in rows:
        name = r.filename if len(r.filename) <= width else r.filename[: width - 1] + "…"
        verdict = "same" if r.same else ("UNEXPLAINED" if r.unexplained else "different")
        aw = "ERROR" if r.auditwheel_error else _short(r.auditwheel_tag)
        wc = _short(r.wheelcheck_tag) + ("" if r.wheelcheck_passed else " FAIL")
        reasons = "; ".join(f"{reason if reason == '?' else f'{DIFFERENCES}#{reason}'} {detail}"
                            for reason, detail in r.differences)
        out.append(f"{name:<{width}}  {aw:<24} {wc:<24} {verdict:<9} {reasons}")
    out += ["", summary(rows, skipped)]
    return "\n".join(out)


def summary(rows: list[Row], skipped: list[str]) -> str:
    agree = [r for r in rows if r.same]
    lines = [f"{len(rows)} wheels compared: {len(agree)} agree, {len(rows) - len(agree)} differ"
             + (f"; {len(skipped)} skipped (not fetched or no auditwheel answer)" if skipped else "")]
    by_reason: dict[str, list[str]] = {}
    for r in rows:
        for reason in dict.fromkeys(reason for reason, _ in r.differences):
            by_reason.setdefault(reason, []).append(r.filename)
    for reason, names in sorted(by_reason.items(), key=lambda item: (item[0] == "?", item[0])):
        label = "UNEXPLAINED" if reason == "?" else f"{DIFFERENCES}#{reason} ({REASONS.get(reason, reason)})"
        lines.append(f"  {len(names):3} {label}: {', '.join(n.split('-')[0] + '-' + n.split('-')[1] for n in names)}")
    crashes = [r for r in rows if r.auditwheel_error]
    lines.append(f"auditwheel's own failures: {len(crashes)}")
    lines += [f"  {r.filename}: {r.auditwheel_error}" for r in crashes]
    host = [r for r in rows if r.host_dependent or any(reason == "d1" for reason, _ in r.differences)]
    lines.append(f"auditwheel answers that depend on this host (it read libraries the wheel needs from this "
                 f"machine): {len(host)}")
    lines += [f"  {r.filename}: {', '.join(r.host_dependent) or 'versioned symbols'}" for r in host]
    false_fails = [r for r in rows if r.false_fail]
    lines.append(f"wheelcheck FAILs where auditwheel accepts the claimed tags: {len(false_fails)}")
    lines += [f"  {r.filename}: {'; '.join(d for _, d in r.differences)}" for r in false_fails]
    # no oracle: auditwheel stopped, or wheelcheck could not read the wheel; each of these needs a look by hand
    unjudged = [r for r in rows if not r.wheelcheck_passed and r.auditwheel_passed is None]
    lines.append(f"wheelcheck FAILs (or errors) that auditwheel's answer cannot confirm: {len(unjudged)}")
    lines += [f"  {r.filename}: {r.wheelcheck_error or r.wheelcheck_tag}" for r in unjudged]
    # the rules that judge the wheel beyond its platform tag, which auditwheel does not answer (differences.md#d24, d25):
    # counted here, each error to be checked by hand (bench/corpus_rules.py lists them, wheel by wheel)
    lines.append("whole-wheel, Python-ABI and instruction rules (no auditwheel answer): rule, errors, warnings, wheels")
    for rule in WHOLE_WHEEL_RULES:
        hits = [(r.filename, severity) for r in rows for rule_, severity in r.whole_wheel if rule_ == rule]
        if hits:
            lines.append(f"  {rule:<22}{sum(s == 'error' for _, s in hits):>7}{sum(s == 'warning' for _, s in hits):>9}"
                         f"{len({name for name, _ in hits}):>8}")
    return "\n".join(lines)


def summary_record(rows: list[Row], skipped: list[str]) -> dict:
    """The run's counts as corpus/differential-summary.json keeps them: agree + auditwheel_failed + documented +
    unexplained = compared; fails_by_design (a wheel auditwheel accepts and wheelcheck fails, for a reason a row
    gives) are among the documented."""
    differ = [r for r in rows if not r.same]
    by_design = ("d9", "d13", "d24", "d25")
    return {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "commit": _commit(),
        "auditwheel": AUDITWHEEL_VERSION,
        "compared": len(rows),
        "skipped": len(skipped),
        "agree": len(rows) - len(differ),
        "auditwheel_failed": sum(1 for r in rows if r.auditwheel_error),
        "documented": sum(1 for r in differ if not r.auditwheel_error and not r.unexplained),
        "unexplained": sum(1 for r in rows if r.unexplained),
        "fails_by_design": [{"wheel": r.filename, "rows": sorted({reason for reason, _ in r.differences
                                                                  if reason in by_design})}
                            for r in rows if r.false_fail and not r.unexplained],
        "unconfirmed": sum(1 for r in rows if not r.wheelcheck_passed and r.auditwheel_passed is None),
    }


def _commit() -> str | None:
    proc = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, default=default_wheel_dir(), help="where the wheels are")
    parser.add_argument("--listing", type=Path, default=LISTING)
    parser.add_argument("--refresh-auditwheel", action="store_true",
                        help="run auditwheel show for wheels without a cached answer")
    parser.add_argument("--only", help="only wheels whose file name contains this")
    parser.add_argument("--write-summary", action="store_true",
                        help=f"record the counts in {SUMMARY.relative_to(ROOT)} (a run of the whole listing only)")
    args = parser.parse_args(argv)
    if args.write_summary and (args.only or args.listing != LISTING):
        parser.error("--write-summary records a run of the whole corpus/differential.tsv: drop --only and --listing")
    rows, skipped = differential(args.wheels, args.listing, args.refresh_auditwheel, args.only)
    print(render(rows, skipped))
    if args.write_summary:
        SUMMARY.write_text(json.dumps(summary_record(rows, skipped), indent=1) + "\n", encoding="utf-8")
    return 1 if any(r.unexplained for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
