"""The command line's allocator settings (wheel/allocator.py): large buffers go back to the system, the
pieces a member streams in do not page-fault afresh each time."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                                reason="glibc's mallopt")

# 200 pieces of 1 MiB, zero-filled (every page touched), made and freed on a thread of its own (a heap of
# its own, as a read-ahead thread has) and on the main thread; prints the minor page faults they took
_CHURN = textwrap.dedent("""
    import resource, sys, threading
    from wheelcheck.wheel.allocator import return_large_buffers
    if sys.argv[1] == "set":
        assert return_large_buffers()

    def churn():
        for _ in range(200):
            piece = bytearray(1 << 20)
            del piece

    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    thread = threading.Thread(target=churn)
    thread.start()
    thread.join()
    churn()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")
_PAGES_TOUCHED = 2 * 200 * (1 << 20) // 4096


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _CHURN, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_pieces_are_reused_not_faulted_in_again():
    # with the mmap threshold fixed and the trim threshold left at 128 KiB, every freed piece went back to
    # the system and the next one faulted all its pages in again: about one fault per page touched
    assert _faults("set") < _PAGES_TOUCHED // 20
    assert _faults("default") < _PAGES_TOUCHED // 20  # glibc's own settings reuse the pieces too


# A buffer of 8 MiB made and freed twice: glibc's own rule raises its mmap threshold at the first free, serves
# the second from the heap and keeps it there once freed; prints the resident KiB it left behind
_LINGER = textwrap.dedent("""
    import os, sys
    from wheelcheck.wheel.allocator import return_large_buffers
    if sys.argv[1] == "set":
        assert return_large_buffers()

    def resident():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024

    before = resident()
    for _ in range(2):
        buffer = bytearray(8 << 20)
        del buffer
    print(resident() - before)
""")


def _left_resident(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _LINGER, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_large_buffers_go_back_to_the_system():
    assert _left_resident("set") < 1024
    assert _left_resident("default") > 6 * 1024  # what the setting is for: the 8 MiB stay
