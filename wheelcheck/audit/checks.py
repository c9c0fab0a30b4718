"""Checks beyond the verdict: each takes the judged wheel and returns findings and facts.

The verdict (symbol versions, external libraries, blacklist, ISA) decides the tag; these checks look at
what breaks real programs regardless of the tag. Each is a pure function of a CheckContext that yields
Findings (rule id, severity, file, message) and Facts (a measured value the report carries per file, or
for the wheel when ``file`` is None). A policy's ``rules`` object may change a finding's severity or
turn its rule off; the verdict applies that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from wheelcheck.audit.check_context import CheckContext, Fact
from wheelcheck.audit.cxxabi_check import check_cxx_abi
from wheelcheck.audit.data_twins import check_data_twins
from wheelcheck.audit.elf_in_purelib import check_layout
from wheelcheck.audit.excluded_libraries import check_excluded
from wheelcheck.audit.isa_code import check_isa_code
from wheelcheck.audit.libc_vendored import check_libc_vendored
from wheelcheck.audit.exposure_check import check_exposure
from wheelcheck.audit.preloaded_libraries import check_preloaded
from wheelcheck.audit.unsafe_loading import check_loading
from wheelcheck.audit.runtime_deps import check_runtime_deps
from wheelcheck.audit.vendored_licenses import check_vendored_licenses
from wheelcheck.audit.variant_properties import check_variant_properties
from wheelcheck.audit.findings import Finding

__all__ = ["CheckContext", "Check", "Fact", "CHECKS"]

Check = Callable[[CheckContext], Iterable[Finding | Fact]]

# The checks run on every audit, in order.
CHECKS: tuple[Check, ...] = (check_cxx_abi, check_exposure, check_runtime_deps, check_loading, check_layout,
                             check_excluded, check_preloaded, check_data_twins, check_libc_vendored,
                             check_vendored_licenses, check_isa_code, check_variant_properties)
