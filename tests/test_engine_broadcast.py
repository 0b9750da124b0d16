"""Issue 4, behaviour 1: who a broadcast reaches (spec 4.13) and when (section 3).

Semantics where the spec is silent (src/emulator/engine/targeting.rs): an empty list is no
filter; from_date is inclusive, to_date exclusive; attribute groups are OR-ed and the rules
of a group AND-ed; numbers compare as numbers and strings as strings, values of different
types are never equal or ordered; a missing attribute satisfies only ``not_exists``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from engine_support import URL, UTC, advance_to, recipients

import pushwire
from pushwire.testing import Emulator

# hash: (profile, country, state, city, device_type, browser, segments, subscribed_at, attrs)
PEOPLE: dict[str, tuple[Any, ...]] = {
    "s1": ("p1", "US", "CA", "San Francisco", "desktop", "chrome", ["vip"],
           "2024-01-01T00:00:00Z", {"age": 30, "plan": "gold", "score": 7.5}),
    "s2": ("p2", "US", "NY", "New York", "mobile", "safari", ["vip", "news"],
           "2024-02-15T12:00:00Z", {"age": 17, "plan": "silver"}),
    "s3": ("p3", "DE", "BE", "Berlin", "desktop", "firefox", ["news"],
           "2024-03-01T00:00:00Z", {"age": 45, "plan": "bronze", "score": 3}),
    "s4": ("p4", "IN", "MH", "Mumbai", "mobile", "chrome", [],
           "2024-03-31T23:59:59Z", {"plan": "gold", "score": 9}),
    "s5": (None, "FR", "IDF", "Paris", "tablet", "edge", ["vip"],
           "2024-04-10T08:00:00Z", {"age": "30"}),
    # Matches nearly every filter, but has unsubscribed: never receives anything.
    "gone": ("p9", "US", "CA", "San Francisco", "desktop", "chrome", ["vip"],
             "2024-02-01T00:00:00Z", {"age": 30, "plan": "gold", "score": 7.5}),
}  # fmt: skip
ACTIVE = {"s1", "s2", "s3", "s4", "s5"}


def seed(emu: Emulator) -> dict[str, int]:
    segments = {name: emu.create_segment(name) for name in ("vip", "news", "empty")}
    for h, (profile, country, state, city, dtype, browser, segs, at, attrs) in PEOPLE.items():
        emu.add_subscriber(
            h,
            profile_id=profile,
            country=country,
            state=state,
            city=city,
            device_type=dtype,
            browser=browser,
            subscribed_at=at,
            attributes=attrs,
            segments=[segments[s] for s in segs],
        )
    emu.unsubscribe("gone")
    return segments


def rule(key: str, op: str, value: Any = None) -> dict[str, Any]:
    r: dict[str, Any] = {"key": key, "op": op}
    if value is not None:
        r["value"] = value
    return r


# (filters, expected recipients); "@vip" stands for the id of segment vip.
CASES: list[tuple[str, dict[str, Any], set[str]]] = [
    ("everyone", {}, ACTIVE),
    ("include segment", {"include_segments": ["@vip"]}, {"s1", "s2", "s5"}),
    ("include two segments", {"include_segments": ["@vip", "@news"]}, {"s1", "s2", "s3", "s5"}),
    ("include empty segment", {"include_segments": ["@empty"]}, set()),
    ("exclude segment", {"exclude_segments": ["@news"]}, {"s1", "s4", "s5"}),
    (
        "include and exclude segments",
        {"include_segments": ["@vip"], "exclude_segments": ["@news"]},
        {"s1", "s5"},
    ),
    ("include countries", {"include_countries": ["US", "FR"]}, {"s1", "s2", "s5"}),
    ("exclude countries", {"exclude_countries": ["US", "DE"]}, {"s4", "s5"}),
    (
        "include and exclude countries",
        {"include_countries": ["US", "DE"], "exclude_countries": ["DE"]},
        {"s1", "s2"},
    ),
    ("include states", {"include_states": ["CA", "MH"]}, {"s1", "s4"}),
    ("include cities", {"include_cities": ["Berlin", "Paris"]}, {"s3", "s5"}),
    ("device types", {"include_device_types": ["mobile"]}, {"s2", "s4"}),
    ("device types 2", {"include_device_types": ["desktop", "tablet"]}, {"s1", "s3", "s5"}),
    ("browsers", {"include_browsers": ["chrome"]}, {"s1", "s4"}),
    ("browsers 2", {"include_browsers": ["safari", "edge", "opera"]}, {"s2", "s5"}),
    ("profile ids", {"profile_id": ["p2", "p4", "p9", "nobody"]}, {"s2", "s4"}),
    ("subscriber hashes", {"subscriber_hash": ["s3", "s5", "gone", "nope"]}, {"s3", "s5"}),
    ("from date inclusive", {"from_date": "2024-02-15T12:00:00Z"}, {"s2", "s3", "s4", "s5"}),
    ("from date as a date", {"from_date": dt.date(2024, 3, 1)}, {"s3", "s4", "s5"}),
    ("to date exclusive", {"to_date": "2024-03-01"}, {"s1", "s2"}),
    (
        "date range",
        {"from_date": "2024-01-01T00:00:01Z", "to_date": "2024-04-01T00:00:00Z"},
        {"s2", "s3", "s4"},
    ),
    ("date range, empty", {"from_date": "2024-04-11", "to_date": "2025-01-01"}, set()),
    (
        "several filters AND-ed",
        {
            "include_segments": ["@vip"],
            "include_device_types": ["desktop", "mobile"],
            "include_countries": ["US"],
            "to_date": "2024-02-01",
        },
        {"s1"},
    ),  # fmt: skip
    # Attribute filters: every operator on numbers and on strings.
    ("eq number", {"attributes": [[rule("age", "eq", 30)]]}, {"s1"}),
    ("eq number as float", {"attributes": [[rule("score", "eq", 3.0)]]}, {"s3"}),
    ("eq string", {"attributes": [[rule("plan", "eq", "gold")]]}, {"s1", "s4"}),
    ("eq string vs number", {"attributes": [[rule("age", "eq", "30")]]}, {"s5"}),
    ("ne number", {"attributes": [[rule("age", "ne", 30)]]}, {"s2", "s3", "s5"}),
    ("ne string", {"attributes": [[rule("plan", "ne", "gold")]]}, {"s2", "s3"}),
    ("lt number", {"attributes": [[rule("age", "lt", 30)]]}, {"s2"}),
    ("lte number", {"attributes": [[rule("age", "lte", 30)]]}, {"s1", "s2"}),
    ("gt number", {"attributes": [[rule("age", "gt", 17)]]}, {"s1", "s3"}),
    ("gte number", {"attributes": [[rule("score", "gte", 7.5)]]}, {"s1", "s4"}),
    ("lt string", {"attributes": [[rule("plan", "lt", "gold")]]}, {"s3"}),
    ("lte string", {"attributes": [[rule("plan", "lte", "gold")]]}, {"s1", "s3", "s4"}),
    ("gt string", {"attributes": [[rule("plan", "gt", "gold")]]}, {"s2"}),
    ("gte string", {"attributes": [[rule("plan", "gte", "gold")]]}, {"s1", "s2", "s4"}),
    ("in numbers", {"attributes": [[rule("age", "in", [17, 45, 99])]]}, {"s2", "s3"}),
    ("in strings", {"attributes": [[rule("plan", "in", ["silver", "bronze"])]]}, {"s2", "s3"}),
    ("nin numbers", {"attributes": [[rule("age", "nin", [17, 45])]]}, {"s1", "s5"}),
    ("nin strings", {"attributes": [[rule("plan", "nin", ["gold"])]]}, {"s2", "s3"}),
    ("exists", {"attributes": [[rule("score", "exists")]]}, {"s1", "s3", "s4"}),
    ("not_exists", {"attributes": [[rule("age", "not_exists")]]}, {"s4"}),
    (
        "rules of a group AND-ed",
        {"attributes": [[rule("plan", "eq", "gold"), rule("score", "gt", 8)]]},
        {"s4"},
    ),
    (
        "groups OR-ed",
        {"attributes": [[rule("age", "lt", 18)], [rule("plan", "eq", "bronze")]]},
        {"s2", "s3"},
    ),
    (
        "groups OR-ed, rules AND-ed",
        {
            "attributes": [
                [rule("age", "gte", 18), rule("plan", "in", ["gold", "silver"])],
                [rule("age", "not_exists"), rule("score", "lt", 10)],
            ]
        },
        {"s1", "s4"},
    ),  # fmt: skip
    (
        "attributes and segments",
        {"include_segments": ["@vip"], "attributes": [[rule("age", "exists")]]},
        {"s1", "s2", "s5"},
    ),
]


def resolve(filters: dict[str, Any], segments: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in filters.items():
        if isinstance(v, list) and k.endswith("_segments"):
            v = [segments[x[1:]] for x in v]
        out[k] = v
    return out


@pytest.mark.parametrize("filters, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broadcast_targeting(emu: Emulator, filters: dict[str, Any], expected: set[str]) -> None:
    segments = seed(emu)
    with emu.client() as client:
        nid = client.notifications.create(
            title="Sale", message="Half price", url=URL, **resolve(filters, segments)
        )
    sent = emu.deliveries()
    assert {d["subscriber_hash"] for d in sent} == expected
    assert len(sent) == len(expected)  # one delivery each
    for d in sent:
        assert (d["source"], d["source_id"], d["notification_id"]) == ("broadcast", nid, nid)
        assert (d["title"], d["message"], d["url"]) == ("Sale", "Half price", URL)
    assert recipients(emu, status="all") == expected


def test_now_delivers_at_once_and_type_omitted_too(emu: Emulator) -> None:
    emu.add_subscriber("a")
    emu.add_subscriber("b", online=True)
    with emu.client() as client:
        before = emu.now
        n1 = client.notifications.create(title="One", message="m", url=URL, type="now")
        n2 = client.notifications.create(title="Two", message="m", url=URL)
        after = emu.now
    sent = emu.deliveries()
    assert sorted((d["subscriber_hash"], d["notification_id"]) for d in sent) == [
        ("a", n1),
        ("a", n2),
        ("b", n1),
        ("b", n2),
    ]
    assert all(before <= d["sent_at"] <= after for d in sent)
    assert {n["notification_id"]: n["status"] for n in emu.notifications()} == {
        n1: "sent",
        n2: "sent",
    }


def test_later_is_sent_at_valid_from_in_the_site_time_zone(emu: Emulator) -> None:
    emu.set_timezone("+05:30")
    pacific = "pacific-key"
    emu.add_site(pacific, timezone="-08:00")
    emu.add_subscriber("early")
    emu.add_subscriber("p-early", api_key=pacific)
    emu.add_subscriber("left")
    with emu.client() as client, emu.client(api_key=pacific) as pclient:
        nid = client.notifications.create(
            title="New year", message="m", url=URL, type="later",
            valid_from_utc="2030-01-01 09:00:00",
        )  # fmt: skip
        pid = pclient.notifications.create(
            title="New year", message="m", url=URL, type="later",
            valid_from_utc=dt.datetime(2030, 1, 1, 9, 0, 0),
        )  # fmt: skip
    due = dt.datetime(2030, 1, 1, 3, 30, tzinfo=UTC)  # 09:00 at UTC+5:30
    pdue = dt.datetime(2030, 1, 1, 17, 0, tzinfo=UTC)  # 09:00 at UTC-8
    assert {n["notification_id"]: n["status"] for n in emu.notifications()} == {nid: "scheduled"}

    advance_to(emu, due - dt.timedelta(seconds=5))
    # Chosen when it goes out: a subscriber who joins before then gets it, one who left not.
    emu.add_subscriber("joined-later")
    emu.unsubscribe("left")
    assert emu.deliveries() == []
    assert emu.deliveries(status="all") == []

    advance_to(emu, due + dt.timedelta(seconds=5))
    sent = emu.deliveries()
    assert {d["subscriber_hash"] for d in sent} == {"early", "joined-later"}
    assert all(d["sent_at"] == due and d["notification_id"] == nid for d in sent)
    assert emu.deliveries(api_key=pacific) == []  # 2029-12-31 19:30 local there

    advance_to(emu, pdue - dt.timedelta(seconds=5))
    assert emu.deliveries(api_key=pacific) == []
    advance_to(emu, pdue + dt.timedelta(minutes=3))
    psent = emu.deliveries(api_key=pacific)
    assert [(d["subscriber_hash"], d["notification_id"], d["sent_at"]) for d in psent] == [
        ("p-early", pid, pdue)
    ]
    # Each broadcast went out once, to its own site only.
    assert len(emu.deliveries()) == 2


def test_later_in_the_past_goes_out_when_created(emu: Emulator) -> None:
    emu.add_subscriber("a")
    with emu.client() as client:
        before = emu.now
        client.notifications.create(
            title="Late",
            message="m",
            url=URL,
            type="later",
            valid_from_utc="2020-01-01 00:00:00",
            send_late=True,
        )
        after = emu.now
    (d,) = emu.deliveries()
    assert before <= d["sent_at"] <= after


def test_draft_never_delivers(emu: Emulator) -> None:
    emu.add_subscriber("a")
    with emu.client() as client:
        nid = client.notifications.create(title="Draft", message="m", url=URL, type="draft")
    emu.advance(40 * 86400)
    emu.add_subscriber("b")
    assert emu.deliveries(status="all") == []
    assert [(n["notification_id"], n["status"]) for n in emu.notifications()] == [(nid, "draft")]


def test_profile_targeting_that_matches_nobody_is_refused(emu: Emulator) -> None:
    emu.add_subscriber("a", profile_id="alice")
    emu.add_subscriber("b", profile_id="bob")
    emu.unsubscribe("b")
    with emu.client() as client:
        for profiles in (["nobody"], ["bob"], ["bob", "carol"]):
            with pytest.raises(pushwire.BadRequestError) as err:
                client.notifications.create(title="t", message="m", url=URL, profile_id=profiles)
            assert err.value.status_code == 400
            assert err.value.message == "No Subcribers Found for the given profile_id"
        assert emu.notifications() == []
        nid = client.notifications.create(
            title="t", message="m", url=URL, profile_id=["bob", "alice"]
        )
    assert [(d["subscriber_hash"], d["notification_id"]) for d in emu.deliveries()] == [("a", nid)]


def test_unsubscribed_subscribers_receive_nothing(emu: Emulator) -> None:
    seg = emu.create_segment("all")
    for h in ("a", "b", "c"):
        emu.add_subscriber(h, profile_id=h, segments=[seg])
    emu.unsubscribe("b")
    with emu.client() as client:
        client.notifications.create(title="1", message="m", url=URL)
        client.notifications.create(title="2", message="m", url=URL, include_segments=[seg])
        client.notifications.create(title="3", message="m", url=URL, subscriber_hash=["b", "c"])
        client.notifications.create(title="4", message="m", url=URL, profile_id=["b", "a"])
    got = sorted((d["subscriber_hash"], d["title"]) for d in emu.deliveries(status="all"))
    assert got == [("a", "1"), ("a", "2"), ("a", "4"), ("c", "1"), ("c", "2"), ("c", "3")]
