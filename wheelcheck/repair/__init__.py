"""Repair: plan (pure) what to graft, rename and patch; apply it; write the new wheel."""

from wheelcheck.repair.repair_options import RepairOptions
from wheelcheck.repair.repair_wheel import repair_wheel

__all__ = ["RepairOptions", "repair_wheel"]
