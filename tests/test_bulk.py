"""The bulk forms run inside Rust: every item gets its own outcome, in order, and one
failure never stops the rest (faults injected with ``emu.inject_fault``)."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from client_support import Driver, api_requests, make_driver

from pushwire import BulkResult, ServerError, ValidationError
from pushwire.testing import Emulator

EVENTS = "/api/v1/events"
BY_HASH = "/apiv1/segments/addSegmentWithHash"


def members(emu: Emulator, segment_id: int) -> set[str]:
    [seg] = [s for s in emu.segments() if s["segment_id"] == segment_id]
    return set(seg["members"])


# -- events.track_many ---------------------------------------------------------------------


def test_track_many_records_every_event_in_order(drv: Driver, emu: Emulator) -> None:
    events = [
        {"event_name": f"viewed_{i}", "profile_id": f"p{i % 7}", "data": {"i": i}}
        for i in range(300)
    ]
    results = drv(drv.client.events.track_many, events, concurrency=16)
    assert results == [None] * 300
    seen = emu.events()
    assert len(seen) == 300
    assert sorted(e["event_name"] for e in seen) == sorted(e["event_name"] for e in events)


def test_track_many_reports_invalid_events_without_sending_them(drv: Driver, emu: Emulator) -> None:
    results = drv(
        drv.client.events.track_many,
        [
            {"event_name": "ok", "profile_id": "p"},
            {"event_name": "Service.reserved", "profile_id": "p"},
            {"event_name": "no_subscriber"},
            {"event_name": "x" * 65, "device_token_hash": "h"},
            {"event_name": "also_ok", "device_token_hash": "h"},
        ],
    )
    assert results[0] is None and results[4] is None
    for bad, field in [(1, "event_name"), (2, "profile_id"), (3, "event_name")]:
        assert isinstance(results[bad], ValidationError)
        assert results[bad].field == field  # type: ignore[union-attr]
    assert sorted(e["event_name"] for e in emu.events()) == ["also_ok", "ok"]
    assert len(api_requests(emu, EVENTS)) == 2


def test_track_many_keeps_going_past_server_errors(
    drv: Driver, emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    emu.inject_fault(EVENTS, status=500, times=3)
    with caplog.at_level(logging.WARNING, logger="pushwire"):
        results = drv(
            drv.client.events.track_many,
            [{"event_name": "e", "profile_id": str(i)} for i in range(20)],
            concurrency=1,
        )
    errors = [r for r in results if r is not None]
    assert len(errors) == 3 and all(isinstance(e, ServerError) for e in errors)
    assert results[:3] == errors  # concurrency 1: the first three met the fault
    assert len(emu.events()) == 17  # a 500 is never retried for an event: no duplicates
    # a job that does not look at the results still leaves a trace of what it lost
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # (a 500 on a write may come after the service acted: the events are not called lost)
    assert any(
        "3 of 20 events failed with an unknown outcome" in w and "events[0]" in w for w in warnings
    ), warnings
    caplog.clear()
    emu.inject_fault(EVENTS, status=400, times=2)
    emu.inject_fault(EVENTS, status=500, processed=True, times=1)
    with caplog.at_level(logging.WARNING, logger="pushwire"):
        results = drv(
            drv.client.events.track_many,
            [{"event_name": "e", "profile_id": str(i)} for i in range(5)],
            concurrency=1,
        )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "3 of 5 events failed: 2 not recorded, 1 with an unknown outcome" in w for w in warnings
    ), warnings
    assert len(emu.events()) == 17 + 3  # the processed one was recorded after all


def test_a_large_blocking_batch_shared_between_threads_keeps_every_outcome_in_place(
    emu: Emulator,
) -> None:
    # Large enough to be shared with the I/O threads (src/bindings/batch_across_threads.rs):
    # outcomes must still land at their own event's index.
    client = emu.client(max_retries=0)
    events: list[dict[str, object]] = []
    for i in range(2000):
        if i % 97 == 13:
            events.append({"event_name": "Service.reserved", "profile_id": "p", "data": {"i": i}})
        else:
            events.append({"event_name": "viewed", "profile_id": f"p{i % 11}", "data": {"i": i}})
    emu.inject_fault(EVENTS, status=500, times=5)
    results = client.events.track_many(events, concurrency=8)
    assert len(results) == 2000
    invalid = {i for i in range(2000) if i % 97 == 13}
    assert {i for i, r in enumerate(results) if isinstance(r, ValidationError)} == invalid
    failed = {i for i, r in enumerate(results) if isinstance(r, ServerError)}
    assert len(failed) == 5
    ok = {i for i, r in enumerate(results) if r is None}
    assert len(ok) == 2000 - len(invalid) - 5
    # Exactly the events reported recorded were recorded, once each.
    stored = [e["data"]["i"] for e in emu.events()]
    assert sorted(stored) == sorted(ok)


def test_a_shared_batch_keeps_concurrency_as_the_bound_on_requests_in_flight(
    emu: Emulator,
) -> None:
    # 40 requests held 0.2 s each by the emulator, at most 4 in flight: ten rounds, at least
    # 2 s. Were each thread to take 4 slots of its own, it would take half of that.
    client = emu.client(max_retries=0)
    emu.inject_fault(EVENTS, delay=0.2, times=40)
    t0 = time.monotonic()
    results = client.events.track_many(
        [{"event_name": "e", "profile_id": str(i)} for i in range(40)], concurrency=4
    )
    elapsed = time.monotonic() - t0
    assert results == [None] * 40
    assert elapsed >= 1.9, elapsed


def test_a_large_blocking_batch_starts_sending_while_later_events_are_converted(
    emu: Emulator,
) -> None:
    # The I/O threads send the first events while the calling thread still converts the
    # rest: a batch of 100,000 rows does not wait for the last row before the first goes.
    client = emu.client(max_retries=0)
    stored_when_last_converted: list[int] = []

    class Row:  # a row-like object (as a pandas Series), read through to_dict()
        def __init__(self, i: int) -> None:
            self.i = i

        def to_dict(self) -> dict[str, object]:
            if self.i == 999:
                time.sleep(0.3)  # a slow row, converted last
                stored_when_last_converted.append(len(emu.events()))
            return {"event_name": "viewed", "profile_id": f"p{self.i}"}

    results = client.events.track_many([Row(i) for i in range(1000)], concurrency=8)
    assert results == [None] * 1000
    assert len(emu.events()) == 1000
    assert stored_when_last_converted[0] > 0


def test_track_many_rejects_bad_arguments_before_sending(drv: Driver, emu: Emulator) -> None:
    with pytest.raises(ValidationError) as e:
        drv(drv.client.events.track_many, {"event_name": "e", "profile_id": "p"})
    assert e.value.field == "events"
    with pytest.raises(ValidationError) as e:
        drv(drv.client.events.track_many, [{"event_name": "e", "profile_id": "p"}], concurrency=0)
    assert e.value.field == "concurrency"
    assert api_requests(emu) == []


# -- segments.*_bulk -------------------------------------------------------------------------


def test_add_subscribers_bulk_chunks_at_the_spec_limit(drv: Driver, emu: Emulator) -> None:
    segment = emu.create_segment("everyone")
    hashes = [emu.add_subscriber(f"h{i:04}") for i in range(1201)]
    done: list[tuple[int, int]] = []

    result = drv(
        drv.client.segments.add_subscribers_bulk,
        segment,
        hashes,
        concurrency=3,
        progress=lambda n, total: done.append((n, total)),
    )

    assert isinstance(result, BulkResult)
    assert result.ok and result.succeeded == 1201 and result.failed_items == []
    assert [(c.index, c.start, c.size) for c in result.chunks] == [
        (0, 0, 500),
        (1, 500, 500),
        (2, 1000, 201),
    ]
    assert members(emu, segment) == set(hashes)
    assert len(api_requests(emu, BY_HASH)) == 3
    # One report per chunk, counting up to the total.
    assert len(done) == 3 and done[-1] == (1201, 1201)
    assert [n for n, _ in done] == sorted(n for n, _ in done)
    assert {t for _, t in done} == {1201}


def test_a_failing_progress_callback_is_logged_and_the_call_goes_on(
    drv: Driver, emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    segment = emu.create_segment("everyone")
    hashes = [emu.add_subscriber(f"h{i:04}") for i in range(1001)]
    calls: list[int] = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        raise RuntimeError(f"bar broke at {done}")

    with caplog.at_level(logging.WARNING, logger="pushwire"):
        result = drv(
            drv.client.segments.add_subscribers_bulk,
            segment,
            hashes,
            concurrency=1,  # chunks in order, so the reports are 500, 1000, 1001
            progress=progress,
        )
    assert result.ok and result.succeeded == 1001
    assert members(emu, segment) == set(hashes)
    assert sorted(calls) == [500, 1000, 1001]
    warnings = [r.getMessage() for r in caplog.records if r.name == "pushwire"]
    assert sorted(warnings) == [
        f"progress callback failed: RuntimeError: bar broke at {n}" for n in (1000, 1001, 500)
    ]


def test_a_batch_above_max_connections_keeps_every_event_within_its_timeout(
    kind: str, emu: Emulator
) -> None:
    # concurrency=8 on a client of 2 connections: capped to 2, so no event waits for a slot
    # on its own deadline (and times out, perhaps after it was sent).
    emu.inject_fault("/api/v1/events", delay=0.3, times=8)
    drv = make_driver(kind, emu, max_connections=2, timeout=1.0, max_retries=0)
    try:
        events = [{"event_name": "view", "profile_id": f"p{i}"} for i in range(8)]
        started = time.monotonic()
        assert drv(drv.client.events.track_many, events, concurrency=8) == [None] * 8
        assert time.monotonic() - started >= 1.1  # 4 rounds of 2
        assert len(emu.events()) == 8
    finally:
        drv.close()


def add_to_a_segment_in_bulk(
    drv: Driver, emu: Emulator, count: int, **fault: Any
) -> tuple[int, list[str], BulkResult]:
    """`count` new subscribers added to a new segment by add_subscribers_bulk, a chunk at a
    time, while the chunk endpoint fails as `fault` says: the segment, the hashes, the result."""
    segment = emu.create_segment("everyone")
    hashes = [emu.add_subscriber(f"h{i:04}") for i in range(count)]
    emu.inject_fault(BY_HASH, **fault)
    result = drv(drv.client.segments.add_subscribers_bulk, segment, hashes, concurrency=1)
    return segment, hashes, result


def test_add_subscribers_bulk_reports_the_failed_chunk(drv: Driver, emu: Emulator) -> None:
    segment, hashes, result = add_to_a_segment_in_bulk(drv, emu, 1100, status=400, times=1)

    assert not result.ok
    [failed] = result.failed
    assert failed.index == 0 and failed.error is not None and failed.error.status_code == 400
    assert result.failed_items == hashes[:500]
    assert result.succeeded == 600
    assert members(emu, segment) == set(hashes[500:])
    with pytest.raises(type(failed.error)):
        result.raise_for_errors()


def test_add_subscribers_bulk_retries_each_chunk(drv: Driver, emu: Emulator) -> None:
    segment, hashes, result = add_to_a_segment_in_bulk(drv, emu, 700, status=503, times=2)

    assert result.ok
    assert members(emu, segment) == set(hashes)
    assert len(api_requests(emu, BY_HASH)) == 4  # two chunks, the first tried three times


def test_profiles_bulk_adds_then_removes(drv: Driver, emu: Emulator) -> None:
    segment = emu.create_segment("loyal")
    for i in range(650):
        emu.add_subscriber(f"h{i}", profile_id=f"user-{i}")
    ids = [f"user-{i}" for i in range(650)]

    added = drv(drv.client.segments.add_profiles_bulk, "loyal", ids)
    assert added.ok and [c.size for c in added.chunks] == [500, 150]
    assert members(emu, segment) == {f"h{i}" for i in range(650)}

    removed = drv(drv.client.segments.remove_profiles_bulk, "loyal", ids[:600])
    assert removed.ok
    assert members(emu, segment) == {f"h{i}" for i in range(600, 650)}


def test_bulk_rejects_bad_input_before_sending(drv: Driver, emu: Emulator) -> None:
    segment = emu.create_segment("s")
    for bad, field in [
        ("h1", "hashes"),
        ([], "hashes"),
        (["a", ""], "hashes"),
    ]:
        with pytest.raises(ValidationError) as e:
            drv(drv.client.segments.add_subscribers_bulk, segment, bad)
        assert e.value.field == field
    with pytest.raises(ValidationError) as e:
        drv(drv.client.segments.add_subscribers_bulk, 0, ["h"])
    assert e.value.field == "segment_id"
    for progress in ("yes", 5):
        with pytest.raises(ValidationError) as e:
            drv(drv.client.segments.add_subscribers_bulk, segment, ["h"], progress=progress)
        assert e.value.field == "progress"
    assert api_requests(emu) == []


def test_the_hashes_keyword_is_designs(drv: Driver, emu: Emulator) -> None:
    # DESIGN.md names the argument `hashes`; callers pass it by keyword.
    segment = emu.create_segment("s")
    hashes = [emu.add_subscriber(f"h{i}") for i in range(3)]
    result = drv(drv.client.segments.add_subscribers_bulk, segment, hashes=hashes)
    assert result.ok and members(emu, segment) == set(hashes)


class _Stop(BaseException):
    """What a Ctrl-C (or a SIGTERM handler's SystemExit) looks like when it lands in a
    progress callback: not an Exception."""


def test_ctrl_c_in_a_progress_callback_stops_a_blocking_bulk_call(
    emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    # A failing callback (an Exception) is logged and the call goes on; an interrupt raised
    # in it stops the call and reaches the caller, with the chunks not yet sent unsent.
    segment = emu.create_segment("s")
    hashes = [f"h{i}" for i in range(5000)]
    calls: list[int] = []

    def interrupted(done: int, total: int) -> None:
        calls.append(done)
        raise _Stop

    client = emu.client()
    with pytest.raises(_Stop):
        client.segments.add_subscribers_bulk(segment, hashes, concurrency=1, progress=interrupted)
    assert calls == [500]
    assert len(api_requests(emu)) < 10  # the call stopped: not all ten chunks went out

    def failing(done: int, total: int) -> None:
        raise ValueError("the progress store is down")

    with caplog.at_level(logging.WARNING, logger="pushwire"):
        result = client.segments.add_subscribers_bulk(segment, hashes, progress=failing)
    assert result.ok and len(result.chunks) == 10
    assert "progress callback failed" in caplog.text
    # The next call starts clear.
    assert client.segments.add_subscribers_bulk(segment, hashes[:10]).ok


def test_progress_true_draws_a_bar(emu: Emulator, capsys: pytest.CaptureFixture[str]) -> None:
    segment = emu.create_segment("s")
    hashes = [emu.add_subscriber(f"h{i}") for i in range(600)]
    emu.client().segments.add_subscribers_bulk(segment, hashes, progress=True)
    err = capsys.readouterr().err
    assert "600/600" in err and "add_subscribers" in err


def test_async_progress_runs_on_the_event_loop_thread(emu: Emulator) -> None:
    import asyncio
    import threading

    segment = emu.create_segment("s")
    hashes = [emu.add_subscriber(f"h{i}") for i in range(1100)]
    threads: list[int] = []
    reports: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        threads.append(threading.get_ident())
        reports.append((done, total))

    async def go() -> BulkResult:
        client = emu.async_client()
        return await client.segments.add_subscribers_bulk(segment, hashes, progress=progress)

    loop_thread = threading.get_ident()  # asyncio.run runs the loop on this thread
    result = asyncio.run(go())
    assert result.ok
    assert reports[-1] == (1100, 1100) and len(reports) == 3
    assert set(threads) == {loop_thread}
