"""The Python clock as the in-process emulator reads it (``follow_python_clock``):
``time.time()`` looked up at each reading (freezegun replaces the function, time-machine
patches it), called from a Python function, so that a fake clock that looks through its
caller's frames (freezegun's) finds one on the emulator's own threads too."""

from __future__ import annotations

import time


def read() -> float:
    """This process's Python clock: seconds since 1970."""
    return time.time()
