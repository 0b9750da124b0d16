"""What an idempotency key adds to a call, with each store, and what a call without one pays.

    python benches/idempotency_cost.py [--quick]   # updates its section of RESULTS.md

One emulator in its own process and a redis-server of this bench's own; each round times
sequential ``events.track`` calls of four kinds, in turns: a client without a store, one
with a store but no key, and keyed calls (a new key each) with the SQLite store and with the
Redis store; beside them, redis-py's own ``PING``, the loopback round trip. Medians of the
rounds after a warm-up. Targets (issue 48): SQLite adds at most 1 ms a call; Redis at most
one round trip plus 0.2 ms; a call without a key pays nothing measurable (within 3%).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import celery_throughput
import otel_overhead

import pushwire
from pushwire.testing import EmulatorProcess

TITLE = "## Idempotency keys (benches/idempotency_cost.py)"
KEY = "bench-key"
HERE = Path(__file__).resolve().parent


def per_call(calls: int, call: Callable[[int], object]) -> float:
    """Seconds per call of ``calls`` sequential calls."""
    started = time.perf_counter()
    for i in range(calls):
        call(i)
    return (time.perf_counter() - started) / calls


def measure(
    server: EmulatorProcess, redis_url: str, calls: int, rounds: int
) -> dict[str, list[float]]:
    import redis

    where = {"api_key": KEY, "base_url": server.base_url, "events_url": server.events_url}
    folder = tempfile.mkdtemp()
    plain = pushwire.Client(**where)
    stored = pushwire.Client(**where, idempotency_store=f"sqlite:///{folder}/unused.db")
    sqlite = pushwire.Client(**where, idempotency_store=f"sqlite:///{folder}/keys.db")
    in_redis = pushwire.Client(**where, idempotency_store=f"{redis_url}/1")
    ping = redis.Redis.from_url(f"{redis_url}/2")
    kinds: dict[str, Callable[[int, int], object]] = {
        "no store": lambda r, i: plain.events.track("viewed", profile_id="p"),
        "a store, no key": lambda r, i: stored.events.track("viewed", profile_id="p"),
        "SQLite, a new key": lambda r, i: sqlite.events.track(
            "viewed", profile_id="p", idempotency_key=f"{r}-{i}"
        ),
        "Redis, a new key": lambda r, i: in_redis.events.track(
            "viewed", profile_id="p", idempotency_key=f"{r}-{i}"
        ),
        "Redis PING (redis-py)": lambda r, i: ping.ping(),
    }
    samples: dict[str, list[float]] = {name: [] for name in kinds}
    try:
        for r in range(-1, rounds):  # round -1 warms up
            for name, call in kinds.items():
                seconds = per_call(calls, lambda i, c=call, r=r: c(r, i))  # type: ignore[misc]
                if r >= 0:
                    samples[name].append(seconds)
    finally:
        for client in (plain, stored, sqlite, in_redis):
            client.close()
        ping.close()
    return samples


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def section(quick: bool = False, rounds: int = 7) -> list[str]:
    """The Markdown section of benches/RESULTS.md."""
    calls = 300 if quick else 2000
    rounds = 3 if quick else rounds
    missing = celery_throughput.unavailable()
    if missing is not None:
        return [TITLE, "", f"Skipped: {missing}.", ""]
    started = time.perf_counter()
    load = os.getloadavg()[0]
    workdir = tempfile.mkdtemp()
    redis_server, redis_url = celery_throughput.start_redis(workdir)
    try:
        with EmulatorProcess(KEY, record_requests=False) as server:
            samples = measure(server, redis_url.rsplit("/", 1)[0], calls, rounds)
    finally:
        celery_throughput.stop(redis_server)
    elapsed = time.perf_counter() - started
    med = {name: statistics.median(v) for name, v in samples.items()}
    base = med["no store"]
    sqlite_added = med["SQLite, a new key"] - base
    redis_added = med["Redis, a new key"] - base
    rtt = med["Redis PING (redis-py)"]
    unkeyed = med["a store, no key"] / base
    lines = [
        TITLE,
        "",
        f"`python benches/idempotency_cost.py{' --quick' if quick else ''}` "
        f"({dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {elapsed:.0f} s, "
        f"{os.cpu_count()} cores shared with the emulator and redis-server, load average "
        f"{load:.1f} at the start): each round times {calls:,} sequential `events.track` calls "
        f"of each kind in turns, medians of {rounds} rounds after a warm-up. A new key costs a "
        "claim before the call and a record after it: a write transaction and a statement with "
        "SQLite (WAL); with Redis, a round trip for the claim, the records written by the "
        "store's own thread in batches (one script call each).",
        "",
        "| call | us/call | added to a call without a store, us | runs (min-max) |",
        "|---|---|---|---|",
    ]
    for name, values in samples.items():
        added = "" if name.startswith("Redis PING") else us(med[name] - base)
        lines.append(
            f"| {name} | {us(med[name])} | {added} | {us(min(values))}-{us(max(values))} |"
        )
    lines += [
        "",
        "| target | measured | met |",
        "|---|---|---|",
        f"| SQLite: a key adds at most 1 ms | {us(sqlite_added)} us "
        f"| {'yes' if sqlite_added <= 1e-3 else '**no**'} |",
        f"| Redis: a key adds at most one loopback round trip + 0.2 ms "
        f"| {us(redis_added)} us (round trip {us(rtt)} us) "
        f"| {'yes' if redis_added <= rtt + 2e-4 else '**no**'} |",
        f"| a call without a key pays nothing measurable (within 3%) | {unkeyed:.3f}x "
        f"| {'yes' if unkeyed <= 1.03 else '**no**'} |",
        "",
    ]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    lines = section(quick=args.quick)
    otel_overhead.update(Path(args.out), lines, TITLE)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
