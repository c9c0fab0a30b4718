"""The command line: parse arguments, call the API, render. No analysis lives here.

Each command's wiring lives in the module named for it; importing them registers the commands on ``app`` in the
order ``wheelcheck --help`` lists them.
"""

from wheelcheck.cli.common import app
from wheelcheck.cli import audit_command  # noqa: F401
from wheelcheck.cli import repair_commands  # noqa: F401
from wheelcheck.cli import inspect_commands  # noqa: F401
from wheelcheck.cli import environment_commands  # noqa: F401
from wheelcheck.cli import census_command  # noqa: F401
from wheelcheck.cli import policy_commands  # noqa: F401
from wheelcheck.cli.entry import internal_error_line, main, only_the_command

__all__ = ["app", "main", "only_the_command", "internal_error_line"]
