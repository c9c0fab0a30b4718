"""Data tables shipped with the package (JSON), and their loaders."""

from __future__ import annotations

import functools
import json
from importlib import resources

__all__ = ["load_table", "driver_loaders", "system_drivers"]


@functools.lru_cache(maxsize=None)
def load_table(name: str) -> dict:
    """A JSON table of this package, parsed once per process."""
    return json.loads(resources.files(__name__).joinpath(name).read_text("utf-8"))


def driver_loaders() -> frozenset[str]:
    """Sonames of vendor-neutral driver loaders (the OpenCL ICD loader, ...): a wheel may ship them."""
    return frozenset(load_table("drivers.json").get("loaders", ()))


def system_drivers() -> frozenset[str]:
    """Sonames of system-provided driver libraries: never vendored, never external."""
    return frozenset(load_table("drivers.json")["sonames"])
