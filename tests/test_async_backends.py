"""``AsyncClient`` under asyncio and under trio, the same tests for both (anyio's pytest
plugin, the ``anyio_backend`` fixture parametrised): calls in flight by the thousand, a cancel
scope that abandons its request and its connection, a cancelled keyed broadcast left unknown
and never sent again, the client's timeout, ``track_many`` and its progress reports, keys
shared by tasks, tracing; then what is trio's own (a call in a scope already cancelled, many
runs one after another) and an environment that is neither. Over real HTTP against the
emulator of the package's pytest fixture."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from client_support import api_requests, open_pipes

import pushwire
from pushwire.errors import APITimeoutError, IdempotencyError
from pushwire.testing import Emulator

trio = pytest.importorskip("trio", reason="trio (requirements-dev.txt)")

BROADCAST = {"title": "Sale", "message": "Half price", "url": "https://shop.example/sale"}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


pytestmark = pytest.mark.anyio


def _bridge_is_idle() -> bool:
    """No call of this loop or run is waiting in the bridge, and none runs in the core."""
    from pushwire import _bridge

    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        import asyncio

        bridge = _bridge._bridge_of(asyncio.get_running_loop())
        return bridge is not None and bridge.futures == {} and bridge.completions.pending == 0
    tb = _bridge._trio_bridge(trio)
    return tb.waiting == {} and tb.completions.pending == 0


async def test_a_thousand_calls_in_flight_each_get_their_own_answer(emu: Emulator) -> None:
    got: dict[int, Any] = {}
    async with emu.async_client() as client:

        async def one(i: int) -> None:
            got[i] = await client.events.track("viewed", profile_id=f"p{i}", data={"i": i})

        async with anyio.create_task_group() as tg:
            for i in range(1000):
                tg.start_soon(one, i)
        assert _bridge_is_idle()
    assert len(got) == 1000
    assert sorted(e["data"]["i"] for e in emu.events()) == list(range(1000))


async def test_a_cancel_scope_abandons_the_request_and_its_connection(emu: Emulator) -> None:
    emu.create_segment("before")
    emu.inject_fault("/apiv1/segments", delay=3, times=1)
    async with emu.async_client(max_retries=0) as client:
        started = time.monotonic()
        with anyio.move_on_after(0.2) as scope:
            await client.segments.list()
        assert scope.cancelled_caught
        assert time.monotonic() - started < 1.5
        assert _bridge_is_idle()
        # The connection that carried the abandoned request is not used again: the delayed
        # answer (one segment) never reaches the next call, which sees the second one.
        emu.create_segment("after")
        names = {s.segment_name for s in await client.segments.list()}
        assert names == {"before", "after"}


async def test_a_cancelled_keyed_broadcast_is_unknown_and_never_sent_again(
    emu: Emulator, tmp_path: Path
) -> None:
    emu.inject_fault("/apiv1/notifications", delay=1, times=1)
    store = f"sqlite:///{tmp_path / 'keys.sqlite'}"
    async with emu.async_client(idempotency_store=store, max_retries=0) as client:
        with anyio.move_on_after(0.3) as scope:
            await client.notifications.create(**BROADCAST, idempotency_key="sale-1")
        assert scope.cancelled_caught
        # The request may have been received: the key says so, and a second call with it
        # sends nothing.
        assert client.idempotency.status("sale-1") == "unknown"
        with pytest.raises(IdempotencyError) as raised:
            await client.notifications.create(**BROADCAST, idempotency_key="sale-1")
        assert raised.value.outcome_unknown
    assert len(api_requests(emu, "/apiv1/notifications")) == 1


async def test_the_clients_timeout_ends_a_call_held_by_the_service(emu: Emulator) -> None:
    emu.inject_fault("/apiv1/drips", delay=3, times=1)
    async with emu.async_client(timeout=0.3, max_retries=0) as client:
        started = time.monotonic()
        with pytest.raises(APITimeoutError):
            await client.drips.list()
        assert time.monotonic() - started < 1.5
        assert (await client.drips.list()).total == 0


async def test_track_many_sends_every_event(emu: Emulator) -> None:
    events = [{"event_name": "viewed", "profile_id": f"p{i}"} for i in range(3000)]
    async with emu.async_client() as client:
        errors = await client.events.track_many(events, concurrency=16)
    assert errors == [None] * 3000
    assert len(emu.events()) == 3000


async def test_a_bulk_calls_progress_is_reported_on_the_loops_thread(emu: Emulator) -> None:
    segment = emu.create_segment("s")
    hashes = [emu.add_subscriber(f"h{i:04}") for i in range(1200)]
    reports: list[tuple[int, int, int]] = []
    async with emu.async_client() as client:
        result = await client.segments.add_subscribers_bulk(
            segment,
            hashes,
            concurrency=1,
            progress=lambda done, total: reports.append((done, total, threading.get_ident())),
        )
        # A report handed to the loop runs at its next turn.
        await anyio.sleep(0.05)
    assert result.ok
    assert [r[:2] for r in reports] == [(500, 1200), (1000, 1200), (1200, 1200)]
    assert {ident for _, _, ident in reports} == {threading.get_ident()}


async def test_tasks_sharing_a_key_send_once(emu: Emulator, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'keys.sqlite'}"
    ids: list[int] = []
    emu.inject_fault("/apiv1/notifications", delay=0.3, times=1)
    async with emu.async_client(idempotency_store=store) as client:

        async def send() -> None:
            ids.append(await client.notifications.create(**BROADCAST, idempotency_key="k"))

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(send)
    assert len(set(ids)) == 1 and len(ids) == 8
    assert len(emu.notifications()) == 1


async def test_each_call_is_traced_under_the_tasks_span(emu: Emulator) -> None:
    pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra (requirements-dev.txt)")
    from otel_support import Telemetry, instrumented

    with instrumented(Telemetry()) as telemetry:
        async with emu.async_client() as client:

            async def one(i: int) -> None:
                with telemetry.app.start_as_current_span(f"task-{i}"):
                    await anyio.sleep(0)
                    await client.events.track("viewed", profile_id=f"p{i}")

            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(one, i)
        tasks = {s.context.span_id: s.name for s in telemetry.finished() if s.name[:5] == "task-"}
        ops = telemetry.named("events.track")
    assert len(ops) == 10
    assert sorted(tasks[op.parent.span_id] for op in ops if op.parent) == sorted(tasks.values())


# -- trio's own ----------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio_a_call_in_a_cancelled_scope_sends_nothing(emu: Emulator) -> None:
    async with emu.async_client() as client:
        with trio.CancelScope() as scope:
            scope.cancel()
            await client.events.track("viewed", profile_id="never")
        assert scope.cancelled_caught
        await client.events.track("viewed", profile_id="sent")
    assert [e["profile_id"] for e in emu.events()] == ["sent"]


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio_a_keyed_call_cancelled_before_it_sends_frees_its_key(
    emu: Emulator, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'keys.sqlite'}"
    events = [{"event_name": "signup", "profile_id": f"p{i}", "idempotency_key": f"e{i}"}
              for i in range(3)]  # fmt: skip
    async with emu.async_client(idempotency_store=store) as client:
        with trio.CancelScope() as scope:
            scope.cancel()
            await client.notifications.create(**BROADCAST, idempotency_key="sale-1")
        with trio.CancelScope() as batch_scope:
            batch_scope.cancel()
            await client.events.track_many(events)
        assert scope.cancelled_caught and batch_scope.cancelled_caught
        # Nothing went out: the keys hold nothing, and the calls send when made again.
        assert [client.idempotency.status(k) for k in ("sale-1", "e0", "e1", "e2")] == [None] * 4
        await client.notifications.create(**BROADCAST, idempotency_key="sale-1")
        assert await client.events.track_many(events) == [None] * 3
    assert len(emu.notifications()) == 1 and len(emu.events()) == 3


class _FlushCounted:
    """A key store (a dict) whose queued records a flush writes: counts the flushes."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}
        self.flushes = 0

    def add(self, key: str, value: str, ttl: float) -> bool:
        return self.data.setdefault(key, value) == value

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def set(self, key: str, value: str, ttl: float) -> None:
        self.data[key] = value

    def delete(self, key: str) -> None:
        self.data.pop(key, None)

    def _flush(self) -> None:
        self.flushes += 1


async def test_closing_in_a_cancelled_scope_still_writes_the_queued_records(
    emu: Emulator,
) -> None:
    store = _FlushCounted()
    with anyio.CancelScope() as scope:
        async with emu.async_client(idempotency_store=store) as client:
            await client.events.track("signup", profile_id="a", idempotency_key="k")
            scope.cancel()
    assert store.flushes == 1


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio_a_progress_callback_that_raises_does_not_end_the_run(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    segment = emu.create_segment("s")
    hashes = [emu.add_subscriber(f"h{i:04}") for i in range(600)]

    def interrupting(done: int, total: int) -> None:
        raise KeyboardInterrupt

    async with emu.async_client() as client:
        result = await client.segments.add_subscribers_bulk(segment, hashes, progress=interrupting)
        await trio.sleep(0.05)
    assert result.ok
    assert "KeyboardInterrupt under trio: dropped" in caplog.text


def test_a_trio_run_started_from_asyncio_code_waits_as_trio(emu: Emulator) -> None:
    # A notebook's cell runs on an asyncio loop; trio.run from it (or a trio guest run on
    # that loop) makes trio the running library for its tasks.
    import asyncio

    client = emu.async_client()

    async def in_trio() -> int:
        async with trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(lambda i=i: client.events.track("viewed", profile_id=f"p{i}"))
        return len(await client.segments.list())

    async def cell() -> int:
        return trio.run(in_trio)

    assert asyncio.run(cell()) == 0
    assert len(emu.events()) == 20


def test_under_trio_a_call_left_before_it_parks_is_abandoned(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An exception between the call's submission and its task's park (as a KeyboardInterrupt
    # raised by code there would be): the call is abandoned, and no answer comes back later
    # to wake the task out of whatever it awaits next.
    from pushwire import _bridge

    emu.inject_fault("/apiv1/drips", delay=0.3, times=1)
    client = emu.async_client(max_retries=0)
    parked = trio.lowlevel.wait_task_rescheduled

    async def interrupted(abort: Any) -> Any:
        monkeypatch.setattr(trio.lowlevel, "wait_task_rescheduled", parked)
        raise KeyboardInterrupt

    async def main() -> None:
        monkeypatch.setattr(trio.lowlevel, "wait_task_rescheduled", interrupted)
        with pytest.raises(KeyboardInterrupt):
            await client.drips.list()
        bridge = _bridge._trio_bridge(trio)
        assert bridge.waiting == {}
        await trio.sleep(0.5)  # past the held answer: nothing wakes this sleep early
        assert bridge.completions.pending == 0

    trio.run(main)
    assert trio.run(client.segments.list) == []


def test_ctrl_c_under_trio_abandons_the_call_and_reaches_the_caller(emu: Emulator) -> None:
    emu.inject_fault("/apiv1/drips", delay=3, times=1)
    client = emu.async_client(max_retries=0)

    async def main() -> None:
        # Ctrl-C while the run waits, as a user's would: from outside the run's code.
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
        await client.drips.list()

    # trio turns SIGINT into KeyboardInterrupt only where Python's own handler is in place:
    # put it there, whatever the suite was started with (`make test &` ignores SIGINT).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            trio.run(main)
        assert time.monotonic() - started < 1.5
    finally:
        signal.signal(signal.SIGINT, previous)
    emu.clear_faults()
    assert trio.run(client.drips.list).total == 0


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd (Linux)")
def test_trio_runs_one_after_another_leave_nothing_open(emu: Emulator) -> None:
    # Each run gets its own bridge (a pipe and a system task); a run that ends with a call
    # abandoned in the core lets go of it all once the core lets go of the call (and the
    # garbage collector of the run's cycles, as for asyncio's loops).
    client = emu.async_client(max_retries=0)
    emu.inject_fault("/apiv1/drips", delay=0.3)

    async def run() -> None:
        assert await client.segments.list() == []
        with trio.move_on_after(0.05):
            await client.drips.list()

    trio.run(run)
    gc.collect()
    before = open_pipes()
    for _ in range(20):
        trio.run(run)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        gc.collect()
        if open_pipes() <= before:
            break
        time.sleep(0.05)
    assert open_pipes() <= before
    emu.clear_faults()
    assert trio.run(client.segments.list) == []


def test_outside_asyncio_and_trio_async_with_says_what_to_do(emu: Emulator) -> None:
    client = emu.async_client()
    entering = client.__aenter__()
    with pytest.raises(RuntimeError, match=r"asyncio.*or trio.*asyncio\.run\(\) or trio\.run\(\)"):
        entering.send(None)
    entering.close()
    call = client.segments.list()
    with pytest.raises(RuntimeError, match="neither is running here"):
        call.send(None)
    call.close()
    assert api_requests(emu) == []
    assert isinstance(client, pushwire.AsyncClient)
