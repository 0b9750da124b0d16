"""Every limit of spec section 8 and every required field, checked by the client before
anything is sent: ``ValidationError`` (also a ``ValueError``) whose ``field`` names the Python
argument, and no request reaches the emulator. The values just inside each limit succeed."""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable

import pytest
from client_support import BROADCAST, Driver, drip_notification

import pushwire
from pushwire import Action, PushwireError, ValidationError
from pushwire.testing import Emulator

LATER = {"type": "later", "valid_from_utc": "2031-01-01 10:00:00"}


def broadcast(**kw: Any) -> Callable[[Any], tuple]:
    return lambda c: (c.notifications.create, (), {**BROADCAST, **kw})


def drip(*notifications: dict, **kw: Any) -> Callable[[Any], tuple]:
    ns = list(notifications) or [drip_notification()]
    return lambda c: (c.drips.create, ("Welcome", ns), kw)


def call(path: str, *args: Any, **kw: Any) -> Callable[[Any], tuple]:
    def pick(c: Any) -> tuple:
        obj = c
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj, args, kw

    return pick


def no_image() -> dict:
    n = drip_notification()
    del n["image_url"]
    return n


ACTIONS = [Action(label=f"b{i}", url=f"https://shop.example/{i}") for i in range(3)]

# (case id, call, the field the error names)
INVALID = [
    # list campaigns: page and limit
    ("drips page 0", call("drips.list", page=0), "page"),
    ("triggers page 0", call("triggers.list", page=0), "page"),
    ("drips limit 0", call("drips.list", limit=0), "limit"),
    ("drips limit 501", call("drips.list", limit=501), "limit"),
    ("triggers limit 501", call("triggers.list", limit=501), "limit"),
    ("iter limit 501", None, "limit"),
    ("trigger id 0", call("triggers.get", 0), "trigger_id"),
    ("drip id word", call("drips.get", "seven"), "drip_id"),
    ("drip id digits out of range", call("drips.get", "9" * 20), "drip_id"),
    ("trigger id float str", call("triggers.get", "7.0"), "trigger_id"),
    (
        "analytics range",
        call("drips.get", 1, analytics_start_at="2024-02-30"),
        "analytics_start_at",
    ),
    # segments
    ("segments limit 0", call("segments.list", limit=0), "limit"),
    ("segments offset -1", call("segments.list", offset=-1), "offset"),
    ("segment_type typo", call("segments.list", segment_type="All"), "segment_type"),
    ("segment id", call("segments.delete", "abc"), "segment_id"),
    (
        "501 hashes",
        call("segments.add_subscribers", 1, [f"h{i}" for i in range(501)]),
        "subscriber_hashes",
    ),
    ("no hashes", call("segments.add_subscribers", 1, []), "subscriber_hashes"),
    (
        "bulk hashes as dict",
        call("segments.add_subscribers_bulk", 1, {"h1": "x"}),
        "hashes",
    ),
    (
        "bulk profile ids as dict",
        call("segments.add_profiles_bulk", "vip", {"p": 1}),
        "profile_ids",
    ),
    ("hashes as str", call("segments.add_subscribers", 1, "abc"), "subscriber_hashes"),
    ("segment name", call("segments.add_profiles", " ", ["p1"]), "segment_name"),
    ("no profile ids", call("segments.remove_profiles", "vip", []), "profile_ids"),
    ("profile ids as str", call("segments.add_profiles", "vip", "p1"), "profile_ids"),
    # analytics
    ("summary start", call("analytics.summary", "2024-13-01", "2024-12-31"), "start"),
    ("summary end", call("analytics.summary", "2024-01-01", "31/12/2024"), "end"),
    (
        "summary group_by",
        call("analytics.summary", "2024-01-01", "2024-01-02", group_by="hour"),
        "group_by",
    ),
    ("subscriber types", call("analytics.subscribers", types=["country", "planet"]), "types"),
    ("types as str", call("analytics.subscribers", types="country"), "types"),
    # products
    ("no products", call("products.update", []), "products"),
    ("products as dict", call("products.update", {"product_id": "a", "price": 1}), "products"),
    ("product id", call("products.update", [{"price": 1}]), "products[0].product_id"),
    (
        "availability",
        call("products.update", [{"product_id": "a", "price": 1, "availability": "maybe"}]),
        "products[0].availability",
    ),
    # broadcasts: required fields and lengths (now/draft 85/135, later 45/73)
    ("no title", broadcast(title=""), "title"),
    ("no message", broadcast(message=" "), "message"),
    ("no url", broadcast(url=""), "url"),
    ("bad url", broadcast(url="not a url"), "url"),
    ("title 86", broadcast(title="t" * 86), "title"),
    ("message 136", broadcast(message="m" * 136), "message"),
    ("draft title 86", broadcast(title="t" * 86, type="draft"), "title"),
    ("later title 46", broadcast(title="t" * 46, **LATER), "title"),
    ("later message 74", broadcast(message="m" * 74, **LATER), "message"),
    ("later without valid_from_utc", broadcast(type="later"), "valid_from_utc"),
    (
        "valid_from_utc format",
        broadcast(type="later", valid_from_utc="2031-01-01 24:00:00"),
        "valid_from_utc",
    ),
    ("type", broadcast(type="soon"), "type"),
    ("type in capitals", broadcast(type="NOW"), "type"),
    ("require_interaction bool", broadcast(require_interaction=True), "require_interaction"),
    ("button as a tuple", broadcast(actions=[("Shop", "https://shop.example/")]), "actions[0]"),
    (
        "button without label",
        broadcast(actions=[{"url": "https://x.example/"}]),
        "actions[0].label",
    ),
    (
        "now with valid_from_utc",
        broadcast(type="now", valid_from_utc="2031-01-01 10:00:00"),
        "valid_from_utc",
    ),
    ("expiry 40321", broadcast(expiry=40321), "expiry"),
    ("require_interaction 2", broadcast(require_interaction=2), "require_interaction"),
    ("3 actions", broadcast(actions=ACTIONS), "actions"),
    ("action url", broadcast(actions=[{"label": "x", "url": "nope"}]), "actions[0].url"),
    (
        "101 subscriber_hash",
        broadcast(subscriber_hash=[f"h{i}" for i in range(101)]),
        "subscriber_hash",
    ),
    ("101 profile_id", broadcast(profile_id=[f"p{i}" for i in range(101)]), "profile_id"),
    ("subscriber_hash as str", broadcast(subscriber_hash="abc"), "subscriber_hash"),
    ("include_segments as str", broadcast(include_segments="12"), "include_segments"),
    # A segment's name where its id goes would match no one: sent to nobody, reported sent.
    ("segment name", broadcast(include_segments=["vip"]), "include_segments[0]"),
    ("excluded segment name", broadcast(exclude_segments=["3", "vip"]), "exclude_segments[1]"),
    ("segment id 0", broadcast(include_segments=[0]), "include_segments[0]"),
    (
        "drip audience segment name",
        drip(send_to={"include_segments": ["vip"]}),
        "send_to.include_segments[0]",
    ),
    (
        "drip audience excluded segment name",
        drip(send_to={"exclude_segments": ["news"]}),
        "send_to.exclude_segments[0]",
    ),
    ("from_date", broadcast(from_date="yesterday"), "from_date"),
    ("from_date blank", broadcast(from_date=" "), "from_date"),
    ("to_date blank", broadcast(to_date=""), "to_date"),
    ("empty targeting list", broadcast(subscriber_hash=[]), "subscriber_hash"),
    # an attribute filter without rules would select everyone
    ("attributes []", broadcast(attributes=[]), "attributes"),
    ("attributes [[]]", broadcast(attributes=[[]]), "attributes"),
    # drips
    ("campaign name", call("drips.create", "", [drip_notification()]), "campaign_name"),
    ("no notifications", call("drips.create", "W", []), "notifications"),
    ("notifications as dict", call("drips.create", "W", drip_notification()), "notifications"),
    ("drip title", drip(drip_notification(title="")), "notifications[0].title"),
    ("drip no image_url", drip(no_image()), "notifications[0].image_url"),
    (
        "drip no require_interaction",
        drip({k: v for k, v in drip_notification().items() if k != "require_interaction"}),
        "notifications[0].require_interaction",
    ),
    ("drip expiry 2419201", drip(drip_notification(expiry=2419201)), "notifications[0].expiry"),
    (
        "drip no expiry",
        drip({k: v for k, v in drip_notification().items() if k != "expiry"}),
        "notifications[0].expiry",
    ),
    ("drip 3 actions", drip(drip_notification(actions=ACTIONS)), "notifications[0].actions"),
    (
        "drip second rightaway",
        drip(drip_notification(), drip_notification()),
        "notifications[1].schedule_options.type",
    ),
    (
        "drip days without at",
        drip(drip_notification(schedule_options={"type": "after", "value": 1, "unit": "days"})),
        "notifications[0].schedule_options.at",
    ),
    (
        "utm typo",
        drip(
            utm_params={"utm_source": "a", "utm_medium": "b", "utm_campaign": "c", "utm_trem": "x"}
        ),
        "utm_params.utm_trem",
    ),
    (
        "utm number",
        drip(utm_params={"utm_source": 3, "utm_medium": "b", "utm_campaign": "c"}),
        "utm_params.utm_source",
    ),
    (
        "utm both shapes",
        drip(utm_params={"utm_source": "a", "source": "b", "medium": "m", "campaign": "c"}),
        "utm_params.source",
    ),
    ("drip audience empty", drip(send_to={"include_segments": []}), "send_to.include_segments"),
    ("drip expiry fraction", drip(drip_notification(expiry=3600.5)), "notifications[0].expiry"),
    (
        "utm without source",
        drip(utm_params={"utm_medium": "web", "utm_campaign": "c"}),
        "utm_params",
    ),
    # events
    ("no event name", call("events.track", "", profile_id="p"), "event_name"),
    ("event name 65", call("events.track", "e" * 65, profile_id="p"), "event_name"),
    ("Service. prefix", call("events.track", "Service.signup", profile_id="p"), "event_name"),
    ("no subscriber", call("events.track", "signup"), ("profile_id", "device_token_hash")),
    (
        "data key 256",
        call("events.track", "e", profile_id="p", data={"k" * 256: 1}),
        "data." + "k" * 256,
    ),
    ("data key chars", call("events.track", "e", profile_id="p", data={"a b": 1}), "data.a b"),
    ("data key start", call("events.track", "e", profile_id="p", data={"_a": 1}), "data._a"),
    ("data value", call("events.track", "e", profile_id="p", data={"a": [1, 2]}), "data.a"),
    (
        "data over 4096 bytes",
        call("events.track", "e", profile_id="p", data={"k": "a" * 4090}),
        "data",
    ),
]


@pytest.mark.parametrize(("case", "pick", "field"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_input_is_refused_before_sending(drv: Driver, emu, case, pick, field):
    with pytest.raises(ValidationError) as info:
        if pick is None:  # iter(): the check happens when the first page is fetched
            drv.collect(drv.client.drips.iter(limit=501))
        else:
            fn, args, kwargs = pick(drv.client)
            drv(fn, *args, **kwargs)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, PushwireError)
    if isinstance(field, tuple):
        assert err.field in field
    else:
        assert err.field == field, str(err)
    assert str(err) and err.message
    assert emu.requests() == [], "a request was sent despite invalid input"


def test_inside_the_limits_succeeds(drv: Driver, emu):
    c = drv.client
    seg = emu.create_segment("vip")
    emu.add_subscriber(profile_id="p0")
    for i in range(3):
        drv(c.drips.create, f"d{i}", [drip_notification()])
    assert drv(c.drips.list, page=1, limit=1).per_page == 1
    assert drv(c.triggers.list, limit=500).per_page == 500
    assert drv(c.segments.list, limit=1, offset=0) != []
    drv(c.segments.add_subscribers, seg, [f"h{i}" for i in range(500)])
    drv(c.notifications.create, **BROADCAST, subscriber_hash=[f"h{i}" for i in range(100)])
    drv(c.notifications.create, **BROADCAST, profile_id=[f"p{i}" for i in range(100)])
    drv(c.notifications.create, title="t" * 85, message="m" * 135, url=BROADCAST["url"])
    drv(
        c.notifications.create,
        title="t" * 85,
        message="m" * 135,
        url=BROADCAST["url"],
        type="draft",
    )
    drv(c.notifications.create, title="t" * 45, message="m" * 73, url=BROADCAST["url"], **LATER)
    drv(c.notifications.create, **BROADCAST, expiry=40320, actions=ACTIONS[:2])
    drv(
        c.notifications.create,
        **BROADCAST,
        type="later",
        valid_from_utc=dt.datetime(2031, 12, 31, 23, 59, 59),
    )
    drv(
        c.drips.create,
        "W",
        [drip_notification(expiry=2419200, actions=ACTIONS[:2])],
    )
    drv(c.events.track, "e" * 64, profile_id="p")
    drv(c.events.track, "e", device_token_hash="t", data={"k" * 255: 1, "a-b_c9": "x"})
    # exactly 4096 bytes of JSON: {"k":"aaa..."} is 8 bytes plus the string
    drv(c.events.track, "e", profile_id="p", data={"k": "a" * (4096 - 8)})
    assert len(emu.notifications()) == 7
    assert len(emu.events()) == 3
    assert all(r["status"] == 200 for r in emu.requests())


def test_a_missing_drip_expiry_is_called_required(drv: Driver, emu):
    # Not "between 1 and 2419200", which reads as a wrong value when none was given.
    n = {k: v for k, v in drip_notification().items() if k != "expiry"}
    with pytest.raises(ValidationError, match="expiry is required") as info:
        drv(drv.client.drips.create, "W", [n])
    assert info.value.field == "notifications[0].expiry"
    with pytest.raises(ValidationError, match="expiry is required"):
        drv(drv.client.drips.create, "W", [pushwire.NewDripNotification.from_dict(n)])
    assert emu.requests() == []


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


@pytest.mark.parametrize(
    ("when", "says"),
    [
        # A year typed wrong in a form: long past in every zone.
        (dt.datetime(2001, 1, 1, 9), "has passed in every time zone"),
        (lambda: _utc_now() - dt.timedelta(hours=12, minutes=5), "has passed in every"),
        ("2999-01-01 09:00:00", "more than ten years ahead"),
        (dt.datetime(9999, 12, 31, 23, 59, 59), "more than ten years ahead"),
    ],
)
def test_a_schedule_nobody_meant_is_refused_with_nothing_sent(
    drv: Driver, emu: Emulator, when: Any, says: str
) -> None:
    emu.add_subscriber("a")
    when = when() if callable(when) else when
    with pytest.raises(ValidationError, match=says) as info:
        drv(drv.client.notifications.create, **BROADCAST, type="later", valid_from_utc=when)
    assert info.value.field == "valid_from_utc"
    shown = when if isinstance(when, str) else when.strftime("%Y-%m-%d %H:%M:%S")
    assert shown in str(info.value)
    assert emu.requests() == [] and emu.notifications() == []


def test_a_time_that_may_still_be_ahead_in_some_zone_is_scheduled(
    drv: Driver, emu: Emulator
) -> None:
    # Eleven hours before UTC's now is still ahead on a site at UTC-12: the service decides.
    when = _utc_now() - dt.timedelta(hours=11)
    drv(drv.client.notifications.create, **BROADCAST, valid_from_utc=when)
    [n] = emu.notifications()
    assert n["request"]["notification_type"] == "later"


def test_a_late_broadcast_goes_out_when_asked_to_on_purpose(drv: Driver, emu: Emulator) -> None:
    emu.add_subscriber("a")
    drv(
        drv.client.notifications.create,
        **BROADCAST,
        valid_from_utc=dt.datetime(2001, 1, 1, 9),
        send_late=True,
    )
    assert [d["subscriber_hash"] for d in emu.deliveries()] == ["a"]
    with pytest.raises(ValidationError, match="must be True or False") as info:
        drv(drv.client.notifications.create, **BROADCAST, send_late="no")
    assert info.value.field == "send_late"


@pytest.mark.parametrize(
    "given", ["2030-12-24T09:00", "2030-12-24T09:00:00", "2030-12-24 09:00", "2030-12-24 09:00:00"]
)
def test_a_form_time_in_iso_8601_is_scheduled_as_the_spec_writes_it(
    drv: Driver, emu: Emulator, given: str
) -> None:
    drv(drv.client.notifications.create, **BROADCAST, valid_from_utc=given)
    [n] = emu.notifications()
    assert n["request"]["valid_from_utc"] == "2030-12-24 09:00:00"


@pytest.mark.parametrize(
    ("given", "field", "says"),
    [
        ({"valid_from_utc": "2030-12-24T09:00Z"}, "valid_from_utc", "site's time zone"),
        ({"valid_from_utc": "2030-12-24T09:00+02:00"}, "valid_from_utc", "site's time zone"),
        ({"valid_from_utc": "2030-02-30T09:00"}, "valid_from_utc", "no date and time"),
        ({"include_segments": ["0"]}, "include_segments[0]", "a segment id is a positive"),
        ({"include_segments": ["-1"]}, "include_segments[0]", "a segment id is a positive"),
        ({"include_segments": ["1.0"]}, "include_segments[0]", "a segment id is a positive"),
        ({"include_segments": ["vip"]}, "include_segments[0]", "a segment's name is not its"),
    ],
)
def test_a_form_value_that_cannot_be_meant_is_refused_saying_what_it_is(
    drv: Driver, emu: Emulator, given: dict[str, Any], field: str, says: str
) -> None:
    # A time with an offset or of no such day, and a segment that is no id, as a form
    # may send them.
    with pytest.raises(ValidationError, match=says) as info:
        drv(drv.client.notifications.create, **BROADCAST, **given)
    assert info.value.field == field
    assert emu.requests() == []


def test_an_error_names_its_field_once(drv: Driver, emu: Emulator) -> None:
    # A form shows `e.message` beside the input `e.field` names: the message is the words.
    with pytest.raises(ValidationError) as info:
        drv(drv.client.notifications.create, title="", message="m", url="https://shop.example")
    assert info.value.field == "title"
    assert info.value.message == "The Title field is required."
    assert str(info.value) == "title: The Title field is required."
    # A message that names its field is its own text.
    with pytest.raises(ValidationError) as named:
        drv(drv.client.notifications.create, **BROADCAST, subscriber_hash=[])
    assert named.value.message.startswith("subscriber_hash is empty")
    assert str(named.value) == named.value.message
