"""The auditing child process: ``python -m wheelcheck.census.audit_child`` reads one JSON request on stdin
and writes the wheel's rows as JSON on stdout.

A child per wheel is what makes a crash (a segfault in a parser) or a time-out cost one row, not the Dask
worker: the worker kills the child and records the error. The audit is the CLI's: the same policies and
options as ``wheelcheck.api.audit``, ``scan_wheel`` then ``judge`` as ``wheelcheck.api.audit_wheel`` does.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from typing import Any

__all__ = ["audit_rows"]


def audit_rows(path: str, identity: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    from wheelcheck.api import load_policies
    from wheelcheck.audit.verdict import AuditOptions, judge
    from wheelcheck.census.rows import error_rows, report_rows
    from wheelcheck.errors import UsageError, WheelcheckError
    from wheelcheck.wheel.scanner import scan_wheel

    audit_options = AuditOptions(policies=load_policies(options.get("policy_file")), plat=options.get("plat"),
                                 exclude=tuple(options.get("exclude", ())), cxx_abi=options.get("cxx_abi"),
                                 fail_on=options.get("fail_on", "error"), isa_check=options.get("isa_check", True))
    name = identity["filename"]
    try:
        model = scan_wheel(path, jobs=1)
        report = judge(model, audit_options)
    except UsageError:
        raise
    except WheelcheckError as exc:
        return error_rows(identity, str(exc))
    except Exception as exc:  # noqa: BLE001 - an auditor bug on one wheel is that wheel's row, not a stop
        return error_rows(identity, f"{name}: auditor failed: {type(exc).__name__}: {exc}")
    report.path = path
    return report_rows(identity, report, model)


def _end_with_parent() -> None:
    """A worker killed mid-audit (a stopped census, a restarted worker) has no use for this audit, and the
    wheel it reads is scratch the census removes: the child ends within a second of its parent."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def main() -> None:
    _end_with_parent()
    request = json.load(sys.stdin)
    if request.get("memory"):  # the cap is set here, not by a pre-exec hook: the Dask worker has threads
        resource.setrlimit(resource.RLIMIT_AS, (request["memory"], request["memory"]))
    rows = audit_rows(request["path"], request["identity"], request["options"])
    sys.stdout.write(json.dumps(rows))


if __name__ == "__main__":
    main()
