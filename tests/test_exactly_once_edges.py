"""Idempotency keys at their edges (docs/exactly-once.md), over real HTTP against the
emulator with real stores (SQLite, a real Redis, objects of the documented protocol):

- a keyed ``track_many`` holds each claim as long as the batch runs, however long that is and
  whatever the TTL;
- each transition of a key is a compare-and-set on the claim that wrote it: a call's steps
  are interleaved with another's at the exact point where a get-then-set would lose (the
  store runs the test's step inside its own call, in the thread that makes it);
- a claim whose add was retried is its own; one that waited for the store's lock holds its
  lease from its commit;
- a Redis that may lose keys says so;
- a dataframe's row carries its key, and its missing cells are the same event as ``track``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import functools
import gc
import json
import linecache
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import types
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from client_support import BROADCAST
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from redis_support import REDIS_SERVER, SKIP_REASON, redis_server
from store_support import AtomicDictStore, DictStore

import pushwire
from pushwire import IdempotencyError, _idempotency, _keystores, _sqlitestore
from pushwire.testing import Emulator

NOTIFICATIONS = "/apiv1/notifications"
EVENTS = "/api/v1/events"


class Steps:
    """A test's steps, each run once inside a store's call (``before`` or ``after`` it) made
    by the thread it names: so that another call's steps come between two of this call's, in
    that order and no other. A call is ``add``, ``get`` or ``write`` (``set``, ``delete`` and
    the compare-and-set pair)."""

    def __init__(self) -> None:
        self._steps: list[tuple[str, str, str, Callable[[], None]]] = []
        self._lock = threading.Lock()

    def at(self, when: str, call: str, thread: str, step: Callable[[], None]) -> None:
        with self._lock:
            self._steps.append((when, call, thread, step))

    def run(self, when: str, call: str) -> None:
        name = threading.current_thread().name
        with self._lock:
            due = [s for s in self._steps if s[:3] == (when, call, name)][:1]
            for s in due:
                self._steps.remove(s)
        for *_, step in due:
            step()


class Stepped:
    """A store (mixed in before its class) that runs :class:`Steps` around its calls."""

    steps: Steps

    @contextlib.contextmanager
    def _call(self, call: str) -> Iterator[None]:
        self.steps.run("before", call)
        yield
        self.steps.run("after", call)

    def add(self, key: str, value: str, timeout: float) -> bool:
        with self._call("add"):
            return bool(super().add(key, value, timeout))

    def add_made(self, key: str, make: Callable[[], str], timeout: float) -> Any:
        """The store's own ``add_made`` (SQLite's), else an ``add`` of what ``make`` gives
        now, as the claim does for a store without one."""
        with self._call("add"):
            made = getattr(super(), "add_made", None)
            if made is not None:
                return made(key, make, timeout)
            value = make()
            return bool(super().add(key, value, timeout)), value

    def get(self, key: str) -> Optional[str]:
        with self._call("get"):
            return super().get(key)

    def set(self, key: str, value: str, timeout: float) -> None:
        with self._call("write"):
            super().set(key, value, timeout)

    def delete(self, key: str) -> None:
        with self._call("write"):
            super().delete(key)

    def compare_and_set(self, key: str, expected: str, value: str, timeout: float) -> bool:
        with self._call("write"):
            return bool(super().compare_and_set(key, expected, value, timeout))

    def compare_and_delete(self, key: str, expected: str) -> bool:
        with self._call("write"):
            return bool(super().compare_and_delete(key, expected))

    @property
    def _set_later(self) -> Callable[..., None]:
        """The store's deferred write (Redis's), its steps run in the thread that queues it;
        absent (AttributeError) where the store has none."""
        later = super()._set_later  # type: ignore[misc]

        def stepped(key: str, expected: str, value: str, timeout: float, refused: Any) -> None:
            with self._call("write"):
                later(key, expected, value, timeout, refused)

        return stepped


class RetriedAdd:
    """A store (mixed in before its class) whose ``add`` is applied, its answer lost, and
    sent again, as a client that retries a command after a connection error does: the
    second answer is the one the caller gets."""

    def add(self, key: str, value: str, timeout: float) -> bool:
        super().add(key, value, timeout)
        return bool(super().add(key, value, timeout))

    def add_made(self, key: str, make: Callable[[], str], timeout: float) -> Any:
        value = make()
        return self.add(key, value, timeout), value


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if REDIS_SERVER is None:
        pytest.skip(SKIP_REASON)
    pytest.importorskip("redis", reason="redis-py (requirements-dev.txt)")
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def _empty_redis(url: str) -> str:
    import redis

    r = redis.Redis.from_url(url)
    r.flushdb()
    r.close()
    return url


def store_of_kind(kind: str, mixin: Optional[type], request: pytest.FixtureRequest) -> Any:
    """An empty store of ``kind``, with ``mixin`` before its class."""
    tmp_path: Path = request.getfixturevalue("tmp_path")
    base: type
    if kind == "sqlite":
        base, args = _keystores.SQLiteStore, (tmp_path / "keys.db",)
    elif kind == "redis":
        base, args = _keystores.RedisStore, (_empty_redis(request.getfixturevalue("redis_url")),)
    else:
        base, args = {"object": AtomicDictStore, "protocol": DictStore}[kind], ()
    cls = base if mixin is None else type(f"{mixin.__name__}{base.__name__}", (mixin, base), {})
    return cls(*args)


@pytest.fixture(params=["sqlite", "redis", "object", "protocol"])
def any_store(request: pytest.FixtureRequest) -> Any:
    """Each kind of store, empty: "object" with the compare-and-set pair, "protocol" with
    only the four methods."""
    return store_of_kind(request.param, None, request)


@pytest.fixture(params=["sqlite", "object"])
def keyed_store(request: pytest.FixtureRequest) -> Any:
    """A SQLite store and an object, empty: for what does not turn on the store."""
    return store_of_kind(request.param, None, request)


@pytest.fixture(params=["sqlite", "redis", "object"])
def stepped(request: pytest.FixtureRequest) -> Any:
    """Each store with compare-and-set, empty, running a test's :class:`Steps`."""
    store = store_of_kind(request.param, Stepped, request)
    store.steps = Steps()
    return store


class Running:
    """``run()`` in a thread named ``name``; :meth:`result` joins it, and returns what it
    returned or raises what it raised."""

    def __init__(self, name: str, run: Callable[[], Any]) -> None:
        self._out: list[Any] = []
        self._error: list[BaseException] = []
        self.thread = threading.Thread(target=self._run, args=(run,), name=name, daemon=True)
        self.thread.start()

    def _run(self, run: Callable[[], Any]) -> None:
        try:
            self._out.append(run())
        except BaseException as e:
            self._error.append(e)

    def join(self) -> None:
        self.thread.join(30)
        assert not self.thread.is_alive(), f"{self.thread.name} did not end"

    def result(self) -> Any:
        self.join()
        if self._error:
            raise self._error[0]
        return self._out[0]


def wait_until(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 20
    while not done():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.005)


def pause(name: str) -> tuple[Callable[[], None], threading.Event, threading.Event]:
    """A step that holds its thread until ``go`` is set, having set ``paused``."""
    paused, go = threading.Event(), threading.Event()

    def step() -> None:
        paused.set()
        assert go.wait(30), f"{name} was never let go"

    return step, paused, go


def track_many(
    kind: str, emu: Emulator, settings: dict[str, Any], events: list[Any], **kw: Any
) -> Any:
    if kind == "sync":
        with emu.client(**settings) as client:
            return client.events.track_many(events, **kw)

    async def run() -> Any:
        async with emu.async_client(**settings) as client:
            return await client.events.track_many(events, **kw)

    return asyncio.run(run())


def lease_of(monkeypatch: pytest.MonkeyPatch, seconds: float, timeout: float) -> None:
    """Makes a call of ``timeout`` seconds hold its claim for ``seconds``: the margin past
    the timeout set so (below zero: a claim that lapses while its call may still run, as a
    holder paused past its lease does), leaving the call a timeout no loaded machine hits."""
    monkeypatch.setattr(_idempotency, "_LEASE_MARGIN", seconds - timeout)


def viewed(i: int) -> dict[str, Any]:
    return {"event_name": "viewed", "profile_id": f"p{i}", "idempotency_key": f"view-{i}"}


# -- 1. a keyed batch holds its claims while it runs ---------------------------------------


def test_a_keyed_batch_holds_each_key_until_its_event_is_recorded(
    kind: str, any_store: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six keyed events, one at a time, each answered in 0.3 s: the batch runs 1.8 s, past
    each event's own lease (1.1 s). Another worker asking for the last key while it is in
    flight waits for it, and gets its outcome."""
    lease_of(monkeypatch, 1.1, timeout=3.0)
    settings = {"idempotency_store": any_store, "timeout": 3.0, "backoff_base": 0}
    emu.inject_fault(EVENTS, delay=0.3, times=6)
    batch = six_in_flight(kind, emu, settings)
    with emu.client(**{**settings, "timeout": 10.0}) as other:
        assert other.events.track("viewed", profile_id="p5", idempotency_key="view-5") is None
        assert other.idempotency.status("view-5") == "done"
    assert batch.result() == [None] * 6
    assert sorted(e["profile_id"] for e in emu.events()) == [f"p{i}" for i in range(6)]


def six_in_flight(kind: str, emu: Emulator, settings: dict[str, Any]) -> Running:
    """A batch of six keyed events sent one at a time, once five are recorded (1.5 s in,
    each answered in 0.3 s): the last one is in flight."""
    batch = Running(
        "batch",
        lambda: track_many(kind, emu, settings, [viewed(i) for i in range(6)], concurrency=1),
    )
    wait_until(lambda: len(emu.events()) == 5, "five events recorded")
    return batch


def test_a_keyed_batch_holds_its_keys_past_a_short_ttl_while_it_waits_and_sends(
    kind: str, any_store: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first key is held by another worker: the batch waits for it, then sends the rest,
    one at a time, 1.8 s in all, with keys that live 0.5 s and leases of 1.1 s. The last key
    stays the batch's while its event is in flight: a third worker asking for it waits, and
    nothing is sent twice."""
    lease_of(monkeypatch, 1.1, timeout=3.0)
    settings = {
        "idempotency_store": any_store,
        "idempotency_ttl": 0.5,
        "timeout": 3.0,
        "backoff_base": 0,
    }
    emu.inject_fault(EVENTS, delay=0.3, times=6)
    with emu.client(**settings) as worker:
        first = Running(
            "W", lambda: worker.events.track("viewed", profile_id="p0", idempotency_key="view-0")
        )
        wait_until(lambda: worker.idempotency.status("view-0") == "pending", "view-0 claimed")
        batch = six_in_flight(kind, emu, settings)
        with emu.client(**{**settings, "timeout": 10.0}) as third:
            assert third.events.track("viewed", profile_id="p5", idempotency_key="view-5") is None
        first.result()
        assert batch.result() == [None] * 6
    assert sorted(e["profile_id"] for e in emu.events()) == [f"p{i}" for i in range(6)]


# -- 2. every transition is a compare-and-set on its claim ----------------------------------


@contextlib.contextmanager
def a_stalled_past_its_lease(
    stepped: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch, when: str, step: str
) -> Iterator[tuple[pushwire.Client, Running, threading.Event]]:
    """Client A's keyed broadcast, stalled at its ``step`` (``when``: before or after it)
    until past its lease (0.35 s): client B, A's call still running, and what lets A go on."""
    lease_of(monkeypatch, 0.35, timeout=3.0)
    stall, stalled, go = pause("A")
    stepped.steps.at(when, step, "A", stall)
    with (
        emu.client(idempotency_store=stepped, timeout=3.0) as a,
        emu.client(idempotency_store=stepped, timeout=5.0) as b,
    ):
        sent = Running("A", lambda: a.notifications.create(**BROADCAST, idempotency_key="k"))
        assert stalled.wait(30)
        time.sleep(0.4)  # past A's lease, 0.35 s
        yield b, sent, go


def test_a_lapsed_claim_is_not_marked_unknown_over_the_outcome_recorded_meanwhile(
    stepped: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A's broadcast goes out, and A stalls before recording it, past its lease. B finds the
    lease over; between B's read and B's write, A records its outcome. B returns A's
    broadcast, and the key stays done."""
    with a_stalled_past_its_lease(stepped, emu, monkeypatch, "before", "write") as (b, sent, go):

        def a_records() -> None:
            go.set()
            sent.join()

        stepped.steps.at("after", "get", "MainThread", a_records)
        assert b.notifications.create(**BROADCAST, idempotency_key="k") == sent.result()
        assert b.idempotency.status("k") == "done"
    assert len(emu.notifications()) == 1


def test_a_holder_whose_claim_was_taken_over_leaves_the_new_claim_alone(
    stepped: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A is refused (nothing sent) and stalls before freeing its key, past its lease. B is
    told the outcome is unknown; checked, nothing went out, and the key is resolved as not
    acted. C claims it and sends; A then frees the key it held. D, asking while C is in
    flight, waits for C's broadcast: one broadcast."""
    lease_of(monkeypatch, 0.35, timeout=3.0)
    stall_a, a_stalled, a_go = pause("A")
    stall_c, c_stalled, c_go = pause("C")
    stepped.steps.at("before", "write", "A", stall_a)
    stepped.steps.at("before", "write", "C", stall_c)
    emu.inject_fault(NOTIFICATIONS, status=400)
    clients = [emu.client(idempotency_store=stepped, timeout=t) for t in (3.0, 5.0, 5.0, 5.0)]
    a, b, c, d = clients
    try:
        refused = Running("A", lambda: a.notifications.create(**BROADCAST, idempotency_key="k"))
        assert a_stalled.wait(30)
        time.sleep(0.4)  # past A's lease, 0.35 s
        with pytest.raises(IdempotencyError, match="lease ran out"):
            b.notifications.create(**BROADCAST, idempotency_key="k")
        assert emu.notifications() == []
        b.idempotency.resolve("k", None)
        sent = Running("C", lambda: c.notifications.create(**BROADCAST, idempotency_key="k"))
        assert c_stalled.wait(30)  # C's broadcast went out; its outcome not yet recorded
        a_go.set()
        with pytest.raises(pushwire.BadRequestError):
            refused.result()
        stepped.steps.at("after", "get", "MainThread", c_go.set)  # D finds the key held
        again = d.notifications.create(**BROADCAST, idempotency_key="k")
        c_go.set()
        assert again == sent.result()
    finally:
        a_go.set()
        c_go.set()
        for client in clients:
            client.close()
    assert len(emu.notifications()) == 1


def test_resolve_leaves_an_outcome_recorded_while_it_looked(
    stepped: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claims the key and stalls before sending, past its lease: B is told the outcome is
    unknown, and nothing has gone out. Between resolve's read and its write, A wakes, sends
    and records its broadcast: resolve(key, None) refuses (the key is done), and the next
    call returns A's broadcast instead of sending a second."""
    with a_stalled_past_its_lease(stepped, emu, monkeypatch, "after", "add") as (b, sent, go):
        with pytest.raises(IdempotencyError, match="lease ran out"):
            b.notifications.create(**BROADCAST, idempotency_key="k")
        assert emu.notifications() == []

        def a_sends() -> None:
            go.set()
            sent.join()

        stepped.steps.at("after", "get", "MainThread", a_sends)
        with pytest.raises(IdempotencyError, match="is done"):
            b.idempotency.resolve("k", None)
        assert b.idempotency.status("k") == "done"
        assert b.notifications.create(**BROADCAST, idempotency_key="k") == sent.result()
    assert len(emu.notifications()) == 1


@pytest.mark.parametrize("kind_of_store", ["sqlite", "redis", "object"])
def test_a_claim_whose_add_was_retried_is_its_own(
    kind_of_store: str, request: pytest.FixtureRequest, emu: Emulator
) -> None:
    """The add was applied, its answer lost and the add sent again, which answers that the
    key is held: held by this very claim, which sends."""
    store = store_of_kind(kind_of_store, RetriedAdd, request)
    with emu.client(idempotency_store=store, timeout=2.0) as client:
        sent = client.notifications.create(**BROADCAST, idempotency_key="k")
        assert client.idempotency.status("k") == "done"
        assert client.notifications.create(**BROADCAST, idempotency_key="k") == sent
    assert [n["notification_id"] for n in emu.notifications()] == [sent]


def test_a_claim_that_waited_for_the_stores_lock_holds_its_lease_from_its_commit(
    tmp_path: Path, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the SQLite file's write lock for 1.2 s while A claims, longer
    than A's lease (1 s). A's broadcast is then in flight for 0.3 s; B asking meanwhile
    waits for it."""
    lease_of(monkeypatch, 1.0, timeout=3.0)
    store = type("SteppedSQLite", (Stepped, _keystores.SQLiteStore), {})(tmp_path / "keys.db")
    store.steps = Steps()
    lock = sqlite3.connect(tmp_path / "keys.db", isolation_level=None)
    claiming = threading.Event()
    store.steps.at("before", "add", "A", claiming.set)
    emu.inject_fault(NOTIFICATIONS, delay=0.3)
    with (
        emu.client(idempotency_store=store, timeout=3.0) as a,
        emu.client(idempotency_store=store, timeout=5.0) as b,
    ):
        lock.execute("BEGIN IMMEDIATE")
        sent = Running("A", lambda: a.notifications.create(**BROADCAST, idempotency_key="k"))
        assert claiming.wait(30)
        time.sleep(1.2)  # A waits for the lock, past its lease
        lock.execute("COMMIT")
        wait_until(lambda: b.idempotency.status("k") == "pending", "A's claim committed")
        assert b.notifications.create(**BROADCAST, idempotency_key="k") == sent.result()
    lock.close()
    assert len(emu.notifications()) == 1


# -- 3. a store that can lose keys says so -------------------------------------------------


def test_a_redis_that_may_lose_keys_warns_once_naming_what_to_set(
    tmp_path: Path, emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    if REDIS_SERVER is None:
        pytest.skip(SKIP_REASON)
    redis = pytest.importorskip("redis", reason="redis-py (requirements-dev.txt)")
    caplog.set_level(logging.WARNING, logger="pushwire")

    def warnings_of(url: str) -> list[str]:
        caplog.clear()
        with emu.client(idempotency_store=url) as client:
            for i in range(2):
                client.events.track("viewed", profile_id="p", idempotency_key=f"k{i}-{url}")
        with emu.client(idempotency_store=url) as client:  # another client, same store
            client.events.track("viewed", profile_id="p", idempotency_key=f"again-{url}")
        return [r.getMessage() for r in caplog.records if "idempotency store" in r.getMessage()]

    with redis_server(tmp_path) as url:  # appendonly no, snapshots off: a restart loses all
        admin = redis.Redis.from_url(url)
        found_all = warnings_of(url)
        assert len(found_all) == 1, found_all
        found = found_all[0]
        assert "appendonly" in found and "maxmemory-policy" not in found
        assert "127.0.0.1" in found
        admin.config_set("maxmemory-policy", "volatile-lru")
        [found] = warnings_of(f"{url}/0")
        assert "volatile-lru" in found and "noeviction" in found and "appendonly" in found
        admin.config_set("maxmemory-policy", "allkeys-lfu")
        admin.config_set("appendonly", "yes")
        [found] = warnings_of(f"{url}/1")
        assert "allkeys-lfu" in found and "appendonly" not in found
        admin.config_set("maxmemory-policy", "noeviction")
        assert warnings_of(f"{url}/2") == []
        # A Redis that refuses CONFIG (a managed one) cannot be checked: the key still works.
        admin.execute_command("ACL", "SETUSER", "app", "on", ">pw", "~*", "+@all", "-config")
        admin.config_set("appendonly", "no")
        limited = url.replace("redis://", "redis://app:pw@")
        found = warnings_of(f"{limited}/3")
        assert not any("maxmemory-policy" in m for m in found)
        admin.close()
    assert len(emu.events()) == 15


def test_a_redis_that_forgot_the_stores_scripts_is_sent_them_again(
    redis_url: str, emu: Emulator
) -> None:
    import redis

    url = _empty_redis(redis_url)
    with emu.client(idempotency_store=url) as client:
        sent = client.notifications.create(**BROADCAST, idempotency_key="k")
        admin = redis.Redis.from_url(url)
        admin.script_flush()  # as a restart does
        admin.close()
        other = client.notifications.create(**BROADCAST, idempotency_key="k2")
        assert client.idempotency.status("k2") == "done"
        assert client.notifications.create(**BROADCAST, idempotency_key="k2") == other
    assert sorted(n["notification_id"] for n in emu.notifications()) == sorted([sent, other])


def _child(emu: Emulator, store: str, then: str) -> subprocess.CompletedProcess[str]:
    """A process of its own that makes a keyed broadcast with ``store``, then runs ``then``
    (its way out), printing the broadcast's id first."""
    script = textwrap.dedent(f"""
        import os, sys, pushwire
        client = pushwire.Client(api_key={emu.api_key!r}, base_url={emu.base_url!r},
                                 idempotency_store={store!r}, timeout=30)
        print(client.notifications.create(**{BROADCAST!r}, idempotency_key="k"), flush=True)
        {then}
    """)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )


def stalled_writer(url: str) -> tuple[Any, threading.Event, threading.Event]:
    """A Redis store whose writer stalls before its first batch until ``go`` is set."""
    stall, stalled, go = pause("writer")

    class StalledWriter(_keystores.RedisStore):
        def _write_batch(self, batch: Any) -> None:
            stall()
            super()._write_batch(batch)

    return StalledWriter(url), stalled, go


def test_a_redis_record_written_after_its_call_is_read_as_done_by_its_own_process(
    redis_url: str, emu: Emulator
) -> None:
    """The record of a keyed call is left to the store's writer (the call returns a round
    trip sooner). Until it is written, its own process reads the key as done and another
    waits for it as for a call in flight; a keyed batch's records are written too."""
    url = _empty_redis(redis_url)
    store, stalled, go = stalled_writer(url)
    try:
        with emu.client(idempotency_store=store) as a, emu.client(idempotency_store=url) as b:
            sent = a.notifications.create(**BROADCAST, idempotency_key="k")
            assert stalled.wait(30)
            assert a.notifications.create(**BROADCAST, idempotency_key="k") == sent
            with pytest.raises(IdempotencyError, match="in flight") as e:
                b.notifications.create(**BROADCAST, idempotency_key="k", timeout=0.3)
            assert e.value.outcome_unknown
            go.set()
            assert b.notifications.create(**BROADCAST, idempotency_key="k") == sent
            events = [viewed(i) for i in range(300)]
            assert a.events.track_many(events) == [None] * 300
            assert b.events.track_many(events) == [None] * 300  # each replayed
            assert {b.idempotency.status(f"view-{i}") for i in range(300)} == {"done"}
    finally:
        go.set()
    assert len(emu.notifications()) == 1
    assert len(emu.events()) == 300


def test_a_redis_store_claims_on_after_a_fork_and_a_dropped_connection(
    redis_url: str, emu: Emulator
) -> None:
    """The store's claims go on a connection of the thread's own: a forked child makes its
    own (the parent's answers never reach it), and a connection the server dropped is made
    again (redis-py's retries)."""
    import redis

    url = _empty_redis(redis_url)
    store = _keystores.RedisStore(url)
    with emu.client(idempotency_store=store) as client:
        first = client.notifications.create(**BROADCAST, idempotency_key="before")
        parents = store._command("CLIENT", "ID")  # the connection the claims went on
        pid = os.fork()
        if pid == 0:  # the child: a claim of its own, then out without the parent's handlers
            try:
                sent = client.notifications.create(**BROADCAST, idempotency_key="child")
                client.close()
                recorded = store.get(client.idempotency._store()._stored("child"))
                own = store._command("CLIENT", "ID") != parents
                os._exit(0 if sent and recorded and own else 1)
            finally:
                os._exit(2)
        assert os.waitpid(pid, 0)[1] == 0
        admin = redis.Redis.from_url(url)
        admin.client_kill_filter(_type="normal", skipme=True)  # drops every store connection
        admin.close()
        after = client.notifications.create(**BROADCAST, idempotency_key="after")
        assert client.notifications.create(**BROADCAST, idempotency_key="before") == first
        assert {client.idempotency.status(k) for k in ("before", "child", "after")} == {"done"}
        assert after != first
    assert len(emu.notifications()) == 3


def _in_a_child(then: Callable[[], bool]) -> int:
    """``then()`` in a forked child, the child's exit status: 0 if it was true; a child that
    hangs prints its threads' stacks and exits after 15 seconds, one that hangs before it
    runs ``then`` (in the fork's own steps) is killed after 30."""
    pid = os.fork()
    if pid == 0:
        _exit_with(then)
    return _status_of(pid)


def _exit_with(then: Callable[[], bool]) -> None:
    """The end of a forked child: exits 0 if ``then()`` is true, 1 otherwise; a child that
    hangs prints its threads' stacks and exits after 15 seconds."""
    code = 1
    try:
        faulthandler.dump_traceback_later(15, exit=True)
        code = 0 if then() else 1
    finally:
        os._exit(code)


def _status_of(pid: int) -> int:
    """The exit status of the child ``pid``, killed (and the test failed) if it has not
    exited in 30 seconds."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the child hung in the fork's own steps (killed after 30 s)")


@contextlib.contextmanager
def _taken_by_another_thread(locks: list[Any]) -> Iterator[None]:
    """``locks`` held by another thread while the block runs (as a thread inside redis-py's
    pool holds them)."""
    assert locks
    inside, go = threading.Event(), threading.Event()

    def holds() -> None:
        with contextlib.ExitStack() as held:
            for lock in locks:
                held.enter_context(lock)
            inside.set()
            go.wait(30)

    holder = threading.Thread(target=holds)
    holder.start()
    assert inside.wait(30)
    try:
        yield
    finally:
        go.set()
        holder.join()


def test_a_child_forked_while_a_thread_is_inside_the_redis_pool_makes_its_keyed_calls(
    redis_url: str, emu: Emulator
) -> None:
    """Another thread of the parent is inside redis-py's pool (taking or giving back a
    connection: the pool's locks held) as one forks. redis-py's pool makes itself anew in a
    child under those locks, which nobody there will release: the store's every command in
    the child goes through a pool of the child's own instead."""
    url = _empty_redis(redis_url)
    store = _keystores.RedisStore(url)
    with emu.client(idempotency_store=store) as client:
        client.notifications.create(**BROADCAST, idempotency_key="before")
        pool = store._client().connection_pool
        locks = [v for v in vars(pool).values() if callable(getattr(v, "acquire", None))]
        assert locks, "redis-py's pool keeps no lock of its own: this test holds nothing"

        def in_child() -> bool:
            sent = client.notifications.create(**BROADCAST, idempotency_key="child")
            client.close()  # the record written by the child's writer, on its own pool
            recorded = store.get(client.idempotency._store()._stored("child"))
            return bool(sent and recorded)

        with _taken_by_another_thread(locks):
            assert _in_a_child(in_child) == 0
        assert {client.idempotency.status(k) for k in ("before", "child")} == {"done"}
    assert len(emu.notifications()) == 2


def test_a_child_that_drops_a_redis_store_it_never_used_exits(redis_url: str) -> None:
    """A child freeing the parent's Redis client with its store (never used there) leaves
    the parent's pool alone: closing it would take the pool's locks, held by another thread
    of the parent at the fork."""
    stores = [_keystores.RedisStore(_empty_redis(redis_url))]
    stores[0].set("k", "v", 60)  # a connection of the pool's, given back
    # The locks a thread taking or giving back a connection holds (not the one that guards
    # the pool's own renewal in a child).
    pool = vars(stores[0]._client().connection_pool)
    locks = [v for k, v in pool.items() if k != "_fork_lock" and hasattr(v, "acquire")]
    assert locks, "redis-py's pool keeps no lock of its own: this test holds nothing"

    def drops() -> bool:
        stores.clear()
        gc.collect()
        return True

    with _taken_by_another_thread(locks):
        assert _in_a_child(drops) == 0
    assert stores[0].get("k") == "v"


# Steps a test runs as a fork begins (before the package's own at-fork steps).
_before_fork: list[Callable[[], None]] = []
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=lambda: [step() for step in list(_before_fork)])


def _a_claim_under_way(
    store: _sqlitestore.SQLiteStore, key: str, value: str
) -> tuple[threading.Thread, threading.Event]:
    """A claim of ``key`` by another thread, inside its write transaction until ``go`` is
    set (the thread, and ``go``)."""
    inside, go = threading.Event(), threading.Event()

    def lease() -> str:
        inside.set()
        go.wait(30)
        return value

    holder = threading.Thread(target=store.add_made, args=(key, lease, 60))
    holder.start()
    assert inside.wait(30)
    return holder, go


def test_a_child_forked_while_a_thread_is_inside_a_sqlite_claim_claims_its_own_keys(
    tmp_path: Path, emu: Emulator
) -> None:
    """Another thread of the parent is inside the store's write transaction (a claim,
    between BEGIN IMMEDIATE and COMMIT) as one forks, and ends it only once the fork has
    begun. SQLite keeps what its connections hold in the process's memory: a child copying a
    write lock that no one in it will release would answer each claim of its own "database
    is locked". The fork waits for the commit, and the child's claims go through."""
    store = _keystores.SQLiteStore(tmp_path / "keys.db")
    with emu.client(idempotency_store=store) as client:
        holder, go = _a_claim_under_way(store, "held", "the parent's")

        def in_child() -> bool:
            _sqlitestore._BUSY_TIMEOUT = 3.0  # a lock nobody releases: an error in 3 s
            sent = client.notifications.create(**BROADCAST, idempotency_key="child")
            return bool(sent) and client.idempotency.status("child") == "done"

        _before_fork.append(go.set)
        try:
            status = _in_a_child(in_child)
        finally:
            _before_fork.remove(go.set)
            go.set()
            holder.join()
        assert status == 0
        assert store.get("held") == "the parent's"
        assert client.idempotency.status("child") == "done"
    assert len(emu.notifications()) == 1


def test_a_fork_made_inside_a_sqlite_claim_is_not_held_back_and_its_child_refuses_the_store(
    tmp_path: Path,
) -> None:
    """A fork from inside a claim on the forking thread itself (a signal handler's, or a
    callback's) cannot wait for that claim to end: it is made at once, and its child, whose
    copy of the connection is in the claim's transaction, neither uses it nor closes it (a
    rollback there would rewrite the log's index under the parent): the store refuses to
    work in that child, saying why. The parent's claim and file are whole. A mark that an
    interrupted statement left (its ``with`` never left) holds no later fork back."""
    path = tmp_path / "keys.db"
    store = _sqlitestore.SQLiteStore(path)
    (tmp_path / "link.db").symlink_to(path)
    took: list[float] = []

    def refused() -> bool:
        # The same file under another name too: a connection to it by any name would share
        # the kept copy's record of the locks.
        for use in (
            lambda: store.add("child", "v", 60),
            lambda: _sqlitestore.SQLiteStore(tmp_path / "link.db"),
        ):
            try:
                use()
                return False
            except sqlite3.OperationalError as e:
                if "was forked while a statement on" not in str(e):
                    return False
        return True

    def forks() -> str:
        started = time.monotonic()
        assert _in_a_child(refused) == 0
        took.append(time.monotonic() - started)
        return "v"

    assert store.add_made("k", forks, 60) == (True, "v")
    assert store.get("child") is None
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    check.close()
    # Entered and never left, as an exception between the steps leaves a statement: once
    # in a thread that then ends, once in this one.
    Running("interrupted", _sqlitestore._statement).result()
    _sqlitestore._statement()
    started = time.monotonic()
    assert Running("forks", lambda: _in_a_child(lambda: store.get("k") == "v")).result() == 0
    took.append(time.monotonic() - started)
    assert max(took) < 5, took  # each would wait out the 30 s busy timeout


def test_a_store_call_nested_in_a_claim_leaves_the_claim_holding_forks_back(
    tmp_path: Path,
) -> None:
    """A store call made inside a claim on the same thread (a signal handler's, a value's
    maker) ends before the claim does: the claim still holds another thread's fork back
    until its commit, and the child finds the key claimed."""
    store = _sqlitestore.SQLiteStore(tmp_path / "keys.db")
    forked: list[int] = []

    def make() -> str:
        assert store.get("other") is None  # nested in the claim
        Running("forks", lambda: forked.append(_in_a_child(lambda: store.get("k") == "v")))
        wait_until(lambda: bool(_sqlitestore._forks._forking), "the fork to begin")
        return "v"

    assert store.add_made("k", make, 60) == (True, "v")
    wait_until(lambda: bool(forked), "the fork to be made")
    assert forked == [0]


def test_a_sqlite_store_named_by_a_relative_path_keeps_its_file_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each thread opens its own connection when it first uses the store: one that starts
    after the process changed directory (a daemon's ``chdir("/")``) must open the same file,
    not one of the same name there, or a key claimed is claimed again."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    store = _sqlitestore.SQLiteStore("keys.db")
    assert store.add("k", "v", 60)
    monkeypatch.chdir(tmp_path / "b")
    assert Running("later", lambda: store.add("k", "again", 60)).result() is False
    assert not (tmp_path / "b" / "keys.db").exists()


def test_a_claim_interrupted_inside_its_transaction_leaves_the_file_unlocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception raised while a claim holds the file's write lock (its value being made:
    a Ctrl-C, a signal handler's) rolls the transaction back: other connections write at
    once, and the thread's next claim is a claim."""
    monkeypatch.setattr(_sqlitestore, "_BUSY_TIMEOUT", 1.0)
    store = _sqlitestore.SQLiteStore(tmp_path / "keys.db")

    def interrupted() -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.add_made("k", interrupted, 60)
    other = Running(
        "other", lambda: _sqlitestore.SQLiteStore(tmp_path / "keys.db").add("o", "v", 60)
    )
    assert other.result() is True
    assert store.add("k", "mine", 60) and store.get("k") == "mine"


def test_a_claim_interrupted_as_its_transaction_begins_leaves_the_file_unlocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception raised the moment ``BEGIN IMMEDIATE`` returns, the write lock taken (a
    signal handler's): the claim rolls back, and no connection of any process is left
    waiting for a lock that the thread would hold until its next claim."""
    monkeypatch.setattr(_sqlitestore, "_BUSY_TIMEOUT", 1.0)
    store = _sqlitestore.SQLiteStore(tmp_path / "keys.db")
    conn = store._connection()

    def as_it_returns(frame: Any, event: str, arg: Any) -> None:
        if event == "c_return" and getattr(arg, "__name__", "") == "execute":
            if conn.in_transaction:
                sys.setprofile(None)
                raise KeyboardInterrupt

    sys.setprofile(as_it_returns)
    try:
        with pytest.raises(KeyboardInterrupt):
            store.add("k", "v", 60)
    finally:
        sys.setprofile(None)
    assert not conn.in_transaction
    other = Running(
        "other", lambda: _sqlitestore.SQLiteStore(tmp_path / "keys.db").add("o", "v", 60)
    )
    assert other.result() is True
    assert store.add("k", "mine", 60) and store.get("k") == "mine"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_fork_whose_wait_a_signal_cuts_short_leaves_a_child_that_refuses_the_store(
    tmp_path: Path,
) -> None:
    """A fork waits for a claim under way on another thread while a third waits inside
    ``BEGIN IMMEDIATE`` for that claim's lock, and a signal handler raises in the wait:
    ``os.fork`` forks all the same. The child must count both copies as in use (closing
    the waiting one would take a mutex of SQLite's held by a thread the child has not: a
    hang) and refuse the store; the parent's claims are whole."""
    path = tmp_path / "keys.db"
    store = _sqlitestore.SQLiteStore(path)
    holder, go = _a_claim_under_way(store, "held", "held")
    waiter = Running("waiter", lambda: store.add("waited", "v", 60))

    def in_begin() -> bool:
        frame = sys._current_frames().get(waiter.thread.ident or 0)
        while frame is not None and frame.f_code.co_name != "_add_made":
            frame = frame.f_back
        return frame is not None and "BEGIN IMMEDIATE" in linecache.getline(
            frame.f_code.co_filename, frame.f_lineno
        )

    wait_until(in_begin, "the waiter to wait inside BEGIN IMMEDIATE")

    def refused() -> bool:
        try:
            store.add("child", "v", 60)
        except sqlite3.OperationalError as e:
            return "was forked while a statement on" in str(e)
        return False

    def cut_short(signum: int, frame: Any) -> None:
        raise TimeoutError("a signal handler's exception, in the fork's wait")

    previous = signal.signal(signal.SIGALRM, cut_short)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        started = time.monotonic()
        status = _in_a_child(refused)
        took = time.monotonic() - started
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        go.set()
        holder.join()
    assert status == 0
    assert took < 5, took  # cut short: the claim under way was not waited for
    assert waiter.result() is True
    assert store.get("held") == "held" and store.get("child") is None
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    check.close()


_NESTED_FORK = """
import json, os, signal, sys, threading, time
from pushwire import _sqlitestore
# Whose fork hook holds a lock that is not reentrant through each fork (docs/runtime.md).
assert "concurrent.futures.thread" not in sys.modules

store = _sqlitestore.SQLiteStore(sys.argv[1])
inside, go = threading.Event(), threading.Event()

def make():
    inside.set()
    go.wait(30)
    return "held"

holder = threading.Thread(target=store.add_made, args=("held", make, 60))
holder.start()
inside.wait(30)
main = threading.get_ident()
seen = {}

def status(pid):
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

def in_the_wait(signum, frame):
    go.set()  # the claim ends, so the inner fork need not wait out the busy timeout
    pid = os.fork()
    if pid == 0:
        os._exit(0 if store.get("held") == "held" and store.add("inner", "v", 60) else 1)
    seen["inner child"] = status(pid)
    seen["outer still under way"] = main in _sqlitestore._forks._forking
    entered = threading.Event()
    later = threading.Thread(target=lambda: (store.get("other"), entered.set()))
    later.start()
    seen["a later statement kept out"] = not entered.wait(0.3)
    seen["later"] = later

def signal_in_the_wait():
    while main not in _sqlitestore._forks._forking:
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGUSR1)

signal.signal(signal.SIGUSR1, in_the_wait)
threading.Thread(target=signal_in_the_wait).start()
pid = os.fork()
if pid == 0:
    os._exit(0 if store.get("inner") == "v" and store.add("outer", "v", 60) else 1)
seen["outer child"] = status(pid)
seen.pop("later").join()
holder.join()
seen["keys"] = {k: store.get(k) for k in ("held", "inner", "outer")}
print(json.dumps(seen))
"""


def test_a_fork_a_signal_handler_makes_in_another_forks_wait_hangs_nothing(
    tmp_path: Path,
) -> None:
    """A signal handler forks while the main thread's fork waits for a claim under way on
    another thread. Neither fork hangs; once the inner one is made, the outer one is still
    under way, so a statement another thread begins then waits for it to be made; both
    children use the store, the inner one's key reaching the outer one's child. A process
    of its own, without concurrent.futures.thread (whose fork hook would hang the inner
    fork in CPython), and a hang fails the test, not the suite."""
    command = [sys.executable, "-W", "ignore::DeprecationWarning", "-c", _NESTED_FORK]
    try:
        ran = subprocess.run(
            [*command, str(tmp_path / "keys.db")], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"a fork hung: {e.stderr!r}")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {
        "inner child": 0,
        "outer still under way": True,
        "a later statement kept out": True,
        "outer child": 0,
        "keys": {"held": "held", "inner": "v", "outer": "v"},
    }


def _forking_at(code: types.CodeType, text: str, call: Callable[[], Any]) -> tuple[int, Any]:
    """``call()``, forked as a signal handler forks, at the start of the line of ``code`` that
    reads ``text`` (where a handler would run), the child going on with the call: in each
    process, what ``os.fork`` returned (0 in the child) and what the call returned or
    raised."""
    forked: list[int] = []

    def at_line(frame: Any, event: str, arg: Any) -> Any:
        line = linecache.getline(code.co_filename, frame.f_lineno)
        if event == "line" and not forked and text in line:
            forked.append(os.fork())
        return at_line

    sys.settrace(lambda frame, event, arg: at_line if frame.f_code is code else None)
    try:
        outcome = _outcome_of(call)
    finally:
        sys.settrace(None)
    assert forked, f"{code.co_name} never reached {text!r}"
    return forked[0], outcome


def _outcome_of(call: Callable[[], Any]) -> Any:
    """What ``call()`` returned or raised."""
    try:
        return call()
    except Exception as e:
        return e


def _refusal(outcome: Any) -> bool:
    return isinstance(outcome, sqlite3.OperationalError) and "was forked while a statement" in str(
        outcome
    )


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (_sqlitestore._Connection.__init__.__code__, "super().__init__("),
        (_sqlitestore._Connection.__init__.__code__, "if _unusable"),
        (_sqlitestore._set_up.__code__, 'conn.execute("PRAGMA journal_mode=WAL")'),
        (_sqlitestore._set_up.__code__, "return conn"),
        (_sqlitestore.SQLiteStore._connection.__code__, "conn = opened.conn"),
        (_sqlitestore.SQLiteStore._add_made.__code__, 'conn.execute("BEGIN IMMEDIATE")'),
        (_sqlitestore.SQLiteStore._add_made.__code__, "inserted = conn.execute("),
        (_sqlitestore.SQLiteStore._add_made.__code__, 'conn.execute("COMMIT")'),
    ],
    ids=["before-open", "opened", "set-up", "unrecorded", "recorded", "begin", "insert", "commit"],
)
def test_a_child_forked_inside_a_claim_that_goes_on_with_it_claims_nothing(
    tmp_path: Path, code: types.CodeType, text: str
) -> None:
    """A signal handler forks inside a claim (the thread's first, its connection being made),
    and the child goes on with the claim when the handler returns: past every check the
    claim makes in Python (the fork's own look, the pid's), with a connection not yet
    recorded, or with the parent's transaction to commit. The child's claim must fail,
    saying why, and so must any later one in it; the parent's claim, its later ones and the
    file are whole."""
    path = tmp_path / "keys.db"
    _sqlitestore.SQLiteStore(path)  # the file made: a claim of a thread's first connection

    def claim() -> tuple[bool, str]:
        return _sqlitestore.SQLiteStore(path).add_made("k", lambda: f"{os.getpid()}", 60)

    pid, outcome = _forking_at(code, text, claim)
    if pid == 0:
        _exit_with(lambda: _refusal(outcome) and _refusal(_outcome_of(claim)))
    assert _status_of(pid) == 0
    assert outcome == (True, str(os.getpid()))
    store = _sqlitestore.SQLiteStore(path)
    assert all(store.add(f"later-{i}", "v", 60) for i in range(5))
    del store
    gc.collect()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    rows = check.execute("SELECT key, value FROM pushwire_idempotency ORDER BY key").fetchall()
    check.close()
    assert rows == [("k", str(os.getpid()))] + [(f"later-{i}", "v") for i in range(5)]


def test_a_child_forked_inside_a_claim_while_another_thread_makes_a_connection_claims_nothing(
    tmp_path: Path,
) -> None:
    """As above, while another thread is making its first connection and has the object
    but not yet its tag (a thread switch or a signal can come between the two): the child
    still finds the claim's connection and refuses, and the parent's later claims stay in
    the file."""
    path = tmp_path / "keys.db"
    store = _sqlitestore.SQLiteStore(path)
    store.add("warm", "v", 60)
    gc.collect()  # the claim's connection old, as in a long-lived process: the scan meets it last
    new = _sqlitestore._Connection.__new__.__code__
    untagged, go = threading.Event(), threading.Event()

    def held_untagged(frame: Any, event: str, arg: Any) -> Any:
        line = linecache.getline(new.co_filename, frame.f_lineno)
        if event == "line" and "self.opener =" in line:
            untagged.set()
            go.wait(30)
        return held_untagged

    def first_connection() -> bool:
        sys.settrace(lambda frame, event, arg: held_untagged if frame.f_code is new else None)
        return store.add("other", "v", 60)

    other = Running("other", first_connection)
    try:
        assert untagged.wait(30)
        claim = functools.partial(store.add_made, "k", lambda: str(os.getpid()), 60)
        pid, outcome = _forking_at(
            _sqlitestore.SQLiteStore._add_made.__code__, 'conn.execute("COMMIT")', claim
        )
        if pid == 0:
            _exit_with(lambda: _refusal(outcome))
        later = [store.add(f"later-{i}", "v", 60) for i in range(5)]
        assert _status_of(pid) == 0
    finally:
        go.set()
    assert other.result() is True
    assert outcome == (True, str(os.getpid())) and all(later)
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    found = check.execute("SELECT COUNT(*) FROM pushwire_idempotency WHERE key LIKE 'later-%'")
    assert found.fetchone() == (5,)
    check.close()


def _interrupted_at_line(
    n: int, source: str, call: Callable[[], Any]
) -> Optional[KeyboardInterrupt]:
    """``call()`` with a KeyboardInterrupt raised (as a signal handler raises one) at the
    ``n``-th line run of the file ``source``: the exception, or None if fewer ran."""
    seen = [0]

    def interrupt(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            seen[0] += 1
            if seen[0] == n:
                raise KeyboardInterrupt(f"at line {frame.f_lineno} of {frame.f_code.co_name}")
        return interrupt

    sys.settrace(
        lambda frame, event, arg: interrupt if frame.f_code.co_filename == source else None
    )
    try:
        call()
    except KeyboardInterrupt as e:
        return e
    finally:
        sys.settrace(None)
    return None


def test_a_claim_interrupted_at_any_line_leaves_no_mark_while_its_exception_is_kept(
    tmp_path: Path,
) -> None:
    """A signal handler's exception at each line the store runs in turn, one per claim, in
    the claim and its fork guard's steps in and out, the caller keeping every exception (a
    retry loop's list of errors; the traceback keeps the frames it passed through). None of
    them may leave the thread marked as inside a statement: its forks would look nested and
    their children refuse the store, and another thread's fork would wait the full busy
    timeout. The file is left unlocked each time."""
    path = tmp_path / "keys.db"
    store = _sqlitestore.SQLiteStore(path)
    me = threading.get_ident()
    kept: list[BaseException] = []
    # No finalizer of an earlier test's store (its lines are the file's too) runs mid-claim.
    gc.collect()
    gc.disable()
    try:
        for n in range(1, 500):
            claim = functools.partial(store.add, f"k{n}", "v", 60)
            interrupted = _interrupted_at_line(n, _sqlitestore.__file__, claim)
            if interrupted is None:  # a claim of fewer lines: every line was interrupted once
                break
            kept.append(interrupted)
            assert not _sqlitestore._forks.inside(me), interrupted
            assert _sqlitestore._forks._others_inside(0) == set(), interrupted
            assert store.add(f"after-{n}", "v", 60), interrupted
    finally:
        gc.enable()
    assert len(kept) > 20, len(kept)


WORKER = """
import os, sys
from pushwire import _sqlitestore

path, go, said = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = _sqlitestore.SQLiteStore(path)
store.add("launcher", "v", 600)
if os.fork() == 0:  # the worker, left running when the launcher exits
    store.add("worker", "v", 600)
    os.write(said, b"r")
    os.read(go, 1)
    os.write(said, b"c" if store.add("job-42", "worker", 600) else b"x")
    os._exit(0)
os._exit(0)
"""


def test_a_worker_forked_by_a_process_that_then_exits_keeps_its_claims(tmp_path: Path) -> None:
    """A process with a SQLite store forks a worker and exits (a daemon's launcher); another
    process opens the file and closes it, as a checkpoint does. The worker's claims must
    land in the file: its connection holds its own locks on it, not a share of the copy it
    inherited (a copy the others cannot see: the log would be deleted under it, and a key
    it claimed claimed again)."""
    path = str(tmp_path / "keys.db")
    go, to_worker = os.pipe()
    from_worker, said = os.pipe()
    try:
        subprocess.run(
            [sys.executable, "-c", WORKER, path, str(go), str(said)],
            pass_fds=(go, said),
            check=True,
            timeout=60,
        )
        os.close(said)
        assert os.read(from_worker, 1) == b"r"  # the launcher gone, the worker working
        other = sqlite3.connect(path)
        other.execute("INSERT INTO pushwire_idempotency VALUES ('other', 'v', 1e12)")
        other.commit()
        other.close()
        os.write(to_worker, b"g")
        assert os.read(from_worker, 1) == b"c"
    finally:
        for fd in (go, to_worker, from_worker):
            os.close(fd)
    fresh = _sqlitestore.SQLiteStore(path)
    assert fresh.get("job-42") == "worker"
    assert not fresh.add("job-42", "again", 600)


def test_a_claim_interrupted_before_its_answer_is_read_leaves_no_answer_behind(
    redis_url: str, emu: Emulator
) -> None:
    """An exception between the claim's SET NX and its answer (a Ctrl-C, a signal handler's,
    a task's time limit) must not leave that answer for the thread's next command to read:
    a done key is replayed after it, not sent again."""
    store = _keystores.RedisStore(_empty_redis(redis_url))
    with emu.client(idempotency_store=store) as client:
        first = client.notifications.create(**BROADCAST, idempotency_key="old")
        connection = store._mine.connection
        real = connection.read_response

        def interrupted(*args: Any, **kwargs: Any) -> Any:
            connection.read_response = real
            raise KeyboardInterrupt  # as a signal landing right after the command went out

        connection.read_response = interrupted
        with pytest.raises(KeyboardInterrupt):
            client.notifications.create(**BROADCAST, idempotency_key="new")
        assert client.notifications.create(**BROADCAST, idempotency_key="old") == first
        assert client.notifications.create(**BROADCAST, idempotency_key="old") == first
    assert len(emu.notifications()) == 1


def test_short_lived_threads_do_not_use_up_the_pool(redis_url: str, emu: Emulator) -> None:
    """Each thread's claims go on a connection of its own, outside the pool's count: 150
    threads one after another (redis-py's default limit is 100) each make a keyed call."""
    url = _empty_redis(redis_url)
    with emu.client(idempotency_store=url) as client:
        track = client.events.track
        for i in range(150):
            key = f"view-{i}"
            Running(key, lambda k=key: track("viewed", profile_id="p", idempotency_key=k)).result()
        assert {client.idempotency.status(f"view-{i}") for i in range(150)} == {"done"}
    assert len(emu.events()) == 150


def test_a_multiprocessing_child_writes_its_records_on_its_way_out(
    redis_url: str, emu: Emulator
) -> None:
    """A multiprocessing child ends with os._exit, after threading's exit handlers: the
    records of its successful calls are written there, not left pending."""
    import multiprocessing

    url = _empty_redis(redis_url)
    settings = {"api_key": emu.api_key, "base_url": emu.base_url, "events_url": emu.events_url}
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_keyed_events, args=(settings, url, 5))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    with emu.client(idempotency_store=url) as client:
        assert {client.idempotency.status(f"view-{i}") for i in range(5)} == {"done"}
    assert len(emu.events()) == 5


def _keyed_events(settings: dict[str, str], store: str, n: int) -> None:
    client = pushwire.Client(**settings, idempotency_store=store)  # type: ignore[arg-type]
    for i in range(n):
        client.events.track("viewed", profile_id="p", idempotency_key=f"view-{i}")


def test_an_exception_from_outside_the_call_leaves_its_key_unknown(
    keyed_store: Any, emu: Emulator
) -> None:
    """An exception that is not pushwire's (a signal handler's, a task's time limit) may
    have come after the request went out: the key reads unknown, and the next call with it
    is refused rather than sent again."""

    class TimeLimit(Exception):
        pass

    def time_is_up(signum: int, frame: Any) -> None:
        raise TimeLimit

    emu.inject_fault(NOTIFICATIONS, delay=0.5, times=1)
    before = signal.signal(signal.SIGALRM, time_is_up)
    try:
        with emu.client(idempotency_store=keyed_store) as client:
            signal.setitimer(signal.ITIMER_REAL, 0.1)  # while the request waits for its answer
            with pytest.raises(TimeLimit):
                client.notifications.create(**BROADCAST, idempotency_key="k")
            assert client.idempotency.status("k") == "unknown"
            with pytest.raises(IdempotencyError) as e:
                client.notifications.create(**BROADCAST, idempotency_key="k")
            assert e.value.outcome_unknown
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    assert len(emu.notifications()) <= 1


@pytest.mark.parametrize(
    ("then", "state"),
    [
        ("", "done"),  # the interpreter's exit writes what is queued
        ("sys.exit(3)", "done"),
        ("os._exit(0)", "pending"),  # no exit handlers: the claim stays, never sent twice
    ],
)
def test_a_process_that_ends_after_its_call_leaves_the_key_done_or_claimed(
    redis_url: str, emu: Emulator, then: str, state: str
) -> None:
    url = _empty_redis(redis_url)
    ended = _child(emu, url, then)
    assert ended.stdout.strip(), ended.stderr
    with emu.client(idempotency_store=url, timeout=0.5) as again:
        assert again.idempotency.status("k") == state
        if state == "done":
            replayed = again.notifications.create(**BROADCAST, idempotency_key="k")
            assert str(replayed) == ended.stdout.strip()
        else:
            with pytest.raises(IdempotencyError) as e:
                again.notifications.create(**BROADCAST, idempotency_key="k")
            assert e.value.outcome_unknown
    assert len(emu.notifications()) == 1


def test_a_record_the_writer_finds_taken_for_dead_is_recorded_over_the_unknown(
    redis_url: str, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A's record waits in the writer (stalled) while its lease runs out; B takes it for
    dead and marks it unknown. The writer's compare-and-set then fails, and A's outcome is
    recorded over the unknown (A knows better): C gets A's broadcast, nothing sent twice."""
    clock = [time.time()]
    fake = types.SimpleNamespace(time=lambda: clock[0], monotonic=time.monotonic, sleep=time.sleep)
    monkeypatch.setattr(_idempotency, "time", fake)
    store, stalled, go = stalled_writer(_empty_redis(redis_url))
    with emu.client(idempotency_store=store, timeout=5.0) as a:
        sent = a.notifications.create(**BROADCAST, idempotency_key="k")
        assert stalled.wait(30)
        clock[0] += 60  # past A's lease
        with emu.client(idempotency_store=redis_url.rstrip("/") + "/0") as b:
            assert b.idempotency.status("k") == "pending"
            with pytest.raises(IdempotencyError, match="lease ran out"):
                b.notifications.create(**BROADCAST, idempotency_key="k")
            assert b.idempotency.status("k") == "unknown"
            go.set()
            a.idempotency.status("k")  # waits for the writer
            assert b.idempotency.status("k") == "done"
            assert b.notifications.create(**BROADCAST, idempotency_key="k") == sent
    assert len(emu.notifications()) == 1


# -- 4. a dataframe's row ------------------------------------------------------------------


def test_a_dataframe_row_carries_its_key(keyed_store: Any, kind: str, emu: Emulator) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "event_name": ["viewed", "viewed", "viewed"],
            "profile_id": ["p1", "p2", "p3"],
            "idempotency_key": ["view-1", "view-2", float("nan")],  # p3's row has no key
        }
    )
    rows = [row for _, row in frame.iterrows()]
    settings = {"idempotency_store": keyed_store, "backoff_base": 0}
    assert track_many(kind, emu, settings, rows) == [None] * 3
    assert track_many(kind, emu, settings, rows) == [None] * 3
    # Keyed rows recorded once; the row without a key sent each time.
    assert sorted(e["profile_id"] for e in emu.events()) == ["p1", "p2", "p3", "p3"]
    with emu.client(**settings) as client:
        assert client.idempotency.status("view-1") == "done"


def test_missing_cells_are_the_same_event_in_track_and_track_many(
    keyed_store: Any, kind: str, emu: Emulator
) -> None:
    """``track`` and ``track_many`` send an event without its missing fields (None, NaN,
    ``pd.NA``), at the top and in its ``data``: one key serves both, dicts and rows alike."""
    pd = pytest.importorskip("pandas")
    nan = float("nan")
    with emu.client(idempotency_store=keyed_store) as client:
        client.events.track("signup", profile_id="alice", data={"plan": "pro"}, idempotency_key="a")
        client.events.track("signup", profile_id="bob", idempotency_key="b")
    frame = pd.DataFrame(
        {
            "event_name": ["signup", "signup"],
            "profile_id": ["alice", "bob"],
            "device_token_hash": [nan, None],  # missing in both rows
            "data": [{"plan": "pro", "coupon": nan}, pd.NA],
            "idempotency_key": ["a", "b"],
        }
    )
    settings = {"idempotency_store": keyed_store, "backoff_base": 0}
    assert track_many(kind, emu, settings, frame.to_dict("records")) == [None, None]
    rows = [row for _, row in frame.iterrows()]
    assert track_many(kind, emu, settings, rows) == [None, None]
    assert sorted(e["profile_id"] for e in emu.events()) == ["alice", "bob"]
    # And the other way round: track_many first, then track with the field left out.
    with emu.client(idempotency_store=keyed_store) as client:
        event = {"event_name": "signup", "profile_id": "carol", "data": {"x": nan, "y": None}}
        assert client.events.track_many([{**event, "idempotency_key": "c"}]) == [None]
        client.events.track("signup", profile_id="carol", data={}, idempotency_key="c")
    assert sorted(e["profile_id"] for e in emu.events()) == ["alice", "bob", "carol"]


# -- the transitions, in any order ---------------------------------------------------------


class Transitions(RuleBasedStateMachine):
    """Workers claim one key, stall past their leases, record late outcomes, and a person
    resolves unknown keys as the service shows them, in any order. Whatever the order: a
    claim is never granted while another live claim holds the key, a late outcome never
    touches another claim's record, a done key keeps its result, and a key reads done only
    with the result of a send that happened."""

    store: Any = None  # set by the test, as the clock is
    clock: list[float] = []

    def __init__(self) -> None:
        super().__init__()
        # Each run's keys apart from the last's: an API key of its own.
        self.keys = _idempotency.Keys(type(self).store, uuid.uuid4().hex, ttl=1e6)
        self.holding: dict[int, Any] = {}  # worker: its claim
        self.live: set[int] = set()  # workers whose claim has not lapsed
        self.sent: dict[int, int] = {}  # worker: the result of its send
        self.next_worker = 0
        self.done_result: Optional[int] = None

    def _claim(self) -> Any:
        return self.keys.claim("k", "notifications.create", "fp", 1.0)

    @rule()
    def claim(self) -> None:
        worker, self.next_worker = self.next_worker, self.next_worker + 1
        try:
            found = self._claim()
        except IdempotencyError as e:
            assert e.outcome_unknown
            return
        if found.held is not None:
            assert not self.live, "granted while another live claim holds the key"
            self.holding[worker] = found
            self.live.add(worker)
        elif found.done:
            assert found.result in self.sent.values()
            if self.done_result is not None:
                assert found.result == self.done_result
            self.done_result = found.result
        else:
            assert found.waiting and self.live

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def lapse(self, data: st.DataObject) -> None:
        """A holder stalls past its lease (still alive: it records its outcome later)."""
        self.live.discard(data.draw(st.sampled_from(sorted(self.live))))
        type(self).clock[0] += 2.0

    @precondition(lambda self: self.holding)
    @rule(data=st.data(), outcome=st.sampled_from(["sent", "refused", "unknown"]))
    def record(self, data: st.DataObject, outcome: str) -> None:
        worker = data.draw(st.sampled_from(sorted(self.holding)))
        claim = self.holding.pop(worker)
        self.live.discard(worker)
        if outcome == "sent":
            self.sent[worker] = 1000 + worker
            self.keys.done(claim.held, 1000 + worker)
        elif outcome == "refused":
            self.keys.settle(claim.held, pushwire.BadRequestError("refused"))
        else:
            self.sent[worker] = 1000 + worker  # it may have acted: say it did
            self.keys.settle(claim.held, pushwire.APIConnectionError("lost", outcome_unknown=True))

    @rule()
    def resolve(self) -> None:
        """A person checks the service and settles an unknown key with what it shows."""
        if self.keys.store.get(self.keys._stored("k")) is None:
            return
        if _status(self.keys) != "unknown":
            return
        with contextlib.suppress(IdempotencyError):
            shown = sorted(self.sent.values())[:1]
            _idempotency.Idempotency(self.keys).resolve("k", shown[0] if shown else None)

    @invariant()
    def live_claims_keep_the_key(self) -> None:
        for worker in self.live:
            record = _record(self.keys)
            assert record is not None and record["state"] == "pending"
            assert record["owner"] == self.holding[worker].held.owner

    @invariant()
    def done_is_kept(self) -> None:
        record = _record(self.keys)
        if self.done_result is not None:
            assert record is not None and record["state"] == "done"
            assert record["result"] == self.done_result
        if record is not None and record["state"] == "done":
            assert record["result"] in self.sent.values()


class WrittenAtEachGet:
    """A Redis store whose writer writes what it has queued right after each read of a key:
    the moment a claim reads a record its own process is about to write over."""

    def get(self, key: str) -> Optional[str]:
        found: Optional[str] = super().get(key)  # type: ignore[misc]
        self._flush()  # type: ignore[attr-defined]
        return found


def test_a_claim_finds_done_a_record_written_between_its_read_and_its_look_at_the_queue(
    request: pytest.FixtureRequest,
) -> None:
    """A second call of a key finds the first call's result, though the writer writes it
    (and drops it from its queue) between that call's read of the key, still pending, and
    its look at what the writer holds: not a call still in flight to wait for."""
    store = store_of_kind("redis", WrittenAtEachGet, request)
    # No writer thread: a record waits in the queue until a get writes it.
    store._later._thread = threading.current_thread()
    keys = _idempotency.Keys(store, uuid.uuid4().hex, ttl=60)
    first = keys.claim("k", "notifications.create", "fp", 30.0)
    keys.done(first.held, 7)
    assert store._queued(keys._stored("k")) is not None  # queued, not written
    again = keys.claim("k", "notifications.create", "fp", 30.0)
    assert (again.done, again.result, again.waiting) == (True, 7, False)
    assert json.loads(store.get(keys._stored("k")))["state"] == "done"


class _EmptyThenPut:
    """The writer's queue, where a record is put by another thread just after the writer
    has found the queue empty and before it gives its thread up: the moment a put could
    find the writer still there, count on it, and be left unwritten."""

    def __init__(self, later: Any, write: Any) -> None:
        self._queue, self._later, self._write = later._inbox, later, write
        self.putter: Optional[threading.Thread] = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._queue, name)

    def empty(self) -> bool:
        empty: bool = self._queue.empty()
        if empty and self.putter is None:
            self.putter = threading.Thread(target=self._later.put, args=(self._write,))
            self.putter.start()
            wait_until(lambda: not self._queue.empty(), "the put")
            # The put looks for the writer right after queueing: a put that found none waits
            # for the writer's lock here, so this returns either way.
            self.putter.join(0.2)
        return empty


def test_a_record_put_as_the_writer_goes_idle_is_written_without_a_flush(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pushwire import _keywriter

    monkeypatch.setattr(_keywriter, "_IDLE", 0.01)
    written: list[str] = []
    later = _keywriter.Later(lambda batch: written.extend(w.key for w in batch))
    first = _keywriter.Write("a", "", "1", 1000, lambda: None)
    second = _keywriter.Write("b", "", "2", 1000, lambda: None)
    queue = _EmptyThenPut(later, second)
    later._inbox = queue  # type: ignore[assignment]
    later.put(first)
    wait_until(lambda: written == ["a", "b"], "both records written by a writer")
    assert later._pending == {}
    assert queue.putter is not None
    queue.putter.join(5)


def _record(keys: Any) -> Optional[dict[str, Any]]:
    """The key's record as this process reads it: the store's, or the record a write the
    store has queued is to put over it (Redis's writer writes in its own time, meanwhile)."""
    stored = keys._stored("k")
    queued = getattr(keys.store, "_queued", lambda key: None)
    while True:
        found = keys.store.get(stored)
        write = queued(stored)
        if found is not None and write is not None and write[0] == found:
            return dict(json.loads(write[1]))
        if keys.store.get(stored) == found:  # not written in between
            return None if found is None else dict(json.loads(found))


def _status(keys: Any) -> Optional[str]:
    return _idempotency.Idempotency(keys).status("k")


@pytest.mark.parametrize("kind_of_store", ["sqlite", "redis", "object", "protocol"])
def test_transitions_in_any_order(
    kind_of_store: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1_000_000.0]  # the leases' clock, moved by the machine; the store's is time's
    fake = types.SimpleNamespace(time=lambda: clock[0], monotonic=time.monotonic, sleep=time.sleep)
    monkeypatch.setattr(_idempotency, "time", fake)
    store = store_of_kind(kind_of_store, None, request)
    machine = type("T", (Transitions,), {"store": store, "clock": clock})
    machine.TestCase.settings = settings(
        max_examples=100, stateful_step_count=30, deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )  # fmt: skip
    machine.TestCase().runTest()


def test_an_id_column_made_float_by_a_missing_cell_is_the_same_event(emu: Emulator) -> None:
    """A dataframe's int column with one missing cell is float64: its 1.0 is profile 1, the
    event ``track`` recorded under the key, not another call."""
    pd = pytest.importorskip("pandas")
    store = DictStore()
    with emu.client(idempotency_store=store) as client:
        client.events.track("paid", profile_id=1, idempotency_key="k-1")
        frame = pd.DataFrame(
            {
                "event_name": ["paid", "paid"],
                "profile_id": [1, None],
                "idempotency_key": ["k-1", None],
            }
        )
        assert frame["profile_id"].dtype == "float64"
        [first] = client.events.track_many(frame.iloc[:1].to_dict("records"))
    assert first is None
    assert [e["profile_id"] for e in emu.events()] == ["1"]
