"""The upstream projects of data/components.json: which library files and symbol families are theirs, and
how their binaries state a version."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from wheelcheck.symbols.sonames import unhashed
from wheelcheck.data import load_table

__all__ = ["Upstream", "upstreams", "upstream_of_library", "upstream_of_family", "stated_versions", "library_stem",
           "StatedVersion"]


@dataclass(frozen=True)
class Upstream:
    id: str  # also the component name: openssl, zlib, libjpeg-turbo
    title: str
    cpe: str | None  # NVD vendor:product, only where certain
    libraries: tuple[str, ...]  # globs over library stems
    families: tuple[str, ...]  # data/families.json ids
    patterns: tuple[re.Pattern[str], ...]  # each with a group named 'version'

    def owns_library(self, stem: str) -> bool:
        return any(fnmatchcase(stem, glob) for glob in self.libraries)

    def cpe_for(self, version: str) -> str | None:
        """The CPE 2.3 name of this upstream at ``version`` (None without a certain vendor:product)."""
        if self.cpe is None:
            return None
        vendor, product = self.cpe.split(":")
        return f"cpe:2.3:a:{vendor}:{product}:{_cpe_escape(version)}:*:*:*:*:*:*:*"


@dataclass(frozen=True)
class StatedVersion:
    upstream: Upstream
    version: str
    text: str  # the string that states it


@functools.lru_cache(maxsize=1)
def upstreams() -> tuple[Upstream, ...]:
    out = []
    for uid, doc in load_table("components.json")["components"].items():
        out.append(Upstream(
            id=uid, title=doc.get("title", uid), cpe=doc.get("cpe"), libraries=tuple(doc.get("libraries", ())),
            families=tuple(doc.get("families", ())),
            patterns=tuple(re.compile(v["pattern"]) for v in doc.get("versions", ()))))
    return tuple(out)


def library_stem(name: str) -> str:
    """libcrypto-5409cd36.so.1.1.1k -> libcrypto; libopenblasp-r0-59ffcd50.3.15.so -> libopenblasp-r0."""
    return unhashed(name.rsplit("/", 1)[-1]).split(".", 1)[0]


def upstream_of_library(name: str, strings: tuple[str, ...] = ()) -> Upstream | None:
    """The upstream whose library ``name`` is. When two claim the name (libjpeg: libjpeg-turbo or IJG's),
    the one whose version ``strings`` state; None when that does not decide."""
    stem = library_stem(name)
    claimants = [u for u in upstreams() if u.owns_library(stem)]
    if len(claimants) > 1:
        stating = {s.upstream.id for s in stated_versions(strings)}
        claimants = [u for u in claimants if u.id in stating]
    return claimants[0] if len(claimants) == 1 else None


def upstream_of_family(family: str) -> Upstream | None:
    return next((u for u in upstreams() if family in u.families), None)


def stated_versions(strings: tuple[str, ...]) -> list[StatedVersion]:
    """Each (upstream, version, string) that one of ``strings`` states, in the order of the table."""
    out = []
    for upstream in upstreams():
        for pattern in upstream.patterns:
            for text in strings:
                match = pattern.search(text)
                if match:
                    out.append(StatedVersion(upstream, match.group("version"), text.strip()))
    return out


def _cpe_escape(value: str) -> str:
    """CPE 2.3 formatted-string escaping: a backslash before every character other than letters, digits,
    underscore, dot and hyphen."""
    return re.sub(r"([^A-Za-z0-9_.\-])", r"\\\1", value)
