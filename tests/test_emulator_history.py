"""Seeding a history (issue 58, item 8, in part): views and clicks recorded in bulk, by a list
of deliveries or a share of them, and generated subscribers given profile ids by a pattern,
so that events and profile calls can name them. Against the emulator, over its admin API."""

from __future__ import annotations

import pytest

BROADCAST = {"title": "Sale", "message": "Half price", "url": "https://shop.example/"}


def broadcast(emu, client) -> tuple[int, list[int]]:
    """A broadcast to everyone, and its deliveries' ids."""
    nid = client.notifications.create(**BROADCAST)
    return nid, [d["delivery_id"] for d in emu.deliveries(notification_id=nid)]


def test_generated_subscribers_take_profile_ids_by_a_pattern(emu):
    emu.add_subscriber(profile_id="someone")
    emu.generate_subscribers(3, profile_id="user-{n}", seed=1)
    emu.generate_subscribers(2, profile_id="{n}@shop.example", seed=2)
    assert [s["profile_id"] for s in emu.subscribers()] == [
        "someone", "user-2", "user-3", "user-4", "5@shop.example", "6@shop.example",
    ]  # fmt: skip
    # Named by profile, as an application names its users.
    vip = emu.create_segment("vip")
    client = emu.client()
    client.segments.add_profiles("vip", ["user-3", "5@shop.example"])
    members = [s["profile_id"] for s in emu.subscribers() if vip in s["segments"]]
    assert members == ["user-3", "5@shop.example"]
    with pytest.raises(ValueError, match=r"\{n\}"):
        emu.generate_subscribers(1, profile_id="user")
    assert len(emu.subscribers()) == 6


def test_views_and_clicks_recorded_by_a_list_of_deliveries(emu):
    emu.generate_subscribers(10, online=1.0, seed=3)
    client = emu.client()
    nid, ids = broadcast(emu, client)
    assert emu.record_views(ids[:4]) == 4
    assert emu.record_views(ids[2:6]) == 2  # a delivery keeps its first view
    assert emu.record_clicks(ids[:1]) == 1
    with pytest.raises(ValueError, match="does not exist"):
        emu.record_views([ids[9], 10_000])
    viewed = [d["delivery_id"] for d in emu.deliveries(notification_id=nid) if d["viewed_at"]]
    assert viewed == ids[:6]  # the refused call recorded none of its list
    (b,) = emu.broadcasts()
    assert (b["views"], b["clicks"]) == (6, 1)
    assert (emu.summary()[-1]["view_count"], emu.summary()[-1]["click_count"]) == (6, 1)
    client.close()


def test_a_share_of_one_broadcasts_deliveries_the_same_for_a_seed(emu):
    emu.generate_subscribers(2_000, online=1.0, seed=4)
    client = emu.client()
    first, _ = broadcast(emu, client)
    second, _ = broadcast(emu, client)
    views = emu.record_views(rate=0.25, notification_id=first, seed=7)
    assert 400 < views < 600  # a quarter of 2,000, drawn
    assert emu.record_clicks(rate=0.1, notification_id=first, seed=7) < views
    counts = {b["notification_id"]: b["views"] for b in emu.broadcasts()}
    assert counts == {first: views, second: 0}
    # The same draw on a fresh site of the same population.
    emu.reset()
    emu.generate_subscribers(2_000, online=1.0, seed=4)
    again, _ = broadcast(emu, client)
    assert emu.record_views(rate=0.25, notification_id=again, seed=7) == views
    with pytest.raises(ValueError, match="rate"):
        emu.record_views(rate=1.5)
    with pytest.raises(ValueError, match="one of them"):
        emu.record_views()
    client.close()
