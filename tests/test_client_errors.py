"""Each error class of ``pushwire.errors`` raised for its case, through both clients, over
real HTTP against the emulator (failures injected with ``emu.inject_fault``)."""

from __future__ import annotations

import datetime as dt
import logging
import socket
import time

import pytest
from client_support import BROADCAST, FAST, Driver, api_requests, make_driver

import pushwire
from pushwire import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AsyncClient,
    AuthenticationError,
    BadRequestError,
    Client,
    NotFoundError,
    PushwireError,
    RateLimitError,
    ServerError,
    ValidationError,
)


def raises(drv: Driver, cls: type, fn, *args, **kwargs):
    """Calls ``fn`` through the driver; the exception, which must be exactly ``cls``."""
    with pytest.raises(cls) as info:
        drv(fn, *args, **kwargs)
    err = info.value
    assert type(err) is cls, f"{type(err).__name__} raised, {cls.__name__} expected: {err}"
    assert isinstance(err, PushwireError)
    return err


def test_wrong_key_is_an_authentication_error(kind, emu):
    drv = make_driver(kind, emu, api_key="not-the-key")
    try:
        err = raises(drv, AuthenticationError, drv.client.drips.list)
        assert err.status_code == 401 and err.message == "API KEY Invalid"
        assert err.body == {"success": False, "message": "API KEY Invalid"}
        assert isinstance(err, APIError)
        # the events interface has its own shape: error.code 401000 for a wrong key
        err = raises(drv, AuthenticationError, drv.client.events.track, "e", profile_id="p")
        assert err.status_code == 401 and err.code == 401000
    finally:
        drv.close()


def test_unknown_segment_is_a_bad_request_with_the_service_message(drv: Driver, emu):
    err = raises(drv, BadRequestError, drv.client.segments.delete, 4242)
    assert err.status_code == 400
    assert err.message == "Your enter segment id does not exist"
    assert err.body == {"success": False, "message": "Your enter segment id does not exist"}
    assert "Your enter segment id does not exist" in str(err)


def test_unknown_profile_id_on_a_broadcast_is_a_bad_request(drv: Driver, emu):
    emu.add_subscriber(profile_id="someone")
    err = raises(
        drv, BadRequestError, drv.client.notifications.create, **BROADCAST, profile_id=["nobody"]
    )
    assert err.message == "No Subcribers Found for the given profile_id"
    assert err.body["success"] is False
    assert emu.notifications() == []


def test_unknown_campaign_is_a_bad_request_in_the_campaign_shape(drv: Driver, emu):
    err = raises(drv, BadRequestError, drv.client.drips.get, 999)
    assert err.status_code == 400
    assert err.body["error"]["name"] == "InvalidRequestException"
    assert err.message == err.body["error"]["message"] and err.message


def test_events_bad_request_carries_code_1003(drv: Driver, emu):
    # The client checks an event exactly as the events interface does (one shared set of
    # rules), so no real event reaches the service invalid: the 400 is injected here.
    emu.inject_fault("/api/v1/events", status=400)
    err = raises(drv, BadRequestError, drv.client.events.track, "e", profile_id="p")
    assert err.status_code == 400 and err.code == 1003
    assert isinstance(err.details, list)
    assert err.body["error"]["code"] == 1003


def test_events_server_error_carries_code_1001(drv: Driver, emu):
    emu.inject_fault("/api/v1/events", status=500)
    err = raises(drv, ServerError, drv.client.events.track, "e", profile_id="p")
    assert err.status_code == 500 and err.code == 1001
    assert len(api_requests(emu, "/api/v1/events")) == 1  # an event is never retried on 500


def test_404_is_not_found(drv: Driver, emu):
    emu.inject_fault("/apiv1/drips", status=404)
    err = raises(drv, NotFoundError, drv.client.drips.list)
    assert err.status_code == 404 and err.message


def test_429_is_a_rate_limit_error_with_retry_after(kind, emu):
    drv = make_driver(kind, emu, max_retries=0)
    try:
        emu.inject_fault("/apiv1/notifications", status=429, retry_after=7)
        err = raises(drv, RateLimitError, drv.client.notifications.create, **BROADCAST)
        assert err.status_code == 429 and err.retry_after == 7
        assert len(api_requests(emu, "/apiv1/notifications")) == 1
        assert emu.notifications() == []
    finally:
        drv.close()


@pytest.mark.parametrize("status", [500, 502, 504])
def test_a_write_answered_by_a_server_failure_has_an_unknown_outcome(kind, emu, status):
    # The service (or the one behind a gateway) may have sent the broadcast before failing:
    # the error must say so, as a dropped connection's does.
    drv = make_driver(kind, emu, max_retries=0)
    try:
        emu.add_subscriber()
        emu.inject_fault("/apiv1/notifications", status=status)
        err = raises(drv, ServerError, drv.client.notifications.create, **BROADCAST)
        assert err.status_code == status and err.outcome_unknown is True
        emu.inject_fault("/apiv1/segments", status=status)
        err = raises(drv, ServerError, drv.client.segments.list)
        assert err.outcome_unknown is False  # a read did nothing
        emu.inject_fault("/apiv1/notifications", status=503)
        err = raises(drv, ServerError, drv.client.notifications.create, **BROADCAST)
        assert err.outcome_unknown is False  # unavailable: refused unprocessed
        emu.inject_fault("/apiv1/notifications", status=400)
        err = raises(drv, BadRequestError, drv.client.notifications.create, **BROADCAST)
        assert err.outcome_unknown is False
    finally:
        drv.close()


def test_500_is_a_server_error(kind, emu):
    drv = make_driver(kind, emu, max_retries=0)
    try:
        emu.inject_fault("/apiv1/segments", status=500)
        err = raises(drv, ServerError, drv.client.segments.list)
        assert err.status_code == 500 and err.message
        emu.inject_fault("/apiv1/segments", status=502)
        assert raises(drv, ServerError, drv.client.segments.list).status_code == 502
    finally:
        drv.close()


def test_http_200_with_success_false_is_an_api_error(drv: Driver, emu):
    # An injected status 200 answers `{"success": false, "message": "Injected fault"}`.
    emu.inject_fault("/apiv1/segments", status=200)
    err = raises(drv, APIError, drv.client.segments.list)
    assert err.status_code == 200 and err.message == "Injected fault"
    assert err.body == {"success": False, "message": "Injected fault"}
    assert len(api_requests(emu)) == 1


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_closed_port_is_a_connection_error(cls):
    import asyncio

    url = f"http://127.0.0.1:{free_port()}"
    client = cls(api_key="k", base_url=url, events_url=url, max_retries=1, **FAST)
    started = time.monotonic()
    for call in (lambda: client.drips.list(), lambda: client.notifications.create(**BROADCAST)):
        with pytest.raises(APIConnectionError) as info:
            out = call()
            if cls is AsyncClient:
                asyncio.run(out)
        err = info.value
        assert type(err) is APIConnectionError and isinstance(err, PushwireError)
        assert err.outcome_unknown is False  # the connection was refused: nothing was sent
    assert time.monotonic() - started < 3


def test_slow_answer_is_a_timeout_error(kind, emu):
    drv = make_driver(kind, emu, timeout=0.3, max_retries=0)
    try:
        emu.inject_fault("/apiv1/drips", delay=3)
        started = time.monotonic()
        err = raises(drv, APITimeoutError, drv.client.drips.list)
        elapsed = time.monotonic() - started
        assert 0.25 <= elapsed < 1.0, elapsed
        assert isinstance(err, APIConnectionError)
        assert err.outcome_unknown is False  # a read
        emu.inject_fault("/apiv1/notifications", delay=3)
        err = raises(drv, APITimeoutError, drv.client.notifications.create, **BROADCAST)
        assert err.outcome_unknown is True  # the broadcast may have been sent
        assert len(api_requests(emu, "/apiv1/notifications")) == 1
    finally:
        drv.close()


def test_closed_client_refuses_calls(kind, emu):
    drv = make_driver(kind, emu)
    drv.close()
    with pytest.raises(PushwireError):
        fn = drv.client.drips.list
        if kind == "sync":
            fn()
        else:
            import asyncio

            asyncio.run(fn())
    assert emu.requests() == []


def test_events_http_200_with_an_error_object_is_an_api_error(drv: Driver, emu):
    # An injected status 200 on the events interface answers `{"error": {message, code}}`.
    emu.inject_fault("/api/v1/events", status=200)
    err = raises(drv, APIError, drv.client.events.track, "e", profile_id="p")
    assert err.status_code == 200 and err.code == 1003
    assert err.message == "Injected fault"


@pytest.mark.parametrize(
    "body",
    [{"success": True}, {"success": True, "data": None}, {"success": True, "data": []}],
)
def test_a_read_answered_without_its_data_is_an_error_not_an_empty_result(drv: Driver, emu, body):
    # A blank TriggeredCampaign or Drip (id 0, no name) would pass for a real one.
    trigger_id = emu.create_trigger(campaign_name="Cart", rules={"start_event_name": "cart"})
    emu.inject_fault(f"/apiv1/triggers/{trigger_id}", status=200, body=body)
    err = raises(drv, APIError, drv.client.triggers.get, trigger_id)
    assert err.status_code == 200 and "unexpected shape" in err.message
    assert err.body == body
    emu.inject_fault("/apiv1/drips/1", status=200, body=body)
    err = raises(drv, APIError, drv.client.drips.get, 1)
    assert "unexpected shape" in err.message and "data" in err.message
    # the real answer still decodes
    assert drv(drv.client.triggers.get, trigger_id).campaign_name == "Cart"


@pytest.mark.parametrize("body", [{"success": True}, {"success": True, "data": None}])
def test_a_list_answered_without_its_list_is_an_error_not_an_empty_list(drv: Driver, emu, body):
    # A gateway's 200 with some other body must not read as "no campaigns" or "no segments".
    # (the segment list's list is `segments`: neither body has it)
    emu.create_segment("vip")
    reads = [
        ("/apiv1/triggers", drv.client.triggers.list, ()),
        ("/apiv1/drips", drv.client.drips.list, ()),
        ("/apiv1/segments", drv.client.segments.list, ()),
        ("/apiv1/analytics/summary", drv.client.analytics.summary, ("2026-01-01", "2026-01-02")),
        ("/apiv1/subscribers/analytics/summary", drv.client.analytics.subscribers, ()),
    ]
    for path, read, args in reads:
        emu.inject_fault(path, status=200, body=body)
        err = raises(drv, APIError, read, *args)
        assert err.status_code == 200 and "unexpected shape" in err.message, path
    # the real answers still decode, empty lists included
    assert [s.segment_name for s in drv(drv.client.segments.list)] == ["vip"]
    assert drv(drv.client.triggers.list).data == []


def test_an_item_missing_its_id_reads_as_0_rather_than_failing_the_list(drv: Driver, emu):
    # As every other field a response leaves out: one short item does not cost the rest.
    answer = {
        "success": True,
        "data": [{"trigger_id": 7, "campaign_name": "A"}, {"campaign_name": "B"}],
        "meta": {"total": 2},
    }
    emu.inject_fault("/apiv1/triggers", status=200, body=answer)
    page = drv(drv.client.triggers.list)
    assert [(c.trigger_id, c.campaign_name) for c in page.data] == [(7, "A"), (0, "B")]
    emu.inject_fault(
        "/apiv1/segments", status=200, body={"success": True, "segments": [{"segment_name": "x"}]}
    )
    assert [(s.segment_id, s.segment_name) for s in drv(drv.client.segments.list)] == [("", "x")]


def test_campaign_reads_take_either_utm_shape_and_nulls_as_empty(drv: Driver, emu):
    # Spec 2.5 shows two shapes of utm_params; a null list or object reads as an absent one,
    # rather than failing the read (a whole page of a list, for one campaign).
    trigger = {
        "trigger_id": 3,
        "campaign_name": "Cart",
        "analytics": None,
        "utm_params": {"enabled": True, "source": "newsletter", "medium": "push", "campaign": "bf"},
        "notifications": [{"title": "t", "actions": None, "analytics": {"result": None}}],
    }
    emu.inject_fault("/apiv1/triggers/3", status=200, body={"success": True, "data": trigger})
    got = drv(drv.client.triggers.get, 3)
    assert (got.utm_params.utm_source, got.utm_params.utm_medium) == ("newsletter", "push")
    assert got.utm_params.utm_campaign == "bf" and got.analytics.views == 0
    assert got.notifications[0].actions == [] and got.notifications[0].analytics.result == []
    drip = {"drip_id": 4, "utm_params": {"enabled": False, "source": "x"}, "options": None}
    emu.inject_fault("/apiv1/drips/4", status=200, body={"success": True, "data": drip})
    got = drv(drv.client.drips.get, 4)
    assert got.drip_id == 4 and got.utm_params is None
    drips = [{"drip_id": 6, "audience": None}, {"drip_id": 7, "audience": {"filter": None}}]
    emu.inject_fault("/apiv1/drips", status=200, body={"success": True, "data": drips})
    assert [d.audience.filter.value for d in drv(drv.client.drips.list).data] == [[], []]
    # the long key given as null falls back to the short one; "false" turns tracking off
    drip = {"drip_id": 8, "utm_params": {"utm_source": None, "source": "s", "enabled": "true"}}
    emu.inject_fault("/apiv1/drips/8", status=200, body={"success": True, "data": drip})
    assert drv(drv.client.drips.get, 8).utm_params.utm_source == "s"
    drip = {"drip_id": 9, "utm_params": {"enabled": "false", "source": "s"}}
    emu.inject_fault("/apiv1/drips/9", status=200, body={"success": True, "data": drip})
    assert drv(drv.client.drips.get, 9).utm_params is None
    page = {"success": True, "data": [trigger, {**trigger, "trigger_id": 5, "rules": None}]}
    emu.inject_fault("/apiv1/triggers", status=200, body=page)
    assert [c.trigger_id for c in drv(drv.client.triggers.list).data] == [3, 5]


@pytest.mark.parametrize(
    ("value", "read"),
    [(10, 10.0), ("12.5", 12.5), ({"$numberDecimal": "12.5"}, 12.5), (None, 0.0)],
)
def test_a_price_drop_threshold_reads_as_the_number_whatever_its_wrapping(
    drv: Driver, emu, value, read
):
    # Spec 2.4 lists the value as an Object though it is a Number: a database decimal
    # serialized as {"$numberDecimal": ...} must not fail a whole page of campaigns.
    campaign = {"price_drop_threshold": {"type": "percentage", "value": value}}
    trigger = {"trigger_id": 3, "campaign_type": "price_drop", "options": {"campaign": campaign}}
    emu.inject_fault("/apiv1/triggers", status=200, body={"success": True, "data": [trigger]})
    [got] = drv(drv.client.triggers.list).data
    threshold = got.options.campaign.price_drop_threshold
    assert (threshold.type, threshold.value) == ("percentage", read)


def test_a_create_answered_without_a_usable_id_returns_0_and_warns(drv: Driver, emu, caplog):
    # The broadcast was accepted: raising would invite a retry, and a retry a second send.
    emu.add_subscriber()
    for answer in ({"success": True}, {"success": True, "notification_id": "abc"}):
        emu.inject_fault("/apiv1/notifications", status=200, body=answer)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="pushwire"):
            assert drv(drv.client.notifications.create, **BROADCAST) == 0
        warnings = [r.getMessage() for r in caplog.records if r.name.startswith("pushwire")]
        assert any("notification_id" in w and "returning 0" in w for w in warnings), warnings
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pushwire"):
        real = drv(drv.client.notifications.create, **BROADCAST)
    assert real > 0
    assert not [r for r in caplog.records if "returning 0" in r.getMessage()]


def test_a_refusal_without_a_message_is_still_a_refusal(drv: Driver, emu):
    emu.inject_fault("/apiv1/triggers/1", status=200, body={"success": False})
    err = raises(drv, APIError, drv.client.triggers.get, 1)
    assert err.message == "the service answered success: false, without a message"
    assert err.body == {"success": False}


def test_a_created_id_sent_as_a_whole_float_is_read(drv: Driver, emu, caplog):
    emu.add_subscriber()
    emu.inject_fault(
        "/apiv1/notifications", status=200, body={"success": True, "notification_id": 12.0}
    )
    with caplog.at_level(logging.WARNING, logger="pushwire"):
        assert drv(drv.client.notifications.create, **BROADCAST) == 12
    assert not [r for r in caplog.records if "returning 0" in r.getMessage()]


def test_subscriber_counts_sent_as_text_read_as_integers(drv: Driver, emu):
    counts = {"US": "3", "DE": 2.0, "FR": 1, "IT": "3.0", "ES": "1e3", "PT": "n/a"}
    body = {"success": True, "data": {"country": counts}}
    emu.inject_fault("/apiv1/subscribers/analytics/summary", status=200, body=body)
    assert drv(drv.client.analytics.subscribers) == {
        "country": {"US": 3, "DE": 2, "FR": 1, "IT": 3, "ES": 1000, "PT": "n/a"}
    }


def test_error_code_is_the_events_interfaces_code_only(drv: Driver, emu):
    # A gateway's JSON page on the main interface may carry its own error_code.
    page = {"error_code": 1020, "message": "Access denied"}
    emu.inject_fault("/apiv1/segments", status=403, body=page)
    err = raises(drv, pushwire.PermissionDeniedError, drv.client.segments.list)
    assert err.code is None and err.message == "Access denied"
    emu.inject_fault("/api/v1/events", status=200, body={"error_code": "7"})
    err = raises(drv, APIError, drv.client.events.track, "e", profile_id="p")
    assert err.code == 7


def test_summary_rows_keep_columns_the_service_adds(drv: Driver, emu):
    # A notebook's DataFrame shows a new column rather than silently losing it.
    row = {"date": "2026-01-02", "subscriber_count": "5", "push_opt_in_rate": 0.42}
    midnight = {"date": "2026-01-03 00:00:00", "subscriber_count": 1}
    body = {"success": True, "data": [row, midnight]}
    emu.inject_fault("/apiv1/analytics/summary", status=200, body=body)
    got, other = drv(drv.client.analytics.summary, "2026-01-01", "2026-01-03")
    assert got["subscriber_count"] == 5 and got["push_opt_in_rate"] == 0.42
    # one type for the whole column, also when the service adds a midnight time
    assert (got["date"], other["date"]) == (dt.date(2026, 1, 2), dt.date(2026, 1, 3))


def test_tracking_without_an_events_url_names_the_setting(emu, monkeypatch):
    # Raised once, before anything is sent, not as each event's outcome.
    monkeypatch.delenv("PUSHWIRE_EVENTS_URL", raising=False)
    client = Client(api_key=emu.api_key, base_url=emu.base_url)
    for call in (
        lambda: client.events.track("e", profile_id="p"),
        lambda: client.events.track_many([{"event_name": "e", "profile_id": "p"}] * 3),
    ):
        with pytest.raises(ValidationError) as info:
            call()
        assert info.value.field == "events_url"
    assert api_requests(emu) == []


@pytest.mark.parametrize(
    ("status", "name"),
    [
        (400, "BadRequestError"),
        (401, "AuthenticationError"),
        (403, "PermissionDeniedError"),
        (404, "NotFoundError"),
        (409, "ConflictError"),
        (422, "UnprocessableEntityError"),
        (418, "APIError"),
        (503, "ServerError"),
    ],
)
def test_each_status_has_its_class(kind, emu, status, name):
    # The class is chosen in pushwire.errors from the status the core reports; each is an
    # APIError carrying the answer.
    drv = make_driver(kind, emu, max_retries=0)
    try:
        emu.inject_fault("/apiv1/segments", status=status)
        cls = getattr(pushwire, name)
        err = raises(drv, cls, drv.client.segments.list)
        assert type(err) is cls and isinstance(err, APIError)
        assert err.status_code == status and not err.outcome_unknown
    finally:
        drv.close()
