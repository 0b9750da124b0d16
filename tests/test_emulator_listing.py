"""`deliveries()` and `requests()` filtered and paged inside the emulator: a test over a large
audience reads the page it asks for, complete and stable from page to page."""

from __future__ import annotations

import pytest
import requests

import pushwire
from pushwire.testing import Emulator


@pytest.fixture
def sent(emu: Emulator) -> dict[str, int]:
    for i in range(3000):
        emu.add_subscriber(subscriber_hash=f"s{i:05d}", country="US" if i % 3 else "FR")
    with emu.client() as c:
        us = c.notifications.create(
            title="US", message="m", url="https://shop.example/", include_countries=["US"]
        )
        emu.advance(3600)
        fr = c.notifications.create(
            title="FR", message="m", url="https://shop.example/", include_countries=["FR"]
        )
    return {"us": us, "fr": fr}


def test_pages_of_deliveries_are_complete_and_stable(emu: Emulator, sent):
    whole = emu.deliveries()
    assert len(whole) == 3000
    pages = []
    for offset in range(0, 3000, 700):
        pages += emu.deliveries(limit=700, offset=offset)
    assert [d["delivery_id"] for d in pages] == [d["delivery_id"] for d in whole]
    assert len({d["delivery_id"] for d in pages}) == 3000
    assert emu.deliveries(limit=700, offset=2800) == whole[2800:]
    assert emu.deliveries(offset=5000) == []


def test_deliveries_are_filtered_in_the_emulator(emu: Emulator, sent):
    us = emu.deliveries(notification_id=sent["us"])
    assert len(us) == 2000 and {d["title"] for d in us} == {"US"}
    assert len(emu.deliveries(source="broadcast", source_id=sent["fr"])) == 1000
    assert emu.deliveries(source="drip") == []
    before_fr = emu.deliveries(until=whole_time(emu, sent["fr"]))
    assert {d["title"] for d in before_fr} == {"US"} and len(before_fr) == 2000
    later = emu.deliveries(since=whole_time(emu, sent["fr"]))
    assert {d["title"] for d in later} == {"FR"} and len(later) == 1000
    one = emu.deliveries("s00004", notification_id=sent["us"])
    assert [d["subscriber_hash"] for d in one] == ["s00004"]
    with pytest.raises(ValueError, match="source"):
        emu.deliveries(source="broadcasts")
    with pytest.raises(ValueError, match="limit"):
        emu.deliveries(limit=-1)


def whole_time(emu: Emulator, notification_id: int) -> str:
    (first,) = emu.deliveries(notification_id=notification_id, limit=1)
    return str(first["sent_at"].isoformat())


def test_requests_are_filtered_and_paged_in_the_emulator(emu: Emulator):
    with emu.client(max_retries=0) as c:
        for i in range(30):
            c.segments.list()
            c.events.track("view", profile_id=f"p{i}")
        with pytest.raises(pushwire.BadRequestError):
            c.drips.get(99)
    everything = emu.requests()
    assert len(everything) == 61 and everything.total == 61
    events = emu.requests("/api/v1/events")
    assert len(events) == 30 and {r["method"] for r in events} == {"POST"}
    assert len(emu.requests("/apiv1/*", method="get")) == 31
    (refused,) = emu.requests(status=400)
    assert refused["path"] == "/apiv1/drips/99"
    page = emu.requests(limit=10, offset=55)
    assert [r["path"] for r in page] == [r["path"] for r in everything[55:]]
    assert page.total == 61 and page.pruned == 0
    since = everything[40]["received_at"]
    assert len(emu.requests(since=since)) >= 21


def test_the_admin_route_pages_over_http(emu: Emulator, sent):
    url = emu.base_url + "/_emulator/deliveries"
    answer = requests.get(
        url, params={"limit": "5", "offset": "10", "meta": "true", "status": "all"}, timeout=10
    ).json()
    assert answer["total"] == 3000 and len(answer["entries"]) == 5
    bad = requests.get(url, params={"offset": "-1"}, timeout=10)
    assert bad.status_code == 400 and "offset" in bad.json()["error"]
