"""A realistic history in the emulator, seeded and read back at a million subscribers (issue 58,
item 8): how long seeding 90 days takes and at what peak memory, what bulk views and clicks
cost each, what reading subscribers and deliveries costs a row, a page at a time, and what a
one-day campaign list costs on that state.

    python benches/emulator_history.py [--subscribers 1000000] [--days 90]

The history, a day at a time from a fixed start (so it is the same whenever it runs):
- a million subscribers with profile ids (``user-{n}``), the default mix, 90% online;
- three triggered campaigns (two notifications each, the second an hour on) started by
  2,000 events a day, one in ten stopped by its stop event;
- two drips (two notifications a day apart) that the day's 1,000 new subscribers enter;
- one broadcast a day to one country in turn (every country of the mix but the US: 4-12%
  of the site), then views on 30% and clicks on 4% of its deliveries, in bulk.

Everything runs in this process (the emulator in-process, its request log off); the peak is
this process's resident memory, Python and the emulator together.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import subprocess
import sys
import time
from typing import Any

import pushwire
from pushwire.testing import Emulator

START = dt.datetime(2026, 1, 5, 9, tzinfo=dt.timezone.utc)
COUNTRIES = ["IN", "GB", "DE", "BR", "FR", "CA", "JP", "AU", "MX", "ES", "IT"]
EVENTS_A_DAY = 2_000
JOINS_A_DAY = 1_000

# Issue 58, item 8: the goals at a million subscribers and 90 days.
GOAL_SEED_S = 30.0
GOAL_SEED_MB = 1024.0
GOAL_RECORD_US = 0.3
GOAL_ROW_US = 1.0
GOAL_LIST_MS = 20.0


def peak_mb() -> float:
    """This process's peak resident memory (Linux reports it in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def step(title: str, schedule: dict[str, Any]) -> dict[str, Any]:
    return {
        "title": title,
        "message": f"{title}: a message of ordinary length",
        "url": "https://shop.example/" + title.lower().replace(" ", "-"),
        "image_url": "https://shop.example/icon.png",
        "big_image_url": "https://shop.example/big.png",
        "require_interaction": 0,
        "expiry": 86_400,
        "schedule_options": schedule,
    }


def seed(emu: Emulator, client: pushwire.Client, subscribers: int, days: int) -> dict[str, float]:
    """Seeds the history; returns the seconds spent and the bulk recording's cost."""
    t0 = time.perf_counter()
    emu.generate_subscribers(subscribers, profile_id="user-{n}", online=0.9, seed=58)
    triggers = [
        emu.create_trigger(
            campaign_name=f"Campaign {name}",
            campaign_type="trigger",
            daily_trigger_limit=0,
            weekly_trigger_limit=0,
            rules={"start_event_name": f"{name}_start", "stop_event_name": f"{name}_stop"},
            notifications=[
                step(f"{name} now", {"type": "rightaway"}),
                step(f"{name} later", {"type": "after", "value": 60, "unit": "minutes"}),
            ],
        )
        for name in ("cart", "browse", "wishlist")
    ]
    for name in ("welcome", "onboarding"):
        client.drips.create(
            f"Drip {name}",
            [
                step(f"{name} one", {"type": "rightaway"}),
                step(
                    f"{name} two", {"type": "after", "value": 1, "unit": "days", "at": "10:00:00"}
                ),
            ],
        )
    recorded = 0
    record_s = 0.0
    events_per_campaign = EVENTS_A_DAY // len(triggers)
    for day in range(days):
        country = COUNTRIES[day % len(COUNTRIES)]
        sent = client.notifications.create(
            title=f"Daily deal {day + 1}",
            message="Today only",
            url=f"https://shop.example/deal/{day + 1}",
            include_countries=[country],
        )
        r0 = time.perf_counter()
        recorded += emu.record_views(rate=0.3, notification_id=sent, seed=day)
        recorded += emu.record_clicks(rate=0.04, notification_id=sent, seed=day)
        record_s += time.perf_counter() - r0
        events = []
        for i, name in enumerate(("cart", "browse", "wishlist")):
            for k in range(events_per_campaign):
                n = 1 + (day * 7_919 + i * 104_729 + k * 31) % subscribers
                stop = k % 10 == 0
                events.append(
                    {
                        "event_name": f"{name}_{'stop' if stop else 'start'}",
                        "profile_id": f"user-{n}",
                    }
                )
        errors = [e for e in client.events.track_many(events) if e is not None]
        if errors:
            raise RuntimeError(f"day {day}: {errors[0]}")
        emu.generate_subscribers(JOINS_A_DAY, profile_id="user-{n}", online=0.9, seed=day)
        emu.advance(dt.timedelta(days=1))
    return {
        "seed_s": time.perf_counter() - t0,
        "recorded": recorded,
        "record_us": record_s / max(recorded, 1) * 1e6,
    }


def paged(read: Any, page: int) -> tuple[int, float]:
    """Rows read and seconds spent reading every page of ``read(offset, limit)``."""
    t0 = time.perf_counter()
    rows = 0
    offset = 0
    while True:
        got = read(offset, page)
        rows += len(got)
        if len(got) < page:
            break
        offset += page
    return rows, time.perf_counter() - t0


def by_after(emu: Emulator, page: int) -> tuple[int, float]:
    """Rows read and seconds spent reading every delivery, each page after the last's."""
    t0 = time.perf_counter()
    rows = 0
    after = None
    while got := emu.deliveries(status="all", after=after, limit=page):
        rows += len(got)
        after = got[-1]["delivery_id"]
    return rows, time.perf_counter() - t0


def best_ms(call: Any, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def run(subscribers: int = 1_000_000, days: int = 90, page: int = 10_000) -> dict[str, Any]:
    with Emulator("bench-history", record_requests=False, start=START) as emu:
        client = emu.client()
        out: dict[str, Any] = {"subscribers": subscribers, "days": days}
        out.update(seed(emu, client, subscribers, days))
        out["seed_mb"] = peak_mb()
        print(f"seeded: {out}", file=sys.stderr, flush=True)
        subs, secs = paged(lambda o, n: emu.subscribers(offset=o, limit=n), page)
        out["subscriber_rows"] = subs
        out["subscriber_row_us"] = secs / subs * 1e6
        dels, secs = by_after(emu, page)
        out["delivery_rows"] = dels
        out["delivery_row_us"] = secs / dels * 1e6
        last = (START + dt.timedelta(days=days - 1)).date()
        out["triggers_list_ms"] = best_ms(
            lambda: client.triggers.list(analytics_start_at=last, analytics_end_at=last)
        )
        out["drips_list_ms"] = best_ms(
            lambda: client.drips.list(analytics_start_at=last, analytics_end_at=last)
        )
        out["peak_mb"] = peak_mb()
    return out


def goals(r: dict[str, Any]) -> list[tuple[str, float, float, str]]:
    """Issue 58's goals against one run: (goal, measured, at most, unit)."""
    return [
        (f"the history seeded <= {GOAL_SEED_S:.0f} s", r["seed_s"], GOAL_SEED_S, "s"),
        (f"... at <= {GOAL_SEED_MB:,.0f} MB peak", r["seed_mb"], GOAL_SEED_MB, "MB"),
        (f"views and clicks in bulk <= {GOAL_RECORD_US} us each", r["record_us"], GOAL_RECORD_US, "us"),
        (f"`subscribers()` paged <= {GOAL_ROW_US:.0f} us a row", r["subscriber_row_us"], GOAL_ROW_US, "us"),
        (f"`deliveries()` paged <= {GOAL_ROW_US:.0f} us a row", r["delivery_row_us"], GOAL_ROW_US, "us"),
        (f"one-day `triggers.list` <= {GOAL_LIST_MS:.0f} ms", r["triggers_list_ms"], GOAL_LIST_MS, "ms"),
        (f"one-day `drips.list` <= {GOAL_LIST_MS:.0f} ms", r["drips_list_ms"], GOAL_LIST_MS, "ms"),
    ]  # fmt: skip


def section(quick: bool = False) -> list[str]:
    """The history measured in its own process (its peak memory its own); the results'
    lines for RESULTS.md."""
    subscribers, days = (20_000, 10) if quick else (1_000_000, 90)
    done = subprocess.run(
        [sys.executable, __file__, "--subscribers", str(subscribers), "--days", str(days)],
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(done.stdout)
    lines = [
        "## A realistic history (benches/emulator_history.py)",
        "",
        f"In-process `Emulator`, request log off: {subscribers:,} subscribers with profile ids and "
        f"{days} days, each with a broadcast to one country (4-12% of the site), views on 30% "
        f"and clicks on 4% of it recorded in bulk, {EVENTS_A_DAY:,} events starting (or "
        f"stopping) three triggered campaigns and {JOINS_A_DAY:,} new subscribers entering two "
        f"drips: {r['delivery_rows']:,} deliveries in all. Rows read in pages of 10,000; a "
        "campaign list of the last day, best of 5. Subscribers are paged by `offset`, deliveries by `after` (the last row's id). Peak memory is the whole process's.",
        "",
        "| goal | measured | met |",
        "|---|---|---|",
    ]
    lines += [
        f"| {goal} | {value:,.{2 if unit == 'us' else 1}f} {unit} | {'yes' if value <= limit else '**no**'} |"
        for goal, value, limit, unit in goals(r)
    ]  # fmt: skip
    return lines


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description="The history seeded and read back; JSON out.")
    for flag, default in (("--subscribers", 1_000_000), ("--days", 90)):
        cli.add_argument(flag, type=int, default=default)
    given = cli.parse_args()
    print(json.dumps(run(given.subscribers, given.days)))
