"""What a repair is asked: one object, built once at the edge and passed down unchanged.

``wheelcheck repair`` builds it from its flags and ``[tool.wheelcheck]``, ``wheelcheck.repair(paths, out_dir,
**fields)`` from keyword arguments, and ``repair_wheel`` reads it. Values are checked here, once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wheelcheck.audit.audit_options import AuditOptions, as_tuple
from wheelcheck.elf.symbol_edit import LIEF_MISSING, lief_available
from wheelcheck.errors import UsageError
from wheelcheck.policy.policy_model import PolicySet
from wheelcheck.policy.registry import bundled_policies

__all__ = ["RepairOptions"]


@dataclass(frozen=True)
class RepairOptions:
    policies: PolicySet = field(default_factory=bundled_policies)  # the targets (--policy-file: its own)
    out_dir: Path = Path("wheelhouse")  # where repaired wheels are written (created if missing)
    plat: str | None = None  # None or "auto": the best reachable policy
    exclude: tuple[str, ...] = ()  # globs of sonames (or host paths) never grafted
    lib_path: tuple[str, ...] = ()  # directories searched for libraries first
    level: int = 6  # deflate level of changed and new members
    jobs: int | None = None  # worker processes for scanning large wheels (None: the CPU count)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)  # LD_LIBRARY_PATH, SOURCE_DATE_EPOCH
    hide_symbols: bool = False  # hide/rename the symbols of vendored libraries (repair/hide_apply.py)
    hide_extension_symbols: bool = False  # and hide extension modules' exports but PyInit_*
    keep_symbols: tuple[str, ...] = ()  # globs of names never hidden or renamed
    lib_sdir: str = ".libs"  # grafted libraries go to <dist><lib_sdir>/ (auditwheel's -L)
    only_plat: bool = False  # tag with --plat only, even if the wheel reaches a better policy
    strip: bool = False  # strip -s the grafted libraries and extension modules (auditwheel's --strip)
    isa_check: bool = True  # False: do not judge the x86-64 ISA level (--disable-isa-ext-check)
    ldpaths: tuple[str, ...] | None = None  # auditwheel's --ldpaths: replaces ld.so.conf and the trusted dirs
    update_tags: bool = True  # False (--no-update-tags): keep the file name and Tag lines; they must still hold
    allow_pure: bool = False  # --allow-pure-python-wheel: copy a py3-none-any wheel through unchanged
    # --license-file LIB=FILE: (LIB, FILE) pairs, or a mapping; LIB a soname the wheel needs or a library's file
    # name, FILE the license text its graft carries (instead of its OS package's)
    license_files: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        as_tuple(self, "exclude", "lib_path", "keep_symbols")
        if self.ldpaths is not None:
            as_tuple(self, "ldpaths")
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        if not self.lib_sdir or "/" in self.lib_sdir or self.lib_sdir in (".", ".."):
            raise UsageError(repr(self.lib_sdir), "--lib-sdir must be a directory-name suffix such as .libs")
        if not 0 <= self.level <= 9:
            raise UsageError(repr(self.level), "--zip-compression-level must be 0 to 9")
        if self.jobs is not None and self.jobs < 1:
            raise UsageError(repr(self.jobs), "--jobs must be at least 1")
        if self.hiding and not lief_available():
            raise UsageError("--hide-symbols", LIEF_MISSING)
        self._check_license_files()

    def _check_license_files(self) -> None:
        pairs = self.license_files.items() if isinstance(self.license_files, Mapping) else self.license_files
        checked = []
        for lib, file in pairs:
            lib, file = str(lib), os.fspath(file)
            if not lib or "/" in lib:
                raise UsageError(repr(lib), "--license-file takes LIB=FILE, LIB a library's soname or file name")
            if not os.path.isfile(file):
                raise UsageError(file, f"no such file (the license of {lib}, --license-file)")
            checked.append((lib, str(file)))
        object.__setattr__(self, "license_files", tuple(checked))

    @property
    def hiding(self) -> bool:
        return self.hide_symbols or self.hide_extension_symbols

    def audit_options(self) -> AuditOptions:
        """How the repair judges the wheel, its plans and its result: its policies, exclusions and ISA check."""
        return AuditOptions(self.policies, exclude=self.exclude, isa_check=self.isa_check)
