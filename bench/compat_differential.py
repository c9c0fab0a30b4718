#!/usr/bin/env python3
"""The compat differential: `wheelcheck compat` against the loader on real (subject, host) pairs.

usage: python bench/compat_differential.py [--listing TSV] [--cache DIR] [--only SUBSTRING] [--reimport]
                                           [--record]

corpus/compat-differential.tsv pins each pair: the subject wheel and its host wheels by file name and sha256,
the modules imported first (the host's package, as a plugin's own package does), and what the loader did in a
fresh venv. For every pair the script fetches the wheels (pip, by exact file name and hash, as
corpus/fetch.py does), runs `wheelcheck compat` on them (a host over 100 MB through its ABI manifest,
`wheelcheck abi`, made once), and compares its answer with the pinned outcome; then it prints one row per pair
and the confusion table. --reimport runs the real import again for every pair (else only where none is
cached) and --record writes the outcomes it saw back into the listing.

The real import: a fresh venv per pair, made from a venv per host (the host wheels installed with their
requirements, once) by hard links, the subject installed with --no-deps; then `import` of the listed modules
and ctypes.CDLL (RTLD_NOW | RTLD_LOCAL, as Python loads extension modules) of each of the subject's ELF files
that nothing else in it needs: its extension modules and the libraries loaded by path. When compat and the
loader differ, the import is run again with LD_DEBUG=libs,versions and the log's path is printed.

Everything is kept under --cache (default ~/.cache/wc-compat): wheels/, abi/, venvs/, imports/ (one JSON
per pair); a second run only redoes compat.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from corpus.fetch import parse_wheel_filename, pip_command  # noqa: E402

LISTING = ROOT / "corpus" / "compat-differential.tsv"
MANIFEST_ABOVE = 100 * 1024 * 1024  # a host wheel this large is given to compat as its ABI manifest
VERDICTS = ("loads", "will-fail", "cannot-tell")

# Run in the pair's venv: import the hosts' modules, then load each root; one JSON line on stdout.
PROBE = r"""
import ctypes, importlib, json, os, sys
modules, roots = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = {"imported": [], "roots": {}}
for m in modules:
    try:
        importlib.import_module(m)
        out["imported"].append(m)
    except BaseException as e:
        out["import_error"] = f"{m}: {type(e).__name__}: {e}"
        break
for r in roots:
    try:
        ctypes.CDLL(r, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        out["roots"][r] = None
    except OSError as e:
        out["roots"][r] = str(e)
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Pair:
    family: str
    subject: str
    subject_sha256: str
    hosts: tuple[str, ...]
    host_sha256: tuple[str, ...]
    modules: tuple[str, ...]
    outcome: str  # loads, fails (what the loader did), or "-" (not yet recorded)
    error: str

    @property
    def key(self) -> str:
        return hashlib.sha256("\n".join((self.subject,) + self.hosts).encode()).hexdigest()[:16]


def read_listing(path: Path) -> list[Pair]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split("\t")
        out.append(Pair(f[0], f[1], f[2].removeprefix("sha256:"), tuple(f[3].split()),
                        tuple(h.removeprefix("sha256:") for h in f[4].split()),
                        tuple(m for m in f[5].split(",") if m and m != "-"), f[6], f[7] if len(f) > 7 else "-"))
    return out


def write_listing(path: Path, pairs: list[Pair]) -> None:
    head = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    rows = ["\t".join((p.family, p.subject, "sha256:" + p.subject_sha256, " ".join(p.hosts),
                       " ".join("sha256:" + h for h in p.host_sha256), ",".join(p.modules) or "-", p.outcome,
                       p.error.replace("\t", " ").replace("\n", " ")[:300])) for p in pairs]
    path.write_text("\n".join(head + rows) + "\n", encoding="utf-8")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(name: str, digest: str, wheels: Path) -> Path:
    target = wheels / name
    if not target.is_file():
        with tempfile.TemporaryDirectory() as tmp:
            project, version = parse_wheel_filename(name)[:2]
            requirements = Path(tmp) / "requirements.txt"
            requirements.write_text(f"{project}=={version} --hash=sha256:{digest}\n", encoding="utf-8")
            command = pip_command(name, Path(tmp), requirements)
            proc = subprocess.run(command, capture_output=True, text=True)
            got = Path(tmp) / name
            if proc.returncode != 0 or not got.is_file():
                raise SystemExit(f"{name}: cannot be fetched: {proc.stderr.strip().splitlines()[-1:]}")
            shutil.move(str(got), target)
    if sha256_of(target) != digest:
        raise SystemExit(f"{target}: sha256 is not the pinned {digest}")
    return target


def wheelcheck(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wheelcheck", *args], capture_output=True, text=True, cwd=ROOT)


def compat_input(wheel: Path, cache: Path) -> Path:
    """The host as compat reads it: the wheel, or its ABI manifest when the wheel is large."""
    if wheel.stat().st_size <= MANIFEST_ABOVE:
        return wheel
    manifest = cache / "abi" / (wheel.name + ".abi.json.gz")
    if not manifest.is_file():
        manifest.parent.mkdir(parents=True, exist_ok=True)
        proc = wheelcheck("abi", str(wheel), "-o", str(manifest))
        if proc.returncode != 0:
            raise SystemExit(f"wheelcheck abi {wheel.name}: {proc.stderr.strip()}")
    return manifest


def run_compat(subject: Path, hosts: list[Path], cache: Path) -> dict:
    proc = wheelcheck("compat", "--format", "json", str(subject), *(str(compat_input(h, cache)) for h in hosts))
    if proc.returncode not in (0, 1, 2) or not proc.stdout:
        return {"verdict": "error", "reason": proc.stderr.strip()[-300:]}
    report = json.loads(proc.stdout)
    mine = [p for p in report["pairs"] if p["subject"]["source"] == subject.name]
    if not mine:  # judged nothing: the subject takes nothing from the hosts and needs nothing unseen
        return {"verdict": "loads", "reason": "not judged: it reaches nothing outside itself"}
    return {"verdict": mine[0]["verdict"], "reason": mine[0]["reason"]}


def roots_of(wheel: Path) -> list[str]:
    """The subject's ELF members nothing else in it needs (by SONAME or file name), as paths in site-packages."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    import io

    files: dict[str, tuple[str | None, list[str]]] = {}
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if info.is_dir() or ".so" not in info.filename.rsplit("/", 1)[-1]:
                continue
            data = zf.read(info)
            if not data.startswith(b"\x7fELF"):
                continue
            try:
                elf = ELFFile(io.BytesIO(data))
                if elf.header.e_type != "ET_DYN":
                    continue
                soname, needed = None, []
                for section in elf.iter_sections():
                    if isinstance(section, DynamicSection):
                        for tag in section.iter_tags():
                            if tag.entry.d_tag == "DT_SONAME":
                                soname = tag.soname
                            elif tag.entry.d_tag == "DT_NEEDED":
                                needed.append(tag.needed)
            except ELFError:
                continue
            files[installed_path(info.filename)] = (soname, needed)
    needed_names = {n for _, needs in files.values() for n in needs}
    return sorted(p for p, (soname, _) in files.items()
                  if (soname or "") not in needed_names and p.rsplit("/", 1)[-1] not in needed_names)


def installed_path(member: str) -> str:
    parts = member.split("/")
    if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib"):
        return "/".join(parts[2:])
    return member


def host_venv(hosts: list[Path], cache: Path) -> Path:
    """A venv holding the hosts and their requirements (made once; pairs are hard-linked copies of it)."""
    key = hashlib.sha256(" ".join(h.name for h in hosts).encode()).hexdigest()[:12]
    venv = cache / "venvs" / f"host-{key}"
    if (venv / ".complete").is_file():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                           "--disable-pip-version-check", "--only-binary=:all:", *map(str, hosts)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"installing {[h.name for h in hosts]}: {proc.stderr.strip()[-500:]}")
    (venv / ".complete").write_text("\n".join(h.name for h in hosts))
    return venv


def real_import(pair: Pair, subject: Path, hosts: list[Path], cache: Path, debug: Path | None = None) -> dict:
    base = host_venv(hosts, cache)
    pair_venv = cache / "venvs" / f"pair-{pair.key}"
    shutil.rmtree(pair_venv, ignore_errors=True)
    subprocess.run(["cp", "-al", str(base), str(pair_venv)], check=True)
    try:
        python = pair_venv / "bin" / "python"
        proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                               "--no-compile", "--disable-pip-version-check", str(subject)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return {"outcome": "error", "error": proc.stderr.strip()[-300:]}
        site = next(pair_venv.glob("lib/python3*/site-packages"))
        roots = [str(site / r) for r in roots_of(subject)]
        env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH", "LD_PRELOAD")}
        if debug is not None:
            env.update(LD_DEBUG="libs,versions", LD_DEBUG_OUTPUT=str(debug))
        proc = subprocess.run([str(python), "-c", PROBE, json.dumps(list(pair.modules)), json.dumps(roots)],
                              capture_output=True, text=True, env=env, cwd=pair_venv, timeout=600)
        if proc.returncode != 0 or not proc.stdout.strip():
            return {"outcome": "error", "error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]}
        seen = json.loads(proc.stdout.strip().splitlines()[-1])
        if "import_error" in seen:
            return {"outcome": "error", "error": seen["import_error"][:300]}
        errors = [e.replace(str(site) + "/", "") for e in seen["roots"].values() if e]
        return {"outcome": "fails" if errors else "loads", "error": errors[0] if errors else "-",
                "roots": len(roots)}
    finally:
        shutil.rmtree(pair_venv, ignore_errors=True)


def agrees(verdict: str, outcome: str) -> bool | None:
    """True, False, or None for 'cannot tell' (never a disagreement, but counted apart)."""
    if verdict == "cannot-tell":
        return None
    return (verdict == "loads") == (outcome == "loads")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listing", type=Path, default=LISTING)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "wc-compat")
    parser.add_argument("--only", default="")
    parser.add_argument("--reimport", action="store_true")
    parser.add_argument("--record", action="store_true", help="write the import outcomes into the listing")
    args = parser.parse_args(argv)
    pairs = read_listing(args.listing)
    wheels = args.cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    (args.cache / "imports").mkdir(parents=True, exist_ok=True)
    table: Counter = Counter()
    differ: list[tuple[Pair, dict, str]] = []
    recorded = []
    for pair in pairs:
        if args.only not in f"{pair.family} {pair.subject} {' '.join(pair.hosts)}":
            recorded.append(pair)
            continue
        subject = fetch(pair.subject, pair.subject_sha256, wheels)
        hosts = [fetch(h, d, wheels) for h, d in zip(pair.hosts, pair.host_sha256)]
        cached = args.cache / "imports" / f"{pair.key}.json"
        if args.reimport or not cached.is_file():
            cached.write_text(json.dumps(real_import(pair, subject, hosts, args.cache)))
        seen = json.loads(cached.read_text())
        compat = run_compat(subject, hosts, args.cache)
        outcome = seen["outcome"]
        if pair.outcome != "-" and pair.outcome != outcome:
            outcome += f" (pinned: {pair.outcome})"
        table[(compat["verdict"], seen["outcome"])] += 1
        mark = {True: "agree", False: "DIFFER", None: "cannot tell"}[agrees(compat["verdict"], seen["outcome"])]
        print(f"{pair.family}\t{pair.subject}\t{' '.join(pair.hosts)}\t{compat['verdict']}\t{outcome}\t{mark}\t"
              f"{compat['reason'][:160]}\t{seen['error'][:160]}", flush=True)
        if mark == "DIFFER":
            log = args.cache / "imports" / f"{pair.key}.ld_debug"
            real_import(pair, subject, hosts, args.cache, debug=log)
            differ.append((pair, compat, str(log)))
        recorded.append(Pair(pair.family, pair.subject, pair.subject_sha256, pair.hosts, pair.host_sha256,
                             pair.modules, seen["outcome"], seen["error"]))
    if args.record:
        write_listing(args.listing, recorded)
    print_table(table, differ)
    return 1 if differ else 0


def print_table(table: Counter, differ: list) -> None:
    outcomes = ("loads", "fails", "error")
    print("\ncompat \\ import\t" + "\t".join(outcomes) + "\ttotal")
    for verdict in VERDICTS + ("error",):
        row = [table[(verdict, o)] for o in outcomes]
        if any(row) or verdict in VERDICTS:
            print(f"{verdict}\t" + "\t".join(map(str, row)) + f"\t{sum(row)}")
    total = sum(table.values())
    agree = table[("loads", "loads")] + table[("will-fail", "fails")]
    cannot = sum(n for (v, _), n in table.items() if v == "cannot-tell")
    print(f"\n{total} pairs: {agree} agree, {cannot} cannot tell, {len(differ)} differ")
    for pair, compat, log in differ:
        print(f"  DIFFER {pair.subject} with {' '.join(pair.hosts)}: compat {compat['verdict']} "
              f"({compat['reason'][:200]}); LD_DEBUG log: {log}")


if __name__ == "__main__":
    sys.exit(main())
