"""What the inspector asks of the emulator, timed at a real audience size: each admin
operation its pages call (as the page calls it), on an in-process `Emulator` holding the
issue 40 population and a broadcast to everyone, median of 5. A page is as quick as its
slowest call.

    python benches/inspector_scale.py 10000000
"""

from __future__ import annotations

import datetime as dt
import statistics
import sys
import time
from typing import Any

from emulator_scale import START, issue_40_population

from pushwire.testing import Emulator


def calls(hash_: str, last_page: int) -> dict[str, tuple[str, dict[str, Any]]]:
    """The inspector's calls, by what they fill."""
    return {
        "sites (header)": ("sites", {}),
        "summary (overview)": ("summary", {}),
        "broadcasts (first page)": ("broadcasts", {"limit": 50}),
        "segments (names)": ("segments", {"members": False}),
        "subscribers (first page)": ("subscribers", {"meta": True, "limit": 50, "offset": 0}),
        "subscribers (last page)": (
            "subscribers",
            {"meta": True, "limit": 50, "offset": last_page},
        ),
        "a subscriber": ("subscribers", {"subscriber_hash": hash_}),
        "a subscriber's deliveries": (
            "deliveries",
            {"subscriber_hash": hash_, "status": "all", "meta": True, "limit": 500},
        ),
        "drips": ("drips", {}),
        "triggers": ("triggers", {}),
    }


def measure(n: int) -> list[str]:
    with Emulator(record_requests=False) as emu:
        emu.travel_to(START + dt.timedelta(days=365))
        half = emu.create_segment("half")
        issue_40_population(emu, n, half)
        with emu.client(timeout=600) as client:
            client.notifications.create(title="All", message="m", url="https://shop.example/")
        one = emu._call("subscribers", meta=True, limit=1, offset=n // 2)["entries"][0]
        lines = [
            f"| call ({n:,} subscribers, {n:,} deliveries) | median of 5 |",
            "|---|---:|",
        ]
        for name, (op, args) in calls(one["subscriber_hash"], n - 50).items():
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                emu._call(op, **args)
                times.append(time.perf_counter() - t0)
            lines.append(f"| {name} | {statistics.median(times) * 1e3:,.1f} ms |")
            print(lines[-1], flush=True)
    return lines


if __name__ == "__main__":
    print("\n".join(measure(int(sys.argv[1]) if sys.argv[1:] else 1_000_000)))
