"""What the analyses know about a wheel: its name and tags, and one ElfInfo per ELF member."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from packaging.tags import Tag

from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.wheel.license_notices import LicenseNotices
from wheelcheck.wheel.variant_metadata import VariantMetadata, VariantProperty, flat

__all__ = ["WheelModel", "split_platform", "LEGACY_ALIASES"]

_PLATFORM = re.compile(r"^(manylinux_\d+_\d+|musllinux_\d+_\d+|manylinux1|manylinux2010|manylinux2014|linux)_(.+)$")
LEGACY_ALIASES = {"manylinux1": "manylinux_2_5", "manylinux2010": "manylinux_2_12", "manylinux2014": "manylinux_2_17"}


def split_platform(platform: str) -> tuple[str, str] | None:
    """'manylinux_2_17_x86_64' -> ('manylinux_2_17', 'x86_64'); None for non-Linux platforms."""
    match = _PLATFORM.match(platform)
    return (match.group(1), match.group(2)) if match else None


@dataclass(frozen=True)
class WheelModel:
    """A wheel as the analyses see it. Built once by the scanner; never touches the zip again."""

    filename: str
    name: str
    version: str
    tags: frozenset[Tag]
    elves: tuple[ElfInfo, ...]
    members: tuple[str, ...] = ()
    root_is_purelib: bool = False
    data_dir: str = ""
    requires_dist: tuple[str, ...] = ()
    requires_python: str | None = None  # METADATA's Requires-Python, as written
    record_problems: tuple[tuple[str, str], ...] = field(default=())  # (member, problem)
    record_in_hex: tuple[str, ...] = ()  # members whose RECORD hash is right but written in hex, not base64
    # what the index's archive check or the installers' metadata checks refuse: (rule, member or None, problem)
    package_problems: tuple[tuple[str, str | None, str], ...] = ()
    size: int = 0  # the wheel file's size in bytes
    # members named like shared libraries (GNU ld scripts aside) that hold no ELF file: (member, what they hold)
    not_elf_libraries: tuple[tuple[str, str], ...] = ()
    links: tuple[tuple[str, str], ...] = ()  # members stored as symbolic links: (member, the target path they hold)
    debug_files: tuple[str, ...] = ()  # separate debug-information files (objcopy --only-keep-debug): never loaded
    license_notices: LicenseNotices = LicenseNotices()  # the license files it carries and what they name
    variant_label: str | None = None  # PEP 825: the variant label of its file name; None for a non-variant wheel
    variant: VariantMetadata | None = None  # what its .dist-info/variant.json says; None when it has none
    # (file, what the scanner's caller made of it as it was read): paired with the very ElfInfo, so that a
    # model whose files were replaced (repair's) never lends a file another's analysis
    analyses: tuple[tuple[ElfInfo, Any], ...] = field(default=(), repr=False, compare=False)

    def analysis_of(self, elf: ElfInfo) -> Any:
        """What the scanner's caller made of ``elf`` as the wheel was read; None if nothing (or another file)."""
        found = self._analyses_by_id.get(id(elf))
        return found[1] if found is not None and found[0] is elf else None

    @cached_property
    def _analyses_by_id(self) -> dict[int, tuple[ElfInfo, Any]]:
        """``analyses`` indexed once, so that asking for every file's costs one pass, not one per file. The
        file is kept with its analysis and compared by identity: an id is only an address."""
        return {id(file): (file, analysis) for file, analysis in self.analyses}

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_analyses_by_id", None)  # ids mean nothing in another process: rebuilt there on demand
        return state

    @property
    def variant_properties(self) -> tuple[VariantProperty, ...]:
        """The properties its variant metadata gives its label (PEP 825); () for a non-variant wheel, the null
        variant, or metadata that could not be read."""
        if self.variant_label is None or self.variant is None or not self.variant.readable:
            return ()
        return tuple(flat(self.variant.properties_of(self.variant_label) or ()))

    @property
    def platforms(self) -> list[str]:
        return sorted({t.platform for t in self.tags})

    @property
    def linux_platforms(self) -> list[tuple[str, str]]:
        return [p for p in (split_platform(t) for t in self.platforms) if p]

    def install_path(self, member: str) -> str:
        """Where a member lands, as a virtual absolute path: /sp/... (site-packages), /bin/..., /data/..."""
        prefix = self.data_dir + "/"
        if self.data_dir and member.startswith(prefix):
            kind, _, rest = member[len(prefix):].partition("/")
            if kind in ("purelib", "platlib"):
                return "/sp/" + rest
            if kind == "scripts":
                return "/bin/" + rest
            return f"/{kind}/{rest}"
        return "/sp/" + member

    def in_purelib(self, member: str) -> bool:
        """Installed into purelib: under .data/purelib/, or anywhere when Root-Is-Purelib is true."""
        if self.data_dir and member.startswith(self.data_dir + "/"):
            return member.startswith(self.data_dir + "/purelib/")
        return self.root_is_purelib
