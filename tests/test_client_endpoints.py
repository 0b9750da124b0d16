"""Every endpoint of the spec (section 4) through both ``pushwire.Client`` and
``pushwire.AsyncClient``, over real HTTP against the emulator: typed results, round-trips of
what was sent, and lazy pagination."""

from __future__ import annotations

import datetime as dt
from urllib.parse import parse_qsl

import pytest
from client_support import BROADCAST, Driver, api_requests, drip_notification, drip_series
from conftest import SUMMARY_FIELDS, is_int, seed_trigger

from pushwire import (
    Action,
    Analytics,
    AttributeRule,
    Audience,
    Drip,
    DripNotification,
    NewDripNotification,
    Page,
    Product,
    Rules,
    ScheduleOptions,
    Segment,
    SendTo,
    TriggeredCampaign,
    TriggeredNotification,
    UtmParams,
    ValidationError,
)

SUMMARY_KEYS = {"date", *SUMMARY_FIELDS}


def query_of(req: dict) -> list[tuple[str, str]]:
    """The query pairs of a logged request; fails on an empty pair (`?&page=1`)."""
    raw = req["query"]
    assert not raw.startswith("&") and "&&" not in raw, f"malformed query string {raw!r}"
    return parse_qsl(raw, keep_blank_values=True, strict_parsing=bool(raw))


# -- triggered campaigns (4.1, 4.2) -----------------------------------------------------------


def test_triggers_get_is_typed(drv: Driver, emu):
    tid = seed_trigger(emu)
    t = drv(drv.client.triggers.get, tid)
    assert type(t) is TriggeredCampaign
    assert is_int(t.trigger_id) and t.trigger_id == tid
    assert t.campaign_name == "Abandoned cart"
    assert t.campaign_type == "trigger"
    assert t.status in {"draft", "active", "pause", "deleted"}
    assert is_int(t.site_id) and t.site_id == emu.site_id
    assert is_int(t.daily_trigger_limit) and is_int(t.weekly_trigger_limit)
    assert isinstance(t.created_at_utc, dt.datetime) and t.created_at_utc.tzinfo is dt.timezone.utc
    assert isinstance(t.updated_at_utc, dt.datetime)
    assert type(t.rules) is Rules
    assert (t.rules.start_event_name, t.rules.stop_event_name) == ("cart_add", "purchase")
    assert type(t.analytics) is Analytics and is_int(t.analytics.sentcount)
    assert t.utm_params == UtmParams(utm_source="push", utm_medium="web", utm_campaign="cart")
    assert t.options is not None and t.options.result_name == "purchase"
    assert [type(n) for n in t.notifications] == [TriggeredNotification] * 2
    first, second = t.notifications
    assert [n.order for n in t.notifications] == [1, 2]
    assert is_int(first.id) and first.title == "Hi {{name}}, you left something"
    assert first.actions == [Action(label="Open cart", url="https://shop.example/cart")]
    assert type(first.schedule_options) is ScheduleOptions
    assert first.schedule_options.type == "rightaway"
    assert second.schedule_options == ScheduleOptions(
        type="after", value=1, unit="days", at="10:00:00"
    )


def test_triggers_get_sends_the_analytics_range(drv: Driver, emu):
    tid = seed_trigger(emu)
    drv(
        drv.client.triggers.get,
        tid,
        analytics_start_at=dt.date(2024, 1, 1),
        analytics_end_at="2024-01-31",
    )
    (req,) = api_requests(emu, f"/apiv1/triggers/{tid}")
    assert dict(query_of(req)) == {
        "analytics_start_at": "2024-01-01",
        "analytics_end_at": "2024-01-31",
    }


def test_triggers_list_is_a_page_newest_first(drv: Driver, emu):
    ids = [seed_trigger(emu, f"t{i}") for i in range(3)]
    page = drv(drv.client.triggers.list, limit=2)
    assert type(page) is Page
    assert (page.total, page.page, page.per_page, page.last_page) == (3, 1, 2, 2)
    assert all(is_int(v) for v in (page.total, page.page, page.per_page, page.last_page))
    assert [type(t) for t in page.data] == [TriggeredCampaign] * 2
    assert [t.trigger_id for t in page.data] == ids[::-1][:2]
    assert all(t.notifications is None for t in page.data)  # absent in list items
    last = drv(drv.client.triggers.list, page=2, limit=2)
    assert [t.trigger_id for t in last.data] == [ids[0]]
    assert (last.page, last.last_page) == (2, 2)
    reqs = api_requests(emu, "/apiv1/triggers")
    assert [query_of(r) for r in reqs] == [
        [("page", "1"), ("limit", "2")],
        [("page", "2"), ("limit", "2")],
    ]


# -- drips (4.3-4.5) ----------------------------------------------------------------------------


def test_drip_create_round_trips(drv: Driver, emu):
    vip = emu.create_segment("vip")
    churned = emu.create_segment("churned")
    sent = drip_series()  # its values are asserted on below
    send_to = SendTo(
        include_segments=[str(vip)],
        exclude_segments=[str(churned)],
        include_countries=["US", "CA"],
        exclude_cities=["Springfield"],
    )
    utm = {"utm_source": "push", "utm_medium": "web", "utm_campaign": "welcome", "utm_term": "t"}
    drip_id = drv(drv.client.drips.create, "Welcome series", sent, send_to=send_to, utm_params=utm)
    assert is_int(drip_id) and drip_id > 0

    d = drv(drv.client.drips.get, drip_id)
    assert type(d) is Drip
    assert d.drip_id == drip_id and d.campaign_name == "Welcome series"
    assert d.drip_type in {"generic", "welcome"}
    assert d.status in {"draft", "active", "pause", "deleted"}
    assert d.site_id == emu.site_id
    assert type(d.analytics) is Analytics
    assert d.utm_params == UtmParams(**utm)
    assert [type(n) for n in d.notifications] == [DripNotification] * 3
    assert [n.order for n in d.notifications] == [1, 2, 3]
    assert len({n.id for n in d.notifications}) == 3
    for got, want in zip(d.notifications, sent):
        want_dict = NewDripNotification(**want).to_dict()
        got_dict = got.to_dict()
        for key, value in want_dict.items():
            assert got_dict[key] == value, key
    assert d.notifications[0].actions == [
        Action(label="Shop", url="https://shop.example/", image_url="https://i.example/a"),
        Action(label="Later", url="https://shop.example/later"),
    ]
    assert d.notifications[1].schedule_options == ScheduleOptions(
        type="after", value=2, unit="days", at="09:30:00"
    )
    assert type(d.audience) is Audience
    rules = {
        (r.field, r.op, tuple(str(v) for v in r.value))
        for group in d.audience.filter.value
        for r in group
    }
    assert rules == {
        ("segments", "in", (str(vip),)),
        ("segments", "nin", (str(churned),)),
        ("country", "in", ("US", "CA")),
        ("city", "nin", ("Springfield",)),
    }


def test_an_empty_exclusion_excludes_no_one(drv: Driver, emu):
    # Unlike an empty inclusion (everyone: refused), it cannot widen the audience.
    emu.add_subscriber("us", country="US")
    fr = emu.add_subscriber("fr", country="FR")
    drv(
        drv.client.notifications.create,
        **BROADCAST,
        include_countries=["FR"],
        exclude_segments=[],
        exclude_countries=[],
    )
    assert {d["subscriber_hash"] for d in emu.deliveries()} == {fr}


def test_drip_send_to_takes_segment_ids_as_ints_or_strings(drv: Driver, emu):
    # As notifications.create(include_segments=...) does: ids are ints or strings.
    vip, churned = emu.create_segment("vip"), emu.create_segment("churned")
    for send_to in (
        {"include_segments": [int(vip)], "exclude_segments": [str(churned)]},
        SendTo(include_segments=[int(vip)], exclude_segments=[int(churned)]),
    ):
        drip_id = drv(drv.client.drips.create, "W", [drip_notification()], send_to=send_to)
        rules = {
            (r.field, r.op, tuple(str(v) for v in r.value))
            for group in drv(drv.client.drips.get, drip_id).audience.filter.value
            for r in group
        }
        assert rules == {("segments", "in", (str(vip),)), ("segments", "nin", (str(churned),))}
    # anything else is still refused, naming the field
    with pytest.raises(ValidationError) as info:
        drv(
            drv.client.drips.create,
            "W",
            [drip_notification()],
            send_to={"include_segments": [1.5]},
        )
    assert "include_segments" in str(info.value.field)


def test_drip_create_accepts_the_sample_utm_shape(drv: Driver, emu):
    utm = {"enabled": True, "source": "push", "medium": "web", "campaign": "w", "content": "c"}
    drip_id = drv(drv.client.drips.create, "W", [drip_notification()], utm_params=utm)
    d = drv(drv.client.drips.get, drip_id)
    assert d.utm_params == UtmParams(
        utm_source="push", utm_medium="web", utm_campaign="w", utm_content="c"
    )


def test_drips_list_is_a_page_newest_first(drv: Driver, emu):
    ids = [drv(drv.client.drips.create, f"d{i}", [drip_notification()]) for i in range(3)]
    page = drv(drv.client.drips.list)
    assert type(page) is Page
    assert (page.total, page.page, page.per_page, page.last_page) == (3, 1, 10, 1)
    assert [type(d) for d in page.data] == [Drip] * 3
    assert [d.drip_id for d in page.data] == ids[::-1]
    assert all(d.notifications is None for d in page.data)
    assert len(page) == 3 and page[0] == page.data[0] and list(page) == page.data


@pytest.mark.parametrize("resource", ["drips", "triggers"])
def test_iter_walks_every_page_lazily(drv: Driver, emu, resource):
    if resource == "drips":
        ids = [drv(drv.client.drips.create, f"d{i}", [drip_notification()]) for i in range(23)]
    else:
        ids = [seed_trigger(emu, f"t{i}") for i in range(23)]
    emu.clear_requests()
    path = f"/apiv1/{resource}"
    it = getattr(drv.client, resource).iter(limit=10)
    assert api_requests(emu) == []  # nothing is fetched before the first item is asked for

    first = drv.collect(_take(it, 10, drv.kind))
    assert len(api_requests(emu, path)) == 1  # ten items come from the first page alone
    rest = drv.collect(it)
    got = [x.drip_id if resource == "drips" else x.trigger_id for x in first + rest]
    assert got == ids[::-1]  # all 23, distinct, newest first
    reqs = api_requests(emu, path)
    assert [query_of(r) for r in reqs] == [[("page", str(p)), ("limit", "10")] for p in (1, 2, 3)]


def _take(it, n: int, kind: str):
    """The first ``n`` items of a sync or async iterator, leaving the rest in it."""
    if kind == "sync":
        return [next(it) for _ in range(n)]

    async def take():
        return [await it.__anext__() for _ in range(n)]

    return _AsyncOnce(take())


class _AsyncOnce:
    """An async iterator over the result of one coroutine returning a list."""

    def __init__(self, coro):
        self._coro = coro

    def __aiter__(self):
        return self._gen()

    async def _gen(self):
        for item in await self._coro:
            yield item


def test_iter_of_an_empty_list_makes_one_request(drv: Driver, emu):
    assert drv.collect(drv.client.drips.iter()) == []
    assert len(api_requests(emu, "/apiv1/drips")) == 1


# -- segments (4.6-4.9) -------------------------------------------------------------------------


def test_segments_list_is_typed_and_filtered(drv: Driver, emu):
    ids = [emu.create_segment(name) for name in ("vip", "newsletter", "churned")]
    geo = emu.create_segment("United States", segment_type="geo")
    segs = drv(drv.client.segments.list)
    assert [type(s) for s in segs] == [Segment] * 3
    assert all(isinstance(s.segment_id, str) for s in segs)
    assert {(s.segment_id, s.segment_name) for s in segs} == {
        (str(i), n) for i, n in zip(ids, ("vip", "newsletter", "churned"))
    }
    (one,) = drv(drv.client.segments.list, segment_id=ids[1])
    assert one == Segment(segment_id=str(ids[1]), segment_name="newsletter")
    window = drv(drv.client.segments.list, limit=1, offset=1)
    assert len(window) == 1
    everything = drv(drv.client.segments.list, segment_type="all")
    assert str(geo) in {s.segment_id for s in everything}
    assert str(geo) not in {s.segment_id for s in segs}


def test_segment_membership_and_delete(drv: Driver, emu):
    seg = emu.create_segment("vip")
    a = emu.add_subscriber(profile_id="alice")
    b = emu.add_subscriber(profile_id="bob")

    def members() -> set[str]:
        (s,) = [s for s in emu.segments() if s["segment_id"] == seg]
        return set(s["members"])

    msg = drv(drv.client.segments.add_subscribers, seg, [a])
    assert isinstance(msg, str) and msg
    assert members() == {a}
    assert drv(drv.client.segments.add_profiles, "vip", ["bob"]) is None
    assert members() == {a, b}
    assert drv(drv.client.segments.remove_profiles, "vip", ("alice",)) is None
    assert members() == {b}
    msg = drv(drv.client.segments.delete, str(seg))
    assert isinstance(msg, str) and msg
    assert [s for s in emu.segments() if s["segment_id"] == seg] == []


# -- analytics (4.10, 4.11) -----------------------------------------------------------------


def test_summary_rows_load_into_pandas_and_polars_as_dates_a_rolling_window_takes(emu):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    today = emu.now.date()
    for days_ago in (9, 5, 5, 0):
        emu.add_subscriber(subscribed_at=emu.now - dt.timedelta(days=days_ago))
    rows = emu.client().analytics.summary(today - dt.timedelta(days=9), today)
    # pandas has no date dtype: the days become datetime64 for its time-based windows.
    frame = pd.DataFrame(rows).astype({"date": "datetime64[s]"}).set_index("date")
    week = frame["subscriber_count"].rolling("7D").sum()
    # Joined 9, 5, 5 and 0 days ago: each day's sum over the week up to it.
    assert week.tolist() == [1, 1, 1, 1, 3, 3, 3, 2, 2, 3]
    assert frame.index[0].date() == today - dt.timedelta(days=9)
    polars_frame = pl.DataFrame(rows)
    assert polars_frame.schema["date"] == pl.Date
    rolled = polars_frame.rolling(index_column="date", period="7d").agg(
        pl.col("subscriber_count").sum()
    )
    assert rolled["subscriber_count"].to_list() == week.astype(int).to_list()


def test_analytics_summary_rows_are_dicts_with_dates(drv: Driver, emu):
    today = emu.now.date()
    emu.add_subscriber(device_type="desktop")
    emu.add_subscriber(device_type="mobile")
    rows = drv(drv.client.analytics.summary, today - dt.timedelta(days=2), today)
    assert [type(r) for r in rows] == [dict] * 3
    assert all(set(r) == SUMMARY_KEYS for r in rows)
    # Each day as a date (a UTC calendar day, not an instant).
    assert [r["date"] for r in rows] == [today - dt.timedelta(days=i) for i in (2, 1, 0)]
    assert all(type(r["date"]) is dt.date for r in rows)
    assert all(is_int(r[k]) for r in rows for k in SUMMARY_KEYS - {"date", "ctr"})
    assert rows[-1]["subscriber_count"] == 2
    # strings work as well as dates; the request carries the spec's parameter names
    emu.clear_requests()
    drv(drv.client.analytics.summary, today.isoformat(), today.isoformat(), group_by="day")
    (req,) = api_requests(emu, "/apiv1/analytics/summary")
    assert dict(query_of(req)) == {
        "from": today.isoformat(),
        "to": today.isoformat(),
        "group_by": "day",
    }


def test_analytics_subscribers_is_a_dict_of_dicts(drv: Driver, emu):
    emu.add_subscriber(country="US", city="Boston", device_type="desktop", platform="windows")
    emu.add_subscriber(country="US", city="Austin", device_type="mobile", platform="android")
    emu.add_subscriber(country="FR", city="Paris", device_type="mobile", platform="ios")
    dist = drv(drv.client.analytics.subscribers)
    assert type(dist) is dict
    assert {"city", "country", "device", "device_type", "state"} <= set(dist)
    assert all(type(v) is dict for v in dist.values())
    assert dist["country"] == {"US": 2, "FR": 1}
    assert all(is_int(n) for v in dist.values() for n in v.values())
    only = drv(drv.client.analytics.subscribers, types=["country", "platform"])
    assert set(only) == {"country", "platform"}
    assert only["platform"] == {"windows": 1, "android": 1, "ios": 1}


# -- products (4.12) ------------------------------------------------------------------------


def test_products_update(drv: Driver, emu):
    out = drv(
        drv.client.products.update,
        [
            Product(product_id="sku-1", price=19.5, availability="outOfStock"),
            {"product_id": "sku-2", "price": 5, "variant_id": "red"},
        ],
    )
    assert out is None
    got = {p["product"]["product_id"]: p["product"] for p in emu.products()}
    assert got["sku-1"]["price"] == 19.5 and got["sku-1"]["availability"] == "outOfStock"
    assert got["sku-2"]["price"] == 5 and got["sku-2"]["variant_id"] == "red"


# -- broadcasts (4.13) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "status"), [("now", "sent"), ("later", "scheduled"), ("draft", "draft")]
)
def test_broadcast_types(drv: Driver, emu, type_, status):
    emu.add_subscriber()
    extra = {"valid_from_utc": dt.datetime(2031, 5, 4, 13, 0, 0)} if type_ == "later" else {}
    nid = drv(drv.client.notifications.create, **BROADCAST, type=type_, **extra)
    assert is_int(nid) and nid > 0
    (n,) = emu.notifications()
    assert n["notification_id"] == nid and n["status"] == status
    assert n["request"]["notification_type"] == type_
    if type_ == "later":
        assert n["request"]["valid_from_utc"] == "2031-05-04 13:00:00"


def test_broadcast_sends_every_parameter(drv: Driver, emu):
    seg, lapsed = emu.create_segment("vip"), emu.create_segment("lapsed")
    emu.add_subscriber(subscriber_hash="h1", profile_id="p1", segments=[seg])
    nid = drv(
        drv.client.notifications.create,
        **BROADCAST,
        image_url="https://shop.example/icon.png",
        big_image_url="https://shop.example/big.png",
        expiry=60,
        require_interaction=0,
        profile_id=["p1"],
        include_segments=[seg],
        exclude_segments=[str(lapsed)],
        include_countries=["US"],
        exclude_countries=["FR"],
        include_states=["MA"],
        include_cities=["Boston"],
        include_device_types=["desktop"],
        include_browsers=["chrome"],
        from_date=dt.date(2020, 1, 1),
        to_date="2035-01-01T00:00:00",
        subscriber_hash=["h1"],
        attributes=[
            [AttributeRule(key="orders", op="gt", value=3), {"key": "vip", "op": "exists"}]
        ],
        actions=[
            Action(label="Buy", url="https://shop.example/buy", image_url="https://i.example/b"),
            {"label": "Later", "url": "https://shop.example/later"},
        ],
    )
    assert is_int(nid)
    (n,) = emu.notifications()
    r = n["request"]
    assert (r["notification_title"], r["notification_message"], r["notification_url"]) == (
        BROADCAST["title"],
        BROADCAST["message"],
        BROADCAST["url"],
    )
    assert r["image_url"] == "https://shop.example/icon.png"
    assert r["big_image_url"] == "https://shop.example/big.png"
    assert r["notification_expiry"] == 60 and r["require_interaction"] == 0
    assert r["profile_id"] == ["p1"] and r["subscriber_hash"] == ["h1"]
    assert r["include_segments"] == [str(seg)] and r["exclude_segments"] == [str(lapsed)]
    assert r["include_countries"] == ["US"] and r["exclude_countries"] == ["FR"]
    assert r["include_states"] == ["MA"] and r["include_cities"] == ["Boston"]
    assert r["include_device_types"] == ["desktop"] and r["include_browsers"] == ["chrome"]
    assert r["from_date"] == "2020-01-01" and r["to_date"] == "2035-01-01T00:00:00"
    assert r["attributes"] == [
        [{"key": "orders", "op": "gt", "value": 3}, {"key": "vip", "op": "exists", "value": None}]
    ]
    assert r["actions"] == [
        {"label": "Buy", "url": "https://shop.example/buy", "image_url": "https://i.example/b"},
        {"label": "Later", "url": "https://shop.example/later"},
    ]
    (req,) = api_requests(emu, "/apiv1/notifications")
    assert "multi_element_title1=Buy" in req["body"]
    assert "multi_element_url2=" in req["body"]


# -- events (4.14) --------------------------------------------------------------------------


def test_events_track(drv: Driver, emu):
    out = drv(
        drv.client.events.track,
        "cart_add",
        profile_id="alice",
        data={"sku": "A-1", "qty": 2, "gift": False, "at": dt.datetime(2024, 5, 1, 12, 0)},
    )
    assert out is None
    assert drv(drv.client.events.track, "viewed", device_token_hash="tok-1") is None
    first, second = emu.events()
    assert first["event_name"] == "cart_add" and first["profile_id"] == "alice"
    assert first["data"] == {"sku": "A-1", "qty": 2, "gift": False, "at": "2024-05-01T12:00:00"}
    assert second["event_name"] == "viewed" and second["device_token_hash"] == "tok-1"
    (req,) = api_requests(emu, "/api/v1/events")[:1]
    assert req["interface"] == "events"
    assert req["headers"]["content-type"] == "application/json"
