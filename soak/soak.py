"""The soak: many calls through AsyncClient and track_many against an emulator that fails a
share of requests at random (500, 503 with Retry-After, 429, delays past the timeout,
connections dropped before and after processing), then a check that nothing was lost, nothing
was sent twice, nothing hung, and nothing leaked.

    python soak/soak.py --calls 100000      # make soak
    python soak/soak.py --calls 5000        # the short form make test runs (tests/test_soak.py)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import time
from collections import Counter
from typing import Any, Optional

import pushwire
from pushwire.testing import EmulatorProcess

KEY = "soak-key"
TIMEOUT = 0.75  # the client's budget per call, retries included
DELAY = 1.5  # injected delays: past the timeout


def start_emulator() -> EmulatorProcess:
    """The emulator in its own process, its request log off (it grows with every request)."""
    return EmulatorProcess(KEY, record_requests=False)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


class Outcomes:
    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.ok_events: set[int] = set()
        self.unknown_events: set[int] = set()
        self.refused_events: set[int] = set()
        self.ok_broadcasts: set[int] = set()
        self.unknown_broadcasts: set[int] = set()
        self.refused_broadcasts: set[int] = set()
        self.slowest = 0.0
        self.untyped: list[str] = []

    def record(self, kind: str, seq: int, err: Optional[BaseException]) -> None:
        ok_set, unknown_set, refused_set = {
            "event": (self.ok_events, self.unknown_events, self.refused_events),
            "broadcast": (self.ok_broadcasts, self.unknown_broadcasts, self.refused_broadcasts),
            "read": (set(), set(), set()),
        }[kind]
        if err is None:
            self.kinds["ok"] += 1
            ok_set.add(seq)
            return
        if not isinstance(err, pushwire.PushwireError):
            self.untyped.append(repr(err))
            return
        self.kinds[type(err).__name__] += 1
        if isinstance(err, pushwire.APIConnectionError) and err.outcome_unknown:
            unknown_set.add(seq)
        else:
            refused_set.add(seq)


def client_options(server: EmulatorProcess) -> dict[str, Any]:
    """What both clients of the soak are made with: the server, its key, short backoffs."""
    return {
        "api_key": KEY,
        "base_url": server.base_url,
        "events_url": server.events_url,
        "timeout": TIMEOUT,
        "backoff_base": 0.01,
    }


async def drive(server: EmulatorProcess, calls: int, seed: int, out: Outcomes) -> None:
    rng = random.Random(seed)
    client = pushwire.AsyncClient(**client_options(server), max_retries=2)
    sem = asyncio.Semaphore(64)
    seq = iter(range(calls))

    async def one(n: int) -> None:
        r = rng.random()
        kind = "event" if r < 0.8 else ("broadcast" if r < 0.9 else "read")
        t0 = time.perf_counter()
        err: Optional[BaseException] = None
        try:
            if kind == "event":
                await client.events.track("soak", profile_id=f"p{n % 97}", data={"seq": n})
            elif kind == "broadcast":
                await client.notifications.create(
                    title=f"soak {n}", message="m", url="https://soak.example", type="draft"
                )
            else:
                await client.segments.list()
        except Exception as e:  # every outcome is recorded, typed or not
            err = e
        out.slowest = max(out.slowest, time.perf_counter() - t0)
        out.record(kind, n, err)

    async def worker() -> None:
        for n in seq:
            async with sem:
                await one(n)

    # A tenth of the events go through track_many batches, from a thread (the sync client).
    batch_calls = calls // 10
    batch_start = calls

    def batches() -> None:
        sync = pushwire.Client(**client_options(server))
        for start in range(batch_start, batch_start + batch_calls, 1000):
            ids = list(range(start, min(start + 1000, batch_start + batch_calls)))
            t0 = time.perf_counter()
            results = sync.events.track_many(
                [{"event_name": "soak", "profile_id": "batch", "data": {"seq": i}} for i in ids],
                concurrency=64,
            )
            # A batch's budget is its items' budgets run 64 at a time.
            assert time.perf_counter() - t0 < TIMEOUT * (len(ids) / 64 + 2) + 5
            for i, r in zip(ids, results):
                out.record("event", i, r)

    await asyncio.gather(asyncio.to_thread(batches), *(worker() for _ in range(64)))
    await client.aclose()


def run(calls: int, seed: int) -> dict[str, Any]:
    server = start_emulator()
    try:
        # Warm up (runtime threads, pools), then take the baselines.
        asyncio.run(drive(server, 200, seed, Outcomes()))
        server.admin("reset")
        gc.collect()
        fds0, rss0 = open_fds(), rss_mb()
        server.admin("inject_random_faults", rate=0.05, delay=DELAY, seed=seed)
        out = Outcomes()
        t0 = time.perf_counter()
        asyncio.run(drive(server, calls, seed, out))
        elapsed = time.perf_counter() - t0
        faults = server.admin("fault_stats")
        server.admin("clear_faults")
        time.sleep(DELAY + 0.5)  # delayed requests the client gave up on still land
        gc.collect()
        time.sleep(0.5)
        fds1, rss1 = open_fds(), rss_mb()
        events = [e["data"]["seq"] for e in server.admin("events")]
        broadcasts = [
            int(n["request"]["notification_title"].split()[1])
            for n in server.admin("notifications")
        ]
    finally:
        server.close()

    stored_events, stored_broadcasts = Counter(events), Counter(broadcasts)
    report = {
        "calls": calls + calls // 10,
        "seconds": round(elapsed, 1),
        "faults_injected": sum(faults.values()),
        "faults_by_kind": faults,
        "outcomes": dict(out.kinds),
        "untyped_errors": len(out.untyped),
        "slowest_call_s": round(out.slowest, 2),
        "duplicates": sum(c - 1 for c in stored_events.values() if c > 1)
        + sum(c - 1 for c in stored_broadcasts.values() if c > 1),
        "lost_writes": len(out.ok_events - stored_events.keys())
        + len(out.ok_broadcasts - stored_broadcasts.keys()),
        "refused_but_stored": len(out.refused_events & stored_events.keys())
        + len(out.refused_broadcasts & stored_broadcasts.keys()),
        "unknown_outcomes": len(out.unknown_events) + len(out.unknown_broadcasts),
        "unknown_that_landed": len(out.unknown_events & stored_events.keys())
        + len(out.unknown_broadcasts & stored_broadcasts.keys()),
        "leaked_fds": fds1 - fds0,
        "rss_growth_mb": round(rss1 - rss0, 1),
    }
    report["untyped_sample"] = out.untyped[:3]
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--calls",
        type=int,
        default=100_000,
        help="calls through AsyncClient (a tenth more as track_many items)",
    )
    parser.add_argument(
        "--seed", type=int, default=7, help="the seed of the mix of calls and of the faults"
    )
    args = parser.parse_args()
    report = run(args.calls, args.seed)
    print(json.dumps(report, indent=2))
    bad = (
        report["duplicates"]
        or report["lost_writes"]
        or report["refused_but_stored"]
        or report["untyped_errors"]
        or report["leaked_fds"] > 0
    )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
