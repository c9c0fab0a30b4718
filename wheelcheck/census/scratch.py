"""The census's scratch directories, named for the process that makes them: ``wheelcheck-census-PID@HOST-*``.

A process that is killed outright (a Dask worker restarted for memory, a client sent SIGKILL) runs no
cleanup, and a download it held would stay on disk. So whoever makes a scratch directory first removes those
in the same place whose owner, on this host, no longer runs.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile

__all__ = ["PREFIX", "make_scratch", "remove_orphans"]

PREFIX = "wheelcheck-census-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)@(.+)-[a-z0-9_]+")  # mkdtemp's suffix has no '-'


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())


def make_scratch(parent: str | None = None) -> str:
    """A new directory in ``parent`` (default: the temporary directory), once the orphans there are removed."""
    parent = parent or tempfile.gettempdir()
    remove_orphans(parent)
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}@{_host()}-", dir=parent)


def remove_orphans(parent: str) -> None:
    """Remove the scratch directories in ``parent`` of processes of this host that have ended."""
    host = _host()
    try:
        entries = [entry.name for entry in os.scandir(parent)]
    except OSError:
        return
    for name in entries:
        match = _NAME.fullmatch(name)
        if match and match.group(2) == host and not _alive(int(match.group(1))):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
