"""Seeding many subscribers at once (rows of dicts, pandas and polars frames, a generated
population), and the engine's behaviour at the audience sizes these make: who a broadcast
reaches, triggered campaigns fired and cancelled by many events, devices coming online."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from typing import Any

import pytest
from client_support import BROADCAST, drip_notification
from conftest import CLOCK_START

from pushwire.testing import Emulator

START = dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc)


def by_hash(emu: Emulator) -> dict[str, dict[str, Any]]:
    return {s["subscriber_hash"]: s for s in emu.subscribers()}


def test_rows_of_dicts_become_subscribers_with_every_field(pushwire_emulator: Emulator) -> None:
    emu = pushwire_emulator
    vip = emu.create_segment("vip")
    hashes = emu.add_subscribers(
        [
            {"subscriber_hash": "h-ada", "profile_id": "ada", "country": "US", "segments": [vip]},
            {
                "country": "DE",
                "device_type": "mobile",
                "browser": "firefox",
                "attributes": {"plan": "pro", "ltv": 120.5},
                "subscribed_at": "2026-01-02T03:04:05Z",
                "online": False,
            },
            {},
        ]
    )
    assert hashes[0] == "h-ada" and len(hashes) == 3 and len(set(hashes)) == 3
    subs = by_hash(emu)
    assert set(subs) == set(hashes)
    assert subs["h-ada"]["profile_id"] == "ada" and subs["h-ada"]["segments"] == [vip]
    second = subs[hashes[1]]
    assert second["country"] == "DE" and second["device_type"] == "mobile"
    assert second["attributes"] == {"plan": "pro", "ltv": 120.5}
    assert second["subscribed_at"].isoformat().startswith("2026-01-02T03:04:05")
    assert second["online"] is False
    # The profile's events find the subscriber added in bulk.
    with emu.client() as client:
        client.events.track("visit", profile_id="ada")
    assert [e["profile_id"] for e in emu.events()] == ["ada"]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"country": "US"}, {"online": "yes"}], "row 1: online must be true or false"),
        ([{}, {}, {"contry": "US"}], "row 2: contry is not a field of a subscriber"),
        (
            [{"subscriber_hash": "a"}, {"subscriber_hash": "a"}],
            "row 1: subscriber a already exists",
        ),
        ([{"segments": [424242]}], "row 0: segment 424242 does not exist"),
        ([{"attributes": ["plan"]}], "row 0: attributes must be an object"),
    ],
)
def test_one_bad_row_adds_none_and_is_named(
    pushwire_emulator: Emulator, rows: list[dict[str, Any]], message: str
) -> None:
    emu = pushwire_emulator
    emu.add_subscriber("already")
    with pytest.raises(ValueError, match=message):
        emu.add_subscribers(rows)
    assert list(by_hash(emu)) == ["already"]


def test_a_taken_hash_is_refused_and_input_that_is_no_rows_is_named(
    pushwire_emulator: Emulator,
) -> None:
    emu = pushwire_emulator
    emu.add_subscriber("taken")
    with pytest.raises(ValueError, match="row 0: subscriber taken already exists"):
        emu.add_subscribers([{"subscriber_hash": "taken"}])
    with pytest.raises(ValueError, match="list of dicts"):
        emu.add_subscribers({"country": "US"})
    with pytest.raises(ValueError, match="row 1: a subscriber must be a dict"):
        emu.add_subscribers([{}, "h"])
    assert list(by_hash(emu)) == ["taken"]


def test_a_pandas_frame_seeds_with_attribute_columns_and_missing_cells() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "subscriber_hash": ["a", "b", "c"],
            "country": ["US", None, "FR"],
            "subscribed_at": pd.to_datetime(["2026-01-01", "2026-02-01", None], utc=True),
            "attributes.plan": ["pro", "free", None],
            "attributes.ltv": [10.0, float("nan"), 3.5],
        }
    )
    with Emulator() as emu:
        assert emu.add_subscribers(frame) == ["a", "b", "c"]
        subs = by_hash(emu)
    assert subs["a"]["country"] == "US" and subs["b"]["country"] is None
    assert subs["a"]["attributes"] == {"plan": "pro", "ltv": 10.0}
    assert subs["b"]["attributes"] == {"plan": "free"}
    assert subs["c"]["attributes"] == {"ltv": 3.5}
    assert subs["b"]["subscribed_at"].isoformat().startswith("2026-02-01T00:00:00")
    with Emulator() as emu, pytest.raises(ValueError, match="column cuntry is not a field"):
        emu.add_subscribers(pd.DataFrame({"cuntry": ["US"]}))


def test_a_polars_frame_seeds_the_same() -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(
        {
            "subscriber_hash": ["a", "b"],
            "device_type": ["mobile", None],
            "attributes.age": [30, None],
        }
    )
    with Emulator() as emu:
        assert emu.add_subscribers(frame) == ["a", "b"]
        subs = by_hash(emu)
    assert subs["a"]["device_type"] == "mobile" and subs["a"]["attributes"] == {"age": 30}
    assert subs["b"]["device_type"] is None and subs["b"]["attributes"] == {}


def test_a_generated_population_follows_its_distributions() -> None:
    with Emulator(record_requests=False) as emu:
        vip = emu.create_segment("vip")
        added = emu.generate_subscribers(
            20_000,
            country={"US": 3, "DE": 1},
            device_type=["desktop", "mobile"],
            attributes={"plan": {"free": 0.75, "pro": 0.25}, "age": range(20, 30)},
            subscribed_between=(START, START + dt.timedelta(days=10)),
            online=0.5,
            segments={vip: 0.1},
            seed=7,
        )
        subs = emu.subscribers()
    assert added == len(subs) == 20_000
    share = Counter(s["country"] for s in subs)
    assert abs(share["US"] / 20_000 - 0.75) < 0.02 and set(share) == {"US", "DE"}
    assert abs(sum(s["attributes"]["plan"] == "pro" for s in subs) / 20_000 - 0.25) < 0.02
    assert {s["attributes"]["age"] for s in subs} == set(range(20, 30))
    assert abs(sum(s["online"] for s in subs) / 20_000 - 0.5) < 0.02
    assert abs(sum(vip in s["segments"] for s in subs) / 20_000 - 0.1) < 0.01
    joined = sorted(s["subscribed_at"].isoformat() for s in subs)
    assert joined[0] >= "2026-03-01T00:00:00" and joined[-1] <= "2026-03-11T00:00:00"
    assert len({j[:10] for j in joined}) == 10


def test_a_seed_makes_the_same_population_and_none_leaves_a_field_empty() -> None:
    def population() -> list[dict[str, Any]]:
        with Emulator(record_requests=False) as emu:
            emu.generate_subscribers(
                500,
                country={"US": 1, None: 1},
                browser=["a", "b"],
                subscribed_between=(START, START + dt.timedelta(days=30)),
                seed=3,
            )
            return emu.subscribers()

    first, second = population(), population()
    assert first == second
    assert {s["country"] for s in first} == {"US", None}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"country": "US"}, "country must be a list of values"),
        ({"browser": []}, "browser has no values"),
        ({"country": {"US": -1}}, "country: a weight must be a number from 0 up"),
        ({"attributes": {"plan": {"a": 0}}}, "attributes.plan: the weights add up to 0"),
        ({"online": 2}, "online must be a share from 0 to 1"),
        ({"segments": {1: 1.5}}, r"segments\[1\] must be a share"),
    ],
)
def test_a_wrong_distribution_is_named_before_anything_is_sent(
    pushwire_emulator: Emulator, kwargs: dict[str, Any], message: str
) -> None:
    emu = pushwire_emulator
    with pytest.raises(ValueError, match=message):
        emu.generate_subscribers(10, **kwargs)
    assert emu.subscribers() == []


def admin(emu: Emulator, op: str, **args: Any) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(
        f"{emu.base_url}/_emulator/{op}",
        data=json.dumps(args).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_admin_routes_seed_in_bulk_for_any_language(pushwire_emulator: Emulator) -> None:
    emu = pushwire_emulator
    seg = emu.create_segment("s")
    status, body = admin(
        emu,
        "generate_subscribers",
        count=300,
        country={"US": 1, "FR": 1},
        attributes={"vip": {"values": [True, False], "weights": [1, 2]}},
        segments={str(seg): 1},
        seed=1,
    )
    assert (status, body) == (200, {"added": 300})
    status, body = admin(emu, "add_subscribers", columns={"country": ["DE", "DE"]}, hashes=True)
    assert status == 200 and body["added"] == 2 and len(body["subscriber_hashes"]) == 2
    subs = emu.subscribers()
    assert len(subs) == 302 and {type(s["attributes"]["vip"]) for s in subs[:300]} == {bool}
    refusals = [
        admin(emu, "generate_subscribers", count=-1),
        admin(emu, "generate_subscribers", count=5, country={"values": ["US"], "weights": []}),
        admin(emu, "generate_subscribers", count=5, country=[1, 2]),
        admin(emu, "generate_subscribers", count=5, segments={"999": 0.5}),
        admin(emu, "generate_subscribers", count=5, colour=["red"]),
        admin(emu, "add_subscribers", columns={"country": ["US"], "city": []}),
        admin(emu, "add_subscribers", rows=[], columns={}),
    ]
    for status, body in refusals:
        assert status == 400 and body["error"], body
    assert "count must be a whole number" in refusals[0][1]["error"]
    assert "1 values but 0 weights" in refusals[1][1]["error"]
    assert "segment 999 does not exist" in refusals[3][1]["error"]
    assert "colour is not an argument" in refusals[4][1]["error"]
    assert "column city has 0 values, column country has 1" in refusals[5][1]["error"]
    assert len(emu.subscribers()) == 302


def test_a_broadcast_to_200000_reaches_exactly_the_targeted() -> None:
    with Emulator(record_requests=False) as emu:
        vip = emu.create_segment("vip")
        emu.generate_subscribers(
            200_000,
            country={"US": 2, "DE": 1, "FR": 1},
            attributes={"plan": {"free": 4, "pro": 1}},
            segments={vip: 0.5},
            online=0.9,
            seed=11,
        )
        # The audience computed here from the same targeting the broadcast sends.
        countries = ["US", "DE"]
        rule = {"key": "plan", "op": "eq", "value": "free"}
        expected = {
            s["subscriber_hash"]
            for s in emu.subscribers()
            if vip in s["segments"]
            and s["country"] in countries
            and s["attributes"][rule["key"]] == rule["value"]
        }
        with emu.client(timeout=120) as client:
            nid = client.notifications.create(
                **BROADCAST,
                include_segments=[vip],
                include_countries=countries,
                attributes=[[rule]],
            )
        reached: set[str] = set()
        offset = 0
        while page := emu.deliveries(
            notification_id=nid, status="all", limit=25_000, offset=offset
        ):
            reached.update(d["subscriber_hash"] for d in page)
            offset += len(page)
        assert offset == len(reached) == len(expected) > 50_000
        assert reached == expected
        delivered = emu.deliveries(notification_id=nid, limit=0)
        assert delivered == []  # limit=0 reads none
        pending = len(emu.deliveries(notification_id=nid, status="pending"))
        assert 0.08 < pending / len(expected) < 0.12  # the offline tenth waits


def test_many_events_fire_and_stop_a_triggered_campaign_exactly_once_each() -> None:
    n = 20_000
    # The daily cap counts a calendar day: the clock starts far from midnight.
    with Emulator(record_requests=False, start=CLOCK_START) as emu:
        emu.add_subscribers([{"profile_id": f"p{i}"} for i in range(n)])
        trigger = emu.create_trigger(
            campaign_name="Cart",
            daily_trigger_limit=1,
            rules={"start_event_name": "cart", "stop_event_name": "buy"},
            notifications=[
                drip_notification(
                    title="Still want it, {{name}}?",
                    schedule_options={"type": "after", "value": 30, "unit": "minutes"},
                )
            ],
        )
        with emu.client(timeout=120) as client:
            # Twice each: the daily cap of 1 holds the second back.
            events = [
                {"event_name": "cart", "profile_id": f"p{i}", "data": {"name": f"n{i}"}}
                for i in range(n)
            ]
            assert not any(client.events.track_many(events + events))
            # Every third buys before the reminder is due: nothing reaches them.
            stops = [{"event_name": "buy", "profile_id": f"p{i}"} for i in range(0, n, 3)]
            assert not any(client.events.track_many(stops))
        emu.advance(31 * 60)
        sent = emu.deliveries(source="trigger", source_id=trigger)
        capped = emu.deliveries(source="trigger", source_id=trigger, status="capped")
    titles = Counter(d["title"] for d in sent)
    bought = {f"p{i}" for i in range(0, n, 3)}
    assert len(sent) == n - len(bought)
    assert all(count == 1 for count in titles.values())
    assert not any(t == f"Still want it, {p}?" for t in titles for p in ("n0", "n3"))
    assert titles["Still want it, n1?"] == 1 and titles["Still want it, n2?"] == 1
    assert len(capped) == n - len(bought)


def test_devices_coming_online_receive_what_waited_for_them() -> None:
    with Emulator(record_requests=False) as emu:
        hashes = emu.add_subscribers([{"online": False} for _ in range(5_000)])
        with emu.client() as client:
            nid = client.notifications.create(
                title="t", message="m", url="https://shop.example/", expiry=60
            )
        assert len(emu.deliveries(notification_id=nid, status="pending")) == 5_000
        for h in hashes[:1_000]:
            emu.set_online(h, True)
        emu.advance(61 * 60)
        delivered = emu.deliveries(notification_id=nid)
        expired = emu.deliveries(notification_id=nid, status="expired")
        assert {d["subscriber_hash"] for d in delivered} == set(hashes[:1_000])
        assert len(expired) == 4_000
        # Online after it expired: nothing more arrives.
        emu.set_online(hashes[-1], True)
        assert len(emu.deliveries(notification_id=nid)) == 1_000


PLACES = {
    "US": {"California", "New York", "Texas", "Illinois", "Florida", "Washington"},
    "DE": {"Berlin", "Bavaria", "Hamburg"},
}
SAFARI_PLATFORMS = {"macos", "ios", "ipados"}


def test_without_distributions_a_population_looks_like_a_real_site() -> None:
    now = CLOCK_START

    def population(**fields: Any) -> list[dict[str, Any]]:
        with Emulator(record_requests=False) as emu:
            emu.travel_to(now)
            emu.freeze_clock()  # join dates spread over the year up to the clock
            emu.generate_subscribers(20_000, seed=5, **fields)
            return emu.subscribers()

    subs = population()
    assert subs == population()  # seeded: the same site on every run
    profile = ("country", "state", "city", "device", "device_type", "browser", "platform")
    assert all(s[f] for s in subs for f in profile)
    countries = Counter(s["country"] for s in subs)
    assert len(countries) == 12 and abs(countries["US"] / 20_000 - 0.34) < 0.02
    # Each city in its own state and country, each browser on its own platforms.
    assert {s["state"] for s in subs if s["country"] == "US"} == PLACES["US"]
    assert {(s["country"], s["state"]) for s in subs if s["city"] == "Munich"} == {
        ("DE", "Bavaria")
    }
    assert {s["platform"] for s in subs if s["browser"] == "safari"} == SAFARI_PLATFORMS
    assert {s["device"] for s in subs if s["device_type"] == "tablet"} == {
        "iPad",
        "Android tablet",
    }
    kinds = Counter(s["device_type"] for s in subs)
    assert (
        abs(kinds["mobile"] / 20_000 - 0.40) < 0.02 and abs(kinds["tablet"] / 20_000 - 0.05) < 0.01
    )
    assert abs(sum(s["online"] for s in subs) / 20_000 - 0.9) < 0.01
    joined = [s["subscribed_at"] for s in subs]
    assert now - dt.timedelta(days=365) <= min(joined) and max(joined) <= now
    assert len({j.date() for j in joined}) > 360  # over the whole past year

    # A field given keeps the others coherent with it; one the mix does not know stays alone.
    german_phones = population(country=["DE"], device_type=["mobile"])
    assert {s["state"] for s in german_phones} == PLACES["DE"]
    assert {s["platform"] for s in german_phones} == {"android", "ios"}
    assert {s["platform"] for s in population(browser=["safari"])} == SAFARI_PLATFORMS
    elsewhere = population(country=["NZ"], online=1.0)
    assert {(s["state"], s["city"]) for s in elsewhere} == {(None, None)}
    assert all(s["online"] and s["device_type"] for s in elsewhere)


def sent_to(emu: Emulator, **audience: Any) -> set[str]:
    """The hashes a broadcast to `audience` reached (delivered or waiting)."""
    with emu.client() as client:
        nid = client.notifications.create(
            title="t", message="m", url="https://shop.example/", **audience
        )
    return {d["subscriber_hash"] for d in emu.deliveries(notification_id=nid, status="all")}


def test_a_default_population_is_targeted_and_counted_like_a_real_one() -> None:
    with Emulator(record_requests=False) as emu:
        emu.generate_subscribers(20_000, seed=9)
        subs = emu.subscribers()
        reached = sent_to(emu, include_countries=["DE"], include_device_types=["mobile"])
        with emu.client() as client:
            dims = client.analytics.subscribers(types=["country", "device_type"])
    expected = {
        s["subscriber_hash"] for s in subs if s["country"] == "DE" and s["device_type"] == "mobile"
    }
    assert reached == expected and 400 < len(expected) < 800
    assert dims["country"]["US"] == sum(s["country"] == "US" for s in subs)
    assert set(dims["device_type"]) == {"desktop", "mobile", "tablet"}


def test_one_seed_twice_on_one_site_draws_new_hashes_and_keeps_targeting_exact() -> None:
    with Emulator(record_requests=False) as emu:
        vip = emu.create_segment("vip")
        for _ in range(2):
            emu.generate_subscribers(3_000, segments={vip: 0.3}, seed=3)
        subs = emu.subscribers()
        reached = sent_to(emu, include_segments=[vip], include_countries=["US", "IN"])
    assert len({s["subscriber_hash"] for s in subs}) == 6_000
    # The second draw repeats the first's profiles under new hashes: the audience doubles.
    expected = {
        s["subscriber_hash"] for s in subs if vip in s["segments"] and s["country"] in ("US", "IN")
    }
    assert reached == expected and len(expected) % 2 == 0 and len(expected) > 500


def test_a_segment_of_many_is_counted_from_its_index_without_its_list() -> None:
    with Emulator(record_requests=False) as emu:
        vip = emu.create_segment("vip")
        emu.generate_subscribers(5_000, segments={vip: 0.4}, seed=2)
        holders = sum(vip in s["segments"] for s in emu.subscribers())
        (counted,) = emu.segments(members=False)
        (listed,) = emu.segments()
        last = emu._call("subscribers", limit=3, offset=4_998, meta=True)
    assert "members" not in counted and counted["member_count"] == holders
    assert listed["member_count"] == len(listed["members"]) == holders
    assert len(last["entries"]) == 2 and last["total"] == 5_000  # a page cut at the end


TWICE = """
from pushwire.testing import Emulator
with Emulator(record_requests=False) as emu:
    for _ in range(2):
        emu.generate_subscribers(2_000, seed=4)
    print(" ".join(s["subscriber_hash"] for s in emu.subscribers()))
"""


def test_one_seed_twice_draws_the_same_new_hashes_in_every_process() -> None:
    # Each process hashes with a seed of its own: the second draw's new hashes must not
    # depend on it.
    runs = [
        subprocess.run([sys.executable, "-c", TWICE], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    first, second = (r.stdout.split() for r in runs)
    assert len(set(first)) == 4_000
    assert first == second
