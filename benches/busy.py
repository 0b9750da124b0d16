"""The blocking client beside pyreqwest, on an idle machine and on a busy one (issue 59): wall
time and CPU time per sequential call, each condition run five times.

    python benches/busy.py [--calls 1500] [--runs 5]

One emulator in its own process, 20 segments. A run times ``calls`` sequential calls of each
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
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

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


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--calls", type=int, default=1500)
    cli.add_argument("--runs", type=int, default=5)
    given = cli.parse_args()
    with EmulatorProcess(KEY, record_requests=False) as server:
        for i in range(20):
            server.admin("create_segment", name=f"segment-{i}")
        results: dict[str, list[dict[str, tuple[float, float]]]] = {}
        for condition in ("idle", "busy"):
            with cores_busy(condition == "busy"):
                results[condition] = [one_run(server, given.calls) for _ in range(given.runs)]
    for condition, runs in results.items():
        for r in runs:
            (pw, pw_cpu), (rq, rq_cpu) = r["pushwire"], r["pyreqwest"]
            print(
                f"{condition}: pushwire {pw:6.1f} us ({pw_cpu:5.1f} CPU), pyreqwest {rq:6.1f} us "
                f"({rq_cpu:5.1f} CPU): wall {pw / rq:.2f}x, CPU {pw_cpu / rq_cpu:.2f}x"
            )
    idle = statistics.median(r["pushwire"][0] for r in results["idle"])
    print(json.dumps({"pushwire_idle_median_us": round(idle, 1)}))


if __name__ == "__main__":
    main()
