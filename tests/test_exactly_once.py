"""Idempotency keys (docs/exactly-once.md), over real HTTP against the emulator, with each
kind of store (SQLite, a real Redis, an object of the documented protocol): a call with an
effect sent once per key, its result replayed; another call's key refused; a key in flight
waited for; an unknown outcome never resent until resolved; a refusal freeing the key; keys
that expire, are kept apart per API key, and hold neither the key nor the body."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_support import BROADCAST, Driver, api_requests, drip_notification, make_driver
from redis_support import REDIS_SERVER, redis_server
from store_support import DictStore

import pushwire
from pushwire import IdempotencyError, IdempotencyStore, ValidationError, _keystores, _sqlitestore
from pushwire.testing import Emulator

NOTIFICATIONS = "/apiv1/notifications"


def pending(client: pushwire.Client, key: str) -> None:
    """Waits until a call elsewhere holds ``key`` (claimed, in flight)."""
    deadline = time.monotonic() + 10
    while client.idempotency.status(key) != "pending":
        assert time.monotonic() < deadline, f"{key!r} was never claimed"
        time.sleep(0.002)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not on PATH (make test installs it: tools/system_deps.sh)")
    pytest.importorskip("redis", reason="redis-py (requirements-dev.txt)")
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=["sqlite", "redis", "object"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Each kind of store, empty."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'keys.db'}"
    if request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        import redis

        r = redis.Redis.from_url(url)
        r.flushdb()
        r.close()
        return url
    return DictStore()


@pytest.fixture
def keyed(kind: str, emu: Emulator, store: Any) -> Iterator[Driver]:
    d = make_driver(kind, emu, idempotency_store=store)
    yield d
    d.close()


def test_a_second_call_with_the_key_returns_the_first_ones_result_without_sending(
    keyed: Driver, emu: Emulator
) -> None:
    create = keyed.client.notifications.create
    first = keyed(create, **BROADCAST, idempotency_key="sale-2026-11-27")
    again = keyed(create, **BROADCAST, idempotency_key="sale-2026-11-27")
    assert again == first
    assert [n["notification_id"] for n in emu.notifications()] == [first]
    assert len(api_requests(emu, NOTIFICATIONS)) == 1
    assert keyed.client.idempotency.status("sale-2026-11-27") == "done"
    # Another key is another broadcast; no key, as ever, sends every time.
    other = keyed(create, **BROADCAST, idempotency_key="sale-2026-11-28")
    keyed(create, **BROADCAST)
    assert other != first and len(emu.notifications()) == 3


def test_every_call_with_an_effect_takes_a_key(keyed: Driver, emu: Emulator) -> None:
    c = keyed.client
    drip = drip_notification()
    ids = [keyed(c.drips.create, "Welcome", [drip], idempotency_key="drip") for _ in range(2)]
    assert ids[0] == ids[1] and len(emu.drips()) == 1
    for _ in range(2):
        keyed(c.events.track, "signup", profile_id="alice", idempotency_key="signup-alice")
        keyed(
            c.products.update,
            [{"product_id": "sku-1", "price": 9.5, "availability": "inStock"}],
            idempotency_key="price-sku-1",
        )
    assert len(emu.events()) == 1
    assert len(api_requests(emu, "/apiv1/products")) == 1


def test_track_many_sends_each_keyed_event_once(keyed: Driver, emu: Emulator) -> None:
    events = [
        {"event_name": "viewed", "profile_id": f"p{i}", "idempotency_key": f"view-{i}"}
        for i in range(5)
    ] + [{"event_name": "unkeyed", "profile_id": "p9"}]
    assert keyed(keyed.client.events.track_many, events[:3]) == [None] * 3
    results = keyed(keyed.client.events.track_many, events)
    assert results == [None] * 6
    # Three recorded before were not sent again; the unkeyed one is sent each time.
    names = sorted((e["event_name"], e["profile_id"]) for e in emu.events())
    assert names == sorted([("viewed", f"p{i}") for i in range(5)] + [("unkeyed", "p9")])
    # A key already used for another event is refused in its place, the rest recorded.
    clash = [{"event_name": "clicked", "profile_id": "p0", "idempotency_key": "view-0"}]
    [refused] = keyed(keyed.client.events.track_many, clash)
    assert isinstance(refused, IdempotencyError) and refused.key == "view-0"


def test_the_same_key_with_other_arguments_is_refused_and_nothing_is_sent(
    keyed: Driver, emu: Emulator
) -> None:
    create = keyed.client.notifications.create
    keyed(create, **BROADCAST, idempotency_key="k")
    with pytest.raises(IdempotencyError, match="another call") as info:
        keyed(create, **{**BROADCAST, "title": "Other"}, idempotency_key="k")
    assert isinstance(info.value, ValidationError)
    assert info.value.field == "idempotency_key" and info.value.key == "k"
    assert not info.value.outcome_unknown
    with pytest.raises(IdempotencyError):
        keyed(keyed.client.events.track, "signup", profile_id="a", idempotency_key="k")
    assert len(api_requests(emu)) == 1


@pytest.mark.parametrize(
    "fault",
    [{"drop": "after"}, {"status": 500, "processed": True}],
    ids=["the answer lost", "a processed 500"],
)
def test_an_unknown_outcome_is_never_resent_until_resolved(
    keyed: Driver, emu: Emulator, fault: dict[str, Any]
) -> None:
    create = keyed.client.notifications.create
    emu.inject_fault(NOTIFICATIONS, **fault)  # processed, then the call fails
    with pytest.raises((pushwire.APIConnectionError, pushwire.ServerError)) as lost:
        keyed(create, **BROADCAST, idempotency_key="k")
    assert lost.value.outcome_unknown
    assert keyed.client.idempotency.status("k") == "unknown"
    for _ in range(2):
        with pytest.raises(IdempotencyError, match="unknown") as info:
            keyed(create, **BROADCAST, idempotency_key="k")
        assert info.value.outcome_unknown and info.value.key == "k"
        assert "resolve('k'" in str(info.value)
    assert len(api_requests(emu, NOTIFICATIONS)) == 1 and len(emu.notifications()) == 1
    # Checked: it went out. Settled with its id, later calls return it.
    [sent] = emu.notifications()
    keyed.client.idempotency.resolve("k", sent["notification_id"])
    assert keyed(create, **BROADCAST, idempotency_key="k") == sent["notification_id"]
    assert len(emu.notifications()) == 1


def test_a_key_resolved_as_not_acted_sends_again(keyed: Driver, emu: Emulator) -> None:
    create = keyed.client.notifications.create
    emu.inject_fault(NOTIFICATIONS, drop="before")  # dropped before it was processed
    with pytest.raises(pushwire.APIConnectionError):
        keyed(create, **BROADCAST, idempotency_key="k")
    assert emu.notifications() == []
    keyed.client.idempotency.resolve("k", None)
    assert keyed.client.idempotency.status("k") is None
    notification_id = keyed(create, **BROADCAST, idempotency_key="k")
    assert [n["notification_id"] for n in emu.notifications()] == [notification_id]
    with pytest.raises(IdempotencyError, match="holds nothing"):
        keyed.client.idempotency.resolve("never-used", None)


def test_a_refusal_frees_the_key(keyed: Driver, emu: Emulator) -> None:
    create = keyed.client.notifications.create
    emu.inject_fault(NOTIFICATIONS, status=400)
    with pytest.raises(pushwire.BadRequestError):
        keyed(create, **BROADCAST, idempotency_key="k")
    assert keyed.client.idempotency.status("k") is None
    assert keyed(create, **BROADCAST, idempotency_key="k") > 0
    # Bad input is caught before anything is claimed or sent.
    with pytest.raises(ValidationError) as info:
        keyed(create, **{**BROADCAST, "url": "not a url"}, idempotency_key="bad")
    assert info.value.field == "url"
    assert keyed.client.idempotency.status("bad") is None


def test_a_refused_connect_frees_the_key(kind: str, store: Any, emu: Emulator) -> None:
    # Nothing listens there: the connect is refused, so nothing was sent.
    settings: dict[str, Any] = {
        "api_key": emu.api_key,
        "base_url": "http://127.0.0.1:9",
        "idempotency_store": store,
        "backoff_base": 0,
    }
    if kind == "sync":
        with pushwire.Client(**settings) as client:
            with pytest.raises(pushwire.APIConnectionError) as info:
                client.notifications.create(**BROADCAST, idempotency_key="k")
    else:

        async def create() -> None:
            async with pushwire.AsyncClient(**settings) as client:
                await client.notifications.create(**BROADCAST, idempotency_key="k")

        with pytest.raises(pushwire.APIConnectionError) as info:
            asyncio.run(create())
    assert not info.value.outcome_unknown
    with emu.client(idempotency_store=store) as client:
        assert client.idempotency.status("k") is None


def test_a_key_in_flight_elsewhere_is_waited_for_and_its_result_returned(
    store: Any, emu: Emulator
) -> None:
    emu.inject_fault(NOTIFICATIONS, delay=0.5)
    with emu.client(idempotency_store=store) as a, emu.client(idempotency_store=store) as b:
        first: list[int] = []
        holder = threading.Thread(
            target=lambda: first.append(a.notifications.create(**BROADCAST, idempotency_key="k"))
        )
        holder.start()
        pending(a, "k")
        second = b.notifications.create(**BROADCAST, idempotency_key="k")
        holder.join()
    assert first == [second] and len(emu.notifications()) == 1


def test_a_key_held_past_the_callers_timeout_is_refused_unsent(store: Any, emu: Emulator) -> None:
    emu.inject_fault(NOTIFICATIONS, delay=0.5)
    with emu.client(idempotency_store=store) as a, emu.client(idempotency_store=store) as b:
        holder = threading.Thread(
            target=lambda: a.notifications.create(**BROADCAST, idempotency_key="k")
        )
        holder.start()
        pending(a, "k")
        with pytest.raises(IdempotencyError, match="still in flight") as info:
            b.notifications.create(**BROADCAST, idempotency_key="k", timeout=0.1)
        assert info.value.outcome_unknown
        holder.join()
    assert len(emu.notifications()) == 1


# A process that sends the broadcast under key "k" and prints the id it got.
RACER = textwrap.dedent(
    """
    import json, sys
    import pushwire

    job = json.loads(sys.argv[1])
    client = pushwire.Client(
        api_key=job["key"], base_url=job["base_url"], idempotency_store=job["store"]
    )
    print(client.notifications.create(**job["broadcast"], idempotency_key="k"))
    """
)


def test_processes_racing_on_one_key_in_one_sqlite_file_send_once(
    tmp_path: Path, emu: Emulator
) -> None:
    store = f"sqlite:///{tmp_path / 'keys.db'}"
    emu.inject_fault(NOTIFICATIONS, delay=0.3)  # the first send is still in flight
    job = json.dumps(
        {"key": emu.api_key, "base_url": emu.base_url, "store": store, "broadcast": BROADCAST}
    )
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, job], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    ids = {int(r.communicate(timeout=60)[0]) for r in racers}
    assert all(r.returncode == 0 for r in racers)
    assert ids == {n["notification_id"] for n in emu.notifications()}
    assert len(ids) == 1 and len(api_requests(emu, NOTIFICATIONS)) == 1


def test_a_store_opened_while_another_process_writes_its_new_file_sets_up_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers starting at once on a new file: while one writes it (its table, still in
    rollback mode), SQLite refuses another's switch to WAL at once, without waiting its busy
    timeout. The store sets up again once the writer is done, and works."""
    path = tmp_path / "keys.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    waits: list[float] = []
    real_sleep = time.sleep

    def writer_done(seconds: float) -> None:
        if not waits:
            writer.execute("COMMIT")
        waits.append(seconds)
        real_sleep(0)

    monkeypatch.setattr(_sqlitestore.time, "sleep", writer_done)
    store = _keystores.SQLiteStore(path)
    writer.close()
    assert len(waits) == 1, "refused once, then set up"
    assert store.add("k", "v", 10) and store.get("k") == "v"


# A caller that claims a key and is killed while its broadcast is in flight.
HOLDER = textwrap.dedent(
    """
    import json, sys
    import pushwire

    job = json.loads(sys.argv[1])
    client = pushwire.Client(
        api_key=job["key"], base_url=job["base_url"], idempotency_store=job["store"], timeout=1
    )
    client.notifications.create(**job["broadcast"], idempotency_key="k")
    """
)


def test_a_holder_that_died_leaves_the_key_unknown(tmp_path: Path, emu: Emulator) -> None:
    store = f"sqlite:///{tmp_path / 'keys.db'}"
    emu.inject_fault(NOTIFICATIONS, delay=30, processed=True)
    job = {"key": emu.api_key, "base_url": emu.base_url, "store": store, "broadcast": BROADCAST}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, json.dumps(job)])
    client = emu.client(idempotency_store=store)
    try:
        deadline = time.monotonic() + 30
        while not emu.notifications():  # processed: the broadcast went out
            assert time.monotonic() < deadline and holder.poll() is None
            time.sleep(0.01)
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
        # Its lease (its timeout and a margin) runs out; the key is unknown then.
        deadline = time.monotonic() + 30
        while True:
            try:
                client.notifications.create(**BROADCAST, idempotency_key="k", timeout=0.1)
            except IdempotencyError as e:
                if "lease ran out" in str(e):
                    assert e.outcome_unknown
                    break
                assert "still in flight" in str(e)
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert client.idempotency.status("k") == "unknown"
        assert len(emu.notifications()) == 1
    finally:
        client.close()
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_keys_expire_after_their_ttl(store: Any, emu: Emulator) -> None:
    with emu.client(idempotency_store=store, idempotency_ttl=0.3) as client:
        client.notifications.create(**BROADCAST, idempotency_key="k")
        deadline = time.monotonic() + 10
        while client.idempotency.status("k") is not None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        client.notifications.create(**BROADCAST, idempotency_key="k")
    assert len(emu.notifications()) == 2


def test_keys_are_kept_apart_per_api_key_and_the_store_holds_no_key_and_no_body(
    tmp_path: Path, emu: Emulator
) -> None:
    path = tmp_path / "keys.db"
    other = "sk_live_other_site_0123456789"
    emu.add_site(other)
    with (
        emu.client(idempotency_store=f"sqlite:///{path}") as a,
        emu.client(api_key=other, idempotency_store=f"sqlite:///{path}") as b,
    ):
        a.notifications.create(**BROADCAST, idempotency_key="k")
        b.notifications.create(**BROADCAST, idempotency_key="k")
        assert a.notifications.create(**BROADCAST, idempotency_key="k") > 0
    assert len(emu.notifications()) == 1 and len(emu.notifications(api_key=other)) == 1
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT key, value FROM pushwire_idempotency").fetchall()
    assert len(rows) == 2
    stored = json.dumps(rows) + path.read_bytes().decode("latin-1")
    for secret in (emu.api_key, other, BROADCAST["title"], BROADCAST["url"], '"k"'):
        assert secret not in stored


def test_a_key_needs_a_store_and_a_store_must_be_usable(emu: Emulator, tmp_path: Path) -> None:
    with emu.client() as client:
        with pytest.raises(ValidationError) as info:
            client.notifications.create(**BROADCAST, idempotency_key="k")
        assert info.value.field == "idempotency_store"
        with pytest.raises(ValidationError) as info:
            client.with_raw_response.notifications.create(**BROADCAST, idempotency_key="k")
        assert info.value.field == "idempotency_key"
    for bad in ("memcached://x", f"sqlite:///{tmp_path}/missing/keys.db", 42, "sqlite:///:memory:"):
        with pytest.raises(ValidationError) as info:
            emu.client(idempotency_store=bad)
        assert info.value.field == "idempotency_store"
    assert api_requests(emu) == []


def test_the_store_comes_from_the_environment(
    emu: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PUSHWIRE_IDEMPOTENCY_STORE", f"sqlite:///{tmp_path / 'keys.db'}")
    with emu.client() as client:
        first = client.notifications.create(**BROADCAST, idempotency_key="k")
        assert client.notifications.create(**BROADCAST, idempotency_key="k") == first
    assert "keys.db" in os.listdir(tmp_path)
    assert isinstance(DictStore(), IdempotencyStore)


def test_a_ttl_shorter_than_a_call_still_holds_its_key_while_it_runs(
    store: Any, emu: Emulator
) -> None:
    emu.inject_fault(NOTIFICATIONS, delay=0.6)
    settings = {"idempotency_store": store, "idempotency_ttl": 0.2}
    with emu.client(**settings) as a, emu.client(**settings) as b:
        first: list[int] = []
        holder = threading.Thread(
            target=lambda: first.append(a.notifications.create(**BROADCAST, idempotency_key="k"))
        )
        holder.start()
        pending(a, "k")
        time.sleep(0.3)  # past the TTL, while the first call is still in flight
        second = b.notifications.create(**BROADCAST, idempotency_key="k")
        holder.join()
    assert first == [second] and len(emu.notifications()) == 1


# One broadcast to a set of countries under key "k", in a process of its own.
BY_SET = textwrap.dedent(
    """
    import json, sys
    import pushwire

    job = json.loads(sys.argv[1])
    client = pushwire.Client(
        api_key=job["key"], base_url=job["base_url"], idempotency_store=job["store"]
    )
    countries = {"US", "IN", "FR", "DE", "BR", "JP", "GB", "ES"}
    print(client.notifications.create(
        **job["broadcast"], include_countries=countries, idempotency_key="k"
    ))
    """
)


def test_the_same_call_in_processes_with_other_hash_seeds_is_the_same_call(
    tmp_path: Path, emu: Emulator
) -> None:
    store = f"sqlite:///{tmp_path / 'keys.db'}"
    job = json.dumps(
        {"key": emu.api_key, "base_url": emu.base_url, "store": store, "broadcast": BROADCAST}
    )
    ids = []
    for seed in ("1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-c", BY_SET, job],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        ids.append(int(done.stdout))
    assert len(set(ids)) == 1 and len(emu.notifications()) == 1


def test_an_event_keyed_in_track_is_the_same_event_in_track_many(
    keyed: Driver, emu: Emulator
) -> None:
    keyed(keyed.client.events.track, "signup", profile_id="alice", idempotency_key="signup")
    event = {"event_name": "signup", "profile_id": "alice", "idempotency_key": "signup"}
    # Twice in one batch, and once before: recorded once.
    assert keyed(keyed.client.events.track_many, [event, dict(event)]) == [None, None]
    assert len(emu.events()) == 1
    other = {**event, "profile_id": "bob"}
    results = keyed(
        keyed.client.events.track_many,
        [{**event, "idempotency_key": "x"}, {**other, "idempotency_key": "x"}],
    )
    assert results[0] is None and isinstance(results[1], IdempotencyError)
    assert len(emu.events()) == 2


class FailingRecords(DictStore):
    """A store that claims, then fails to record (Redis gone mid-call)."""

    def set(self, key: str, value: str, timeout: float) -> None:
        raise ConnectionError("the store went away")


def test_a_store_that_fails_after_the_send_keeps_the_calls_outcome(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    with emu.client(idempotency_store=FailingRecords()) as client:
        notification_id = client.notifications.create(**BROADCAST, idempotency_key="k")
        assert [n["notification_id"] for n in emu.notifications()] == [notification_id]
        assert any("could not be recorded" in m for m in caplog.messages)
        emu.inject_fault(NOTIFICATIONS, drop="after")
        with pytest.raises(pushwire.APIConnectionError) as info:
            client.notifications.create(**BROADCAST, idempotency_key="other")
        assert info.value.outcome_unknown


def test_resolve_refuses_a_done_key_and_stores_show_no_secret(keyed: Driver, emu: Emulator) -> None:
    keyed(keyed.client.notifications.create, **BROADCAST, idempotency_key="k")
    with pytest.raises(IdempotencyError, match="nothing to resolve"):
        keyed.client.idempotency.resolve("k", None)
    assert len(emu.notifications()) == 1
    with emu.client(idempotency_store="redis://:s3cret@127.0.0.1:9/1?password=s3cret") as c:
        assert "s3cret" not in repr(c.idempotency)
    # A scheme mistyped: refused, naming the field, and still without the password.
    for typo in ("redis:/:s3cret@127.0.0.1:9/1", "redis:user:s3cret@127.0.0.1:9/1"):
        with pytest.raises(ValidationError) as refused:
            emu.client(idempotency_store=typo)
        assert refused.value.field == "idempotency_store"
        assert "s3cret" not in str(refused.value) and "s3cret" not in repr(refused.value)
        assert "[redacted]@127.0.0.1:9/1" in str(refused.value)


def test_a_batch_stopped_before_it_sends_frees_the_keys_it_claimed(
    store: Any, emu: Emulator
) -> None:
    emu.inject_fault("/api/v1/events", delay=0.5)
    held = threading.Thread(
        target=lambda: emu.client(idempotency_store=store).events.track(
            "signup", profile_id="b", idempotency_key="b"
        )
    )
    with emu.client(idempotency_store=store) as probe:
        held.start()
        pending(probe, "b")

        async def batch() -> None:
            async with emu.async_client(idempotency_store=store) as client:
                events = [
                    {"event_name": "signup", "profile_id": "a", "idempotency_key": "a"},
                    {"event_name": "signup", "profile_id": "b", "idempotency_key": "b"},
                ]
                # Cancelled while it waits for "b", before anything is sent.
                await asyncio.wait_for(client.events.track_many(events), timeout=0.1)

        with pytest.raises(asyncio.TimeoutError):
            asyncio.run(batch())
        assert probe.idempotency.status("a") is None
        held.join()
    assert [e["profile_id"] for e in emu.events()] == ["b"]
