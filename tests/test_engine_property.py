"""Issue 4, behaviour 7: for random subscribers and random broadcast filters, the set of
subscribers a broadcast reaches equals a plain Python reading of the spec's semantics
(spec 4.13, 2.14; the choices where it is silent are those of
src/emulator/engine/targeting.rs, restated here independently)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Optional

import pytest
from engine_support import URL, UTC
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import pushwire
from pushwire.testing import Emulator

COUNTRIES = ["US", "DE", "IN"]
STATES = ["CA", "NY", "BE"]
CITIES = ["Paris", "Berlin", "Pune"]
DEVICE_TYPES = ["desktop", "mobile", "tablet"]
BROWSERS = ["chrome", "firefox", "safari"]
PROFILES = ["p1", "p2", "p3"]
N_SEGMENTS = 3
KEYS = ["age", "plan", "score", "missing"]
OPS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "exists", "not_exists"]
BASE = dt.datetime(2024, 3, 1, tzinfo=UTC)

maybe = st.none().__or__
numbers = st.one_of(st.integers(-3, 12), st.sampled_from([2.5, 7.0, 10.0, -0.5]))
strings = st.sampled_from(["gold", "silver", "10", "7", "", "Gold"])
values = st.one_of(numbers, strings)
instants = st.builds(
    lambda days, hours: BASE + dt.timedelta(days=days, hours=hours),
    st.integers(-4, 4),
    st.sampled_from([0, 0, 12, 23]),
)

subscriber = st.fixed_dictionaries(
    {
        "profile_id": maybe(st.sampled_from(PROFILES)),
        "country": maybe(st.sampled_from(COUNTRIES)),
        "state": maybe(st.sampled_from(STATES)),
        "city": maybe(st.sampled_from(CITIES)),
        "device_type": maybe(st.sampled_from(DEVICE_TYPES)),
        "browser": maybe(st.sampled_from(BROWSERS)),
        "segments": st.sets(st.integers(0, N_SEGMENTS - 1)),
        "subscribed_at": instants,
        "attributes": st.dictionaries(st.sampled_from(KEYS[:3]), values, max_size=3),
        "unsubscribed": st.booleans(),
    }
)


def sublist(pool: list[Any]) -> st.SearchStrategy[Optional[list[Any]]]:
    return maybe(st.lists(st.sampled_from(pool), min_size=1, max_size=3, unique=True))


@st.composite
def rules(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(st.sampled_from(OPS))
    rule: dict[str, Any] = {"key": draw(st.sampled_from(KEYS)), "op": op}
    if op in ("in", "nin"):
        rule["value"] = draw(st.lists(values, min_size=1, max_size=3))
    elif op not in ("exists", "not_exists"):
        rule["value"] = draw(values)
    return rule


def bound() -> st.SearchStrategy[Any]:
    return maybe(
        st.one_of(
            instants.map(lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")),
            instants.map(lambda t: t.date()),
            instants.map(lambda t: t.strftime("%Y-%m-%d")),
        )
    )


filters = st.fixed_dictionaries(
    {},
    optional={
        "include_segments": sublist(list(range(N_SEGMENTS))),
        "exclude_segments": sublist(list(range(N_SEGMENTS))),
        "include_countries": sublist(COUNTRIES + ["FR"]),
        "exclude_countries": sublist(COUNTRIES + ["FR"]),
        "include_states": sublist(STATES),
        "include_cities": sublist(CITIES),
        "include_device_types": sublist(DEVICE_TYPES),
        "include_browsers": sublist(BROWSERS),
        "profile_id": sublist(PROFILES + ["p9"]),
        "subscriber_hash": sublist([f"h{i}" for i in range(8)] + ["nope"]),
        "from_date": bound(),
        "to_date": bound(),
        "attributes": maybe(
            st.lists(st.lists(rules(), min_size=1, max_size=3), min_size=1, max_size=3)
        ),
    },
)


# ---- the reference reading ----


def is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(a: Any, b: Any) -> bool:
    if is_num(a) and is_num(b):
        return float(a) == float(b)
    return isinstance(a, str) and isinstance(b, str) and a == b


def compare(a: Any, b: Any) -> Optional[int]:
    """-1, 0, 1, or None when the two are not of one comparable type."""
    if is_num(a) and is_num(b):
        a, b = float(a), float(b)
    elif not (isinstance(a, str) and isinstance(b, str)):
        return None
    return (a > b) - (a < b)


def rule_holds(rule: dict[str, Any], attrs: dict[str, Any]) -> bool:
    op = rule["op"]
    if rule["key"] not in attrs:
        return op == "not_exists"
    have, want = attrs[rule["key"]], rule.get("value")
    c = compare(have, want)
    return {
        "exists": True,
        "not_exists": False,
        "eq": same(have, want),
        "ne": not same(have, want),
        "lt": c == -1,
        "lte": c in (-1, 0),
        "gt": c == 1,
        "gte": c in (0, 1),
        "in": isinstance(want, list) and any(same(have, w) for w in want),
        "nin": not (isinstance(want, list) and any(same(have, w) for w in want)),
    }[op]


def instant(v: Any) -> dt.datetime:
    if isinstance(v, dt.date) and not isinstance(v, dt.datetime):
        return dt.datetime(v.year, v.month, v.day, tzinfo=UTC)
    if len(v) == 10:
        return dt.datetime.fromisoformat(v).replace(tzinfo=UTC)
    return dt.datetime.fromisoformat(v.replace("Z", "+00:00"))


def selected(f: dict[str, Any], h: str, s: dict[str, Any]) -> bool:
    def among(key: str, value: Any) -> bool:
        return value is not None and value in f[key]

    def given_(key: str) -> bool:
        return bool(f.get(key))

    checks = [
        not s["unsubscribed"],
        not given_("include_segments") or bool(s["segments"] & set(f["include_segments"])),
        not given_("exclude_segments") or not s["segments"] & set(f["exclude_segments"]),
        not given_("include_countries") or among("include_countries", s["country"]),
        not given_("exclude_countries") or not among("exclude_countries", s["country"]),
        not given_("include_states") or among("include_states", s["state"]),
        not given_("include_cities") or among("include_cities", s["city"]),
        not given_("include_device_types") or among("include_device_types", s["device_type"]),
        not given_("include_browsers") or among("include_browsers", s["browser"]),
        not given_("profile_id") or among("profile_id", s["profile_id"]),
        not given_("subscriber_hash") or h in f["subscriber_hash"],
        f.get("from_date") is None or s["subscribed_at"] >= instant(f["from_date"]),
        f.get("to_date") is None or s["subscribed_at"] < instant(f["to_date"]),
        not f.get("attributes")
        or any(all(rule_holds(r, s["attributes"]) for r in g) for g in f["attributes"]),
    ]
    return all(checks)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(people=st.lists(subscriber, min_size=1, max_size=8), f=filters)
def test_broadcast_audience_matches_the_reference(
    pushwire_emulator: Emulator, people: list[dict[str, Any]], f: dict[str, Any]
) -> None:
    emu = pushwire_emulator
    emu.reset()  # the fixture is per test; each example starts fresh
    segment_ids = [emu.create_segment(f"s{i}") for i in range(N_SEGMENTS)]
    subs = {f"h{i}": p for i, p in enumerate(people)}
    for h, p in subs.items():
        # Every field as the emulator takes it, but the segments (drawn as indexes) and the
        # unsubscribing (a step of its own).
        fields = {k: v for k, v in p.items() if k not in ("segments", "unsubscribed")}
        emu.add_subscriber(h, **fields, segments=[segment_ids[i] for i in p["segments"]])
        if p["unsubscribed"]:
            emu.unsubscribe(h)
    f = {k: v for k, v in f.items() if v is not None}
    sent = dict(f)
    for key in ("include_segments", "exclude_segments"):
        if key in sent:
            sent[key] = [segment_ids[i] for i in sent[key]]
    expected = {h for h, p in subs.items() if selected(f, h, p)}
    refused = bool(f.get("profile_id")) and not any(
        p["profile_id"] in f["profile_id"] and not p["unsubscribed"] for p in subs.values()
    )
    event("refused" if refused else f"selects {min(len(expected), 3)}+ of {min(len(subs), 3)}+")
    with emu.client() as client:
        if refused:
            with pytest.raises(pushwire.BadRequestError, match="No Subcribers Found"):
                client.notifications.create(title="t", message="m", url=URL, **sent)
            assert emu.deliveries(status="all") == []
            return
        client.notifications.create(title="t", message="m", url=URL, **sent)
    got = [d["subscriber_hash"] for d in emu.deliveries(status="all")]
    assert sorted(got) == sorted(expected)
