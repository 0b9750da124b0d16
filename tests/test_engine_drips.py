"""Issue 4, behaviour 2: drip autoresponders (spec 2.7-2.9, 6.3).

A subscriber starts a drip's series once, when it subscribes or is added to a segment and
then matches the drip's audience; each notification is due relative to the previous one
(days and weekdays in the site's time zone), and ``send_to`` is checked again when it is due.
"""

from __future__ import annotations

import datetime as dt

from engine_support import (
    IST,
    RIGHTAWAY,
    UTC,
    advance_to,
    after_days,
    after_dow,
    after_minutes,
    campaign_notification,
    next_utc_time,
    timeline,
)

from pushwire.testing import Emulator


def expected_series(start: dt.datetime, tz: dt.tzinfo) -> list[dt.datetime]:
    """rightaway; 30 minutes later; the local day after that one, at 09:00 local."""
    second = start + dt.timedelta(minutes=30)
    local_day = second.astimezone(tz).date() + dt.timedelta(days=1)
    third = dt.datetime.combine(local_day, dt.time(9, 0), tzinfo=tz).astimezone(UTC)
    return [start, second, third]


def test_drip_series_starts_on_subscribe_and_segment_add(emu: Emulator) -> None:
    emu.set_timezone("+05:30")
    vip = emu.create_segment("vip")
    # 20:00 UTC is 01:30 the next day at UTC+5:30, so "1 day later at 09:00" differs from
    # what a UTC reading would give.
    advance_to(emu, next_utc_time(emu, 20))
    # Subscribed before the drip exists: nothing starts until they join the segment.
    for h, profile, country in [
        ("by-hash", None, "IN"),
        ("by-profile", "prof-c", "IN"),
        ("twice", "prof-t", "IN"),
        ("removed", "prof-r", "IN"),
        ("excluded", "prof-x", "DE"),
        ("outsider", None, "IN"),
    ]:
        emu.add_subscriber(h, profile_id=profile, country=country)
    with emu.client() as client:
        drip_id = client.drips.create(
            "Welcome",
            [
                campaign_notification("Welcome", RIGHTAWAY),
                campaign_notification("Tips", after_minutes(30)),
                campaign_notification("Offer", after_days(1, "09:00:00")),
            ],
            send_to={"include_segments": [str(vip)], "exclude_countries": ["DE"]},
        )
        ids = [n.id for n in client.drips.get(drip_id).notifications]

        # Subscribing into the segment starts the series.
        emu.add_subscriber("on-subscribe", country="IN", segments=[vip])
        # Subscribing outside the audience does not.
        emu.add_subscriber("new-outsider", country="IN")
        emu.advance(60)
        client.segments.add_subscribers(vip, ["by-hash", "twice", "excluded"])
        emu.advance(60)
        client.segments.add_profiles("vip", ["prof-c", "prof-r", "prof-t", "prof-x"])
        emu.advance(60)
        # Already in the segment (and started): adding again starts nothing.
        client.segments.add_subscribers(vip, ["twice", "on-subscribe"])

        starts = {h: s[0][1] for h, s in timeline(emu, "drip", drip_id).items()}
        assert set(starts) == {"on-subscribe", "by-hash", "twice", "by-profile", "removed"}

        # Removed from the segment before the second is due: send_to fails then.
        emu.advance(10 * 60)
        client.segments.remove_profiles("vip", ["prof-r"])
        emu.advance(3 * 86400)
        # Re-adding after a removal does not start the drip again.
        client.segments.add_profiles("vip", ["prof-r"])
        client.segments.add_subscribers(vip, ["twice"])

    got = timeline(emu, "drip", drip_id)
    assert set(got) == {"on-subscribe", "by-hash", "twice", "by-profile", "removed"}
    for h in ("on-subscribe", "by-hash", "twice", "by-profile"):
        assert got[h] == list(zip(ids, expected_series(starts[h], IST))), h
    assert got["removed"] == [(ids[0], starts["removed"])]
    # Each series started when its subscriber joined, in the order they joined.
    assert starts["on-subscribe"] < starts["by-hash"] == starts["twice"] < starts["by-profile"]
    assert starts["by-profile"] == starts["removed"]
    # What a subscriber got is the drip's content.
    first = [d for d in emu.deliveries("by-hash")][0]
    assert (first["title"], first["url"]) == ("Welcome", "https://shop.example/welcome")


def test_drip_days_and_weekday_follow_the_site_time_zone(emu: Emulator) -> None:
    emu.set_timezone("-08:00")
    pst = dt.timezone(dt.timedelta(hours=-8))
    # 03:00 UTC is the previous evening (19:00) at UTC-8.
    advance_to(emu, next_utc_time(emu, 3))
    with emu.client() as client:
        drip_id = client.drips.create(
            "Weekly",
            [
                campaign_notification("Hello", after_minutes(5)),
                campaign_notification("Monday", after_dow(1, "10:00:00")),
                campaign_notification("Next Monday", after_dow(1, "10:00:00")),
                campaign_notification("Two days on", after_days(2, "08:15:00")),
            ],
        )
        ids = [n.id for n in client.drips.get(drip_id).notifications]
    emu.add_subscriber("a")
    emu.advance(20 * 86400)
    (series,) = timeline(emu, "drip", drip_id).values()
    start = series[0][1] - dt.timedelta(minutes=5)

    def next_monday_10(after: dt.datetime) -> dt.datetime:
        day = after.astimezone(pst).date()
        while True:
            t = dt.datetime.combine(day, dt.time(10), tzinfo=pst)
            if day.isoweekday() == 1 and t > after:
                return t.astimezone(UTC)
            day += dt.timedelta(days=1)

    first = start + dt.timedelta(minutes=5)
    monday = next_monday_10(first)
    monday2 = next_monday_10(monday)
    two_days = dt.datetime.combine(
        monday2.astimezone(pst).date() + dt.timedelta(days=2), dt.time(8, 15), tzinfo=pst
    ).astimezone(UTC)
    assert series == list(zip(ids, [first, monday, monday2, two_days]))
    assert monday2 - monday == dt.timedelta(days=7)
    assert monday.astimezone(pst).weekday() == 0 and monday.astimezone(pst).hour == 10
    assert two_days.astimezone(pst).strftime("%a %H:%M") == "Wed 08:15"


def test_drip_stops_for_a_subscriber_who_unsubscribes(emu: Emulator) -> None:
    with emu.client() as client:
        drip_id = client.drips.create(
            "Everyone",
            [
                campaign_notification("One", RIGHTAWAY),
                campaign_notification("Two", after_minutes(60)),
            ],
        )
    emu.add_subscriber("stays")
    emu.add_subscriber("leaves")
    emu.advance(30 * 60)
    emu.unsubscribe("leaves")
    emu.advance(60 * 60)
    got = {h: [n for n, _ in s] for h, s in timeline(emu, "drip", drip_id).items()}
    assert len(got["stays"]) == 2
    assert len(got["leaves"]) == 1


def test_drip_include_and_exclude_rules(emu: Emulator) -> None:
    a = emu.create_segment("a")
    b = emu.create_segment("b")
    with emu.client() as client:
        drip_id = client.drips.create(
            "Targeted",
            [campaign_notification("Only", RIGHTAWAY)],
            send_to={
                "include_segments": [str(a)],
                "exclude_segments": [str(b)],
                "include_countries": ["US", "CA"],
                "include_states": ["NY", "ON"],
                "exclude_cities": ["Buffalo"],
            },
        )
    people = {
        "ok-ny": ("US", "NY", "New York", [a]),
        "ok-on": ("CA", "ON", "Toronto", [a]),
        "in-b": ("US", "NY", "New York", [a, b]),
        "no-seg": ("US", "NY", "New York", []),
        "wrong-country": ("GB", "NY", "New York", [a]),
        "wrong-state": ("US", "CA", "Los Angeles", [a]),
        "excluded-city": ("US", "NY", "Buffalo", [a]),
    }
    for h, (country, state, city, segs) in people.items():
        emu.add_subscriber(h, country=country, state=state, city=city, segments=segs)
    assert set(timeline(emu, "drip", drip_id)) == {"ok-ny", "ok-on"}
