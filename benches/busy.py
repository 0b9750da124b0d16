"""The blocking client beside pyreqwest, on an idle machine and on a busy one (issue 59): wall
time and CPU time per sequential call, each condition run five times, alternating.

    python benches/busy.py [--quick] [--out benches/RESULTS.md]   # also in make bench

One emulator in its own process, 20 segments. A run times 1,500 sequential calls of each
client in turns, three rounds, best round kept: pushwire's typed ``segments.list()`` and
pyreqwest's ``SyncClient`` GET with its ``json()`` (the same request, its answer decoded to
Python objects). CPU time is this process's (user and system, every thread), per call. Then
64 in flight: pushwire's ``AsyncClient`` ``events.track`` against pyreqwest's async client
POSTing the same event and reading its ``json()``. "Busy" starts one CPU-bound process per
core beside the client and the emulator.

Issue 59's targets, each a ratio of the same run: idle, pushwire <= 0.8x pyreqwest's wall
time; busy, <= 1.0x in every run and <= 1.5x pushwire's own idle time; 64 in flight, >= 1.5x
pyreqwest's rate in both; CPU per call <= 0.7x pyreqwest's in both.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import otel_overhead
from pyreqwest.client import SyncClientBuilder

import pushwire
from pushwire.testing import EmulatorProcess

KEY = "bench-key"


def cpu_seconds() -> float:
    """This process's CPU time so far, every thread's, user and system."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def timed(calls: int, call: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU microseconds per call of ``calls`` sequential calls."""
    cpu, wall = cpu_seconds(), time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - wall) / calls * 1e6, (cpu_seconds() - cpu) / calls * 1e6


@contextlib.contextmanager
def cores_busy(busy: bool) -> Iterator[None]:
    """One CPU-bound process per core for as long as the block runs, when ``busy``."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range((os.cpu_count() or 1) if busy else 0)
    ]
    try:
        time.sleep(0.5 if busy else 0)  # let them take their cores
        yield
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def one_run(server: EmulatorProcess, calls: int, events: int) -> dict[str, tuple[float, float]]:
    """Each client's best round of three: sequential, (wall us, CPU us) per call (by wall
    time); 64 in flight (`<name> 64`), (requests a second, CPU us a request) (by rate)."""
    client = pushwire.Client(api_key=KEY, base_url=server.base_url, events_url=server.events_url)
    raw = SyncClientBuilder().default_headers({"Api-Key": KEY}).build()
    url = f"{server.base_url}/apiv1/segments"
    kinds: dict[str, Callable[[], Any]] = {
        "pushwire": client.segments.list,
        "pyreqwest": lambda: raw.get(url).build().send().json()["segments"],
    }
    for call in kinds.values():  # connections made, caches warm
        timed(50, call)
    best: dict[str, tuple[float, float]] = {}
    for _ in range(3):
        for name, call in kinds.items():
            got = timed(calls, call)
            if name not in best or got[0] < best[name][0]:
                best[name] = got
    client.close()
    raw.close()
    # 64 in flight: pushwire's AsyncClient `events.track` against pyreqwest's async client
    # POSTing the same event and reading its `json()`, best of three rounds by rate.
    import run  # noqa: PLC0415 (run.py imports this module)

    rates = {
        "pushwire": lambda: run.pushwire_concurrent(server, events, 64),
        "pyreqwest": lambda: run.pyreqwest_concurrent(server, events, 64),
    }
    for go in rates.values():
        asyncio.run(go())  # warm: connections, the I/O threads
    for _ in range(3):
        for name, go in rates.items():
            cpu, wall = cpu_seconds(), time.perf_counter()
            got = asyncio.run(go())
            # Requests a second, and CPU microseconds a request.
            used = (cpu_seconds() - cpu) / (got * (time.perf_counter() - wall)) * 1e6
            key = f"{name} 64"
            if key not in best or got > best[key][0]:
                best[key] = (got, used)
    return best


TITLE = "## On a busy machine (benches/busy.py)"


def measure(calls: int, runs: int, events: int) -> dict[str, list[dict[str, tuple[float, float]]]]:
    """Each condition's runs, in turns: idle, busy, idle, ... (the emulator's state alike)."""
    results: dict[str, list[dict[str, tuple[float, float]]]] = {"idle": [], "busy": []}
    with EmulatorProcess(KEY, record_requests=False) as server:
        for i in range(20):
            server.admin("create_segment", name=f"segment-{i}")
        for _ in range(runs):
            for condition in results:
                with cores_busy(condition == "busy"):
                    results[condition].append(one_run(server, calls, events))
    return results


def section(quick: bool = False) -> list[str]:
    """The Markdown section of benches/RESULTS.md: each run's figures and issue 59's
    targets (sequential and CPU per call), from medians and from every run."""
    calls, runs, events = (300, 2, 3_200) if quick else (1500, 5, 12_800)
    started = time.perf_counter()
    results = measure(calls, runs, events)
    elapsed = time.perf_counter() - started
    lines = [
        TITLE,
        "",
        f"`python benches/busy.py{' --quick' if quick else ''}` "
        f"({dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {elapsed:.0f} s, "
        f"{os.cpu_count()} cores): {runs} runs of each condition, alternating; a run times "
        f"{calls:,} sequential calls of each client in turns, three rounds, best round kept. "
        "pushwire's typed `segments.list()` (20 segments) against pyreqwest's `SyncClient` GET "
        "and `json()`; CPU is the process's, every thread, user and system. Busy: one "
        "CPU-bound process per core beside the client and the emulator. 64 in flight: "
        f"{events:,} `events.track` calls of pushwire's `AsyncClient` against pyreqwest's async "
        "client POSTing the same event and reading its `json()`, three rounds, best kept.",
        "",
        "| condition | pushwire us (CPU us) | pyreqwest us (CPU us) | wall ratio | CPU ratio "
        "| 64 in flight: pushwire req/s (CPU us/req) | pyreqwest req/s (CPU us/req) "
        "| rate ratio | CPU ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ratios: dict[str, list[tuple[float, float]]] = {}
    rate_ratios: dict[str, list[tuple[float, float]]] = {}
    for condition, each in results.items():
        for r in each:
            (pw, pw_cpu), (rq, rq_cpu) = r["pushwire"], r["pyreqwest"]
            (pa, pa_cpu), (ra, ra_cpu) = r["pushwire 64"], r["pyreqwest 64"]
            ratios.setdefault(condition, []).append((pw / rq, pw_cpu / rq_cpu))
            rate_ratios.setdefault(condition, []).append((pa / ra, pa_cpu / ra_cpu))
            lines.append(
                f"| {condition} | {pw:.1f} ({pw_cpu:.1f}) | {rq:.1f} ({rq_cpu:.1f}) "
                f"| {pw / rq:.2f}x | {pw_cpu / rq_cpu:.2f}x "
                f"| {pa:,.0f} ({pa_cpu:.1f}) | {ra:,.0f} ({ra_cpu:.1f}) "
                f"| {pa / ra:.2f}x | {pa_cpu / ra_cpu:.2f}x |"
            )
    idle = statistics.median(r["pushwire"][0] for r in results["idle"])
    busy_own = max(r["pushwire"][0] for r in results["busy"]) / idle
    idle_wall = statistics.median(w for w, _ in ratios["idle"])
    busy_wall = max(w for w, _ in ratios["busy"])
    cpu = {c: statistics.median(u for _, u in ratios[c]) for c in ratios}
    rate = {c: min(x for x, _ in rate_ratios[c]) for c in rate_ratios}
    rate_cpu = {c: statistics.median(u for _, u in rate_ratios[c]) for c in rate_ratios}

    def row(target: str, measured: str, ok: bool, why: str) -> str:
        return f"| {target} | {measured} | {'yes' if ok else '**no**'} | {'' if ok else why} |"

    # Why a target is missed, from the profiles of docs/performance.md ("On a busy machine").
    spin = "the 150 us spin that case 1's targets need spends the wait in CPU"
    lines += [
        "",
        "| target (issue 59) | measured | met | why not, where not met |",
        "|---|---|---|---|",
        row(
            "1. idle: a typed call <= 0.8x pyreqwest's wall time (median)",
            f"{idle_wall:.2f}x",
            idle_wall <= 0.8,
            "the idle core's wake-up after the spin runs out",
        ),
        row(
            "2. busy: <= 1.0x pyreqwest's wall time in every run",
            f"worst {busy_wall:.2f}x",
            busy_wall <= 1.0,
            "a run where the client shares its core with a CPU-bound process",
        ),
        row(
            "2. busy: <= 1.5x pushwire's own idle time in every run",
            f"worst {busy_own:.2f}x",
            busy_own <= 1.5,
            "a run where the client shares its core with a CPU-bound process",
        ),
        row(
            "3. 64 in flight: >= 1.5x pyreqwest's async client, idle (worst run)",
            f"{rate['idle']:.2f}x",
            rate["idle"] >= 1.5,
            "the emulator's own CPU, on the same two cores",
        ),
        row(
            "3. 64 in flight: >= 1.5x pyreqwest's async client, busy (worst run)",
            f"{rate['busy']:.2f}x",
            rate["busy"] >= 1.5,
            "the emulator's own CPU, on the same two cores",
        ),
        row(
            "4. CPU per call <= 0.7x pyreqwest's, idle (median)",
            f"{cpu['idle']:.2f}x",
            cpu["idle"] <= 0.7,
            spin,
        ),
        row(
            "4. CPU per call <= 0.7x pyreqwest's, busy (median)",
            f"{cpu['busy']:.2f}x",
            cpu["busy"] <= 0.7,
            "the kernel's context switches of each park and wake-up, and the Rust core",
        ),
        row(
            "4. CPU per request at 64 in flight <= 0.7x pyreqwest's, idle (median)",
            f"{rate_cpu['idle']:.2f}x",
            rate_cpu["idle"] <= 0.7,
            "the kernel's TCP path, paid alike by both clients",
        ),
        row(
            "4. CPU per request at 64 in flight <= 0.7x pyreqwest's, busy (median)",
            f"{rate_cpu['busy']:.2f}x",
            rate_cpu["busy"] <= 0.7,
            "the kernel's TCP path, paid alike by both clients",
        ),
        "",
    ]
    return lines


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--quick", action="store_true", help="fewer calls and runs")
    cli.add_argument("--out", help="put the section in this RESULTS.md")
    given = cli.parse_args()
    lines = section(quick=given.quick)
    if given.out:
        otel_overhead.update(Path(given.out), lines, TITLE)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
