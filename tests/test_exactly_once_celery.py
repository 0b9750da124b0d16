"""A broadcast sent once when the Celery task that sends it runs twice, for real: a real
``redis-server`` as broker and idempotency store, real Celery workers (tests/
celery_exactly_once.py, acknowledged late) sending through the sync or the async client to
the emulator, and workers SIGKILLed where production loses them:

- after the send and before the ack: the task is redelivered, runs again, and returns the
  first run's id without sending;
- two workers racing on one key: one sends, the other waits and returns its id;
- between the send and the record of its outcome: the redelivered task is refused with an
  unknown outcome, and no second broadcast goes out.

Skipped, with the reason, where Celery or ``redis-server`` is missing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis_support import REDIS_SERVER, SKIP_REASON, redis_server

import pushwire
from pushwire.testing import Emulator

pytest.importorskip("celery", reason="celery is not installed: pip install -r requirements-dev.txt")
redis = pytest.importorskip("redis", reason="redis-py is not installed: pip install redis")
if REDIS_SERVER is None:
    pytest.skip(SKIP_REASON, allow_module_level=True)

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
import celery_exactly_once  # noqa: E402

WAIT = 60.0
NOTIFICATIONS = "/apiv1/notifications"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis"), WAIT) as url:
        yield url


@pytest.fixture(scope="module")
def server() -> Iterator[Emulator]:
    with Emulator(api_key="sk_live_exactly_once_0123456789") as emu:
        yield emu


class Workers:
    """Celery workers of the test's app, each in a session of its own (killed whole)."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env, self.logs = env, logs
        self.running: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, queue: str) -> subprocess.Popen[bytes]:
        log = (self.logs / f"{name}.log").open("ab")
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "celery_exactly_once", "worker",
             "--pool", "solo", "--queues", queue, "--hostname", f"{name}@%h",
             "--loglevel", "WARNING", "--without-gossip", "--without-mingle",
             "--without-heartbeat"],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        log.close()
        self.running.append(worker)
        return worker

    @staticmethod
    def kill(worker: subprocess.Popen[bytes]) -> None:
        """SIGKILL to the worker and anything it started: no shutdown, no ack."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(WAIT)

    def log(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-2000:] for p in self.logs.glob("*.log"))

    def stop_all(self) -> None:
        for worker in self.running:
            if worker.poll() is None:
                self.kill(worker)


@pytest.fixture
def stack(
    redis_url: str, server: Emulator, tmp_path: Path
) -> Iterator[tuple[Emulator, Workers, Any]]:
    server.reset()
    r = redis.Redis.from_url(redis_url)
    r.flushall()
    r.close()
    env = {
        **os.environ,
        "CELERY_BROKER_URL": f"{redis_url}/0",
        "IDEMPOTENCY_STORE": f"{redis_url}/1",
        "PUSHWIRE_API_KEY": server.api_key,
        "PUSHWIRE_BASE_URL": server.base_url,
        "CALL_TIMEOUT": "1",
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }
    workers = Workers(env, tmp_path)
    app = celery_exactly_once.app
    app.conf.broker_url = app.conf.result_backend = env["CELERY_BROKER_URL"]
    try:
        yield server, workers, app
    finally:
        workers.stop_all()
        app.close()


def wait_for(done: Any, what: str, workers: Workers) -> None:
    deadline = time.monotonic() + WAIT
    while not done():
        assert time.monotonic() < deadline, f"{what} did not happen:\n{workers.log()}"
        time.sleep(0.02)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_task_redelivered_after_its_worker_died_before_the_ack_sends_once(
    stack: tuple[Emulator, Workers, Any], tmp_path: Path, use_async: bool
) -> None:
    emu, workers, app = stack
    held = tmp_path / "sent"
    result = app.send_task(
        "send_broadcast",
        args=["black-friday", "Sale", str(held), use_async],
        queue="broadcasts",
    )
    first = workers.start("first", "broadcasts")
    wait_for(held.exists, "the first run's send", workers)
    workers.kill(first)  # after the send, before the ack
    workers.start("second", "broadcasts")
    notification_id, _ = result.get(timeout=WAIT)
    assert notification_id == int(held.read_text())
    assert [n["notification_id"] for n in emu.notifications()] == [notification_id]
    assert len(emu.requests(path=NOTIFICATIONS)) == 1


def test_two_workers_racing_on_one_key_send_one_broadcast(
    stack: tuple[Emulator, Workers, Any],
) -> None:
    emu, workers, app = stack
    workers.start("left", "left")
    workers.start("right", "right")
    # Both ready before the race: each answers a ping.
    wait_for(lambda: len(app.control.ping(timeout=0.5)) == 2, "both workers answering", workers)
    emu.inject_fault(NOTIFICATIONS, delay=0.5)  # the first send is still in flight
    results = [
        app.send_task("send_broadcast", args=["restock", "Back"], queue=queue)
        for queue in ("left", "right")
    ]
    (a, ran_a), (b, ran_b) = (r.get(timeout=WAIT) for r in results)
    assert a == b and ran_a != ran_b
    assert [n["notification_id"] for n in emu.notifications()] == [a]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_crash_between_the_send_and_its_record_sends_no_second_broadcast(
    stack: tuple[Emulator, Workers, Any], use_async: bool
) -> None:
    emu, workers, app = stack
    # Processed, then the answer held: the broadcast went out, its outcome not yet recorded.
    emu.inject_fault(NOTIFICATIONS, delay=30, processed=True)
    result = app.send_task(
        "send_broadcast", args=["digest", "Digest", None, use_async], queue="broadcasts"
    )
    first = workers.start("first", "broadcasts")
    wait_for(lambda: len(emu.notifications()) == 1, "the first run's send", workers)
    workers.kill(first)
    workers.start("second", "broadcasts")
    with pytest.raises(pushwire.IdempotencyError) as info:
        result.get(timeout=WAIT)
    assert info.value.outcome_unknown and info.value.key == "digest"
    assert len(emu.notifications()) == 1
    assert len(emu.requests(path=NOTIFICATIONS)) == 1
