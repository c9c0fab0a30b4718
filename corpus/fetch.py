#!/usr/bin/env python3
"""Download the wheels a listing pins by exact file name, with nothing but pip.

usage: python corpus/fetch.py LISTING DEST_DIR

LISTING is a tab-separated file whose first column is a wheel's file name (lines starting with '#' and
blank lines are skipped), e.g. corpus/differential.tsv. Each wheel is fetched as name==version for its own
python, abi and platform tags, with --no-deps and --only-binary. A column `sha256:<hex>` pins the file's
hash (pip --require-hashes): pin it, because a release may hold two files for the same tags (regex
2026.11.15 has ...-manylinux2014_x86_64.manylinux_2_17_x86_64.whl and the same name with
.manylinux_2_28_x86_64 added), and without the hash pip may fetch the other one, which is then reported
missing. A wheel already in DEST_DIR is not fetched again. Exit status 1 when a wheel could not be had
(offline, or withdrawn from the index), after trying them all.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from packaging.utils import parse_wheel_filename
except ImportError:  # pip always carries its own copy
    from pip._vendor.packaging.utils import parse_wheel_filename


def rows(listing: Path) -> list[tuple[str, str | None]]:
    """(file name, sha256 or None) for each wheel the listing pins."""
    out = []
    for line in listing.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")]
        digest = next((f[len("sha256:"):] for f in fields[1:] if f.startswith("sha256:")), None)
        out.append((fields[0], digest))
    return out


def pinned(listing: Path) -> list[str]:
    return [name for name, _ in rows(listing)]


def pip_command(filename: str, dest: Path, requirements: Path | None = None) -> list[str]:
    name, version, _, tags = parse_wheel_filename(filename)
    # --ignore-requires-python: the file is pinned by name (and hash), whatever Python runs pip; without it a
    # py3 wheel whose release requires 3.12 (mitmproxy_linux 0.12.15) or an abi3 one whose oldest Python tag
    # predates its Requires-Python (polars 0.13.0: cp36-abi3, >=3.7) is "not found"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
               "--disable-pip-version-check", "--ignore-requires-python", "-d", str(dest)]
    interpreters = sorted({t.interpreter for t in tags})
    versions = {i[2:] for i in interpreters if i[:2] in ("cp", "py") and i[2:].isdigit() and len(i) > 3}
    if versions:  # py3 / py2.py3 wheels need no interpreter version
        digits = min(versions)
        command += ["--python-version", f"{digits[0]}.{digits[1:]}"]
    elif interpreters and all(i.startswith(("py2", "cp2")) for i in interpreters):
        command += ["--python-version", "2.7"]  # a py2-only wheel: pip on Python 3 would not take it
    for abi in sorted({t.abi for t in tags}):
        command += ["--abi", abi]
    for platform in sorted({t.platform for t in tags}):
        command += ["--platform", platform]
    if requirements is not None:  # name==version --hash=sha256:...
        return command + ["--require-hashes", "-r", str(requirements)]
    return command + [f"{name}=={version}"]


def fetch(listing: Path, dest: Path) -> list[str]:
    """Fetch every pinned wheel missing from ``dest``; returns the names still missing."""
    dest.mkdir(parents=True, exist_ok=True)
    missing = []
    for filename, digest in rows(listing):
        target = dest / filename
        if target.is_file():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            requirements = None
            if digest:
                name, version = parse_wheel_filename(filename)[:2]
                requirements = Path(tmp) / "requirements.txt"
                requirements.write_text(f"{name}=={version} --hash=sha256:{digest}\n", encoding="utf-8")
            subprocess.run(pip_command(filename, dest, requirements), check=False)
        if not target.is_file():
            missing.append(filename)
    return missing


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    listing, dest = Path(argv[0]), Path(argv[1])
    missing = fetch(listing, dest)
    have = sum(1 for name in pinned(listing) if (dest / name).is_file())
    print(f"{have} wheels of {listing.name} in {dest}; missing: {', '.join(missing) or 'none'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
