"""Retries: reads (and idempotent writes) are retried on 5xx, 429 and connection failures;
writes that would repeat an effect (a broadcast, a drip, an event, a product update) only
when the service refused them unprocessed (429, 503 with Retry-After); a dropped
connection on such a write is never retried and says the outcome is unknown. ``timeout``
bounds the whole call, retries and waits included."""

from __future__ import annotations

import asyncio
import logging
import socket
import time

import pytest
from client_support import BROADCAST, FAST, Driver, api_requests, drip_notification, make_driver

from pushwire import APIConnectionError, APITimeoutError, AsyncClient, Client, ServerError


def with_driver(kind, emu, **kwargs):
    return make_driver(kind, emu, **kwargs)


def test_a_read_survives_two_503s(drv: Driver, emu):
    emu.inject_fault("/apiv1/drips", status=503, times=2)
    page = drv(drv.client.drips.list)
    assert page.total == 0
    assert [r["status"] for r in api_requests(emu, "/apiv1/drips")] == [503, 503, 200]


def test_a_read_gives_up_after_max_retries(kind, emu):
    drv = with_driver(kind, emu, max_retries=1)
    try:
        emu.inject_fault("/apiv1/triggers", status=503, times=5)
        with pytest.raises(ServerError) as info:
            drv(drv.client.triggers.list)
        assert info.value.status_code == 503
        assert len(api_requests(emu, "/apiv1/triggers")) == 2
    finally:
        drv.close()


@pytest.mark.parametrize("drop", ["after", "before"])
def test_a_read_is_retried_after_a_dropped_connection(drv: Driver, emu, drop):
    # Either drop closes the connection after the request was written: a read is repeated.
    emu.inject_fault("/apiv1/segments", drop=drop)
    assert drv(drv.client.segments.list) == []
    assert [r["fault"] for r in api_requests(emu, "/apiv1/segments")] == [
        f"drop {drop} processing",
        None,
    ]


def test_a_refused_connection_is_known_unsent_and_retried_even_for_a_broadcast(
    kind, caplog: pytest.LogCaptureFixture
):
    # The one failure a client knows to be unsent (nothing listens: no fault of the emulator
    # can make it, see docs/testing.md): every call is retried, and none has an unknown
    # outcome.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    cls = Client if kind == "sync" else AsyncClient
    client = cls(api_key="k", base_url=closed, max_retries=2, **FAST)
    caplog.set_level(logging.INFO, logger="pushwire")
    try:
        for method, path, call in [
            ("GET", "/apiv1/segments", lambda: client.segments.list()),
            ("POST", "/apiv1/notifications", lambda: client.notifications.create(**BROADCAST)),
        ]:
            with pytest.raises(APIConnectionError) as info:
                out = call()
                if kind == "async":
                    asyncio.run(out)
            assert info.value.outcome_unknown is False
            retries = [r for r in caplog.messages if r.startswith(f"retrying {method} {path} ")]
            assert len(retries) == 2, caplog.messages
    finally:
        if kind == "sync":
            client.close()
        else:
            asyncio.run(client.aclose())


def test_a_read_is_retried_after_429_honouring_retry_after(drv: Driver, emu):
    emu.inject_fault("/apiv1/analytics/summary", status=429, retry_after=0)
    rows = drv(drv.client.analytics.summary, "2024-01-01", "2024-01-01")
    assert len(rows) == 1
    assert len(api_requests(emu, "/apiv1/analytics/summary")) == 2


def test_idempotent_segment_writes_are_retried(drv: Driver, emu):
    seg = emu.create_segment("vip")
    h = emu.add_subscriber()
    emu.inject_fault("/apiv1/segments/addSegmentWithHash", status=500)
    drv(drv.client.segments.add_subscribers, seg, [h])
    assert len(api_requests(emu, "/apiv1/segments/addSegmentWithHash")) == 2


@pytest.mark.parametrize(
    ("drop", "stored"), [("after", 1), ("before", 0)], ids=["after-processing", "before-processing"]
)
def test_broadcast_dropped_is_not_retried(drv: Driver, emu, drop, stored):
    # Dropped after processing, it was sent once and must never be sent again; dropped before,
    # it is not retried either: the client cannot tell the two apart (either may have sent it).
    emu.inject_fault("/apiv1/notifications", drop=drop)
    with pytest.raises(APIConnectionError) as info:
        drv(drv.client.notifications.create, **BROADCAST)
    assert info.value.outcome_unknown is True
    assert len(emu.notifications()) == stored
    assert len(api_requests(emu, "/apiv1/notifications")) == 1


def test_broadcast_facing_503_with_retry_after_is_retried_once_sent(drv: Driver, emu):
    emu.inject_fault("/apiv1/notifications", status=503, retry_after=0)
    nid = drv(drv.client.notifications.create, **BROADCAST)
    (n,) = emu.notifications()
    assert n["notification_id"] == nid
    assert [r["status"] for r in api_requests(emu, "/apiv1/notifications")] == [503, 200]


def test_broadcast_facing_429_is_retried(drv: Driver, emu):
    emu.inject_fault("/apiv1/notifications", status=429, retry_after=0)
    drv(drv.client.notifications.create, **BROADCAST)
    assert len(emu.notifications()) == 1
    assert len(api_requests(emu, "/apiv1/notifications")) == 2


@pytest.mark.parametrize("status", [500, 502, 503])
def test_broadcast_facing_a_plain_5xx_is_not_retried(drv: Driver, emu, status):
    emu.inject_fault("/apiv1/notifications", status=status)
    with pytest.raises(ServerError) as info:
        drv(drv.client.notifications.create, **BROADCAST)
    assert info.value.status_code == status
    assert len(api_requests(emu, "/apiv1/notifications")) == 1
    assert emu.notifications() == []


@pytest.mark.parametrize("what", ["drip", "event", "products"])
def test_other_unsafe_writes_are_never_repeated(drv: Driver, emu, what):
    path, fn, args, kwargs, count = {
        "drip": (
            "/apiv1/drips",
            drv.client.drips.create,
            ("W", [drip_notification()]),
            {},
            lambda: drv(drv.client.drips.list).total,
        ),
        "event": (
            "/api/v1/events",
            drv.client.events.track,
            ("signup",),
            {"profile_id": "p"},
            lambda: len(emu.events()),
        ),
        "products": (
            "/apiv1/products",
            drv.client.products.update,
            ([{"product_id": "a", "price": 1}],),
            {},
            lambda: len(emu.products()),
        ),
    }[what]
    emu.inject_fault(path, drop="after", method="POST")
    with pytest.raises(APIConnectionError) as info:
        drv(fn, *args, **kwargs)
    assert info.value.outcome_unknown is True
    assert count() == 1
    emu.inject_fault(path, status=500, method="POST")
    with pytest.raises(ServerError):
        drv(fn, *args, **kwargs)
    posts = [r for r in api_requests(emu, path) if r["method"] == "POST"]
    assert len(posts) == 2  # one per call: neither was repeated


def test_timeout_bounds_the_whole_call_including_retries(kind, emu):
    drv = with_driver(kind, emu, timeout=0.8, max_retries=10)
    try:
        emu.inject_fault("/apiv1/drips", status=503, delay=0.3, times=20)
        started = time.monotonic()
        with pytest.raises((APITimeoutError, ServerError)):
            drv(drv.client.drips.list)
        elapsed = time.monotonic() - started
        assert elapsed < 0.8 + 0.25, elapsed
        assert 2 <= len(api_requests(emu, "/apiv1/drips")) <= 3
    finally:
        drv.close()


def test_a_retry_after_beyond_the_timeout_is_not_waited_for(kind, emu):
    drv = with_driver(kind, emu, timeout=1.0)
    try:
        emu.inject_fault("/apiv1/segments", status=503, retry_after=30)
        started = time.monotonic()
        with pytest.raises(ServerError) as info:
            drv(drv.client.segments.list)
        assert time.monotonic() - started < 0.5
        assert info.value.status_code == 503
        assert len(api_requests(emu, "/apiv1/segments")) == 1
    finally:
        drv.close()


def test_backoff_waits_between_attempts(kind, emu):
    # backoff_base=0.1: waits of 0.05-0.1 s then 0.1-0.2 s (jittered), within the timeout
    drv = with_driver(kind, emu, backoff_base=0.1, timeout=5.0)
    try:
        emu.inject_fault("/apiv1/drips", status=500, times=2)
        started = time.monotonic()
        drv(drv.client.drips.list)
        elapsed = time.monotonic() - started
        assert 0.15 <= elapsed < 1.0, elapsed
        assert len(api_requests(emu, "/apiv1/drips")) == 3
    finally:
        drv.close()
