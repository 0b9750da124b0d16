"""Issue 4, behaviour 5: analytics (spec 2.3, 2.12, 2.13, 4.1, 4.5, 4.10, 4.11).

Every number the service reports is compared with one this test derives on its own from
``emu.deliveries()`` and its own bookkeeping of what it did (views, clicks, unsubscribes,
subscribers). Semantics where the spec is silent (src/emulator/routes/analytics.rs,
src/emulator/engine/analytics.rs): UTC dates; weeks start on Monday; a row is dated by its
period's first day within the range; mobile means device_type mobile or tablet, desktop any
other device type or none (the distribution counts none as ``desktop`` too);
notification_sent counts distinct notifications sent in the period, net_subscriber_sent the
deliveries; campaign ``unsubscribed`` counts subscribers who left after receiving one of the
campaign's notifications. docs/analytics.md writes each field out.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Optional

import pytest
from engine_support import (
    RIGHTAWAY,
    URL,
    UTC,
    advance_to,
    after_days,
    campaign_notification,
    next_utc_time,
)

from pushwire.testing import Emulator

# hash: (device_type, country, state, city, device, platform, days before D0 it subscribed)
SUBS: dict[str, tuple[Any, ...]] = {
    "u1": ("desktop", "US", "CA", "San Francisco", "pc", "windows", 15),
    "u2": ("mobile", "US", "NY", "New York", "iphone", "ios", 9),
    "u3": ("tablet", "DE", "BE", "Berlin", "ipad", "ios", 9),
    "u4": ("desktop", "DE", "BY", "Munich", "mac", "macos", 3),
    "u5": ("mobile", "IN", None, "Mumbai", "android", "android", 1),
    "u6": ("desktop", "US", "CA", "Los Angeles", "pc", "linux", 0),
    "u7": ("mobile", "FR", "IDF", "Paris", "android", None, 0),
}
CLUB = ("u1", "u2", "u3", "u4")


@dataclass
class Book:
    """What the test did, with the UTC date it did it on."""

    subscribed: dict[str, dt.date] = field(default_factory=dict)
    unsubscribed: dict[str, dt.datetime] = field(default_factory=dict)
    views: dict[int, dt.date] = field(default_factory=dict)
    clicks: dict[int, dt.date] = field(default_factory=dict)


def mobile(h: str) -> bool:
    return SUBS[h][0] in ("mobile", "tablet")


def find(rows: list[dict[str, Any]], h: str, source: str, title: str) -> dict[str, Any]:
    (d,) = [
        r for r in rows if (r["subscriber_hash"], r["source"], r["title"]) == (h, source, title)
    ]
    return d


def play(emu: Emulator) -> tuple[dt.date, Book, int, int]:
    """Five weeks of activity; returns D0, the bookkeeping, the trigger id and the drip id."""
    book = Book()
    t0 = advance_to(emu, next_utc_time(emu, 10))
    d0 = t0.date()
    club = emu.create_segment("club")
    trigger_id = emu.create_trigger(
        campaign_name="Cart",
        rules={"start_event_name": "cart", "stop_event_name": "buy"},
        notifications=[
            campaign_notification("T1", RIGHTAWAY),
            campaign_notification("T2", after_days(1, "10:30:00")),
        ],
    )
    client = emu.client()
    drip_id = client.drips.create(
        "Club welcome",
        [
            campaign_notification("D1", RIGHTAWAY),
            campaign_notification("D2", after_days(2, "11:00:00")),
        ],
        send_to={"include_segments": [str(club)]},
    )
    for h, (dtype, country, state, city, device, platform, days) in SUBS.items():
        at = dt.datetime.combine(d0 - dt.timedelta(days=days), dt.time(8), tzinfo=UTC)
        emu.add_subscriber(
            h, profile_id=h, device_type=dtype, country=country, state=state, city=city,
            device=device, platform=platform, subscribed_at=at,
            segments=[club] if h in CLUB else [],
        )  # fmt: skip
        book.subscribed[h] = at.date()

    def view(
        h: str, source: str, title: str, click: bool = False, only_click: bool = False
    ) -> None:
        d = find(emu.deliveries(), h, source, title)
        today = emu.now.date()
        if not only_click:
            emu.record_view(d["delivery_id"])
            book.views[d["delivery_id"]] = today
        if click or only_click:
            emu.record_click(d["delivery_id"])
            book.clicks[d["delivery_id"]] = today

    def unsubscribe(h: str) -> None:
        emu.unsubscribe(h)
        book.unsubscribed[h] = emu.now

    # D0
    client.notifications.create(title="B1", message="m", url=URL)
    for h in ("u2", "u5", "u6"):
        client.events.track("cart", profile_id=h)
    for h in ("u1", "u2", "u3", "u5", "u6"):
        view(h, "broadcast", "B1", click=h in ("u1", "u2"))
    view("u2", "trigger", "T1", click=True)
    view("u5", "trigger", "T1")
    view("u1", "drip", "D1")
    view("u3", "drip", "D1", click=True)
    # D0 + 1: T2 went out at 10:30
    advance_to(emu, t0 + dt.timedelta(days=1, hours=2))
    view("u5", "trigger", "T2")
    view("u6", "trigger", "T2", click=True)
    view("u3", "broadcast", "B1", only_click=True)  # clicked a day after the view
    unsubscribe("u5")
    unsubscribe("u4")
    # D0 + 2: D2 went out at 11:00 (not to u4, who left)
    advance_to(emu, t0 + dt.timedelta(days=2, hours=2))
    view("u1", "drip", "D2")
    # D0 + 9
    advance_to(emu, t0 + dt.timedelta(days=9))
    client.notifications.create(title="B2", message="m", url=URL)
    view("u7", "broadcast", "B2", click=True)
    view("u6", "broadcast", "B2")
    # D0 + 35
    advance_to(emu, t0 + dt.timedelta(days=35))
    client.notifications.create(title="B3", message="m", url=URL, include_segments=[club])
    for h in ("u1", "u2", "u3"):
        view(h, "broadcast", "B3", click=h == "u3")
    unsubscribe("u2")
    client.close()
    return d0, book, trigger_id, drip_id


def period_start(d: dt.date, group_by: str) -> dt.date:
    if group_by == "day":
        return d
    if group_by == "week":
        return d - dt.timedelta(days=d.weekday())
    return d.replace(day=1)


def expected_summary(
    emu: Emulator, book: Book, start: dt.date, end: dt.date, group_by: str
) -> list[dict[str, Any]]:
    def label(d: dt.date) -> dt.date:
        return max(period_start(d, group_by), start)

    zero = dict.fromkeys(
        [
            "subscriber_count", "desktop_subscriber_count", "mobile_subscriber_count",
            "unsubscribed_count", "desktop_unsubscribed_count", "mobile_unsubscribed_count",
            "notification_sent", "net_subscriber_sent", "view_count", "click_count",
        ],
        0,
    )  # fmt: skip
    rows: dict[dt.date, dict[str, Any]] = {}
    d = start
    while d <= end:
        rows.setdefault(label(d), dict(zero))
        d += dt.timedelta(days=1)

    def bump(day: dt.date, key: str) -> None:
        if start <= day <= end:
            rows[label(day)][key] += 1

    for h, day in book.subscribed.items():
        bump(day, "subscriber_count")
        bump(day, "mobile_subscriber_count" if mobile(h) else "desktop_subscriber_count")
    for h, t in book.unsubscribed.items():
        bump(t.date(), "unsubscribed_count")
        bump(t.date(), "mobile_unsubscribed_count" if mobile(h) else "desktop_unsubscribed_count")
    sent_notifications: dict[dt.date, set[tuple[str, int]]] = defaultdict(set)
    for row in emu.deliveries():
        day = row["sent_at"].date()
        bump(day, "net_subscriber_sent")
        if start <= day <= end:
            sent_notifications[label(day)].add((row["source"], row["notification_id"]))
    for key, notes in sent_notifications.items():
        rows[key]["notification_sent"] = len(notes)
    for day in book.views.values():
        bump(day, "view_count")
    for day in book.clicks.values():
        bump(day, "click_count")
    out = []
    for key in sorted(rows):
        r = rows[key]
        r["ctr"] = round(r["click_count"] / r["view_count"] * 100, 2) if r["view_count"] else 0
        out.append({"date": key, **r})
    return out


def test_summary_rows_by_day_week_and_month(emu: Emulator) -> None:
    d0, book, _, _ = play(emu)
    # The bookkeeping agrees with what the emulator recorded.
    delivered = {d["delivery_id"]: d for d in emu.deliveries()}
    assert {i for i, d in delivered.items() if d["viewed_at"]} == set(book.views)
    assert {i for i, d in delivered.items() if d["clicked_at"]} == set(book.clicks)
    assert len(delivered) == 7 + 3 + 3 + 4 + 3 + 5 + 3  # B1 T1 T2 D1 D2 B2 B3
    with emu.client() as client:
        ranges = [
            (d0 - dt.timedelta(days=12), d0 + dt.timedelta(days=40)),
            (d0 + dt.timedelta(days=1), d0 + dt.timedelta(days=9)),
            (d0, d0),
        ]
        for start, end in ranges:
            for group_by in ("day", "week", "month"):
                got = client.analytics.summary(start, end, group_by=group_by)
                want = expected_summary(emu, book, start, end, group_by)
                for r in got:
                    r["date"] = dt.date.fromisoformat(str(r["date"])[:10])  # date or datetime
                    assert r["ctr"] == pytest.approx(
                        next(w["ctr"] for w in want if w["date"] == r["date"]), abs=0.005
                    )
                strip = [{k: v for k, v in r.items() if k != "ctr"} for r in got]
                assert strip == [{k: v for k, v in r.items() if k != "ctr"} for r in want], (
                    start,
                    end,
                    group_by,
                )
        # Spot checks of the derivation itself.
        (day0,) = client.analytics.summary(d0, d0, group_by="day")
        assert day0["net_subscriber_sent"] == 7 + 3 + 4
        assert day0["notification_sent"] == 3  # B1, T1, D1
        assert (day0["view_count"], day0["click_count"]) == (9, 4)
        assert day0["ctr"] == pytest.approx(44.44, abs=0.01)
        assert (day0["subscriber_count"], day0["mobile_subscriber_count"]) == (2, 1)
        quiet = client.analytics.summary(
            d0 + dt.timedelta(days=3), d0 + dt.timedelta(days=4), group_by="day"
        )
        assert [r["ctr"] for r in quiet] == [0, 0]


def campaign_expectation(
    emu: Emulator,
    book: Book,
    source: str,
    source_id: int,
    title: Optional[str],
    start: Optional[dt.date],
    end: Optional[dt.date],
) -> dict[str, Any]:
    def inside(day: dt.date) -> bool:
        return (start is None or day >= start) and (end is None or day <= end)

    def inside_opt(day: Optional[dt.date]) -> bool:
        return day is not None and inside(day)

    rows = [
        d
        for d in emu.deliveries()
        if d["source"] == source
        and d["source_id"] == source_id
        and (title is None or d["title"] == title)
    ]
    views = sum(1 for d in rows if inside_opt(book.views.get(d["delivery_id"])))
    clicks = sum(1 for d in rows if inside_opt(book.clicks.get(d["delivery_id"])))
    left = {
        d["subscriber_hash"]
        for d in rows
        if d["subscriber_hash"] in book.unsubscribed
        and book.unsubscribed[d["subscriber_hash"]] >= d["sent_at"]
        and inside(book.unsubscribed[d["subscriber_hash"]].date())
    }
    return {
        "sentcount": sum(1 for d in rows if inside(d["sent_at"].date())),
        "views": views,
        "clicks": clicks,
        "unsubscribed": len(left),
        "ctr": round(clicks / views * 100, 2) if views else 0,
    }


def as_dict(a: Any) -> dict[str, Any]:
    return {k: getattr(a, k) for k in ("sentcount", "views", "clicks", "unsubscribed", "ctr")}


def test_campaign_analytics_of_triggers_and_drips(emu: Emulator) -> None:
    d0, book, trigger_id, drip_id = play(emu)
    day = dt.timedelta(days=1)
    ranges: list[tuple[Optional[dt.date], Optional[dt.date]]] = [
        (None, None),
        (d0, d0),
        (d0 + day, d0 + day),
        (d0 + day, None),
        (None, d0 + day),
        (d0 + 3 * day, d0 + 40 * day),
    ]
    with emu.client() as client:
        campaigns = [("trigger", client.triggers, trigger_id), ("drip", client.drips, drip_id)]
        for (start, end), (kind, resource, cid) in itertools.product(ranges, campaigns):
            c = resource.get(cid, analytics_start_at=start, analytics_end_at=end)
            assert as_dict(c.analytics) == pytest.approx(
                campaign_expectation(emu, book, kind, cid, None, start, end)
            ), (kind, start, end)
            for n in c.notifications:
                assert as_dict(n.analytics) == pytest.approx(
                    campaign_expectation(emu, book, kind, cid, n.title, start, end)
                ), (kind, n.title, start, end)
            # The list form carries the same campaign totals.
            (listed,) = resource.list(analytics_start_at=start, analytics_end_at=end).data
            assert listed.analytics == c.analytics
        # Spot checks of the derivation itself.
        t = client.triggers.get(trigger_id)
        assert as_dict(t.analytics) == {
            "sentcount": 6, "views": 4, "clicks": 2, "unsubscribed": 2, "ctr": 50.0
        }  # fmt: skip
        d = client.drips.get(drip_id)
        # u4 (drip D1 on D0) left on D0+1; u2 (D1 and D2) left on D0+35.
        assert as_dict(d.analytics) == {
            "sentcount": 7, "views": 3, "clicks": 1, "unsubscribed": 2, "ctr": pytest.approx(33.33)
        }  # fmt: skip


def test_subscriber_distribution(emu: Emulator) -> None:
    d0, book, _, _ = play(emu)
    active = [h for h in SUBS if h not in book.unsubscribed]
    dims = {"device_type": 0, "country": 1, "state": 2, "city": 3, "device": 4, "platform": 5}

    def counter(dim: str) -> dict[str, int]:
        return dict(Counter(SUBS[h][dims[dim]] for h in active if SUBS[h][dims[dim]] is not None))

    with emu.client() as client:
        for types in (["country"], ["device_type", "city"], ["state", "device", "platform"]):
            got = client.analytics.subscribers(types=types)
            assert got == {t: counter(t) for t in types}
        everything = client.analytics.subscribers()
    assert set(everything) >= {"city", "country", "device", "device_type", "state"}
    for dim, counts in everything.items():
        assert counts == counter(dim), dim
    assert counter("country") == {"US": 2, "DE": 1, "FR": 1}


# hash: (device_type, device, days before D0 it subscribed, unsubscribes on D0)
MIXED: dict[str, tuple[Optional[str], Optional[str], int, bool]] = {
    "a": ("desktop", "pc", 2, False),
    "b": (None, None, 2, False),
    "c": ("mobile", "iphone", 1, False),
    "d": ("tablet", "ipad", 1, True),
    "f": (None, None, 1, True),
    "e": (None, None, 0, False),
}


def test_subscribers_without_a_device_type_count_as_desktop_everywhere(emu: Emulator) -> None:
    """Issue 37: a subscriber with no device type is desktop in the summary and in the
    distribution's ``device_type`` buckets, so that desktop and mobile add up to the
    subscribers counted, and the buckets to the active subscribers (docs/analytics.md)."""
    t0 = advance_to(emu, next_utc_time(emu, 10))
    d0 = t0.date()
    for h, (dtype, device, days, _) in MIXED.items():
        at = dt.datetime.combine(d0 - dt.timedelta(days=days), dt.time(8), tzinfo=UTC)
        emu.add_subscriber(h, device_type=dtype, device=device, subscribed_at=at)
    for h, (*_, leaves) in MIXED.items():
        if leaves:
            emu.unsubscribe(h)
    active = [h for h, (*_, leaves) in MIXED.items() if not leaves]
    start = d0 - dt.timedelta(days=2)
    with emu.client() as client:
        rows = client.analytics.summary(start, d0, group_by="day")
        grouped = [
            r for g in ("week", "month") for r in client.analytics.summary(start, d0, group_by=g)
        ]
        dist = client.analytics.subscribers(types=["device_type", "device"])
        everything = client.analytics.subscribers()
    keys = (
        "subscriber_count", "desktop_subscriber_count", "mobile_subscriber_count",
        "unsubscribed_count", "desktop_unsubscribed_count", "mobile_unsubscribed_count",
    )  # fmt: skip
    # Day by day: D0-2 a and b (no type); D0-1 c (mobile), d (tablet), f (none); D0 e (none),
    # and d and f leave.
    assert [tuple(r[k] for k in keys) for r in rows] == [
        (2, 2, 0, 0, 0, 0),
        (3, 1, 2, 0, 0, 0),
        (1, 1, 0, 2, 1, 1),
    ]
    for r in rows + grouped:
        assert r["desktop_subscriber_count"] + r["mobile_subscriber_count"] == r["subscriber_count"]
        assert (
            r["desktop_unsubscribed_count"] + r["mobile_unsubscribed_count"]
            == r["unsubscribed_count"]
        )
    total = {k: sum(r[k] for r in rows) for k in keys}
    # The distribution: every active subscriber in one device_type bucket, those without a
    # type under desktop, as the summary counts them.
    assert dist["device_type"] == {"desktop": 3, "mobile": 1}
    assert everything["device_type"] == dist["device_type"]
    assert sum(dist["device_type"].values()) == len(active)
    assert (
        dist["device_type"]["desktop"]
        == total["desktop_subscriber_count"] - total["desktop_unsubscribed_count"]
    )
    assert (
        dist["device_type"].get("mobile", 0) + dist["device_type"].get("tablet", 0)
        == total["mobile_subscriber_count"] - total["mobile_unsubscribed_count"]
    )
    # The other dimensions have no default: a subscriber without a device is in no bucket.
    assert dist["device"] == {"pc": 1, "iphone": 1}
