"""Does a wheel's metadata say what its file name says? WHEEL and METADATA against the name, as installers read
them: uv refuses a wheel whose ``Tag`` lines differ from its file name, pip installs the ``Name`` and ``Version``
of METADATA (a mismatch is a different project on disk than the one resolved), and the ``.dist-info``
directory must be the one the name implies.

Pure functions over text: each returns the problems it finds, as sentences, [] when there are none.
"""

from __future__ import annotations

from email.parser import HeaderParser

from packaging.tags import Tag, parse_tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

__all__ = ["wheel_file_problems", "metadata_problems"]


def wheel_file_problems(text: str, filename_tags: frozenset[Tag]) -> list[str]:
    """What is wrong with a WHEEL file: ``Wheel-Version`` (1.x), ``Root-Is-Purelib`` (true or false), and its
    ``Tag`` lines against the tags of the wheel's file name."""
    fields = HeaderParser().parsestr(text)
    problems = []
    version = (fields.get("Wheel-Version") or "").strip()
    if not version:
        problems.append("has no Wheel-Version")
    elif version.split(".")[0] != "1":
        problems.append(f"says Wheel-Version {version}; installers refuse a major version other than 1")
    purelib = (fields.get("Root-Is-Purelib") or "").strip().lower()
    if purelib not in ("true", "false"):
        problems.append(f"says Root-Is-Purelib {purelib!r}; it must be true or false" if purelib
                        else "has no Root-Is-Purelib")
    tags: set[Tag] = set()
    for line in fields.get_all("Tag") or []:
        try:
            tags |= set(parse_tag(line.strip()))
        except ValueError:
            problems.append(f"has a Tag line that is no tag: {line.strip()!r}")
    if not tags:
        problems.append("has no Tag line")
        return problems
    missing, extra = sorted(map(str, filename_tags - tags)), sorted(map(str, tags - filename_tags))
    if missing or extra:
        said = []
        if missing:
            said.append(f"lacks {_listed(missing)}, which the file name has")
        if extra:
            said.append(f"has {_listed(extra)}, which the file name lacks")
        problems.append(f"Tag lines differ from the file name's tags: {'; '.join(said)} (uv refuses such a "
                        "wheel; pip trusts the file name)")
    return problems


def metadata_problems(text: str | None, name: str, version: str, dist_info: str) -> list[str]:
    """What is wrong between METADATA (``text``, None when missing), the file name's ``name`` and ``version``
    and the ``.dist-info`` directory, each compared as the specifications normalize them."""
    problems = []
    folder = dist_info.removesuffix(".dist-info")
    folder_name, _, folder_version = folder.rpartition("-")
    if canonicalize_name(folder_name) != canonicalize_name(name) or not _same_version(folder_version, version):
        problems.append(f"the metadata directory is {dist_info}, but the file name is of {name} {version}")
    if text is None:
        problems.append(f"has no {dist_info}/METADATA")
        return problems
    fields = HeaderParser().parsestr(text)
    meta_name, meta_version = (fields.get("Name") or "").strip(), (fields.get("Version") or "").strip()
    if not meta_name:
        problems.append("METADATA has no Name")
    elif canonicalize_name(meta_name) != canonicalize_name(name):
        problems.append(f"METADATA names the project {meta_name!r}, the file name {name!r}")
    if not meta_version:
        problems.append("METADATA has no Version")
    elif not _same_version(meta_version, version):
        problems.append(f"METADATA says version {meta_version}, the file name {version}")
    return problems


def _same_version(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _listed(tags: list[str], shown: int = 4) -> str:
    more = len(tags) - shown
    return ", ".join(tags[:shown]) + (f" and {more} more" if more > 0 else "")
