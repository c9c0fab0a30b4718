"""Hypothesis strategies over tests.fuzz.mutate, and the two profiles that run them.

Profiles (``WHEELCHECK_FUZZ=long`` selects the second; ``--hypothesis-profile`` works too):

- ``ci`` (default): few examples per test, derandomized (the same inputs every run, so the suite's time is
  fixed and a failure is reproducible), no deadline (shared CI cores), no example database;
- ``long``: thousands of random examples per test, for a run by hand (``WHEELCHECK_FUZZ=long python -m
  pytest tests/test_fuzz_*.py -n 2``); a failure prints the input's recipe and the seed to replay it.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.fuzz.mutate import Mutation, mangled_name, mutate_elf, mutate_zip

__all__ = ["PROFILE", "elf_mutations", "zip_mutations", "mangled_names"]

settings.register_profile(
    "ci", max_examples=60, derandomize=True, deadline=None, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
settings.register_profile(
    "long", max_examples=5000, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
PROFILE = os.environ.get("WHEELCHECK_FUZZ", "ci")
settings.load_profile(PROFILE)

T = TypeVar("T")


class _DrawChooser:
    """The Chooser of tests.fuzz.mutate backed by hypothesis draws (so failures shrink)."""

    def __init__(self, draw) -> None:
        self.draw = draw

    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def blob(self, max_size: int, min_size: int = 0) -> bytes:
        return self.draw(st.binary(min_size=min_size, max_size=max_size))


@st.composite
def elf_mutations(draw, seeds: dict[str, bytes], max_steps: int = 4) -> Mutation:
    return mutate_elf(_DrawChooser(draw), seeds, max_steps)


@st.composite
def zip_mutations(draw, ext_seeds: dict[str, bytes], max_steps: int = 3) -> Mutation:
    return mutate_zip(_DrawChooser(draw), ext_seeds, max_steps)


@st.composite
def mangled_names(draw) -> str:
    return mangled_name(_DrawChooser(draw))
