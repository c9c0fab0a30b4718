"""wheelcheck: audit and repair Linux binary wheels."""

from __future__ import annotations

__version__ = "0.1.0"

from wheelcheck.api import audit, repair

__all__ = ["__version__", "audit", "repair"]
