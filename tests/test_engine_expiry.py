"""Issue 4, behaviour 6: expiry (spec 2.2/2.8 ``expiry``, 4.13 ``notification_expiry``).

A delivery to a device that is offline waits for it; if the device does not come online
before the notification expires it is dropped ("expired"), never delivered later and not
counted as sent. One fetched in time is delivered when the device comes online.
"""

from __future__ import annotations

import datetime as dt

import pytest
from engine_support import RIGHTAWAY, URL, advance_to, campaign_notification, next_utc_time

from pushwire.testing import Emulator


def statuses(emu: Emulator, nid: int) -> dict[str, str]:
    return {
        d["subscriber_hash"]: d["status"]
        for d in emu.deliveries(status="all")
        if d["notification_id"] == nid
    }


def test_broadcast_to_offline_devices_expires_or_waits(emu: Emulator) -> None:
    t0 = advance_to(emu, next_utc_time(emu, 9))
    emu.add_subscriber("online")
    emu.add_subscriber("never", online=False)
    emu.add_subscriber("in-time", online=False)
    emu.add_subscriber("too-late")
    emu.set_online("too-late", False)
    emu.add_subscriber("gone", online=False)
    with emu.client() as client:
        sent_at = emu.now
        nid = client.notifications.create(title="Flash", message="m", url=URL, expiry=60)
        after = emu.now
    assert statuses(emu, nid) == {
        "online": "delivered",
        "never": "pending",
        "in-time": "pending",
        "too-late": "pending",
        "gone": "pending",
    }
    (due,) = {d["queued_at"] for d in emu.deliveries(status="all")}
    assert sent_at <= due <= after
    assert [d["subscriber_hash"] for d in emu.deliveries()] == ["online"]

    advance_to(emu, due + dt.timedelta(minutes=30))
    emu.unsubscribe("gone")
    emu.set_online("gone", True)  # unsubscribed while it waited: never delivered
    before = emu.now
    emu.set_online("in-time", True)
    came_online = emu.now
    (d,) = emu.deliveries("in-time")
    assert d["status"] == "delivered"
    assert before <= d["sent_at"] <= came_online
    assert d["queued_at"] == due

    advance_to(emu, due + dt.timedelta(seconds=59 * 60 + 55))  # not expired yet
    assert statuses(emu, nid)["too-late"] == "pending"
    advance_to(emu, due + dt.timedelta(minutes=60, seconds=5))
    emu.set_online("too-late", True)
    emu.set_online("never", False)
    assert statuses(emu, nid) == {
        "online": "delivered",
        "in-time": "delivered",
        "never": "expired",
        "too-late": "expired",
        "gone": "expired",
    }
    emu.advance(30 * 86400)
    emu.set_online("never", True)
    assert {d["subscriber_hash"] for d in emu.deliveries()} == {"online", "in-time"}
    assert {d["subscriber_hash"] for d in emu.deliveries(status="expired")} == {
        "never",
        "too-late",
        "gone",
    }
    assert emu.deliveries(status="pending") == []

    # Only what was delivered counts as sent, on the day it was delivered.
    with emu.client() as client:
        rows = client.analytics.summary(t0.date(), t0.date(), group_by="day")
    assert [(r["net_subscriber_sent"], r["notification_sent"]) for r in rows] == [(2, 1)]


def test_campaign_notifications_expire_per_their_expiry(emu: Emulator) -> None:
    trigger_id = emu.create_trigger(
        campaign_name="Short lived",
        rules={"start_event_name": "go", "stop_event_name": "stop"},
        notifications=[campaign_notification("Now", RIGHTAWAY, expiry=600)],
    )
    advance_to(emu, next_utc_time(emu, 9))
    emu.add_subscriber("online", profile_id="online")
    emu.add_subscriber("late", profile_id="late", online=False)
    emu.add_subscriber("soon", profile_id="soon", online=False)
    with emu.client() as client:
        for p in ("online", "late", "soon"):
            client.events.track("go", profile_id=p)
        emu.advance(9 * 60)
        emu.set_online("soon", True)
        soon_at = emu.now
        emu.advance(2 * 60)
        emu.set_online("late", True)
        t = client.triggers.get(trigger_id)
    got = {d["subscriber_hash"]: d for d in emu.deliveries(status="all")}
    assert {h: d["status"] for h, d in got.items()} == {
        "online": "delivered",
        "soon": "delivered",
        "late": "expired",
    }
    assert got["soon"]["sent_at"] <= soon_at
    assert got["soon"]["sent_at"] - got["soon"]["queued_at"] >= dt.timedelta(minutes=9)
    assert got["late"]["sent_at"] is None
    assert t.analytics.sentcount == 2
    assert t.notifications[0].analytics.sentcount == 2
    # An expired delivery cannot be viewed or clicked.
    with pytest.raises(ValueError, match="expired"):
        emu.record_view(got["late"]["delivery_id"])
