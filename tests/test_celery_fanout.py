"""``examples/celery_fanout`` end to end: a real ``redis-server`` as broker and result store,
a real Celery worker (prefork, 3 processes) running the example's tasks against an
``EmulatorProcess``, and the example's driver enqueuing the job, under each result format
(JSON, Celery's default, and pickle).

Checked through the emulator: every event is recorded once, every hash is a member, a
broadcast goes out once; under faults (503 and 429 with ``Retry-After``, 500 after
processing, connections dropped before and after processing) retried work is recorded
once and every unknown outcome reaches the caller, a broadcast's as the pushwire error the
worker met. Every wait is bounded, and every process started here is stopped.

Skipped, with the reason, where Celery or ``redis-server`` is missing (``make test``
installs ``redis-server`` where it can: ``tools/system_deps.sh``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis_support
from redis_support import REDIS_SERVER, SKIP_REASON, redis_server

import pushwire
from pushwire.testing import EmulatorProcess

pytest.importorskip("celery", reason="celery is not installed: pip install -r requirements-dev.txt")
redis = pytest.importorskip(
    "redis", reason="redis (Celery's Redis transport) is not installed: pip install 'celery[redis]'"
)
if not os.path.exists("/proc/self/stat"):
    pytest.skip(
        "reads /proc (Linux) to check that every process it starts is gone",
        allow_module_level=True,
    )
if REDIS_SERVER is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))
from celery_fanout import config, driver  # noqa: E402

EVENTS = 10_000  # the driver's default is 200,000: 5 chunks of 2,000 keep the test short
HASHES = 1_000
WAIT = 60.0  # the longest any one wait here may take
WORKER_PROCESSES = 3


# -- processes -------------------------------------------------------------------------------


def _stat(pid: int) -> list[str]:
    """Fields of /proc/<pid>/stat after the command's name: state, ppid, pgrp, ..."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rpartition(")")[2].split()


def living(pred: Callable[[list[str]], bool]) -> list[int]:
    """The processes (zombies excluded) whose stat fields satisfy ``pred``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = _stat(int(entry))
            except OSError:
                continue  # gone meanwhile
            if fields[0] != "Z" and pred(fields):
                found.append(int(entry))
    return found


def children_of(pid: int) -> list[int]:
    return living(lambda f: int(f[1]) == pid)


def members_of_group(pgid: int) -> list[int]:
    return living(lambda f: int(f[2]) == pgid)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to a process started here (a worker's warm shutdown), then SIGKILL if it has
    not ended in ``WAIT / 2``; it is waited for (no zombie left)."""
    redis_support.stop(process, WAIT / 2)


def gone(pids: list[int], within: float = 10.0) -> list[int]:
    """Those of ``pids`` still alive (not zombies) after ``within`` seconds."""
    deadline = time.monotonic() + within
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if _alive(p)]
    return alive


def tail(log: Path) -> str:
    """The end of a worker's log, for a failure's message."""
    return log.read_text(errors="replace")[-3000:]


def _alive(pid: int) -> bool:
    try:
        return _stat(pid)[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of this test's own, on a free loopback port, nothing saved to disk."""
    with redis_server(tmp_path_factory.mktemp("redis"), WAIT) as url:
        yield url


@dataclass
class Stack:
    """The emulator, a Celery worker of the example's tasks, and the caller's Celery app."""

    emu: EmulatorProcess
    worker: subprocess.Popen[bytes]
    app: Any
    log: Path
    broker: str
    serializer: str


@pytest.fixture(scope="module", params=["json", "pickle"])
def stack(
    request: pytest.FixtureRequest, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    serializer: str = request.param
    log = tmp_path_factory.mktemp(f"worker-{serializer}") / "worker.log"
    emu = EmulatorProcess("celery-fanout-key", record_requests=False, retention=0)
    db = config.RESULT_SERIALIZERS.index(serializer)
    env = {
        **os.environ,
        "PUSHWIRE_API_KEY": emu.api_key,
        "PUSHWIRE_BASE_URL": emu.base_url,
        "PUSHWIRE_EVENTS_URL": emu.events_url,
        "CELERY_BROKER_URL": f"{redis_url}/{db}",
        "CELERY_RESULT_SERIALIZER": serializer,
        "PYTHONPATH": os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]),
    }
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "celery_fanout.tasks", "worker",
             "--pool", "prefork", "--concurrency", str(WORKER_PROCESSES),
             "--loglevel", "WARNING", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "--hostname", f"fanout-{serializer}@%h"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the pool's children with it
        )  # fmt: skip
    app = config.make_app(env)  # the caller's side, configured as the worker is
    pool: list[int] = []
    try:
        ping = app.send_task(config.PING).get(timeout=WAIT)
        pool = children_of(worker.pid)
        assert len(pool) == WORKER_PROCESSES, tail(log)
        # The client was made in the worker's main process, before its pool forked.
        assert ping["client_made_in"] == worker.pid and ping["pid"] in pool
        yield Stack(emu, worker, app, log, env["CELERY_BROKER_URL"], serializer)
    finally:
        app.close()
        stop(worker)  # a warm shutdown: the pool's processes end with it
        if gone(members_of_group(worker.pid)):
            with contextlib.suppress(ProcessLookupError):  # all ended meanwhile
                os.killpg(worker.pid, signal.SIGKILL)  # the worker's own session's group
        emu.close()
    assert gone([worker.pid, *pool, emu.pid]) == [], tail(log)
    assert members_of_group(worker.pid) == [], tail(log)


@pytest.fixture
def fanout(stack: Stack) -> Stack:
    """The stack with the emulator fresh (no events, subscribers or faults), and no results
    of earlier tests in Redis."""
    stack.emu.admin("reset")
    results = redis.Redis.from_url(stack.broker)
    for key in results.scan_iter("celery-task-meta-*"):
        results.delete(key)
    results.close()
    return stack


def recorded_seqs(emu: EmulatorProcess) -> Counter[int]:
    """How many times the emulator recorded each event of the job (by its ``seq``)."""
    events = emu.admin("events", meta=True)
    assert events["pruned"] == 0
    return Counter(int(e["data"]["seq"]) for e in events["entries"])


def seed_segment(emu: EmulatorProcess, n: int) -> tuple[int, list[str]]:
    segment = int(emu.admin("create_segment", name="newsletter")["segment_id"])
    hashes = [emu.admin("add_subscriber")["subscriber_hash"] for _ in range(n)]
    return segment, hashes


def members(emu: EmulatorProcess, segment: int) -> list[str]:
    (seg,) = [s for s in emu.admin("segments") if s["segment_id"] == segment]
    return list(seg["members"])


# -- the tests -------------------------------------------------------------------------------


def test_a_job_split_across_worker_processes_records_every_event_once(fanout: Stack) -> None:
    emu, app = fanout.emu, fanout.app
    frame = driver.sample_frame(EVENTS)

    report = driver.track_events(app, driver.events_from_frame(frame), timeout=WAIT)

    assert (report.events, report.chunks) == (EVENTS, EVENTS // driver.CHUNK_SIZE)
    assert report.recorded == EVENTS, report.summary()
    assert (report.refused, report.unknown, report.failed_chunks) == ([], [], [])
    assert recorded_seqs(emu) == Counter(range(EVENTS))  # each once, none missing
    (first,) = [e for e in emu.admin("events") if e["data"]["seq"] == 0]
    assert (first["event_name"], first["profile_id"]) == ("page_view", "visitor-0")
    assert first["data"] == {"page": "/products/0", "seq": 0}  # the frame's other columns
    # Only the pool's processes ran chunks, each with the client made before the fork.
    assert report.pids and report.pids <= set(children_of(fanout.worker.pid))

    segment, hashes = seed_segment(emu, HASHES)
    added = driver.add_to_segment(app, segment, hashes, chunk_size=250, timeout=WAIT)
    assert added == HASHES
    assert sorted(members(emu, segment)) == sorted(hashes)


def test_the_driver_runs_as_a_command_and_says_what_became_of_the_events(
    fanout: Stack, tmp_path: Path
) -> None:
    csv = tmp_path / "events.csv"
    driver.sample_frame(3000).to_csv(csv, index=False)
    env = {
        **os.environ,
        "CELERY_BROKER_URL": fanout.broker,
        "CELERY_RESULT_SERIALIZER": fanout.serializer,
    }
    done = subprocess.run(
        [sys.executable, "-m", "celery_fanout.driver", "--csv", str(csv), "--timeout", "60"],
        cwd=EXAMPLES,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("3,000 events in 2 chunks through ")
    assert "recorded:        3,000\n" in done.stdout
    assert "unknown outcome: 0 " in done.stdout
    assert len(recorded_seqs(fanout.emu)) == 3000


def test_under_faults_retried_work_is_recorded_once_and_unknown_outcomes_are_reported(
    fanout: Stack, tmp_path: Path
) -> None:
    emu, app = fanout.emu, fanout.app
    emu.admin("set_request_log", enabled=True)
    csv = tmp_path / "events.csv"
    driver.sample_frame(EVENTS).to_csv(csv, index=False)
    # Faults fire in the order armed, on the next requests to the path. Refused unprocessed,
    # so resent (by the client, or past its retries by a Celery retry): 503 and 429 with
    # Retry-After. Of unknown outcome, so never resent: 500 after processing and a
    # connection dropped after it (both recorded), and one dropped before (not recorded).
    path = "/api/v1/events"
    emu.admin("inject_fault", path=path, status=503, retry_after=0, times=20)
    emu.admin("inject_fault", path=path, status=429, retry_after=0, times=20)
    emu.admin("inject_fault", path=path, status=500, processed=True, times=5)
    emu.admin("inject_fault", path=path, drop="after", times=5)
    emu.admin("inject_fault", path=path, drop="before", times=5)

    # Read from the file as needed: no more than 4 chunks wait in Redis at once.
    report = driver.track_events(app, driver.events_from_csv(csv), window=4, timeout=WAIT)

    assert report.events == EVENTS and report.failed_chunks == [] and report.refused == []
    assert len(emu.admin("requests", status=503)) == 20
    assert len(emu.admin("requests", status=429)) == 20
    unknown = {o["position"]: o for o in report.unknown}
    assert len(unknown) == 15 == len(report.unknown), report.summary()
    assert all(o["outcome_unknown"] for o in unknown.values())
    assert Counter(o["error"] for o in unknown.values()) == {
        "ServerError": 5,
        "APIConnectionError": 10,
    }
    assert {o["status_code"] for o in unknown.values() if o["error"] == "ServerError"} == {500}
    assert report.recorded == EVENTS - 15

    seen = recorded_seqs(emu)
    assert max(seen.values()) == 1  # nothing recorded twice
    reported_recorded = set(range(EVENTS)) - set(unknown)
    assert reported_recorded <= set(seen)  # all that was reported recorded, was
    # Of the unknown: recorded when the fault came after processing (10), not before (5).
    assert len(set(seen) & set(unknown)) == 10
    assert len(seen) == EVENTS - 5

    # An event refused past the client's 3 attempts (429 with Retry-After): the task retries
    # it through Celery after the service's wait, and it is recorded once.
    emu.admin("inject_fault", path=path, status=429, retry_after=1, times=3)
    late = [{"event_name": "signup", "profile_id": "late", "data": {"seq": EVENTS}}]
    retried = driver.track_events(app, late, timeout=WAIT)
    assert (retried.recorded, retried.celery_retries, retried.refused) == (1, 1, [])
    assert recorded_seqs(emu)[EVENTS] == 1

    # Segment membership is idempotent: every failure is resent, whatever its kind.
    segment, hashes = seed_segment(emu, HASHES)
    path = "/apiv1/segments/addSegmentWithHash"
    emu.admin("inject_fault", path=path, status=500, processed=True, times=2)
    emu.admin("inject_fault", path=path, drop="after")
    emu.admin("inject_fault", path=path, drop="before")
    emu.admin("inject_fault", path=path, status=503, times=2)
    added = driver.add_to_segment(app, segment, hashes, chunk_size=250, timeout=WAIT)
    assert added == HASHES
    assert sorted(members(emu, segment)) == sorted(hashes)


def test_a_broadcast_goes_out_at_most_once_and_its_unknown_outcome_reaches_the_caller(
    fanout: Stack,
) -> None:
    emu, app = fanout.emu, fanout.app
    emu.admin("add_subscriber", profile_id="alice")
    url = "https://shop.example/sale"

    def sent() -> list[str]:
        return [n["request"]["notification_title"] for n in emu.admin("notifications")]

    # 500 after processing: it went out, the worker cannot know; never retried.
    emu.admin("inject_fault", path="/apiv1/notifications", status=500, processed=True)
    with pytest.raises(pushwire.ServerError) as server_error:
        driver.broadcast(app, "Flash sale", "40% off", url, timeout=WAIT)
    assert server_error.value.status_code == 500
    assert server_error.value.outcome_unknown is True
    assert "outcome is unknown" in str(server_error.value)
    assert sent() == ["Flash sale"]
    # It came through the result format under test: JSON stores the class's module and name,
    # and its args, which hold every attribute.
    results = redis.Redis.from_url(fanout.broker)
    (key,) = results.keys("celery-task-meta-*")
    stored = results.get(key)
    results.close()
    if fanout.serializer == "json":
        error = json.loads(stored)["result"]
        assert (error["exc_module"], error["exc_type"]) == ("pushwire.errors", "ServerError")
        assert error["exc_message"][1] == 500 and error["exc_message"][5] is True
    else:
        assert stored.startswith(b"\x80")  # a pickle

    # The connection lost after processing: the same, as a connection error.
    emu.admin("inject_fault", path="/apiv1/notifications", drop="after")
    with pytest.raises(pushwire.APIConnectionError) as lost:
        driver.broadcast(app, "Last hours", "Ends at midnight", url, timeout=WAIT)
    assert lost.value.outcome_unknown is True
    assert sent() == ["Flash sale", "Last hours"]

    # 429 past the client's 3 attempts: a Celery retry after the service's Retry-After.
    emu.admin("inject_fault", path="/apiv1/notifications", status=429, retry_after=1, times=3)
    report = driver.broadcast(app, "Back in stock", "It is back", url, timeout=WAIT)
    assert report["celery_retries"] == 1 and report["notification_id"] > 0
    assert sent() == ["Flash sale", "Last hours", "Back in stock"]

    # Refused past every retry (the client's 3 attempts, 4 times): the caller gets the
    # RateLimitError, with the service's Retry-After; nothing went out.
    emu.admin("inject_fault", path="/apiv1/notifications", status=429, retry_after=0, times=12)
    with pytest.raises(pushwire.RateLimitError) as limited:
        driver.broadcast(app, "Never sent", "m", url, timeout=WAIT)
    assert limited.value.status_code == 429 and limited.value.retry_after == 0
    assert limited.value.outcome_unknown is False
    assert sent() == ["Flash sale", "Last hours", "Back in stock"]
