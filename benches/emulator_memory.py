"""The emulator's footprint and speed as issue 40 measures them, each size in a fresh process
(its memory its own): an in-process `Emulator`, request log off; `generate_subscribers` with
five countries, twenty cities, two device types, four browsers, a plan attribute and a
segment of half (every device online, as the issue's population was drawn); a targeted
broadcast (a country, the segment and an attribute rule); one broadcast to everyone; a
year's `analytics.summary`; the state saved to a file and read back; and plain requests
(`segments.list`, `events.track`) timed in turns on the emulator holding the population and
its deliveries and on an empty one beside it. Memory is the growth of the process's RSS over
each step.

    python benches/emulator_memory.py 1000000 10000000

The issue's goals, per subscriber and per delivery: at most 250 B and 64 B of memory,
0.4 us to generate, 100 ns a delivery to broadcast, 0.5 us to save and 0.8 us to load, 100 B
on disk; a targeted broadcast in time that follows its audience; a year's summary under
300 ms at 10M; a plain request within 1.25x of the empty emulator's latency. (Timings only
mean something from a release build: `maturin develop --release`, as `make bench` does.)
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import tempfile
import time
from typing import Any

from emulator_scale import (
    START,
    each_in_own_process,
    issue_40_population,
    main,
    results_in_own_processes,
    rss,
)

from pushwire.testing import Emulator


def measure(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n}
    # An empty emulator beside the full one: plain requests are timed on each in turn, so
    # both meet the machine in the same state.
    with Emulator(record_requests=False) as emu, Emulator(record_requests=False) as empty:
        emu.travel_to(START + dt.timedelta(days=365))
        half = emu.create_segment("half")
        empty.create_segment("half")
        client = emu.client(timeout=600)
        before = rss()
        t0 = time.perf_counter()
        issue_40_population(emu, n, half)
        out["generate_s"] = time.perf_counter() - t0
        out["bytes_per_subscriber"] = (rss() - before) / n

        t0 = time.perf_counter()
        targeted = client.notifications.create(
            title="Members in Japan",
            message="m",
            url="https://shop.example/jp",
            include_countries=["JP"],
            include_segments=[half],
            attributes=[[{"key": "plan", "op": "eq", "value": "pro"}]],
        )
        out["targeted_ms"] = (time.perf_counter() - t0) * 1e3
        out["targeted"] = emu._call("deliveries", notification_id=targeted, limit=0, meta=True)[
            "total"
        ]

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
        with empty.client() as bare:
            timed = plain_requests({"empty": bare, "full": client})
        for side in ("empty", "full"):
            out[f"{side}_list_us"], out[f"{side}_track_us"] = timed[side]

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


def plain_requests(
    clients: dict[str, Any], rounds: int = 5, n: int = 400
) -> dict[str, tuple[float, float]]:
    """The latency, in us, of `segments.list()` and of `events.track()` on each client: a
    batch of `n` calls on each in turn, `rounds` times; of each, the lowest of its batches'
    medians (a batch the machine interrupted, with a page reclaimed or a timer fired, left
    out, on every side alike)."""
    calls = {
        "list": lambda c: c.segments.list(),
        "track": lambda c: c.events.track("page_view", profile_id="nobody"),
    }
    medians: dict[tuple[str, str], list[float]] = {}
    for client in clients.values():
        client.segments.list()  # the connection made before anything is timed
    for _ in range(rounds):
        for side, client in clients.items():
            for name, call in calls.items():
                times = []
                for _ in range(n):
                    t0 = time.perf_counter()
                    call(client)
                    times.append(time.perf_counter() - t0)
                medians.setdefault((side, name), []).append(statistics.median(times))
    return {
        side: (min(medians[side, "list"]) * 1e6, min(medians[side, "track"]) * 1e6)
        for side in clients
    }


def table(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| subscribers | memory / subscriber | generate / subscriber | targeted broadcast "
        "| deliveries | memory / delivery | broadcast / delivery | summary (a year) "
        "| save / subscriber | load / subscriber | file / subscriber "
        "| `segments.list` empty / full | `events.track` empty / full | RSS |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        n, d = r["n"], max(r["deliveries"], 1)
        lines.append(
            f"| {n:,} | {r['bytes_per_subscriber']:.0f} B | {r['generate_s'] / n * 1e6:.2f} us "
            f"| {r['targeted_ms']:,.1f} ms ({r['targeted']:,}) "
            f"| {r['deliveries']:,} | {r['bytes_per_delivery']:.0f} B "
            f"| {r['broadcast_s'] / d * 1e9:,.0f} ns | {r['summary_ms']:,.0f} ms "
            f"| {r['save_s'] / n * 1e6:.2f} us | {r['load_s'] / n * 1e6:.2f} us "
            f"| {r['file_bytes'] / n:.0f} B "
            f"| {r['empty_list_us']:.0f} / {r['full_list_us']:.0f} us "
            f"| {r['empty_track_us']:.0f} / {r['full_track_us']:.0f} us | {r['rss_mb']:,.0f} MB |"
        )
    return lines


def goals(r: dict[str, Any]) -> list[str]:
    """Issue 40's goals against one row (the largest size), met or not."""
    n, d = r["n"], max(r["deliveries"], 1)
    checks = [  # (goal, measured, at most, unit)
        ("memory per subscriber <= 250 B", r["bytes_per_subscriber"], 250, "B"),
        ("memory per delivery <= 64 B", r["bytes_per_delivery"], 64, "B"),
        ("generate <= 0.4 us a subscriber", r["generate_s"] / n * 1e6, 0.4, "us"),
        ("a broadcast to everyone <= 100 ns a delivery", r["broadcast_s"] / d * 1e9, 100, "ns"),
        ("a year's summary <= 300 ms", r["summary_ms"], 300, "ms"),
        ("save <= 0.5 us a subscriber", r["save_s"] / n * 1e6, 0.5, "us"),
        ("load <= 0.8 us a subscriber", r["load_s"] / n * 1e6, 0.8, "us"),
        ("file <= 100 B a subscriber", r["file_bytes"] / n, 100, "B"),
        ("segments.list within 1.25x of empty", r["full_list_us"] / r["empty_list_us"], 1.25, "x"),
        ("events.track within 1.25x of empty", r["full_track_us"] / r["empty_track_us"], 1.25, "x"),
    ]

    def shown(value: float, unit: str) -> str:
        return f"{value:.2f}x" if unit == "x" else f"{value:.{2 if unit == 'us' else 0}f} {unit}"

    lines = [f"Goals at {n:,}:", "", "| goal | measured | met |", "|---|---|---|"]
    lines += [
        f"| {g} | {shown(v, unit)} | {'yes' if v <= limit else '**no**'} |"
        for g, v, limit, unit in checks
    ]
    return lines


def measured(sizes: list[int]) -> list[dict[str, Any]]:
    """Each size measured in its own process."""
    return results_in_own_processes(__file__, sizes, table)


def run(sizes: list[int]) -> list[str]:
    """Each size in its own process; the table's lines."""
    return each_in_own_process(__file__, sizes, table)


if __name__ == "__main__":
    main(__file__, measure, table, [1_000_000])
