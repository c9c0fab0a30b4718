"""Reading .whl files safely, straight from the zip."""

from wheelcheck.wheel.wheel_reader import WheelReader
from wheelcheck.wheel.record import Record

__all__ = ["WheelReader", "Record"]
