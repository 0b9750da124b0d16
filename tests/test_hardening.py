"""Inputs at the edges: huge numbers, empty filters, typos, nested calls. Each is refused with
a clear error before anything is sent (or answered with the spec's 400), never a panic."""

from __future__ import annotations

import datetime as dt

import pytest
import requests
from client_support import BROADCAST, api_requests, drip_notification

import pushwire
from pushwire.testing import Emulator


def test_a_blocking_call_inside_another_is_refused_not_a_panic(emu: Emulator) -> None:
    client = emu.client()
    segment = emu.create_segment("s")
    hashes = [emu.add_subscriber(f"h{i}") for i in range(3)]
    seen: list[BaseException] = []

    def progress(done: int, total: int) -> None:
        try:
            client.segments.list()
        except pushwire.PushwireError as e:
            seen.append(e)

    result = client.segments.add_subscribers_bulk(segment, hashes, progress=progress)
    assert result.ok
    assert len(seen) == 1 and "inside another" in str(seen[0])
    assert client.segments.list()  # the thread is usable again


@pytest.mark.parametrize(
    ("schedule", "field"),
    [
        ({"type": "after", "value": 10**13, "unit": "minutes"}, "value"),
        ({"type": "after", "value": 367, "unit": "days", "at": "09:00:00"}, "value"),
    ],
)
def test_schedules_past_a_year_are_refused_by_both_sides(
    emu: Emulator, schedule: dict[str, object], field: str
) -> None:
    notes = [drip_notification(), drip_notification(schedule_options=schedule)]
    with pytest.raises(pushwire.ValidationError) as e:
        emu.client().drips.create("far", notes)
    assert (e.value.field or "").endswith(field)
    raw = requests.post(
        f"{emu.base_url}/apiv1/drips",
        json={"campaign_name": "far", "notifications": notes},
        headers={"Api-Key": emu.api_key},
    )
    assert raw.status_code == 400 and raw.json()["error"]["name"] == "InvalidRequestException"
    emu.add_subscriber("after-refusal")  # the engine still works


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("+262143-12-31", "+262143-12-31"),
        ("0000-01-01", "0000-01-02"),
        ("2000-01-01", "2020-01-01"),
    ],
)
def test_analytics_ranges_stay_on_the_calendar(emu: Emulator, start: str, end: str) -> None:
    with pytest.raises(pushwire.ValidationError):
        emu.client().analytics.summary(start, end)
    raw = requests.get(
        f"{emu.base_url}/apiv1/analytics/summary",
        params={"from": start, "to": end, "group_by": "day"},
        headers={"Api-Key": emu.api_key},
    )
    assert raw.status_code == 400 and raw.json()["success"] is False
    assert emu.client().analytics.summary("2026-01-01", "2026-01-02")


@pytest.mark.parametrize("kwargs", [{"timeout": 1e20}, {"timeout": 0}, {"backoff_base": 1e20}])
def test_absurd_client_settings_are_refused(emu: Emulator, kwargs: dict[str, float]) -> None:
    with pytest.raises(pushwire.ValidationError):
        emu.client(**kwargs)


def test_the_key_cannot_hide_in_default_headers(emu: Emulator) -> None:
    with pytest.raises(pushwire.PushwireError, match="api_key"):
        emu.client(default_headers={"Api-Key": "other"})


def test_admin_refuses_a_clock_jump_off_the_calendar_and_unknown_sites(emu: Emulator) -> None:
    with pytest.raises(ValueError):
        emu.advance(1e19)
    with pytest.raises(ValueError):
        emu.inject_fault("/apiv1/segments", delay=1e19)
    with pytest.raises(ValueError, match="add_site"):
        emu.add_subscriber("h", api_key="typo-key")
    assert emu.subscribers() == []
    emu.client().segments.list()  # still serving


@pytest.mark.parametrize(
    "targeting",
    [{"subscriber_hash": []}, {"include_segments": []}, {"subscriber_hash": [""]}],
)
def test_an_empty_filter_never_means_everyone(emu: Emulator, targeting: dict[str, object]) -> None:
    emu.add_subscriber("someone")
    with pytest.raises(pushwire.ValidationError):
        emu.client().notifications.create(**BROADCAST, **targeting)
    assert api_requests(emu) == []
    raw = requests.post(
        f"{emu.base_url}/apiv1/notifications",
        data={
            "notification_title": "t",
            "notification_message": "m",
            "notification_url": "https://x.example",
            "subscriber_hash[0]": "",
        },
        headers={"Api-Key": emu.api_key},
    )
    assert raw.status_code == 400
    assert emu.deliveries() == []


def test_an_aware_valid_from_utc_is_refused(emu: Emulator) -> None:
    when = dt.datetime(2030, 1, 1, 9, tzinfo=dt.timezone.utc)
    with pytest.raises(pushwire.ValidationError) as e:
        emu.client().notifications.create(**BROADCAST, type="later", valid_from_utc=when)
    assert e.value.field == "valid_from_utc"
    emu.client().notifications.create(
        **BROADCAST, type="later", valid_from_utc=when.replace(tzinfo=None)
    )


@pytest.mark.parametrize("bad", [b"abc", bytearray(b"abc"), {"h1": 1}, "h1"])
def test_single_values_are_not_read_as_lists(emu: Emulator, bad: object) -> None:
    segment = emu.create_segment("s")
    with pytest.raises(pushwire.ValidationError):
        emu.client().segments.add_subscribers(segment, bad)  # type: ignore[arg-type]
    with pytest.raises(pushwire.ValidationError):
        emu.client().notifications.create(**BROADCAST, subscriber_hash=bad)  # type: ignore[arg-type]
    assert api_requests(emu) == []


def test_numpy_integers_are_ids(emu: Emulator) -> None:
    np = pytest.importorskip("numpy")
    segment = np.int64(emu.create_segment("s"))
    client = emu.client()
    assert client.segments.list(segment_id=segment)[0].segment_id == str(segment)
    client.notifications.create(**BROADCAST, include_segments=[segment])
    assert emu.notifications()[0]["request"]["include_segments"] == [str(segment)]


def test_a_segment_delete_is_not_retried_after_a_server_error(emu: Emulator) -> None:
    segment = emu.create_segment("s")
    emu.inject_fault("/apiv1/segments/delete", status=500, times=1)
    with pytest.raises(pushwire.ServerError):
        emu.client(backoff_base=0).segments.delete(segment)
    assert len(api_requests(emu, "/apiv1/segments/delete")) == 1


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"expiry": 3600.5}, "notifications[0].expiry"),
        ({"require_interaction": True}, "notifications[0].require_interaction"),
        ({"title": 5}, "notifications[0].title"),
    ],
)
def test_drip_field_types_are_checked_alike_by_client_and_emulator(
    emu: Emulator, override: dict[str, object], field: str
) -> None:
    note = drip_notification(**override)
    with pytest.raises(pushwire.ValidationError) as e:
        emu.client().drips.create("typed", [note])
    assert e.value.field == field
    assert api_requests(emu) == []
    raw = requests.post(
        f"{emu.base_url}/apiv1/drips",
        json={"campaign_name": "typed", "notifications": [note]},
        headers={"Api-Key": emu.api_key},
    )
    assert raw.status_code == 400 and field in raw.json()["error"]["message"]


def test_injected_server_errors_use_the_specs_words(emu: Emulator) -> None:
    emu.inject_fault("/apiv1/notifications", status=500)
    with pytest.raises(pushwire.ServerError) as main:
        emu.client().notifications.create(**BROADCAST)
    assert main.value.message == "Something went wrong."
    emu.inject_fault("/api/v1/events", status=500)
    with pytest.raises(pushwire.ServerError) as events:
        emu.client().events.track("e", profile_id="p")
    assert events.value.code == 1001 and events.value.message == "Something went wrong"
