"""The emulator's footprint as issue 40 measures it, each size in a fresh process (its
memory its own): an in-process `Emulator`, request log off; `generate_subscribers` with five
countries, twenty cities, two device types, four browsers, a plan attribute and a segment of
half; one broadcast to everyone; a year's `analytics.summary`; the state saved to a file
and read back. Memory is the growth of the process's RSS over each step.

    python benches/emulator_memory.py 1000000 10000000

The issue's goals, per subscriber and per delivery: at most 250 B and 64 B of memory,
0.4 us to generate, 100 ns a delivery to broadcast, 0.5 us to save and 0.8 us to load, 100 B
on disk; a year's summary under 300 ms at 10M. (Timings only mean something from a release
build: `maturin develop --release`.)
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
import time
from typing import Any

from emulator_scale import START, each_in_own_process, main, rss

from pushwire.testing import Emulator


def measure(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n}
    with Emulator(record_requests=False) as emu:
        emu.travel_to(START + dt.timedelta(days=365))
        half = emu.create_segment("half")
        client = emu.client(timeout=600)
        client.segments.list()  # the connection made before anything is timed
        before = rss()
        t0 = time.perf_counter()
        emu.generate_subscribers(
            n,
            country=["US", "DE", "FR", "GB", "JP"],
            city=[f"city{i}" for i in range(20)],
            device_type={"desktop": 0.6, "mobile": 0.4},
            browser=["chrome", "firefox", "safari", "edge"],
            attributes={"plan": {"free": 0.8, "pro": 0.2}},
            subscribed_between=(START, START + dt.timedelta(days=364)),
            segments={half: 0.5},
            seed=1,
        )
        out["generate_s"] = time.perf_counter() - t0
        out["bytes_per_subscriber"] = (rss() - before) / n

        before = rss()
        t0 = time.perf_counter()
        sent = client.notifications.create(
            title="Spring sale", message="20% off", url="https://shop.example/sale"
        )
        out["broadcast_s"] = time.perf_counter() - t0
        out["deliveries"] = emu._call("deliveries", notification_id=sent, limit=0, meta=True)[
            "total"
        ]
        out["bytes_per_delivery"] = (rss() - before) / max(out["deliveries"], 1)

        t0 = time.perf_counter()
        client.analytics.summary(START.date(), (START + dt.timedelta(days=364)).date())
        out["summary_ms"] = (time.perf_counter() - t0) * 1e3

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "site.state")
            t0 = time.perf_counter()
            emu.save(path)
            out["save_s"] = time.perf_counter() - t0
            out["file_bytes"] = os.path.getsize(path)
            t0 = time.perf_counter()
            loaded = Emulator.load(path, record_requests=False)
            out["load_s"] = time.perf_counter() - t0
            loaded.close()
        out["rss_mb"] = rss() / 2**20
    return out


def table(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| subscribers | memory / subscriber | generate / subscriber | deliveries "
        "| memory / delivery | broadcast / delivery | summary (a year) | save / subscriber "
        "| load / subscriber | file / subscriber | RSS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        n, d = r["n"], max(r["deliveries"], 1)
        lines.append(
            f"| {n:,} | {r['bytes_per_subscriber']:.0f} B | {r['generate_s'] / n * 1e6:.2f} us "
            f"| {r['deliveries']:,} | {r['bytes_per_delivery']:.0f} B "
            f"| {r['broadcast_s'] / d * 1e9:,.0f} ns | {r['summary_ms']:,.0f} ms "
            f"| {r['save_s'] / n * 1e6:.2f} us | {r['load_s'] / n * 1e6:.2f} us "
            f"| {r['file_bytes'] / n:.0f} B | {r['rss_mb']:,.0f} MB |"
        )
    return lines


def run(sizes: list[int]) -> list[str]:
    """Each size in its own process; the table's lines."""
    return each_in_own_process(__file__, sizes, table)


if __name__ == "__main__":
    main(__file__, measure, table, [1_000_000])
