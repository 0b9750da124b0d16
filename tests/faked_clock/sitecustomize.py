"""Imported at the start of every Python process of ``make test-midnight`` (its PYTHONPATH),
whose clock Debian's libfaketime moves (``LD_PRELOAD``, ``FAKETIME``) while it leaves the
monotonic clock real (``FAKETIME_DONT_FAKE_MONOTONIC=1``: timeouts and waits keep real time).

libfaketime 0.9.10 then shifts the absolute deadline that ``time.sleep`` hands
``clock_nanosleep`` (on the monotonic clock) by the fake offset, and the call fails with
EINVAL; a sleep that waits on ``select()`` waits in real time. Nothing else is changed, and
nothing at all without libfaketime loaded."""

from __future__ import annotations

import os
import select
import time


def _sleep(seconds: float) -> None:
    select.select([], [], [], seconds)  # a negative time: ValueError, as time.sleep


if "faketime" in os.environ.get("LD_PRELOAD", ""):
    time.sleep = _sleep
