"""Issue 4, behaviour 3: triggered campaigns (spec 2.1, 2.2, 4.14, 6.2).

An event named as an active campaign's start event starts its series for the subscriber
(found by profile_id, which wins over device_token_hash); the stop event cancels what is
pending; the daily cap counts the same local calendar day, the weekly cap the last seven
days; ``{{tags}}`` are filled from the event's data (missing ones become empty).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from engine_support import (
    IST,
    RIGHTAWAY,
    URL,
    UTC,
    advance_to,
    after_minutes,
    campaign_notification,
    next_utc_time,
    timeline,
)

from pushwire.testing import Emulator


def cart_campaign(emu: Emulator, **over: Any) -> int:
    fields: dict[str, Any] = {
        "campaign_name": "Abandoned cart",
        "campaign_type": "trigger",
        "daily_trigger_limit": 100,
        "weekly_trigger_limit": 100,
        "rules": {"start_event_name": "cart_add", "stop_event_name": "purchase"},
        "notifications": [
            campaign_notification(
                "Hi {{name}}",
                RIGHTAWAY,
                message="Your {{item}} is waiting, {{ name }}{{missing}}",
                url=URL + "cart/{{item}}?u={{user_id}}",
                image_url=URL + "img/{{item}}.png",
                big_image_url=URL + "big/{{item}}.png",
                actions=[
                    {"label": "Buy {{item}}", "url": URL + "buy/{{item}}"},
                    {
                        "label": "Later, {{name}}",
                        "url": URL + "later",
                        "image_url": URL + "a/{{item}}.png",
                    },
                ],
            ),  # fmt: skip
            campaign_notification("Reminder", after_minutes(10)),
            campaign_notification("Last call", after_minutes(60)),
        ],
    }
    fields.update(over)
    return emu.create_trigger(**fields)


def test_start_event_runs_the_series_and_stop_event_cancels_it(emu: Emulator) -> None:
    trigger_id = cart_campaign(emu)
    paused = cart_campaign(emu, campaign_name="Paused copy", status="pause")
    draft = cart_campaign(emu, campaign_name="Draft copy", status="draft")
    other = cart_campaign(
        emu,
        campaign_name="Other event",
        rules={"start_event_name": "browse", "stop_event_name": "purchase"},
    )
    emu.add_subscriber("h-ada", profile_id="ada")
    emu.add_subscriber("h-bob")
    emu.add_subscriber("h-cy", profile_id="cy")
    emu.add_subscriber("h-cy-phone", profile_id="cy")  # one profile, two devices
    emu.add_subscriber("h-idle", profile_id="idle")
    emu.add_subscriber("h-gone", profile_id="gone")
    emu.unsubscribe("h-gone")
    with emu.client() as client:
        ids = [n.id for n in client.triggers.get(trigger_id).notifications]
        t0 = emu.now
        client.events.track(
            "cart_add", profile_id="ada", data={"name": "Ada", "item": "shoes", "user_id": 7}
        )
        client.events.track("cart_add", device_token_hash="h-bob", data={"item": "hat"})
        # profile_id wins over device_token_hash: h-bob gets no second run.
        client.events.track(
            "cart_add", profile_id="cy", device_token_hash="h-bob", data={"name": "Cy"}
        )
        # A profile id that names nobody starts nothing, whatever the hash says.
        client.events.track("cart_add", profile_id="nobody", device_token_hash="h-idle")
        client.events.track("cart_add", profile_id="gone")
        client.events.track("cart_added", profile_id="idle")
        t1 = emu.now
        got = timeline(emu, "trigger", trigger_id)
        assert set(got) == {"h-ada", "h-bob", "h-cy", "h-cy-phone"}
        starts = {h: s[0][1] for h, s in got.items()}
        assert all(t0 <= s <= t1 and got[h] == [(ids[0], s)] for h, s in starts.items())

        emu.advance(5 * 60)
        client.events.track("purchase", profile_id="ada")
        client.events.track("purchase", device_token_hash="h-cy-phone")
        emu.advance(15 * 60)
        # h-bob's stop comes after the second was sent: only the third is cancelled.
        client.events.track("purchase", device_token_hash="h-bob")
        emu.advance(2 * 3600)

    got = timeline(emu, "trigger", trigger_id)
    s = starts
    assert got == {
        "h-ada": [(ids[0], s["h-ada"])],
        "h-bob": [(ids[0], s["h-bob"]), (ids[1], s["h-bob"] + dt.timedelta(minutes=10))],
        "h-cy": [
            (ids[0], s["h-cy"]),
            (ids[1], s["h-cy"] + dt.timedelta(minutes=10)),
            (ids[2], s["h-cy"] + dt.timedelta(minutes=70)),
        ],
        "h-cy-phone": [(ids[0], s["h-cy-phone"])],
    }
    # Only the active campaign of that start event ran.
    assert {d["source_id"] for d in emu.deliveries()} == {trigger_id}
    assert not {paused, draft, other} & {d["source_id"] for d in emu.deliveries(status="all")}


def test_personalization_tags_are_filled_from_the_event_data(emu: Emulator) -> None:
    trigger_id = cart_campaign(emu)
    emu.add_subscriber("h-ada", profile_id="ada")
    emu.add_subscriber("h-bob")
    with emu.client() as client:
        client.events.track(
            "cart_add", profile_id="ada", data={"name": "Ada", "item": "shoes", "user_id": 7}
        )
        client.events.track("cart_add", device_token_hash="h-bob", data={"item": "hat"})
        campaign = client.triggers.get(trigger_id)
    # The campaign itself keeps its tags.
    assert campaign.notifications[0].title == "Hi {{name}}"
    (ada,) = emu.deliveries("h-ada")
    assert ada["title"] == "Hi Ada"
    assert ada["message"] == "Your shoes is waiting, Ada"
    assert ada["url"] == URL + "cart/shoes?u=7"
    assert ada["image_url"] == URL + "img/shoes.png"
    assert ada["big_image_url"] == URL + "big/shoes.png"
    assert ada["actions"] == [
        {"label": "Buy shoes", "url": URL + "buy/shoes"},
        {"label": "Later, Ada", "url": URL + "later", "image_url": URL + "a/shoes.png"},
    ]
    (bob,) = emu.deliveries("h-bob")
    assert bob["title"] == "Hi "
    assert bob["message"] == "Your hat is waiting, "
    assert bob["url"] == URL + "cart/hat?u="
    assert [a["label"] for a in bob["actions"]] == ["Buy hat", "Later, "]
    # Later notifications of the run carry the same data.
    emu.advance(11 * 60)
    reminder = [d for d in emu.deliveries("h-ada") if d["title"] == "Reminder"]
    assert len(reminder) == 1


def capped(emu: Emulator, daily: int, weekly: int) -> int:
    return emu.create_trigger(
        campaign_name="Capped",
        daily_trigger_limit=daily,
        weekly_trigger_limit=weekly,
        rules={"start_event_name": "view", "stop_event_name": "buy"},
        notifications=[campaign_notification("Seen it?", RIGHTAWAY)],
    )


def test_daily_limit_counts_the_local_calendar_day(emu: Emulator) -> None:
    emu.set_timezone("+05:30")
    trigger_id = capped(emu, daily=2, weekly=100)
    emu.add_subscriber("a", profile_id="a")
    emu.add_subscriber("b", profile_id="b")
    # 23:00 local (17:30 UTC); two hours on is 01:00 local the next day, still the same UTC day.
    late = next_utc_time(emu, 23, tz=IST)
    advance_to(emu, late)
    with emu.client() as client:
        for _ in range(3):
            client.events.track("view", profile_id="a")
        client.events.track("view", profile_id="b")
        assert len(timeline(emu, "trigger", trigger_id)["a"]) == 2
        emu.advance(30 * 60)  # 23:30 local: still the same day
        client.events.track("view", profile_id="a")
        assert len(timeline(emu, "trigger", trigger_id)["a"]) == 2
        emu.advance(90 * 60)  # 01:00 local the next day
        assert emu.now.astimezone(UTC).date() == late.date()
        for _ in range(3):
            client.events.track("view", profile_id="a")
    got = timeline(emu, "trigger", trigger_id)
    day = late.astimezone(IST).date()
    days = [t.astimezone(IST).date() for _, t in got["a"]]
    assert days == [day, day, day + dt.timedelta(days=1), day + dt.timedelta(days=1)]
    assert len(got["b"]) == 1


def test_weekly_limit_counts_the_last_seven_days(emu: Emulator) -> None:
    trigger_id = capped(emu, daily=2, weekly=3)
    emu.add_subscriber("a", profile_id="a")
    advance_to(emu, next_utc_time(emu, 12))
    with emu.client() as client:

        def fire(n: int = 1) -> None:
            for _ in range(n):
                client.events.track("view", profile_id="a")

        def sent() -> list[dt.datetime]:
            return [t for _, t in timeline(emu, "trigger", trigger_id).get("a", [])]

        fire(3)  # day 0: two (daily cap)
        assert len(sent()) == 2
        day0 = sent()[0]
        emu.advance(86400)
        fire(2)  # day 1: one more, the third of the week
        assert len(sent()) == 3
        for d in range(2, 7):
            emu.advance(86400)
            fire()
            assert len(sent()) == 3, d
        # Just short of seven days after the first two: they still count.
        advance_to(emu, day0 + dt.timedelta(days=7) - dt.timedelta(seconds=30))
        fire()
        assert len(sent()) == 3
        # Past seven days: those two dropped out of the window, so two fit again.
        advance_to(emu, day0 + dt.timedelta(days=7, seconds=30))
        fire(3)
        assert len(sent()) == 5
    days = [(t - day0).days for t in sent()]
    assert days == [0, 0, 1, 7, 7]


def test_a_message_held_back_by_a_cap_shows_as_capped(emu: Emulator) -> None:
    # "Capped" and "never scheduled" must look different to a test.
    trigger_id = capped(emu, daily=1, weekly=2)
    emu.add_subscriber("a", profile_id="a")
    with emu.client() as client:
        client.events.track("view", profile_id="a")
        client.events.track("view", profile_id="a")
    assert [d["status"] for d in emu.deliveries("a", status="all")] == ["delivered", "capped"]
    (held,) = emu.deliveries("a", status="capped")
    assert (held["source_id"], held["title"], held["sent_at"]) == (trigger_id, "Seen it?", None)
    assert len(emu.deliveries("a")) == 1  # never sent
    with pytest.raises(ValueError, match="not delivered"):
        emu.record_view(held["delivery_id"])
    # a capped message does not count against the caps: the next day's goes out, the
    # second of the week (counted, the capped one would have been the second)
    emu.advance(86400)
    with emu.client() as client:
        client.events.track("view", profile_id="a")
    assert len(emu.deliveries("a")) == 2


def test_no_capped_row_for_a_subscriber_who_left(emu: Emulator) -> None:
    # The second step of a series, due after the subscriber left, would never be sent
    # anyway: it is not shown as held back by the cap.
    emu.create_trigger(
        campaign_name="Series",
        daily_trigger_limit=1,
        rules={"start_event_name": "view", "stop_event_name": "buy"},
        notifications=[
            campaign_notification("One", RIGHTAWAY),
            campaign_notification("Two", after_minutes(10)),
        ],
    )
    emu.add_subscriber("stays", profile_id="stays")
    emu.add_subscriber("leaves", profile_id="leaves")
    with emu.client() as client:
        client.events.track("view", profile_id="stays")
        client.events.track("view", profile_id="leaves")
    emu.unsubscribe("leaves")
    emu.advance(11 * 60)
    assert [d["title"] for d in emu.deliveries("stays", status="capped")] == ["Two"]
    assert [d["status"] for d in emu.deliveries("leaves", status="all")] == ["delivered"]
