"""Does ``pip install wheelcheck`` find a wheel for every runtime dependency wherever cibuildwheel repairs wheels?

The repair step runs inside the manylinux and musllinux images, with the Python their ``pipx`` uses. For each
platform those images cover, every dependency of the base install (and of the ``hide`` extra, reported apart:
it is optional) is looked up as ``pip download --only-binary=:all: --platform ... --python-version ...`` would
find it. Prints a platform x dependency table; exit status 0 when every base dependency has a wheel on every
platform, 1 when one lacks a wheel somewhere, 3 when the package index cannot be reached.

    python tools/check_platforms.py            # the table
    python tools/check_platforms.py --json     # the same, for a test or a script
    python tools/check_platforms.py --refresh  # ignore the cached answers (kept a day)
    python tools/check_platforms.py --no-extras --json  # the base install only: what tests/test_platforms.py runs

How: one resolution of the dependencies for manylinux_2_28 x86_64 gives every package of the install and its
wheel. A ``py3-none-any`` wheel installs everywhere; each package with binary wheels is then looked up on every
platform with ``--no-deps``, under the version range its dependents ask for, with the platform tags a system of
that glibc or musl accepts (pip does not widen a ``manylinux_2_28`` platform to older tags by itself). pip
answers each question with the options of ``pip download --only-binary=:all: --platform ... --python-version
...``, run as ``pip install --dry-run --report`` so that no wheel is downloaded (LIEF's are tens of MB).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[1]
PIPX_PYTHON = "3.12"  # the images' pipx runs on /opt/python/cp312-cp312 (pypa/manylinux finalize.sh)
# (platform tag of the image, libc, libc version, arch): manylinux2014 and manylinux_2_28 on five arches,
# manylinux_2_31 armv7l, manylinux_2_39 riscv64, musllinux_1_2 on six
PLATFORMS: list[tuple[str, str, tuple[int, int], str]] = (
    [("manylinux2014_" + a, "glibc", (2, 17), a) for a in ("x86_64", "i686", "aarch64", "ppc64le", "s390x")]
    + [("manylinux_2_28_" + a, "glibc", (2, 28), a) for a in ("x86_64", "i686", "aarch64", "ppc64le", "s390x")]
    + [("manylinux_2_31_armv7l", "glibc", (2, 31), "armv7l"), ("manylinux_2_39_riscv64", "glibc", (2, 39), "riscv64")]
    + [("musllinux_1_2_" + a, "musl", (1, 2), a) for a in ("x86_64", "i686", "aarch64", "armv7l", "ppc64le", "s390x")]
)
REFERENCE = ("manylinux_2_28_x86_64", "glibc", (2, 28), "x86_64")
_LEGACY = {(2, 17): "manylinux2014", (2, 12): "manylinux2010", (2, 5): "manylinux1"}
_CACHE_SECONDS = 24 * 3600
_UNREACHABLE = ("Could not fetch URL", "NewConnectionError", "Failed to establish", "Temporary failure in name",
                "Max retries exceeded", "Network is unreachable", "Connection refused")


# what requirement markers are evaluated with: the images' pipx Python on Linux, no extra (platform_machine is
# this machine's unless a check names one)
_MARKER_ENV = {"python_version": PIPX_PYTHON, "python_full_version": PIPX_PYTHON + ".0", "sys_platform": "linux",
               "platform_system": "Linux", "implementation_name": "cpython",
               "platform_python_implementation": "CPython", "extra": ""}


def accepted_platforms(libc: str, version: tuple[int, int], arch: str) -> list[str]:
    """The platform tags a system of this libc release accepts, newest first (as packaging.tags computes them)."""
    major, minor = version
    if libc == "musl":
        return [f"musllinux_{major}_{m}_{arch}" for m in range(minor, -1, -1)]
    oldest = 5 if arch in ("x86_64", "i686") else 17
    tags = []
    for m in range(minor, oldest - 1, -1):
        tags.append(f"manylinux_{major}_{m}_{arch}")
        if (major, m) in _LEGACY:
            tags.append(f"{_LEGACY[(major, m)]}_{arch}")
    return tags


def project_requirements() -> dict[str, list[Requirement]]:
    """pyproject.toml's runtime requirements: "" for the base install, then each extra but ``test``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {"": [Requirement(r) for r in project["dependencies"]]}
    for extra, reqs in project.get("optional-dependencies", {}).items():
        if extra != "test":
            groups[extra] = [Requirement(r) for r in reqs if not r.startswith(project["name"])]
    return {k: [r for r in v if r.marker is None or r.marker.evaluate(_MARKER_ENV)] for k, v in groups.items()}


def _pip(args: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--retries", "1",
                           "--timeout", "30", *args], capture_output=True, text=True, timeout=timeout)


def _target_args(platform: tuple[str, str, tuple[int, int], str]) -> list[str]:
    _, libc, version, arch = platform
    args = ["--only-binary=:all:", "--python-version", PIPX_PYTHON, "--implementation", "cp"]
    for tag in accepted_platforms(libc, version, arch):
        args += ["--platform", tag]
    return args


class IndexUnreachable(Exception):
    pass


def resolve_reference(requirements: list[Requirement]) -> list[dict]:
    """Every package ``pip install`` of ``requirements`` brings on the reference platform: name, version,
    wheel file name, and the requirements of it that apply."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        proc = _pip(["install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
                     "--target", str(Path(tmp) / "target"), *_target_args(REFERENCE), *map(str, requirements)])
        if proc.returncode != 0:
            if any(sign in proc.stderr for sign in _UNREACHABLE) or "(from versions: none)" in proc.stderr:
                raise IndexUnreachable(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "pip failed")
            raise RuntimeError(f"pip could not resolve the dependencies for {REFERENCE[0]}:\n{proc.stderr}")
        installs = json.loads(report.read_text())["install"]
    return [{"name": canonicalize_name(item["metadata"]["name"]), "version": item["metadata"]["version"],
             "wheel": item["download_info"]["url"].rsplit("/", 1)[-1],
             "requires": item["metadata"].get("requires_dist") or []} for item in installs]


def wanted_ranges(packages: list[dict], requirements: list[Requirement]) -> dict[str, str]:
    """package -> the version range its dependents (and pyproject.toml) ask for, joined."""
    ranges: dict[str, list[str]] = {}
    reqs = list(requirements)
    for package in packages:
        reqs += [Requirement(r) for r in package["requires"]]
    for req in reqs:
        if req.marker is None or req.marker.evaluate(_MARKER_ENV):
            ranges.setdefault(canonicalize_name(req.name), []).append(str(req.specifier))
    return {name: ",".join(s for s in specs if s) for name, specs in ranges.items()}


def closure(names: list[str], packages: list[dict]) -> set[str]:
    """``names`` and everything they require, transitively, among the resolved ``packages``."""
    requires = {p["name"]: [Requirement(r) for r in p["requires"]] for p in packages}
    seen: set[str] = set()
    while names:
        name = names.pop()
        if name in seen or name not in requires:
            continue
        seen.add(name)
        names += [canonicalize_name(r.name) for r in requires[name] if r.marker is None or r.marker.evaluate(_MARKER_ENV)]
    return seen


def is_pure(wheel: str) -> bool:
    return all(tag.platform == "any" for tag in parse_wheel_filename(wheel)[3])


def find_wheels(platform, requirements: list[str], cache: dict, refresh: bool) -> dict[str, str | None]:
    """requirement -> the wheel ``pip download --no-deps`` picks for it on ``platform`` (None: no wheel).

    One pip run asks for all of them; a requirement pip finds nothing for is named in its error, left out,
    and the rest asked again. Answers are cached for a day.
    """
    out: dict[str, str | None] = {}
    ask = []
    for requirement in requirements:
        hit = cache.get(f"{PIPX_PYTHON}|{platform[0]}|{requirement}")
        if hit and not refresh and time.time() - hit["time"] < _CACHE_SECONDS:
            out[requirement] = hit["wheel"]
        else:
            ask.append(requirement)
    while ask:
        with tempfile.TemporaryDirectory() as tmp:
            proc = _pip(["install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet", "--report",
                         f"{tmp}/report.json", "--target", f"{tmp}/target", *_target_args(platform), *ask])
            found = {}
            if proc.returncode == 0:
                for item in json.loads(Path(f"{tmp}/report.json").read_text())["install"]:
                    wheel = item["download_info"]["url"].rsplit("/", 1)[-1]
                    found[canonicalize_name(item["metadata"]["name"])] = wheel
        if proc.returncode == 0:
            out.update({r: found.get(canonicalize_name(Requirement(r).name)) for r in ask})
            break
        if any(sign in proc.stderr for sign in _UNREACHABLE):
            raise IndexUnreachable(proc.stderr.strip().splitlines()[-1])
        missing = re.search(r"No matching distribution found for (\S+)", proc.stderr)
        if missing is None or missing.group(1) not in ask:
            raise RuntimeError(f"pip download failed for {platform[0]}:\n{proc.stderr}")
        out[missing.group(1)] = None
        ask.remove(missing.group(1))
    for requirement, wheel in out.items():
        cache[f"{PIPX_PYTHON}|{platform[0]}|{requirement}"] = {"wheel": wheel, "time": time.time()}
    return out


def check(refresh: bool = False, cache_file: Path | None = None, extras: bool = True, jobs: int = 6) -> dict:
    """The platform x package answers for the base install (and, with ``extras``, the optional extras)."""
    groups = project_requirements()
    if not extras:
        groups = {"": groups[""]}
    every = [r for reqs in groups.values() for r in reqs]
    cache_file = cache_file or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wheelcheck" \
        / "platform-check.json"
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    packages = _cached(cache, "reference|" + "|".join(sorted(map(str, every))), refresh,
                       lambda: resolve_reference(every))
    ranges = wanted_ranges(packages, every)
    group_of: dict[str, str] = {}
    for extra, reqs in groups.items():  # the base first: a package both need is the base's
        for name in closure([canonicalize_name(r.name) for r in reqs], packages):
            group_of.setdefault(name, extra or "base")
    binary = {p["name"] + ranges.get(p["name"], ""): p["name"] for p in packages if not is_pure(p["wheel"])}
    skipped = {platform[0]: not_installed_on(platform[3], every) for platform in PLATFORMS}

    def wheels_for(platform) -> dict[str, str | None]:
        return find_wheels(platform, [r for r, name in binary.items() if name not in skipped[platform[0]]], cache,
                           refresh)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        answers = list(pool.map(wheels_for, PLATFORMS))
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps(cache, indent=1, sort_keys=True))
    except OSError:
        pass  # a cache that cannot be written only costs time
    results: dict[str, dict[str, str | None]] = {platform[0]: {} for platform in PLATFORMS}
    for platform, found in zip(PLATFORMS, answers):
        results[platform[0]].update({binary[requirement]: wheel for requirement, wheel in found.items()})
    for platform in PLATFORMS:
        for package in packages:
            if package["name"] not in skipped[platform[0]]:
                results[platform[0]].setdefault(package["name"], package["wheel"])  # pure: the same wheel everywhere
    deps = [{"name": p["name"], "range": ranges.get(p["name"], ""), "pure": is_pure(p["wheel"]),
             "in": group_of.get(p["name"], "base")} for p in packages]
    gaps = [{"platform": plat, "package": name, "in": group_of.get(name, "base")}
            for plat, found in results.items() for name, wheel in found.items() if wheel is None]
    return {"python": PIPX_PYTHON, "platforms": [p[0] for p in PLATFORMS], "dependencies": deps,
            "results": results, "gaps": gaps, "ok": not any(g["in"] == "base" for g in gaps)}


def not_installed_on(arch: str, requirements: list[Requirement]) -> set[str]:
    """The packages of ``requirements`` whose marker leaves them out on ``arch`` (zlib-ng: only where it has
    wheels): pip does not install them there, so they need no wheel there."""
    here = {**_MARKER_ENV, "platform_machine": arch}
    return {canonicalize_name(r.name) for r in requirements if r.marker is not None and not r.marker.evaluate(here)}


def _cached(cache: dict, key: str, refresh: bool, compute):
    hit = cache.get(key)
    if hit and not refresh and time.time() - hit["time"] < _CACHE_SECONDS:
        return hit["value"]
    value = compute()
    cache[key] = {"value": value, "time": time.time()}
    return value


def render_table(result: dict) -> str:
    deps = sorted(result["dependencies"], key=lambda d: (d["pure"], d["in"] != "base", d["name"]))
    binary = [d for d in deps if not d["pure"]]
    pure = [d for d in deps if d["pure"]]
    headers = ["platform (cp" + result["python"].replace(".", "") + ")"]
    headers += [d["name"] + ("" if d["in"] == "base" else f" [{d['in']}]") for d in binary]
    headers.append(f"{len(pure)} pure")
    rows = []
    for platform in result["platforms"]:
        found = result["results"][platform]
        row = [platform] + [_cell(found[d["name"]]) if d["name"] in found else "not installed" for d in binary]
        row.append("all" if all(found.get(d["name"], "not installed") for d in pure) else "MISSING")
        rows.append(row)
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    lines.append("")
    lines.append("pure (py3-none-any, one wheel for every platform): " + ", ".join(
        f"{d['name']}" + (f" [{d['in']}]" if d["in"] != "base" else "") for d in pure))
    for gap in result["gaps"]:
        lines.append(f"no wheel: {gap['package']} on {gap['platform']} ({gap['in']})")
    lines.append("every base dependency has a wheel on every platform" if result["ok"]
                 else "a base dependency has no wheel on some platform")
    return "\n".join(lines) + "\n"


def _cell(wheel: str | None) -> str:
    """The platform tags of the wheel found, shortened: 'manylinux_2_17 (0.19.3.0)' -> '2_17 0.19.3.0'."""
    if wheel is None:
        return "none"
    _, version, _, tags = parse_wheel_filename(wheel)
    platforms = sorted({re.sub(r"_(x86_64|i686|aarch64|ppc64le|s390x|armv7l|riscv64)$", "", t.platform)
                        for t in tags})
    return f"{version} {'.'.join(p for p in platforms if not p.startswith('manylinux1'))}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--refresh", action="store_true", help="ask the index again, ignoring cached answers")
    parser.add_argument("--cache-file", type=Path, help="where answers are kept (default ~/.cache/wheelcheck/)")
    parser.add_argument("--no-extras", action="store_true", help="the base install only (what must hold)")
    args = parser.parse_args(argv)
    try:
        result = check(refresh=args.refresh, cache_file=args.cache_file, extras=not args.no_extras)
    except IndexUnreachable as exc:
        print(f"check_platforms: the package index cannot be reached ({exc})", file=sys.stderr)
        return 3
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if args.json else render_table(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
