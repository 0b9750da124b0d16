"""Every admin operation of the emulator has its Python method (issue 47), and the inspector's
views read from Python as the page shows them."""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Iterator

import pytest
from conftest import CLOCK_START

from pushwire.testing import Emulator

# The admin document's routes that are no operation, and what stands for each in Python.
NOT_OPERATIONS = {
    "openapi": "openapi",  # emu.openapi()
    "admin_openapi": "openapi",  # emu.openapi(admin=True)
    "inspector": "ui_url",  # the page itself, at emu.ui_url
    "inspector_stream": "ui_url",  # the page's own live stream
}


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    # Reset goes back to the start: a summary's day, read after the views, is theirs.
    with Emulator(start=CLOCK_START) as e:
        yield e


def test_every_admin_operation_of_the_openapi_document_has_its_python_method(emu: Emulator):
    document = emu.openapi(admin=True)
    ids = {
        op["operationId"].removesuffix("_get").removesuffix("_post")
        for path in document["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    operations = ids - set(NOT_OPERATIONS)
    assert operations == set(emu.operations())

    def has_method(name: str) -> bool:
        found = inspect.getattr_static(Emulator, name, None)
        return callable(found) or isinstance(found, property)  # `now` is a property

    missing = [
        name
        for name in sorted(operations)
        if not has_method(name) and name not in {"retention"}  # Emulator.retention_stats()
    ]
    assert missing == []
    assert callable(Emulator.retention_stats)
    for name in set(NOT_OPERATIONS.values()):
        assert hasattr(Emulator, name)
    # Each method is documented where a user reads it.
    undocumented = [
        n for n in operations if n in vars(Emulator) and not inspect.getdoc(getattr(Emulator, n))
    ]
    assert undocumented == []


def test_broadcasts_are_paged_with_their_counts(emu: Emulator):
    emu.reset()
    for i in range(3):
        emu.add_subscriber(profile_id=f"p{i}")
    client = emu.client()
    sent = [
        client.notifications.create(title=f"Sale {n}", message="m", url="https://shop.example")
        for n in range(3)
    ]
    first = [d for d in emu.deliveries() if d["notification_id"] == sent[0]]
    emu.record_view(first[0]["delivery_id"])
    emu.record_view(first[1]["delivery_id"])
    emu.record_click(first[1]["delivery_id"])

    everything = emu.broadcasts()
    assert [b["notification_id"] for b in everything] == sent[::-1]  # newest first
    oldest = everything[-1]
    assert (oldest["delivered"], oldest["views"], oldest["clicks"]) == (3, 2, 1)
    assert oldest["title"] == "Sale 0" and oldest["status"] == "sent"
    assert isinstance(oldest["created_at"], dt.datetime) and oldest["created_at"].tzinfo
    assert [b["notification_id"] for b in emu.broadcasts(offset=1, limit=1)] == [sent[1]]
    site = next(s for s in emu.sites() if s["default"])
    assert site["broadcasts"] == 3 and site["subscribers"] == 3
    # The summary the inspector charts counts the same views and clicks.
    today = emu.summary()[-1]
    assert (today["view_count"], today["click_count"]) == (2, 1)
    client.close()


def test_the_site_time_zone_is_readable(emu: Emulator):
    emu.reset()
    assert emu.timezone.utcoffset(None) == dt.timedelta(0)
    emu.set_timezone("+05:30")
    assert emu.timezone.utcoffset(None) == dt.timedelta(hours=5, minutes=30)
    emu.set_timezone("-08:00")
    assert emu.timezone.utcoffset(None) == dt.timedelta(hours=-8)
    # App code reads the site's day without a copy of its own.
    assert dt.datetime.now(emu.timezone).utcoffset() == dt.timedelta(hours=-8)
    emu.reset()


def test_an_emulator_can_start_in_the_past_and_lay_down_a_history():
    start = dt.datetime(2025, 3, 3, 9, 0, tzinfo=dt.timezone.utc)
    with Emulator(start=start) as emu, emu.client() as client:
        assert abs(emu.now - start) < dt.timedelta(seconds=5)
        for day in range(3):
            for n in range(day + 1):
                emu.add_subscriber(profile_id=f"d{day}-{n}")
            client.notifications.create(title=f"Day {day}", message="m", url="https://x.example")
            emu.advance(dt.timedelta(days=1))
        rows = client.analytics.summary(start.date(), start.date() + dt.timedelta(days=2))
        assert [r["subscriber_count"] for r in rows] == [1, 2, 3]
        assert [r["net_subscriber_sent"] for r in rows] == [1, 3, 6]
        assert [r["date"] for r in rows] == [start.date() + dt.timedelta(days=d) for d in range(3)]
        # Once anything has happened, the clock only moves forward.
        with pytest.raises(ValueError, match="only moves forward"):
            emu.travel_to(start)
        emu.reset()
        assert abs(emu.now - start) < dt.timedelta(seconds=5)
        assert emu.subscribers() == []
    future = dt.datetime(2031, 1, 1, tzinfo=dt.timezone.utc)
    with Emulator(start=future) as emu:
        assert abs(emu.now - future) < dt.timedelta(seconds=5)
    with pytest.raises(ValueError, match="aware datetime"):
        Emulator(start=dt.datetime(2025, 1, 1))
