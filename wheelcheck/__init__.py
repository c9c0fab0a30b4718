"""wheelcheck: audit and repair Linux binary wheels."""

from __future__ import annotations

from wheelcheck._version import __version__

from wheelcheck.api import audit, repair

__all__ = ["__version__", "audit", "repair"]
