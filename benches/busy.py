"""The blocking client beside pyreqwest, on an idle machine and on a busy one (issue 59): wall
time and CPU time per sequential call, each condition run five times, alternating.

    python benches/busy.py [--quick] [--out benches/RESULTS.md]   # also in make bench

One emulator in its own process, 20 segments. A run times 1,500 sequential calls of each
client in turns, three rounds, best round kept: pushwire's typed ``segments.list()`` and
pyreqwest's ``SyncClient`` GET with its ``json()`` (the same request, its answer decoded to
Python objects). CPU time is this process's (user and system, every thread), per call.
"Busy" starts one CPU-bound process per core beside the client and the emulator.

Issue 59's targets, each a ratio of the same run: idle, pushwire <= 0.8x pyreqwest's wall
time; busy, <= 1.0x in every run and <= 1.5x pushwire's own idle time; CPU per call <= 0.7x
pyreqwest's in both.
"""

from __future__ import annotations

import argparse
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


def one_run(server: EmulatorProcess, calls: int) -> dict[str, tuple[float, float]]:
    """Each client's best round of three (by wall time): (wall us, CPU us) per call."""
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
    return best


TITLE = "## On a busy machine (benches/busy.py)"


def measure(calls: int, runs: int) -> dict[str, list[dict[str, tuple[float, float]]]]:
    """Each condition's runs, in turns: idle, busy, idle, ... (the emulator's state alike)."""
    results: dict[str, list[dict[str, tuple[float, float]]]] = {"idle": [], "busy": []}
    with EmulatorProcess(KEY, record_requests=False) as server:
        for i in range(20):
            server.admin("create_segment", name=f"segment-{i}")
        for _ in range(runs):
            for condition in results:
                with cores_busy(condition == "busy"):
                    results[condition].append(one_run(server, calls))
    return results


def section(quick: bool = False) -> list[str]:
    """The Markdown section of benches/RESULTS.md: each run's figures and issue 59's
    targets (sequential and CPU per call), from medians and from every run."""
    calls, runs = (300, 2) if quick else (1500, 5)
    started = time.perf_counter()
    results = measure(calls, runs)
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
        "CPU-bound process per core beside the client and the emulator.",
        "",
        "| condition | pushwire us (CPU us) | pyreqwest us (CPU us) | wall ratio | CPU ratio |",
        "|---|---|---|---|---|",
    ]
    ratios: dict[str, list[tuple[float, float]]] = {}
    for condition, each in results.items():
        for r in each:
            (pw, pw_cpu), (rq, rq_cpu) = r["pushwire"], r["pyreqwest"]
            ratios.setdefault(condition, []).append((pw / rq, pw_cpu / rq_cpu))
            lines.append(
                f"| {condition} | {pw:.1f} ({pw_cpu:.1f}) | {rq:.1f} ({rq_cpu:.1f}) "
                f"| {pw / rq:.2f}x | {pw_cpu / rq_cpu:.2f}x |"
            )
    idle = statistics.median(r["pushwire"][0] for r in results["idle"])
    busy_own = max(r["pushwire"][0] for r in results["busy"]) / idle
    idle_wall = statistics.median(w for w, _ in ratios["idle"])
    busy_wall = max(w for w, _ in ratios["busy"])
    cpu = {c: statistics.median(u for _, u in ratios[c]) for c in ratios}

    def met(ok: bool) -> str:
        return "yes" if ok else "**no**"

    lines += [
        "",
        "| target (issue 59) | measured | met |",
        "|---|---|---|",
        f"| 1. idle: a typed call <= 0.8x pyreqwest's wall time (median) | {idle_wall:.2f}x "
        f"| {met(idle_wall <= 0.8)} |",
        f"| 2. busy: <= 1.0x pyreqwest's wall time in every run | worst {busy_wall:.2f}x "
        f"| {met(busy_wall <= 1.0)} |",
        f"| 2. busy: <= 1.5x pushwire's own idle time in every run | worst {busy_own:.2f}x "
        f"| {met(busy_own <= 1.5)} |",
        f"| 4. CPU per call <= 0.7x pyreqwest's, idle (median) | {cpu['idle']:.2f}x "
        f"| {met(cpu['idle'] <= 0.7)} |",
        f"| 4. CPU per call <= 0.7x pyreqwest's, busy (median) | {cpu['busy']:.2f}x "
        f"| {met(cpu['busy'] <= 0.7)} |",
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
