"""Seeding a history and reading it back (issue 58, item 8): views and clicks recorded in
bulk, by a list of deliveries or a share of them; generated subscribers given profile ids by
a pattern, so that events and profile calls can name them; subscribers and deliveries read
a page at a time, in the order sent, the same in this process as over HTTP; campaign
analytics through the index by source, after a reload too. Against the emulator."""

from __future__ import annotations

import datetime as dt

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


def test_pages_read_in_process_are_the_rows_the_admin_api_gives(emu):
    """The in-process emulator makes its subscriber and delivery rows in Rust; an emulator
    reached over HTTP decodes the admin API's JSON. Both give the same rows, key for key,
    type for type, page for page."""
    vip = emu.create_segment("vip")
    emu.generate_subscribers(
        240,
        attributes={"plan": {"free": 1, "pro": 1}, "age": range(18, 80)},
        segments={vip: 0.5},
        online=0.7,
        profile_id="user-{n}",
        seed=11,
    )
    odd = emu.add_subscriber(
        "h-odd",
        attributes={"tags": ["a", "b"], "prefs": {"x": 1}, "ratio": 0.25, "big": 2**40,
                    "flag": False, "none": None, "name": "Zoë"},
        segments=[vip],
    )  # fmt: skip
    emu.unsubscribe(emu.subscribers(offset=3, limit=1)[0]["subscriber_hash"])
    client = emu.client()
    first = client.notifications.create(
        title="Sale", message="Half price", url="https://shop.example/",
        image_url="https://shop.example/i.png",
        actions=[{"label": "Open", "url": "https://shop.example/open"}],
    )  # fmt: skip
    emu.record_views(rate=0.5, notification_id=first, seed=1)
    emu.record_clicks(rate=0.2, notification_id=first, seed=1)
    emu.advance(40 * 86400)  # the offline devices' notifications expire
    client.notifications.create(title="Later", message="Again", url="https://shop.example/2")
    remote = type(emu).connect(emu.base_url, api_key=emu.api_key)

    def typed(rows):
        return [[(k, type(v).__name__, v) for k, v in row.items()] for row in rows]

    subscribers = emu.subscribers()
    assert len(subscribers) == 241
    assert typed(subscribers) == typed(remote.subscribers())
    assert next(s for s in subscribers if s["subscriber_hash"] == odd)["attributes"]["big"] == 2**40
    assert typed(emu.subscribers(offset=200, limit=30)) == typed(subscribers[200:230])
    assert emu.subscribers(offset=300) == []

    everything = emu.deliveries(status="all")
    assert {d["status"] for d in everything} == {"delivered", "expired", "pending"}
    assert typed(everything) == typed(remote.deliveries(status="all"))
    pages = [emu.deliveries(status="all", offset=o, limit=100) for o in range(0, 500, 100)]
    assert typed([d for page in pages for d in page]) == typed(everything)
    mine = emu.deliveries(odd, notification_id=first)
    assert typed(mine) == typed(remote.deliveries(odd, notification_id=first))
    assert mine[0]["actions"] == [{"label": "Open", "url": "https://shop.example/open"}]
    # Each row is its own: a test that changes one changes no other.
    everything[0]["actions"].append("changed")
    everything[0]["segments"] = None
    assert everything[1]["actions"] == [{"label": "Open", "url": "https://shop.example/open"}]
    subscribers[0]["segments"].append("changed")
    assert "changed" not in emu.subscribers(limit=1)[0]["segments"]
    with pytest.raises(ValueError, match="offset must not be negative"):
        emu.subscribers(offset=-1)
    with pytest.raises(ValueError, match="subscriber h-none does not exist"):
        emu.deliveries("h-none")
    remote.close()
    client.close()


def test_a_campaigns_analytics_are_its_own_deliveries_after_a_reload(emu, tmp_path):
    """A campaign's analytics read its own deliveries through an index by source, which a
    state file does not hold: a load makes it again, and the counts are the same."""
    from conftest import seed_trigger

    emu.generate_subscribers(50, profile_id="user-{n}", online=1.0, seed=5)
    cart = seed_trigger(emu, "Cart")
    other = seed_trigger(emu, "Browse", rules={"start_event_name": "browse"})
    client = emu.client()
    for n in range(1, 21):
        client.events.track("cart_add", profile_id=f"user-{n}")
    nid = client.notifications.create(**BROADCAST)
    emu.record_views(rate=1.0, notification_id=nid, seed=1)
    emu.record_views(rate=1.0, source="trigger", source_id=cart, seed=1)
    before = {
        t.trigger_id: (t.analytics.sentcount, t.analytics.views) for t in client.triggers.list()
    }
    assert before[cart][0] >= 20 and before[cart][1] == before[cart][0]
    assert before[other] == (0, 0)
    path = emu.save(tmp_path / "state.bin")
    with type(emu).load(path) as again, again.client() as reloaded:
        after = {
            t.trigger_id: (t.analytics.sentcount, t.analytics.views)
            for t in reloaded.triggers.list()
        }
    assert after == before
    client.close()


def test_deliveries_read_in_the_order_sent_when_a_device_comes_online_late(emu):
    """A delivery that waited for its device is sent when the device comes online, after
    those made since: pages stay in the order sent, not in the order made."""
    late = emu.add_subscriber("h-late", online=False)
    emu.generate_subscribers(5, online=1.0, seed=12)
    client = emu.client()
    first = client.notifications.create(title="One", message="1", url="https://shop.example/1")
    emu.advance(60)
    second = client.notifications.create(title="Two", message="2", url="https://shop.example/2")
    emu.advance(60)
    emu.set_online(late, True)
    rows = emu.deliveries()
    assert [(d["notification_id"], d["subscriber_hash"] == late) for d in rows] == (
        [(first, False)] * 5 + [(second, False)] * 5 + [(first, True), (second, True)]
    )
    assert [d["sent_at"] for d in rows] == sorted(d["sent_at"] for d in rows)
    pages = [emu.deliveries(offset=o, limit=5) for o in range(0, 15, 5)]
    assert [d for page in pages for d in page] == rows
    assert emu.deliveries(late, limit=1)[0]["notification_id"] == first
    client.close()


@pytest.mark.parametrize("late", [False, True], ids=["in-order", "a-device-online-late"])
def test_deliveries_paged_after_the_last_row_read_every_one_once(emu, late):
    """Paging by ``after`` (the last row's id) reads every selected delivery once, in the
    order sent, whether they were sent in the order made or a device came online late."""
    waiting = emu.add_subscriber("h-waiting", online=False)
    emu.generate_subscribers(7, online=1.0, seed=13)
    client = emu.client()
    for n in range(4):
        client.notifications.create(title=f"N{n}", message="m", url="https://shop.example/")
        emu.advance(60)
    if late:
        emu.set_online(waiting, True)
    for filters in ({}, {"status": "all"}, {"source": "broadcast", "source_id": 2}):
        whole = emu.deliveries(**filters)
        read, after = [], None
        while page := emu.deliveries(**filters, after=after, limit=3):
            read += page
            after = page[-1]["delivery_id"]
        assert read == whole and len(whole) > 3
        assert [d["sent_at"] or d["queued_at"] for d in read] == sorted(
            d["sent_at"] or d["queued_at"] for d in read
        )
    with pytest.raises(ValueError, match="after: delivery 9999 does not exist"):
        emu.deliveries(after=9999)
    client.close()


def test_a_device_online_late_after_the_clock_went_back_reads_in_the_order_sent(tmp_path):
    """The clock may go back (an emulator started in the future, then following Python's
    clock): a delivery sent late is then sent before the deliveries made earlier, and every
    read, by pages or after a reload, puts it first."""
    from pushwire.testing import Emulator

    with Emulator(start=dt.datetime(2090, 5, 1, 12, tzinfo=dt.timezone.utc)) as emu:
        emu.add_subscriber("h-a")
        emu.add_subscriber("h-b", online=False)
        with emu.client() as client:
            client.notifications.create(title="One", message="1", url="https://shop.example/1")
        emu.follow_python_clock(True)  # back to the wall clock, decades before
        emu.set_online("h-b", True)
        rows = emu.deliveries()
        assert [d["subscriber_hash"] for d in rows] == ["h-b", "h-a"]
        assert rows[0]["sent_at"] < rows[1]["sent_at"]
        assert emu.deliveries(limit=1) == rows[:1]
        assert emu.deliveries(after=rows[0]["delivery_id"]) == rows[1:]
        assert emu.deliveries(after=rows[1]["delivery_id"]) == []
        path = emu.save(tmp_path / "state.bin")
    with Emulator.load(path) as again:
        assert again.deliveries() == rows


@pytest.mark.parametrize(
    "when", ["2030-06-30T23:59:60.5Z", "0000-01-01T00:00:00Z", "2030-06-30T23:59:60Z"]
)
def test_a_time_no_reader_can_take_back_is_refused_by_name(emu, when):
    """A leap second or a year outside 1-9999 would be kept, then fail every read of the
    subscribers (Python's datetime takes neither): refused as it is given."""
    with pytest.raises(ValueError, match="subscribed_at must be a time from year 1 to 9999"):
        emu.add_subscriber("h-odd-time", subscribed_at=when)
    assert emu.subscribers() == []


def test_a_connected_handle_reads_the_site_of_its_own_key(emu):
    """``Emulator.connect(url, api_key=...)``: reads and seeding without an ``api_key`` act
    on that key's site, not on the emulator's default one."""
    emu.add_site("history-other-key")
    emu.add_subscriber("h-default")
    remote = type(emu).connect(emu.base_url, api_key="history-other-key")
    remote.add_subscriber("h-other")
    assert [s["subscriber_hash"] for s in remote.subscribers()] == ["h-other"]
    assert [s["subscriber_hash"] for s in emu.subscribers()] == ["h-default"]
    segment = remote.create_segment("only-there")
    assert [s["segment_id"] for s in remote.segments()] == [segment]
    assert emu.segments() == []
    assert [s["subscriber_hash"] for s in remote.subscribers(api_key=emu.api_key)] == ["h-default"]
    remote.close()
