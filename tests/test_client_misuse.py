"""Misuse that must not turn into something the caller did not mean: a typo in a dict that
would empty an audience, a scheduled broadcast sent at once, a UTM key dropped, a date
shifted by a time zone, an error that cannot cross a process boundary. Each through both
clients where a call is involved, over real HTTP against the emulator."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import pickle
import subprocess
import sys
import textwrap

import numpy
import pandas
import pytest
from client_support import (
    BROADCAST,
    FAST,
    Driver,
    api_requests,
    drip_notification,
    make_driver,
    mypy_errors,
)
from conftest import run_pytest

import pushwire
from pushwire import (
    Action,
    APIError,
    AsyncClient,
    Client,
    Drip,
    DripNotification,
    NewDrip,
    NewDripNotification,
    Product,
    RateLimitError,
    ScheduleOptions,
    Segment,
    SendTo,
    ServerError,
    UtmParams,
    ValidationError,
)

# -- from_dict of the models a call takes ----------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "data", "field"),
    [
        (SendTo, {"include_segment": ["12"]}, "include_segment"),
        (Action, {"label": "Shop", "url": "https://shop.example/", "lable": "x"}, "lable"),
        (UtmParams, {"utm_source": "a", "utm_medium": "b", "utm_campaign": "c", "x": 1}, "x"),
        (Product, {"product_id": "a", "price": 1, "avalability": "inStock"}, "avalability"),
        (NewDrip, {"campaign_name": "W", "notification": [{"title": "x"}]}, "notification"),
    ],
)
def test_from_dict_of_an_input_model_refuses_a_key_it_does_not_have(cls, data, field):
    with pytest.raises(ValidationError) as info:
        cls.from_dict(data)
    assert info.value.field == field
    assert field in str(info.value)


def test_a_drip_audience_from_a_dict_targets_only_what_it_names(drv: Driver, emu):
    vip = emu.create_segment("vip")
    # The typo is refused instead of making an empty audience (everyone) ...
    with pytest.raises(ValidationError):
        SendTo.from_dict({"include_segment": [vip]})
    # ... and the right key reaches the service.
    send_to = SendTo.from_dict({"include_segments": [vip]})
    drip_id = drv(drv.client.drips.create, "W", [drip_notification()], send_to=send_to)
    rules = [
        (r.field, r.op, [str(v) for v in r.value])
        for group in drv(drv.client.drips.get, drip_id).audience.filter.value
        for r in group
    ]
    assert rules == [("segments", "in", [str(vip)])]


@pytest.mark.parametrize(
    ("cls", "required"),
    [(Segment, {"segment_id": "1"}), (DripNotification, {}), (Drip, {"drip_id": 1})],
)
def test_a_keyword_typo_is_refused_where_extra_would_keep_it(cls, required):
    with pytest.raises(ValidationError) as info:
        cls(**required, campaign_nmae="x", segmant_name="y", titel="z")
    assert info.value.field in {"campaign_nmae", "segmant_name", "titel"}
    # what the spec does not list goes in as extra=
    made = cls(**required, extra={"reach": 40})
    assert made.extra == {"reach": 40} and made.to_dict()["reach"] == 40
    assert cls.from_dict(made.to_dict()) == made
    # ... and never sets a field, nor is dropped for one
    field = next(iter(required), "title")
    for bad in [{"extra": {field: "x"}}, {field: required.get(field, "t"), "extra": {field: "y"}}]:
        with pytest.raises(ValidationError) as info:
            cls(**{**required, **bad})
        assert info.value.field == f"extra.{field}"


def test_input_models_refuse_values_they_would_change():
    for build, field in [
        (lambda: NewDripNotification(expiry=86400.9), "expiry"),
        (lambda: NewDripNotification(require_interaction=True), "require_interaction"),
        (lambda: ScheduleOptions(type="after", value=1.5, unit="days"), "value"),
        (lambda: Action.from_dict(["Shop", "https://shop.example/"]), "Action"),
        (lambda: SendTo(include_segments=[]), "include_segments"),
        (lambda: SendTo.from_dict({"include_countries": []}), "include_countries"),
        (lambda: NewDrip(send_to={"include_segments": []}), "send_to.include_segments"),
        (lambda: NewDripNotification(expiry="86400.9"), "expiry"),
        (lambda: NewDripNotification(expiry=2**63), "expiry"),
        (lambda: Action(label=2**64 - 1, url="https://shop.example/"), "label"),
        (lambda: Product.from_dict("sku-1"), "Product"),
        (lambda: NewDripNotification(expiry=decimal.Decimal("1e30")), "expiry"),
        (lambda: NewDripNotification(expiry=1e30), "expiry"),
        # refused at once, never built as a million-digit integer
        (lambda: Product(product_id="a", price=decimal.Decimal("1e1000000")), "price"),
        # a number or None where text goes, as a dict of the same is refused
        (lambda: NewDripNotification(title=5), "title"),
        (lambda: NewDripNotification(title=5.5), "title"),
        (lambda: Action(label=5, url="https://shop.example/"), "label"),
        (lambda: Action(label=None, url="https://shop.example/"), "label"),
        (lambda: UtmParams(utm_source=5, utm_medium="m", utm_campaign="c"), "utm_source"),
        (lambda: ScheduleOptions(type=5), "type"),
    ]:
        with pytest.raises(ValidationError) as info:
            build()
        assert info.value.field == field, str(info.value)
    # an id past 64 bits is kept as its exact digits, as the answers' segment ids are
    assert Segment(segment_id=2**64 - 1).segment_id == "18446744073709551615"
    # whole floats, blank strings from a copied form and empty exclusions are fine
    assert NewDripNotification(expiry=3600.0).expiry == 3600
    assert ScheduleOptions.from_dict({"type": "rightaway", "value": "", "at": ""}).value is None
    assert SendTo(exclude_segments=[]) == SendTo()
    # ids may come as numbers, and optional text as None
    assert SendTo(include_segments=[12]).include_segments == ["12"]
    assert Action(label="Go", url="https://shop.example/", image_url=None).image_url is None


def test_from_dict_of_a_result_keeps_fields_the_service_adds():
    seg = Segment.from_dict({"segment_id": 3, "segment_name": "vip", "subscriber_count": 40})
    assert seg.segment_id == "3" and seg.extra == {"subscriber_count": 40}
    assert pickle.loads(pickle.dumps(seg)) == seg


def test_segments_and_drip_notifications_keep_fields_the_service_adds(drv: Driver, emu):
    emu.inject_fault(
        "/apiv1/segments",
        status=200,
        body={
            "success": True,
            "segments": [{"segment_id": "5", "segment_name": "vip", "subscriber_count": 40}],
            "count": 1,
        },
    )
    (seg,) = drv(drv.client.segments.list)
    assert seg.segment_id == "5" and seg.extra == {"subscriber_count": 40}
    assert seg.to_dict()["subscriber_count"] == 40
    # any JSON integer the service sends survives a pickle (a Celery result, a cache)
    emu.inject_fault(
        "/apiv1/segments",
        status=200,
        body={"success": True, "segments": [{"segment_id": "6", "reach": 2**64 - 1}]},
    )
    (big,) = drv(drv.client.segments.list)
    assert pickle.loads(pickle.dumps(big)) == big and big.extra == {"reach": 2**64 - 1}

    drip_id = drv(drv.client.drips.create, "W", [drip_notification()])
    answer = drv(drv.client.drips.get, drip_id).to_dict()
    answer["notifications"][0]["delivered_count"] = 7
    answer["drip_id"] = drip_id
    emu.inject_fault(f"/apiv1/drips/{drip_id}", status=200, body={"success": True, "data": answer})
    (n,) = drv(drv.client.drips.get, drip_id).notifications
    assert n.extra == {"delivered_count": 7}
    assert n.title == drip_notification()["title"]


# -- a scheduled broadcast is never sent at once ---------------------------------------------


def test_valid_from_utc_alone_schedules_the_broadcast(drv: Driver, emu):
    emu.add_subscriber()
    nid = drv(
        drv.client.notifications.create,
        **BROADCAST,
        valid_from_utc=dt.datetime(2031, 5, 4, 13, 0, 0),
    )
    (n,) = emu.notifications()
    assert n["notification_id"] == nid and n["status"] == "scheduled"
    assert n["request"]["notification_type"] == "later"
    assert n["request"]["valid_from_utc"] == "2031-05-04 13:00:00"
    # without a time, the default is still an immediate broadcast; a blank form field is
    # no time when the type says so, and refused when it does not
    drv(drv.client.notifications.create, **BROADCAST)
    with pytest.raises(ValidationError) as info:
        drv(drv.client.notifications.create, **BROADCAST, valid_from_utc=" ")
    assert info.value.field == "valid_from_utc"
    drv(drv.client.notifications.create, **BROADCAST, type="now", valid_from_utc=" ")
    assert [n["status"] for n in emu.notifications()] == ["scheduled", "sent", "sent"]
    assert "valid_from_utc" not in api_requests(emu, "/apiv1/notifications")[-1]["body"]


# -- ids, dates, UTM parameters, events ------------------------------------------------------


def test_ids_may_be_strings_of_digits(drv: Driver, emu):
    drip_id = drv(drv.client.drips.create, "W", [drip_notification()])
    trigger_id = emu.create_trigger(campaign_name="Cart", rules={"start_event_name": "cart"})
    assert drv(drv.client.drips.get, str(drip_id)) == drv(drv.client.drips.get, drip_id)
    assert drv(drv.client.triggers.get, str(trigger_id)).trigger_id == trigger_id
    for bad in ("+1", "7a", ""):
        with pytest.raises(ValidationError) as info:
            drv(drv.client.drips.get, bad)
        assert info.value.field == "drip_id"


def test_an_aware_datetime_is_the_utc_day_of_the_analytics_range(drv: Driver, emu):
    drip_id = drv(drv.client.drips.create, "W", [drip_notification()])
    paris_winter = dt.timezone(dt.timedelta(hours=1))
    tokyo = dt.timezone(dt.timedelta(hours=9))
    drv(
        drv.client.drips.get,
        drip_id,
        # 00:30 on the 2nd in Paris is 23:30 on the 1st in UTC
        analytics_start_at=dt.datetime(2026, 3, 2, 0, 30, tzinfo=paris_winter),
        # 08:00 on the 10th in Tokyo is 23:00 on the 9th in UTC
        analytics_end_at=dt.datetime(2026, 3, 10, 8, 0, tzinfo=tokyo),
    )
    (req,) = api_requests(emu, f"/apiv1/drips/{drip_id}")
    assert "analytics_start_at=2026-03-01" in req["query"]
    assert "analytics_end_at=2026-03-09" in req["query"]
    # a naive datetime is taken as it is
    drv(drv.client.drips.get, drip_id, analytics_start_at=dt.datetime(2026, 3, 2, 0, 30))
    assert (
        "analytics_start_at=2026-03-02" in api_requests(emu, f"/apiv1/drips/{drip_id}")[1]["query"]
    )


def test_utm_parameters_are_sent_as_written(drv: Driver, emu):
    utm = {"source": "push", "medium": "web", "campaign": "spring", "content": "banner"}
    drip_id = drv(drv.client.drips.create, "W", [drip_notification()], utm_params=utm)
    assert drv(drv.client.drips.get, drip_id).utm_params == UtmParams(
        utm_source="push", utm_medium="web", utm_campaign="spring", utm_content="banner"
    )
    emu.clear_requests()
    disabled = {**utm, "enabled": False}
    assert (
        drv(
            drv.client.drips.get,
            drv(drv.client.drips.create, "W", [drip_notification()], utm_params=disabled),
        ).utm_params
        is None
    )
    emu.clear_requests()
    for bad, field in [
        ({**utm, "trem": "x"}, "utm_params.trem"),
        ({**utm, "utm_source": "other"}, "utm_params.source"),
        ({**utm, "campaign": 2026}, "utm_params.campaign"),
        ({**utm, "enabled": "yes"}, "utm_params.enabled"),
    ]:
        with pytest.raises(ValidationError) as info:
            drv(drv.client.drips.create, "W", [drip_notification()], utm_params=bad)
        assert info.value.field == field, str(info.value)
    assert emu.requests() == []


def test_numpy_scalars_are_sent_as_their_json_values(drv: Driver, emu):
    data = {
        "vip": numpy.bool_(True),
        "visits": numpy.int64(3),
        "spent": numpy.float64(9.5),
        "ratio": numpy.float32(0.5),
    }
    drv(drv.client.events.track, "checkout", profile_id="alice", data=data)
    (event,) = emu.events()
    assert event["data"] == {"vip": True, "visits": 3, "spent": 9.5, "ratio": 0.5}
    assert type(event["data"]["vip"]) is bool


def test_dataframe_values_are_sent_as_a_notebook_means_them(drv: Driver, emu):
    # Rows built from a DataFrame: int64 ids, NaN/NaT/pd.NA for missing cells (in the event
    # and in its data), numpy datetimes. Sent as the service reads them, none as "NaT".
    frame = pandas.DataFrame(
        {
            "profile_id": [1, 2],
            "ts": pandas.to_datetime(["2031-03-02", None]),
            "price": [1.5, numpy.nan],
        }
    )
    events = [
        {
            "event_name": "viewed",
            "profile_id": row.profile_id,
            "device_token_hash": pandas.NA,
            "data": {"ts": row.ts, "price": row.price, "at": numpy.datetime64("2031-03-02T10:00")},
        }
        for row in frame.itertuples()
    ]
    assert drv(drv.client.events.track_many, events) == [None, None]
    drv(drv.client.events.track, "bought", profile_id=numpy.int64(3), data={"n": pandas.NaT})
    sent = sorted((e["profile_id"], e["data"]) for e in emu.events())  # sent concurrently
    assert sent == [
        ("1", {"ts": "2031-03-02T00:00:00", "price": 1.5, "at": "2031-03-02T10:00"}),
        ("2", {"at": "2031-03-02T10:00"}),
        ("3", {}),
    ]
    with pytest.raises(ValidationError) as info:
        drv(drv.client.events.track, "e", profile_id="p", data={"d": numpy.timedelta64(5, "s")})
    assert info.value.field == "data.d" and "timedelta64" in str(info.value)
    segment = emu.create_segment("s")
    with pytest.raises(ValidationError) as info:
        drv(drv.client.segments.add_subscribers_bulk, segment, frame)
    assert info.value.field == "hashes" and "df['column']" in str(info.value)
    with pytest.raises(ValidationError) as info:
        drv(drv.client.segments.add_subscribers_bulk, segment, pandas.Series(["a", numpy.nan]))
    assert "hashes[1] is missing" in str(info.value)
    assert api_requests(emu, "/apiv1/segments/addSegmentWithHash") == []


def test_track_reads_a_missing_cell_as_an_absent_id(drv: Driver, emu):
    # for row in df.itertuples(): track(row.event, profile_id=row.pid, device_token_hash=row.h)
    drv(drv.client.events.track, "viewed", profile_id="p1", device_token_hash=float("nan"))
    drv(drv.client.events.track, "viewed", profile_id=numpy.nan, device_token_hash="h1")
    sent = [{k: e.get(k) for k in ("profile_id", "device_token_hash")} for e in emu.events()]
    assert sent == [
        {"profile_id": "p1", "device_token_hash": None},
        {"profile_id": None, "device_token_hash": "h1"},
    ]


def test_track_many_sends_none_as_an_absent_field(drv: Driver, emu):
    rows = [
        {"event_name": "view", "profile_id": None, "device_token_hash": "tok-1", "data": None},
        # pandas puts NaN in an empty cell of a column of strings, and a row is a Series
        pandas.Series(
            {"event_name": "view", "profile_id": "alice", "device_token_hash": numpy.nan}
        ),
        {"event_name": "view", "profile_id": None, "device_token_hash": None},
    ]
    out = drv(drv.client.events.track_many, rows)
    assert out[:2] == [None, None]
    assert isinstance(out[2], ValidationError) and out[2].field == "profile_id"
    bodies = [json.loads(r["body"]) for r in api_requests(emu, "/api/v1/events")]
    assert sorted(bodies, key=str) == sorted(
        [
            {"event_name": "view", "device_token_hash": "tok-1"},
            {"event_name": "view", "profile_id": "alice"},
        ],
        key=str,
    )
    assert len(emu.events()) == 2


# -- errors that say what the caller wrote ---------------------------------------------------


def test_error_messages_use_the_python_names(drv: Driver, emu):
    c = drv.client
    cases = [
        (lambda: drv(c.analytics.summary, "2026-02-02", "2026-02-01"), "start", None),
        (lambda: drv(c.events.track, "signup"), "profile_id", None),
        (lambda: Product(product_id="a", price="cheap"), "price", None),
        (lambda: SendTo(include_countries=["US", 1]), "include_countries[1]", None),
    ]
    messages = []
    for call, field, _ in cases:
        with pytest.raises(ValidationError) as info:
            call()
        assert info.value.field == field
        messages.append(str(info.value))
    assert messages == [
        "start must not be after end",
        "profile_id or device_token_hash is required: the event must name its subscriber",
        'price must be a number, not the string "cheap"',
        "include_countries[1] must be a string, not an int",
    ]
    with pytest.raises(ValidationError) as info:
        drv(c.analytics.summary, "2016-01-01", "2026-02-01")
    assert "start..end" in str(info.value) and info.value.field == "end"
    # the caller's own data is quoted as written, never renamed like a field
    with pytest.raises(ValidationError) as info:
        drv(c.notifications.create, **BROADCAST, require_interaction="notification_yes")
    assert '"notification_yes"' in str(info.value)
    with pytest.raises(ValidationError) as info:
        drv(c.notifications.create, **BROADCAST, expiry='x"y notification_expiry')
    assert 'notification_expiry"' in str(info.value) and info.value.field == "expiry"
    with pytest.raises(ValidationError) as info:
        drv(
            c.notifications.create,
            **BROADCAST,
            attributes=[[{"key": "notification_title", "op": "eq"}]],
        )
    assert str(info.value) == 'The attributes rule on "notification_title" needs a value.'
    with pytest.raises(ValidationError) as info:
        drv(c.notifications.create, **BROADCAST, require_interaction=2**63)
    assert str(info.value) == "require_interaction is out of range"
    # a button's form field is named as the argument that carries it
    with pytest.raises(ValidationError) as info:
        drv(c.notifications.create, **BROADCAST, actions=[{"label": "a", "url": "nope"}])
    assert str(info.value) == "The actions[0].url format is invalid."
    # a list where a model goes, a DataFrame or None where events go, a dimension misspelt
    for call, field, message in [
        (
            lambda: drv(c.drips.create, "W", [drip_notification()], send_to=[1]),
            "send_to",
            "send_to must be a dict (or its model), not a list",
        ),
        (
            lambda: drv(c.events.track_many, None),
            "events",
            "events must be a list of dicts, not NoneType",
        ),
        (
            lambda: drv(c.events.track_many, pandas.DataFrame([{"event_name": "e"}])),
            "events",
            "events must be a list of dicts, not a DataFrame: pass df.to_dict('records') "
            "(pandas) or df.to_dicts() (polars)",
        ),
        (
            lambda: drv(c.notifications.create, **BROADCAST, valid_from_utc=dt.date(2030, 1, 2)),
            "valid_from_utc",
            "valid_from_utc is a time, not a day: pass a datetime (site-local, naive) or a "
            "'YYYY-MM-DD hh:mm:ss' string",
        ),
        (
            lambda: drv(
                c.notifications.create,
                **BROADCAST,
                actions=Action(label="Go", url="https://shop.example/go"),
            ),
            "actions",
            "actions must be a list of buttons, not Action: pass actions=[Action(...)], even "
            "for one",
        ),
        (
            lambda: drv(c.analytics.subscribers, types=["countries"]),
            "types",
            'types lists "countries", which is not one of: country, state, city, device, '
            "device_type, platform",
        ),
    ]:
        with pytest.raises(ValidationError) as info:
            call()
        assert (info.value.field, str(info.value)) == (field, message)
    assert emu.requests() == []


def test_unexpected_answers_are_described_in_plain_words(drv: Driver, emu):
    # A proxy's page with a 200, and the events interface's error_code without a message.
    emu.inject_fault("/apiv1/segments", status=200, body="<html>Welcome to the portal</html>")
    with pytest.raises(APIError) as info:
        drv(drv.client.segments.list)
    assert "not JSON (a proxy's or gateway's page?)" in info.value.message
    assert "Welcome to the portal" in info.value.message
    emu.inject_fault("/api/v1/events", status=200, body={"error_code": 5})
    with pytest.raises(APIError) as info:
        drv(drv.client.events.track, "e", profile_id="p")
    assert info.value.message == "the service answered error_code 5, without a message"
    assert info.value.code == 5


def test_the_emulators_admin_refusals_name_the_argument(emu):
    with pytest.raises(ValueError, match=r'^status must be an integer, not string "500"$'):
        emu.inject_fault("/apiv1/segments", status="500")
    with pytest.raises(ValueError, match="^rules is required$"):
        emu.create_trigger(campaign_name="Cart")
    # a seed says what it means: a null schedule would silently be "rightaway"
    with pytest.raises(ValueError, match=r"notifications\[0\]\.schedule_options must not be null"):
        emu.create_trigger(
            campaign_name="Cart",
            rules={"start_event_name": "cart"},
            notifications=[
                {"title": "t", "message": "m", "url": "https://x.example", "schedule_options": None}
            ],
        )


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_client_settings_of_the_wrong_type_name_the_setting(cls, emu):
    for kwargs, field in [
        ({"timeout": "5"}, "timeout"),
        ({"backoff_base": None}, "backoff_base"),
        # a Real that float() refuses (it used to raise a bare TypeError)
        ({"timeout": numpy.timedelta64(2, "s")}, "timeout"),
        ({"max_retries": 2.0}, "max_retries"),
        ({"max_retries": True}, "max_retries"),
        ({"api_key": 123}, "api_key"),
        ({"api_key": ""}, "api_key"),
        ({"base_url": "example.com"}, "base_url"),
        ({"events_url": 8901}, "events_url"),
        ({"default_headers": {"X-Trace": 1}}, "default_headers"),
        ({"default_headers": {"Api-Key": "other"}}, "default_headers"),
        ({"proxy": "not a url"}, "proxy"),
        ({"ca_bundle": "/nonexistent/ca.pem"}, "ca_bundle"),
    ]:
        settings = {"api_key": "k", "base_url": emu.base_url, "events_url": emu.events_url}
        with pytest.raises(ValidationError) as info:
            cls(**{**settings, **kwargs})
        assert info.value.field == field, str(info.value)
        assert "builder error" not in str(info.value)
    # a proxy without a scheme is http, as curl reads it; a refusal never shows a password
    cls(api_key="k", base_url=emu.base_url, proxy="127.0.0.1:3128")
    with pytest.raises(ValidationError) as info:
        cls(api_key="k", base_url=emu.base_url, proxy="http://alice:s3cr#t@proxy corp:3128")
    assert info.value.field == "proxy" and "s3cr" not in str(info.value)
    with pytest.raises(ValidationError) as info:
        cls(api_key="k", base_url=emu.base_url, proxy="alice:s3cr@proxy corp:3128/?n=http://x")
    assert "s3cr" not in str(info.value)


@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_client_settings_take_numpy_and_decimal_numbers(cls, emu):
    client = cls(
        api_key="k",
        base_url=emu.base_url,
        timeout=numpy.float32(2.5),
        max_retries=numpy.int64(3),
        backoff_base=decimal.Decimal("0.25"),
    )
    assert (client.timeout, client.max_retries) == (2.5, 3)
    for kwargs, field in [
        ({"timeout": 10**400}, "timeout"),
        ({"timeout": decimal.Decimal("sNaN")}, "timeout"),
        ({"max_retries": 10**30}, "max_retries"),
    ]:
        with pytest.raises(ValidationError) as info:
            cls(api_key="k", base_url=emu.base_url, **kwargs)
        assert info.value.field == field


def test_timeout_none_waits_as_long_as_the_core_allows(emu):
    with emu.client(timeout=None) as c:
        assert c.timeout == 86_400.0
        assert c.segments.list() == []


# -- errors cross process boundaries (Celery, multiprocessing) -------------------------------


def test_api_errors_survive_pickling(drv: Driver, emu):
    d = make_driver(drv.kind, emu, max_retries=0, **FAST)
    try:
        emu.inject_fault("/apiv1/segments", status=429, retry_after=7)
        with pytest.raises(RateLimitError) as info:
            d(d.client.segments.list)
        emu.inject_fault("/apiv1/segments", status=500)
        with pytest.raises(ServerError) as info500:
            d(d.client.segments.list)
    finally:
        d.close()
    for err in (info.value, info500.value):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err)
        assert str(back) == str(err) and back.args == err.args
        assert vars(back) == vars(err)
    assert pickle.loads(pickle.dumps(info.value)).retry_after == 7
    with pytest.raises(ValidationError) as bad:
        drv(drv.client.segments.list, limit=0)
    back = pickle.loads(pickle.dumps(bad.value))
    assert type(back) is ValidationError and back.field == "limit"


def test_errors_survive_a_json_result_backend(emu):
    # Celery's default result format is JSON: it sends type(e).__name__ and e.args, and the
    # caller rebuilds type(e)(*args). outcome_unknown must not come back False there (the
    # caller would resend a broadcast that may have gone out), nor status or field be lost.
    client = emu.client(max_retries=0, **FAST)
    errors = []
    emu.inject_fault("/apiv1/notifications", drop="after")
    with pytest.raises(pushwire.APIConnectionError) as dropped:
        client.notifications.create(**BROADCAST)
    errors.append(dropped.value)
    emu.inject_fault("/apiv1/notifications", status=502)
    with pytest.raises(ServerError) as gateway:
        client.notifications.create(**BROADCAST)
    errors.append(gateway.value)
    emu.inject_fault("/apiv1/segments", status=429, retry_after=7)
    with pytest.raises(RateLimitError) as limited:
        client.segments.list()
    errors.append(limited.value)
    with pytest.raises(ValidationError) as bad:
        client.segments.list(limit=0)
    errors.append(bad.value)
    assert dropped.value.outcome_unknown and gateway.value.outcome_unknown
    assert "outcome is unknown" in str(gateway.value)  # in the log line and the traceback
    for err in errors:
        back = type(err)(*json.loads(json.dumps(err.args)))
        assert vars(back) == vars(err) and str(back) == str(err)


# -- the pytest fixture ----------------------------------------------------------------------


def test_the_fixture_gives_each_test_its_request_log(tmp_path):
    # A test that turns the log off must not leave the next test without one.
    (tmp_path / "test_two.py").write_text(
        textwrap.dedent(
            """
            def test_turns_the_log_off(pushwire_emulator):
                pushwire_emulator.set_request_log(False)
                with pushwire_emulator.client() as c:
                    c.segments.list()
                assert pushwire_emulator.requests() == []

            def test_has_its_log(pushwire_emulator):
                with pushwire_emulator.client() as c:
                    c.segments.list()
                assert len(pushwire_emulator.requests()) == 1
            """
        )
    )
    run = run_pytest(tmp_path)
    assert "2 passed" in run.stdout


def test_a_test_that_closes_the_fixtures_emulator_does_not_stop_it_for_the_next(tmp_path):
    # `with pushwire_emulator as emu:`, written as the README writes `with Emulator()`, must
    # not leave every later test erroring in setup.
    (tmp_path / "test_close.py").write_text(
        textwrap.dedent(
            """
            def test_closes_it(pushwire_emulator):
                with pushwire_emulator as emu:
                    emu.create_segment("vip")
                pushwire_emulator.close()

            def test_after(pushwire_emulator):
                assert pushwire_emulator.segments() == []
                with pushwire_emulator.client() as c:
                    assert c.segments.list() == []
            """
        )
    )
    run = run_pytest(tmp_path)
    assert "2 passed" in run.stdout


def test_the_fixture_keeps_the_setting_the_emulator_was_made_with(tmp_path):
    # A load-test suite overrides the session emulator with the log off: it stays off.
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            """
            import pytest
            from pushwire.testing import Emulator

            @pytest.fixture(scope="session")
            def _pushwire_emulator_session():
                with Emulator(record_requests=False) as emu:
                    yield emu
            """
        )
    )
    (tmp_path / "test_load.py").write_text(
        textwrap.dedent(
            """
            def test_no_log(pushwire_emulator):
                with pushwire_emulator.client() as c:
                    c.segments.list()
                assert pushwire_emulator.requests() == []
            """
        )
    )
    run = run_pytest(tmp_path)
    assert "1 passed" in run.stdout


# -- what a user sees of results -------------------------------------------------------------


def test_a_result_repr_builds_the_same_result(drv: Driver, emu):
    # Nested models shown as themselves, unlisted fields under extra=: a repr pasted into a
    # test builds an equal object.
    vip = emu.create_segment("vip")
    drip_id = drv(
        drv.client.drips.create,
        "W",
        [drip_notification(actions=[{"label": "Shop", "url": "https://shop.example/"}])],
        send_to={"include_segments": [vip]},
        utm_params={"utm_source": "a", "utm_medium": "b", "utm_campaign": "c"},
    )
    trigger_id = emu.create_trigger(campaign_name="Cart", rules={"start_event_name": "cart"})
    # A time shows as `datetime.datetime(..., tzinfo=datetime.timezone.utc)`, as in a
    # dataclass's repr: pasted where `datetime` is imported.
    names = {**vars(pushwire), "datetime": dt}
    for result in (
        drv(drv.client.drips.get, drip_id),
        drv(drv.client.triggers.get, trigger_id),
        Segment.from_dict({"segment_id": "5", "segment_name": "x", "color": "red"}),
        pushwire.Meta.from_dict({"total": 3, "page": 1, "perPage": 10, "lastPage": 1}),
    ):
        text = repr(result)
        assert eval(text, names) == result, text
    assert "rules=Rules(start_event_name='cart'" in repr(drv(drv.client.triggers.get, trigger_id))


def test_a_page_slices_like_its_list(drv: Driver, emu):
    for i in range(3):
        drv(drv.client.drips.create, f"d{i}", [drip_notification()])
    page = drv(drv.client.drips.list)
    assert page[0:2] == page.data[0:2] and len(page[0:2]) == 2
    assert page[::-1] == page.data[::-1] and page[-1] == page.data[-1]
    with pytest.raises(IndexError):
        page[3]


def test_decimals_are_sent_as_numbers(drv: Driver, emu):
    # Django's DecimalField gives Decimals: a price, an order total.
    drv(drv.client.events.track, "order", profile_id="p", data={"total": decimal.Decimal("42.50")})
    assert emu.events()[0]["data"] == {"total": 42.5}
    drv(drv.client.products.update, [{"product_id": "sku", "price": decimal.Decimal("19.99")}])
    assert emu.products()[0]["product"]["price"] == 19.99
    with pytest.raises(ValidationError) as info:
        drv(
            drv.client.events.track, "order", profile_id="p", data={"total": decimal.Decimal("NaN")}
        )
    assert info.value.field == "data.total"
    # a whole Decimal where an integer goes
    emu.add_subscriber()
    drv(drv.client.notifications.create, **BROADCAST, expiry=decimal.Decimal("60"))
    assert emu.notifications()[0]["request"]["notification_expiry"] == 60


def test_the_emulator_clock_advances_by_a_timedelta(emu):
    before = emu.now
    after = emu.advance(dt.timedelta(hours=2))
    assert dt.timedelta(hours=2) <= after - before < dt.timedelta(hours=2, seconds=5)
    with pytest.raises(ValueError):
        emu.advance(float("nan"))


def test_mypy_catches_a_typo_in_a_model_keyword(tmp_path):
    (tmp_path / "bad.py").write_text(
        textwrap.dedent(
            """
            from pushwire import Action, Product, SendTo

            Action(lable="Shop", url="https://shop.example/")
            SendTo(include_segments=5)
            Product(product_id="a")
            """
        )
    )
    (tmp_path / "good.py").write_text(
        textwrap.dedent(
            """
            from pushwire import Action, NewDripNotification, Product, SendTo

            a = Action(label="Shop", url="https://shop.example/")
            s = SendTo(include_segments=[12, "13"], exclude_countries=["FR"])
            p = Product(product_id="a", price=9.5)
            n = NewDripNotification(title="t", actions=[a, {"label": "x", "url": "u"}])
            # what the runtime takes: numpy numbers, Decimals
            import decimal, numpy
            Product(product_id="b", price=decimal.Decimal("19.99"))
            SendTo(include_segments=[numpy.int64(3)])
            NewDripNotification(expiry=numpy.int64(60), require_interaction=1)
            """
        )
    )
    errors = mypy_errors(tmp_path)
    assert [e.split(":")[0:2] for e in errors] == [
        ["bad.py", "4"],
        ["bad.py", "5"],
        ["bad.py", "6"],
    ]
    assert '"lable"' in errors[0] and '"include_segments"' in errors[1] and '"price"' in errors[2]


def test_mypy_takes_what_the_readme_promises_and_refuses_misspelt_settings(tmp_path):
    # What the runtime takes (and the README shows) must pass `mypy --strict`: pandas
    # columns and records, int and numpy ids, numpy and Decimal whole numbers, a subclass
    # inside `with`. A misspelt emulator client setting, or a button without its label,
    # must not.
    (tmp_path / "good.py").write_text(
        textwrap.dedent(
            """
            import decimal

            import numpy as np
            import pandas as pd

            import pushwire
            from pushwire.testing import Emulator


            class App(pushwire.Client):
                def names(self) -> list[str]:
                    return [s.segment_name for s in self.segments.list()]


            def run(emu: Emulator, df: pd.DataFrame) -> None:
                c = emu.client(timeout=5.0, max_retries=0)
                c.segments.add_subscribers_bulk(1, df["hash"])
                c.events.track_many(df.to_dict("records"))
                c.events.track_many(row for _, row in df.iterrows())
                c.events.track("signup", profile_id=42)
                c.segments.add_subscribers(np.int64(3), ["h"])
                c.segments.add_profiles("vip", [42, "43"])
                c.drips.list(limit=np.int64(5))
                c.notifications.create(
                    title="t", message="m", url="u", expiry=np.int64(60),
                    require_interaction=decimal.Decimal(1), profile_id=[42],
                )
                with App(api_key="k", base_url=emu.base_url) as app:
                    app.names()
                fast: pushwire.Client = c.with_options(timeout=1.0)
                fast.close()
                # settings as numpy and Decimal numbers, as the runtime takes them
                tuned = emu.client(
                    timeout=decimal.Decimal("2.5"), max_retries=np.int64(1),
                    backoff_base=decimal.Decimal("0.1"), max_connections=np.int64(10),
                )
                tuned.with_options(timeout=decimal.Decimal(2), max_retries=np.int64(0))
                tuned.with_options(timeout=np.int64(5))
                emu.client(timeout=np.float32(2.5), backoff_base=np.int64(1))
                tuned.segments.list(segment_id=np.int64(1))
                pushwire.AsyncClient(api_key="k", base_url=emu.base_url, timeout=np.float64(3))
                # whole numbers as Decimal in the input models too (a Django DecimalField)
                pushwire.NewDripNotification(
                    title="t", message="m", url="https://shop.example/",
                    require_interaction=decimal.Decimal(0), expiry=decimal.Decimal(86400),
                    schedule_options=pushwire.ScheduleOptions(
                        type="delay", value=decimal.Decimal(5), unit="minutes"
                    ),
                )
                # a hand-built fake of a read, as a test of the app builds one
                fake = pushwire.TriggeredCampaign(
                    trigger_id=np.int64(7), campaign_name="Cart", rules={"start_event_name": "c"},
                    notifications=[pushwire.TriggeredNotification(title="t")],
                    extra={"new_field": 1},
                )
                pushwire.Page([fake], total=1, page=1, per_page=10, last_page=1)
            """
        )
    )
    (tmp_path / "bad.py").write_text(
        textwrap.dedent(
            """
            from pushwire import Action, TriggeredCampaign
            from pushwire.testing import Emulator

            def run(emu: Emulator) -> None:
                emu.client(timout=1.0)
                Action(url="https://shop.example/")
                TriggeredCampaign(trigger_id=1, campaing_name="Cart")
            """
        )
    )
    errors = mypy_errors(tmp_path)
    assert [e.split(":")[0:2] for e in errors] == [
        ["bad.py", "6"],
        ["bad.py", "7"],
        ["bad.py", "8"],
    ], errors
    assert '"timout"' in errors[0] and '"label"' in errors[1] and '"campaing_name"' in errors[2]


def test_result_models_built_from_keywords_take_the_services_other_utm_shape():
    # A test's hand-built fake of a drip, with its UTM as the drip sample shows them: read as
    # from_dict and the client's reads read them, not refused as "no field utm_params".
    other = {"enabled": True, "source": "push", "medium": "web", "campaign": "bf"}
    own = pushwire.UtmParams(utm_source="push", utm_medium="web", utm_campaign="bf")
    assert pushwire.Drip(utm_params=other).utm_params == own
    assert pushwire.Drip(utm_params=other) == pushwire.Drip.from_dict({"utm_params": other})
    assert pushwire.TriggeredCampaign(trigger_id=7, utm_params=other).utm_params == own
    assert pushwire.Drip(utm_params={"enabled": False}).utm_params is None
    assert pushwire.Drip(utm_params={"enabled": "false"}).utm_params is None
    # leniently, as from_dict reads a response: what is missing is empty
    partial = {"enabled": True, "source": "push"}
    assert pushwire.Drip(utm_params=partial) == pushwire.Drip.from_dict({"utm_params": partial})
    assert pushwire.Drip(utm_params=partial).utm_params == pushwire.UtmParams(
        utm_source="push", utm_medium="", utm_campaign=""
    )
    # but a key of neither shape is a typo, refused as any unknown keyword is
    with pytest.raises(ValidationError) as info:
        pushwire.Drip(utm_params={"enabled": True, "sorce": "push", "medium": "m"})
    assert info.value.field == "utm_params.sorce"
    # an input model's stays as strict as drips.create is with the same dict
    with pytest.raises(ValidationError) as info:
        pushwire.NewDrip(
            campaign_name="d",
            notifications=[drip_notification()],
            utm_params={"enabled": True, "source": "push"},
        )
    assert "utm_medium" in str(info.value)


def test_utm_params_from_dict_reads_the_services_other_shape():
    # A response's `{enabled, source, ...}` dict, as drips.create and campaign reads take it.
    given = {"enabled": True, "source": "push", "medium": "web", "campaign": "bf"}
    assert pushwire.UtmParams.from_dict(given) == pushwire.UtmParams(
        utm_source="push", utm_medium="web", utm_campaign="bf"
    )
    with pytest.raises(ValidationError) as info:
        pushwire.UtmParams.from_dict({"enabled": False, "source": "push"})
    assert info.value.field == "enabled"
    with pytest.raises(ValidationError) as info:
        pushwire.UtmParams.from_dict({"sourc": "push", "medium": "web", "campaign": "bf"})
    assert info.value.field == "sourc"


def test_help_documents_every_call_of_both_clients():
    # help(client.drips) is where a notebook user looks first; the async twins included.
    import inspect

    import pushwire._client as surface

    for client in (pushwire.Client, pushwire.AsyncClient):
        doc = inspect.getdoc(client) or ""
        for namespace in ("triggers", "drips", "segments", "analytics", "notifications", "events"):
            assert f"``{namespace}``" in doc, (client, namespace)
    undocumented = [
        f"{name}.{method}"
        for name, cls in vars(surface).items()
        if isinstance(cls, type)
        and name.lstrip("Async")
        in {"Triggers", "Drips", "Segments", "Analytics", "Products", "Notifications", "Events"}
        for method, fn in vars(cls).items()
        if callable(fn) and not method.startswith("_") and not fn.__doc__
    ]
    assert undocumented == []


def test_meta_is_built_from_its_attribute_names_or_the_specs():
    from pushwire import Meta

    by_attribute = Meta(total=3, page=1, per_page=2, last_page=2)
    assert by_attribute == Meta(total=3, page=1, perPage=2, lastPage=2)
    assert (by_attribute.per_page, by_attribute.last_page) == (2, 2)
    assert Meta.from_dict(by_attribute.to_dict()) == by_attribute
    with pytest.raises(ValidationError):
        Meta(per_pages=2)


def test_caplog_sees_the_cores_log_lines_whatever_ran_before(tmp_path):
    # The core caches the `pushwire` logger's level at its first use; the fixture reads it
    # afresh before each test, so a test's caplog.set_level(DEBUG) is not undone by an
    # earlier test's call (it used to pass alone and fail after any other test).
    (tmp_path / "test_logs.py").write_text(
        textwrap.dedent(
            """
            import logging

            def test_an_earlier_call(pushwire_emulator):
                with pushwire_emulator.client() as c:
                    c.segments.list()

            def test_debug_lines(pushwire_emulator, caplog):
                caplog.set_level(logging.DEBUG, logger="pushwire")
                with pushwire_emulator.client() as c:
                    c.segments.list()
                assert any("GET /apiv1/segments" in r.getMessage() for r in caplog.records)
            """
        )
    )
    run_pytest(tmp_path)


def test_logging_configured_after_the_first_call_takes_effect_at_the_next():
    """A notebook user runs a cell, then turns the `pushwire` logger up to see what happens:
    the next call logs, sync and async, and turning it down again silences it; nobody calls
    `reset_log_cache()`. While the level is above DEBUG, the I/O threads' request records never
    reach Python at all (the logger is never asked whether it is enabled from those threads,
    which would take the GIL)."""
    code = textwrap.dedent(
        """
        import asyncio, logging, threading, pushwire
        from pushwire.testing import Emulator
        seen = []
        class Keep(logging.Handler):
            def emit(self, record):
                seen.append(record.getMessage())
        log = logging.getLogger("pushwire")
        log.addHandler(Keep())
        asked = []
        plain = log.isEnabledFor
        def counting(level):
            asked.append(threading.current_thread().name)
            return plain(level)
        log.isEnabledFor = counting

        def lines():
            n = sum("/segments" in m for m in seen)
            seen.clear()
            return n

        async def three(c):
            for _ in range(3):
                await c.segments.list()

        out = []
        with Emulator() as emu, emu.client() as c:
            c.segments.list()                      # logging not configured yet
            out.append(lines())
            asyncio.run(three(emu.async_client()))
            out.append(lines())
            out.append(len(asked))                 # nothing asked Python while silent
            log.setLevel(logging.DEBUG)            # configured after the first call
            c.segments.list()
            out.append(lines())
            asyncio.run(three(emu.async_client()))
            out.append(lines())
            log.setLevel(logging.WARNING)
            c.segments.list()
            out.append(lines())
            log.setLevel(logging.NOTSET)           # now the root logger's level decides
            logging.getLogger().setLevel(logging.DEBUG)
            c.segments.list()
            out.append(lines())
        print(*out)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0", "0", "1", "3", "0", "1"]


def test_the_env_fixture_points_a_client_from_the_environment_at_the_emulator(tmp_path):
    (tmp_path / "test_env.py").write_text(
        textwrap.dedent(
            """
            import pushwire

            def test_a_client_from_the_environment(pushwire_emulator_env):
                client = pushwire.Client()  # as the app makes it, from PUSHWIRE_*
                client.events.track("signup", profile_id="u1")
                assert [e["event_name"] for e in pushwire_emulator_env.events()] == ["signup"]
            """
        )
    )
    run_pytest(tmp_path)


def test_logging_disable_silences_the_core_without_asking_python_from_io_threads():
    code = textwrap.dedent(
        """
        import asyncio, logging, threading
        from pushwire.testing import Emulator
        seen, asked = [], []
        class Keep(logging.Handler):
            def emit(self, record):
                seen.append(record.getMessage())
        log = logging.getLogger("pushwire")
        log.addHandler(Keep())
        log.setLevel(logging.DEBUG)
        plain = log.isEnabledFor
        def counting(level):
            asked.append(threading.current_thread().name)
            return plain(level)
        log.isEnabledFor = counting

        async def three(c):
            for _ in range(3):
                await c.segments.list()

        out = []
        with Emulator() as emu, emu.client() as c:
            logging.disable(logging.CRITICAL)
            c.segments.list()
            asyncio.run(three(emu.async_client()))
            out += [len(seen), len(asked)]
            logging.disable(logging.NOTSET)
            c.segments.list()
            out.append(sum("/segments" in m for m in seen))
        print(*out)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0", "1"]


def test_an_async_namespace_offers_each_method_of_its_blocking_twin():
    from pushwire.resources._resource import _Async, _Sync

    class Blocking(_Sync):
        """A namespace."""

        def one(self) -> None: ...

        def two(self) -> None: ...

    with pytest.raises(TypeError, match="AsyncBlocking lacks Blocking's two"):

        class AsyncBlocking(_Async, twin=Blocking):
            one = Blocking.one

    class AsyncComplete(_Async, twin=Blocking):
        one = Blocking.one
        two = Blocking.two

    assert AsyncComplete.__doc__ == "A namespace."
