"""Events per second through Celery workers: ``examples/celery_fanout`` with 1, 2 and 3 worker
processes (prefork), a real redis-server as broker and result store, the emulator in its own
process (request log off). For reference, the same events with ``track_many`` in one process,
without Celery.

    python benches/celery_throughput.py                      # 200,000 events, 3 runs each
    python benches/celery_throughput.py --events 20000 --repeats 1

Each run is the driver's whole job: the events split into chunks of 2,000, enqueued, and
every chunk's report read back. The workers, redis and the emulator share the machine's
cores. `make bench` runs it from benches/run.py and adds its table to RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from pushwire.testing import EmulatorProcess

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
KEY = "celery-bench-key"
WORKERS = (1, 2, 3)


def unavailable() -> Optional[str]:
    """Why the benchmark cannot run here, or None."""
    try:
        import celery  # noqa: F401
        import redis  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (pip install -r requirements-dev.txt)"
    if shutil.which("redis-server") is None:
        return "redis-server is not on PATH (tools/system_deps.sh installs it as root with apt-get)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_redis(workdir: str) -> tuple[subprocess.Popen[bytes], str]:
    import redis

    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
    deadline = time.monotonic() + 30
    while True:
        try:
            client.ping()
            client.close()
            return server, f"redis://127.0.0.1:{port}/0"
        except redis.ConnectionError:
            if server.poll() is not None or time.monotonic() > deadline:
                stop(server)
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)


def stop(process: subprocess.Popen[bytes], group: bool = False) -> None:
    """SIGTERM (a worker's warm shutdown), then SIGKILL to it (its process group: the
    worker's pool) if it does not end within 30 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            if group:
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
            process.wait(30)


def start_worker(env: dict[str, str], processes: int, log: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "celery_fanout.tasks", "worker",
         "--pool", "prefork", "--concurrency", str(processes), "--loglevel", "WARNING",
         "--without-gossip", "--without-mingle", "--without-heartbeat",
         "--hostname", f"bench-{processes}@%h"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


def measure(events: int, repeats: int) -> list[tuple[str, list[float]]]:
    """``(configuration, events per second of each run)`` for 1, 2, 3 worker processes and
    for ``track_many`` in one process."""
    sys.path.insert(0, str(EXAMPLES))
    from celery_fanout import config, driver

    rows: list[tuple[str, list[float]]] = []
    frame = driver.sample_frame(events)
    job = list(driver.events_from_frame(frame))
    with tempfile.TemporaryDirectory() as workdir, open(Path(workdir) / "workers.log", "wb") as log:
        redis_server, broker = start_redis(workdir)
        emu = EmulatorProcess(KEY, record_requests=False)
        try:
            env = {
                **os.environ,
                "PUSHWIRE_API_KEY": emu.api_key,
                "PUSHWIRE_BASE_URL": emu.base_url,
                "PUSHWIRE_EVENTS_URL": emu.events_url,
                "CELERY_BROKER_URL": broker,
                "PYTHONPATH": os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]),
            }
            app = config.make_app(env)
            for processes in WORKERS:
                worker = start_worker(env, processes, log)
                try:
                    app.send_task(config.PING).get(timeout=60)
                    # A warm-up job: every process has its connections open.
                    warm = job[: driver.CHUNK_SIZE * processes * 2]
                    driver.track_events(app, warm, timeout=300)
                    rates = []
                    for _ in range(repeats):
                        report = driver.track_events(app, job, timeout=600)
                        if report.recorded != events:
                            raise RuntimeError(report.summary())
                        rates.append(events / report.seconds)
                    label = f"{processes} worker process{'es' if processes > 1 else ''}"
                    rows.append((label, rates))
                    print(f"{label}: {statistics.median(rates):,.0f} events/s", flush=True)
                finally:
                    stop(worker, group=True)
            app.close()

            client = emu.client()
            client.events.track_many(job[:4000])  # warm-up
            rates = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                results = client.events.track_many(job)
                rates.append(events / (time.perf_counter() - t0))
                if results.count(None) != events:
                    raise RuntimeError("track_many did not record every event")
            client.close()
            rows.append(("no Celery: `track_many` in one process", rates))
        finally:
            emu.close()
            stop(redis_server)
    return rows


def table(rows: list[tuple[str, list[float]]], events: int) -> list[str]:
    lines = [
        f"| {events:,} events | events/s (median) | runs (min-max) |",
        "|---|---:|---|",
    ]
    for label, rates in rows:
        spread = f"{min(rates):,.0f}-{max(rates):,.0f}" if len(rates) > 1 else ""
        lines.append(f"| {label} | {statistics.median(rates):,.0f} | {spread} |")
    return lines


def section(events: int, repeats: int) -> list[str]:
    """The Markdown section of benches/RESULTS.md, or a note of why it was skipped."""
    lines = ["## Celery workers (examples/celery_fanout)", ""]
    why = unavailable()
    if why:
        return [*lines, f"Skipped: {why}.", ""]
    rows = measure(events, repeats)
    lines += [
        f"`python benches/celery_throughput.py --events {events} --repeats {repeats}`: "
        f"the driver's job in chunks of 2,000 through a Celery worker (prefork) over "
        f"redis-server, on {os.cpu_count()} cores shared by the workers, redis, the driver "
        f"and the emulator; {'medians of ' if repeats > 1 else ''}{repeats} "
        f"run{'s' if repeats > 1 else ''} each.",
        "",
        *table(rows, events),
        "",
    ]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    why = unavailable()
    if why:
        print(f"skipped: {why}")
        return 0
    print("\n".join(section(args.events, args.repeats)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
