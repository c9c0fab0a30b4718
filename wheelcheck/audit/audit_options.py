"""What an audit is asked: one object, built once at the edge and passed down unchanged.

``wheelcheck audit`` builds it from its flags and ``[tool.wheelcheck]``, ``wheelcheck.audit(paths, **fields)``
from keyword arguments, and the verdict reads it. ``wheelcheck show`` takes the same object (it has flags
for a few of its fields only). Values are checked here, once, whoever builds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wheelcheck.audit.findings import SEVERITIES
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.audit.suppression import Suppressions
from wheelcheck.errors import UsageError
from wheelcheck.policy.policy_model import Policy, PolicySet
from wheelcheck.policy.registry import bundled_policies
from wheelcheck.wheel.variant_metadata import VariantsIndex, read_variants_index

__all__ = ["AuditOptions", "as_tuple", "PYPI_SIZE_LIMIT"]

PYPI_SIZE_LIMIT = 100  # MB: the package index's default limit per file, which a project may ask to have raised


@dataclass(frozen=True)
class AuditOptions:
    policies: PolicySet = field(default_factory=bundled_policies)  # judged against (--policy-file: its own)
    # a tag (manylinux_2_17_x86_64), a policy name applied per wheel (manylinux2014), or a resolved Policy
    plat: str | Policy | None = None
    exclude: tuple[str, ...] = ()  # globs of sonames treated as provided
    lib_path: tuple[str, ...] = ()  # directories where external libraries' own needs are read
    jobs: int | None = None  # worker processes for large wheels (None: the CPU count)
    cxx_abi: str | None = None  # --cxx-abi old|new: overrides the policy's allowed C++ string ABIs
    fail_on: str = "error"  # the lowest finding severity that makes the wheel fail
    isa_check: bool = True  # False (--disable-isa-ext-check): an x86-64 ISA level above the baseline is allowed
    any_platform_tag: bool = False  # True: the target index takes platform tags the package index refuses (linux_*)
    max_wheel_size: int = PYPI_SIZE_LIMIT  # MB: a larger wheel gets a wheel-size warning
    # (level, who claims it): the x86-64 level the wheel claims (--isa-level v2: (2, "--isa-level v2")); code needing
    # more with no CPU check is an isa-instructions error
    isa_claim: tuple[int, str] | None = None
    suppressions: Suppressions = field(default_factory=Suppressions)  # ignore, per-file-ignores, a baseline
    # the index's {name}-{version}-variants.json (--variants-json; a path is read): the variant wheels are checked
    # against it
    variants_index: VariantsIndex | str | Path | None = None
    # what was found on lib_path for the wheel being judged: filled per wheel, never by the caller
    external: Mapping[str, ElfInfo] = field(default_factory=dict)

    @property
    def variants(self) -> VariantsIndex | None:
        """``variants_index`` as read (a path given is read when the options are made)."""
        return self.variants_index if isinstance(self.variants_index, VariantsIndex) else None

    def __post_init__(self) -> None:
        as_tuple(self, "exclude", "lib_path")
        if self.cxx_abi not in (None, "old", "new"):
            raise UsageError(repr(self.cxx_abi), "--cxx-abi must be 'old' or 'new'")
        if self.fail_on not in SEVERITIES:
            raise UsageError(repr(self.fail_on), "--fail-on must be 'error', 'warning' or 'info'")
        if isinstance(self.variants_index, (str, Path)):
            object.__setattr__(self, "variants_index", read_variants_index(self.variants_index))
        if self.jobs is not None and self.jobs < 1:
            raise UsageError(repr(self.jobs), "--jobs must be at least 1")
        if self.isa_claim is not None and self.isa_claim[0] not in (1, 2, 3, 4):
            raise UsageError(repr(self.isa_claim[0]), "the x86-64 level claimed must be 1, 2, 3 or 4")


def as_tuple(options: object, *names: str) -> None:
    """Store the named fields of a frozen options object as tuples (callers may pass lists or one string)."""
    for name in names:
        value = getattr(options, name)
        object.__setattr__(options, name, (value,) if isinstance(value, str) else tuple(map(str, value)))
