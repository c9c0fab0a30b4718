"""What `wheelcheck conflicts` is asked: one object, built once at the edge and passed down unchanged."""

from __future__ import annotations

from dataclasses import dataclass

from wheelcheck.audit.findings import SEVERITIES
from wheelcheck.errors import UsageError

__all__ = ["ConflictsOptions"]


@dataclass(frozen=True)
class ConflictsOptions:
    # None: compare the wheels given; otherwise the distributions installed where these Python executables
    # or site-packages directories point (empty: the active virtual environment's, else this interpreter's)
    env: tuple[str, ...] | None = None
    jobs: int | None = None  # worker processes for large files (None: the CPU count)
    fail_on: str = "error"  # the lowest finding severity that makes the exit status 1

    def __post_init__(self) -> None:
        if self.env is not None:
            object.__setattr__(self, "env", (self.env,) if isinstance(self.env, str) else tuple(map(str, self.env)))
        if self.jobs is not None and self.jobs < 1:
            raise UsageError(repr(self.jobs), "--jobs must be at least 1")
        if self.fail_on not in SEVERITIES:
            raise UsageError(repr(self.fail_on), "--fail-on must be 'error', 'warning' or 'info'")
