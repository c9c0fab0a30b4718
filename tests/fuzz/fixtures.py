"""pytest fixtures and the one check every fuzz test makes (import them into a test module to use them)."""
from __future__ import annotations

import pytest

from tests.fuzz.bounded import BoundedRunner, Outcome
from tests.fuzz.seeds import build_seeds, seed_targets

__all__ = ["fuzz_runner", "elf_seeds", "assert_clean"]


@pytest.fixture(scope="module")
def fuzz_runner():
    """The fork server: every input in its own process under RLIMIT_AS (2 GiB) and RLIMIT_CPU (5 s)."""
    with BoundedRunner() as runner:
        yield runner


@pytest.fixture(scope="session")
def elf_seeds(build) -> dict[str, bytes]:
    """Real ELF seeds: host gcc, aarch64, i686, s390x (zig) and both libstdc++ ABIs (host g++)."""
    return build_seeds(build, seed_targets())


def assert_clean(outcome: Outcome, recipe: str, wheel: str | None = None, *, two_is_a_verdict: bool = False) -> None:
    """The promise: a verdict (exit 0 or 1) or one line naming the input (exit 2); never a traceback,
    a hang past the CPU limit or an allocation past the memory limit. ``two_is_a_verdict``: the command
    also answers "cannot tell" with exit 2 and a report (compat), so exit 2 without a line is a verdict."""
    context = f"input: {recipe}\nstderr: {outcome.stderr[-2000:]}\n{outcome.traceback}"
    assert outcome.kind in ("ok", "error"), f"{outcome.kind} ({outcome.cpu:.1f} s CPU)\n{context}"
    if outcome.kind == "error" and not (two_is_a_verdict and not outcome.stderr):
        lines = outcome.stderr_lines
        assert len(lines) == 1, f"{len(lines)} lines on stderr\n{context}"
        assert lines[0].startswith("wheelcheck: error: ") and "internal error" not in lines[0], context
        if wheel is not None:
            assert wheel in lines[0], context
