#!/usr/bin/env python3
"""Regenerate wheelcheck/data/system_exports.json.gz: what the policies' whitelisted system libraries export.

    python tools/gen_system_exports.py [--debs DIR]

The libraries are read from Debian 13's packages (the pool files tools/system_exports_pins.tsv pins by sha256, fetched into DIR,
default $WHEELCHECK_DEBIAN or ~/.cache/wheelcheck-debian, as tests/fixtures/debian.py fetches the packages
the policy derivation reads). For each architecture and each soname any bundled glibc policy whitelists,
the file is found in the unpacked packages as ld.so would find it, and its dynamic exports are kept with the
symbol versions that define them, beside its own DT_NEEDED; so are the libraries those need, where the
packages hold them (ld.so, libxcb, libpcre2).

Compactly: one sorted table of every name (the architectures share most of them), one table of version names,
and per library the names' indices (as differences from the previous one) with their versions. A version
says which policies have the name: GLIBC_2.34 is on manylinux_2_34 and later systems, whatever release of
glibc was read. A library with no symbol versions (libX11, libglib) is the release read.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fixtures.debian import POOL, default_dir, unpack_deb  # noqa: E402
from wheelcheck.elf import summarize  # noqa: E402
from wheelcheck.policy._rootfs import library_dirs, resolve_in_root  # noqa: E402
from wheelcheck.policy.registry import bundled_policies  # noqa: E402

TARGET = ROOT / "wheelcheck" / "data" / "system_exports.json.gz"
DEBIAN_ARCH = {"amd64": "x86_64", "arm64": "aarch64", "i386": "i686", "armhf": "armv7l"}

def _pins_file() -> Path:
    return Path(__file__).with_name("system_exports_pins.tsv")


def load_pins() -> dict[tuple[str, str], tuple[str, str]]:
    """(Debian arch, package) -> (pool path, sha256), from tools/system_exports_pins.tsv."""
    pins = {}
    for line in _pins_file().read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            arch, package, pool, digest = line.split("\t")
            pins[(arch, package)] = (pool, digest)
    return pins


def fetch(pool: str, digest: str, dest: Path) -> Path:
    import hashlib
    import urllib.request

    target = dest / pool.rsplit("/", 1)[-1]
    if not (target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == digest):
        with urllib.request.urlopen(POOL + urllib.request.quote(pool), timeout=120) as response:
            data = response.read()
        if hashlib.sha256(data).hexdigest() != digest:
            raise SystemExit(f"{pool}: sha256 is not the pinned {digest}")
        target.write_bytes(data)
    return target


def whitelisted() -> list[str]:
    names: set[str] = set()
    for policy in bundled_policies():
        if policy.libc == "glibc":
            names |= policy.lib_whitelist
    return sorted(names)


def read_arch(debs: list[Path], sonames: list[str]) -> dict[str, dict]:
    """soname -> {needed, exports: {name: [versions]}} for the libraries of these packages: the whitelisted ones
    and, where the packages hold them, what those need (ld.so, libxcb for libX11): a name may come from them."""
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for deb in debs:
            unpack_deb(deb, root)
        todo = list(sonames)
        while todo:
            soname = todo.pop(0)
            if soname in out:
                continue
            for directory in library_dirs(root):
                real = resolve_in_root(root, f"{directory}/{soname}")
                if real is None:
                    continue
                elf = summarize(real.read_bytes(), f"{directory}/{soname}")
                exports = {name: sorted(versions, key=lambda v: v or "")
                           for name, versions in elf.symtab.export_versions().items()}
                out[soname] = {"needed": list(elf.needed), "exports": exports}
                todo.extend(elf.needed)
                break
    return out


def build(libraries: dict[str, dict[str, dict]], packages: dict[str, list[str]]) -> dict:
    names = sorted({n for arch in libraries.values() for lib in arch.values() for n in lib["exports"]})
    index = {n: i for i, n in enumerate(names)}
    versions = sorted({v for arch in libraries.values() for lib in arch.values()
                       for vs in lib["exports"].values() for v in vs if v})
    vindex = {v: i + 1 for i, v in enumerate(versions)}  # 0: unversioned
    doc = {"description": "What the whitelisted system libraries of the glibc policies export, per architecture, "
                          "read from Debian's packages by tools/gen_system_exports.py. names: every exported name, "
                          "sorted; versions: the symbol versions (index 0 is none). Per library: needed (its "
                          "DT_NEEDED), names (indices into names, each the difference from the one before) and "
                          "versions (per name: one version index, or a list of them).",
           "packages": packages, "versions": versions, "names": "\n".join(names), "libraries": {}}
    for arch, libs in sorted(libraries.items()):
        doc["libraries"][arch] = {}
        for soname, lib in sorted(libs.items()):
            ids = sorted(index[n] for n in lib["exports"])
            deltas = [b - a for a, b in zip([0] + ids, ids)]
            per = []
            for i in ids:
                vs = [vindex.get(v, 0) if v else 0 for v in lib["exports"][names[i]]]
                per.append(vs[0] if len(vs) == 1 else vs)
            doc["libraries"][arch][soname] = {"needed": lib["needed"], "names": deltas, "versions": per}
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debs", type=Path, default=default_dir())
    args = parser.parse_args(argv)
    args.debs.mkdir(parents=True, exist_ok=True)
    pins = load_pins()
    sonames = whitelisted()
    libraries: dict[str, dict[str, dict]] = {}
    packages: dict[str, list[str]] = {}
    for debian_arch, arch in DEBIAN_ARCH.items():
        mine = sorted((package, pool, digest) for (a, package), (pool, digest) in pins.items() if a == debian_arch)
        debs = [fetch(pool, digest, args.debs) for _, pool, digest in mine]
        libraries[arch] = read_arch(debs, sonames)
        packages[arch] = [pool.rsplit("/", 1)[-1] for _, pool, _ in mine]
        print(f"{arch}: {len(libraries[arch])} libraries; of the {len(sonames)} whitelisted, not found: "
              f"{', '.join(sorted(set(sonames) - set(libraries[arch]))) or 'none'}")
    doc = build(libraries, packages)
    data = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    TARGET.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{TARGET.relative_to(ROOT)}: {len(doc['names'].splitlines())} names, {TARGET.stat().st_size} bytes")
    return 0


__all__ = ["load_pins", "build", "read_arch", "whitelisted"]

if __name__ == "__main__":
    sys.exit(main())
