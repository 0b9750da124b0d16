"""Conformance of the emulator to the spec where an audit found it diverging: nothing may
silently widen a broadcast, every answer is in the spec's shapes, drips are never back-dated,
and dates, times and numbers are read exactly as the spec writes them. Raw HTTP throughout."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import requests
from client_support import drip_notification
from conftest import (
    TIMEOUT,
    assert_campaign_error,
    assert_event_error,
    assert_main_error,
    seed_trigger,
)

BROADCAST = {
    "notification_title": "T",
    "notification_message": "M",
    "notification_url": "https://x.example/",
}
FORM_CT = {"Content-Type": "application/x-www-form-urlencoded"}
BROADCAST_FORM = (
    "notification_title=T&notification_message=M&notification_url=https%3A%2F%2Fx.example%2F"
)


def raw_form(api, path: str, body: str) -> requests.Response:
    return api.http.post(
        api.base_url + path, data=body.encode(), headers=api.headers(FORM_CT), timeout=TIMEOUT
    )


def assert_nothing_sent(emu) -> None:
    assert emu.notifications() == []
    assert emu.deliveries(status="all") == []


# ---- 1a: form keys with a bad array index ----------------------------------------------------

BAD_INDEX_KEYS = [
    "subscriber_hash[x]",
    "subscriber_hash[99999999999999999999]",
    "subscriber_hash[-1]",
    "subscriber_hash[+1]",
    "subscriber_hash[0][0]",
    "subscriber_hash[ 0]",
    "subscriber_hash[0",
    "subscriber_hash[0]x",
    "include_segments[first]",
    "[0]",
]


@pytest.mark.parametrize("key", BAD_INDEX_KEYS)
def test_broadcast_form_key_with_a_bad_index_is_refused(emu, api, key):
    emu.add_subscriber(profile_id="alice")
    emu.add_subscriber(profile_id="bob")
    encoded = requests.utils.quote(key, safe="")
    body = assert_main_error(
        raw_form(api, "/apiv1/notifications", f"{BROADCAST_FORM}&{encoded}=aaa"), 400
    )
    assert key in body["message"]
    assert_nothing_sent(emu)


@pytest.mark.parametrize(
    "path,form",
    [
        (
            "/apiv1/segments/addSegmentWithHash",
            "segment_id={seg}&subscriber_hash[0]=h1&subscriber_hash[x]=h2",
        ),
        (
            "/apiv1/profile",
            "segment_name=vip&operation=add&profile_id[0]=alice&profile_id[one]=bob",
        ),
        ("/apiv1/segments/delete", "segment_id={seg}&segment_id[x]=1"),
    ],
)
def test_segment_form_key_with_a_bad_index_is_refused(emu, api, path, form):
    seg = emu.create_segment("vip")
    emu.add_subscriber("h1", profile_id="alice")
    emu.add_subscriber("h2", profile_id="bob")
    body = assert_main_error(raw_form(api, path, form.format(seg=seg)), 400)
    assert "[" in body["message"]
    assert all(not s["segments"] for s in emu.subscribers())
    assert seg in [s["segment_id"] for s in emu.segments()]


@pytest.mark.parametrize("path", ["/apiv1/triggers", "/apiv1/drips", "/apiv1/segments"])
def test_query_key_with_a_bad_index_is_refused(api, path):
    r = api.get(path + "?limit[x]=1")
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["success"] is False
    message = body["error"]["message"] if "error" in body else body["message"]
    assert "limit[x]" in message


def test_good_array_spellings_still_target(emu, api):
    a = emu.add_subscriber("ha")
    emu.add_subscriber("hb")
    for body in ["subscriber_hash[0]=ha", "subscriber_hash[]=ha", "subscriber_hash=ha"]:
        r = raw_form(api, "/apiv1/notifications", f"{BROADCAST_FORM}&{body}")
        assert r.status_code == 200, r.text
    assert {d["subscriber_hash"] for d in emu.deliveries()} == {a}


# ---- 1b: JSON bodies with an empty targeting list --------------------------------------------

TARGETING_LISTS = (
    "subscriber_hash profile_id include_segments include_countries include_states "
    "include_cities include_device_types include_browsers"
).split()


@pytest.mark.parametrize("field", TARGETING_LISTS)
def test_broadcast_json_empty_list_is_refused(emu, api, field):
    emu.add_subscriber()
    body = assert_main_error(api.post_json("/apiv1/notifications", {**BROADCAST, field: []}), 400)
    assert field in body["message"]
    assert_nothing_sent(emu)


@pytest.mark.parametrize("field", ["exclude_segments", "exclude_countries"])
def test_broadcast_json_empty_exclusion_excludes_no_one(emu, api, field):
    # An empty exclusion cannot widen an audience: it is no exclusion, not an error.
    a, b = emu.add_subscriber("ha", country="US"), emu.add_subscriber("hb", country="FR")
    r = api.post_json("/apiv1/notifications", {**BROADCAST, "include_countries": ["FR"], field: []})
    assert r.status_code == 200, r.text
    assert {d["subscriber_hash"] for d in emu.deliveries()} == {b} != {a}


def test_segment_json_empty_list_is_refused(emu, api):
    seg = emu.create_segment("vip")
    r = api.post_json(
        "/apiv1/segments/addSegmentWithHash", {"segment_id": seg, "subscriber_hash": []}
    )
    assert "subscriber_hash" in assert_main_error(r, 400)["message"]


# ---- 1c: empty attribute filters ------------------------------------------------------------


@pytest.mark.parametrize(
    "attributes", ["[]", "[[]]", '[[{"key": "age", "op": "gt", "value": 1}], []]']
)
def test_broadcast_empty_attribute_filter_is_refused_in_a_form(emu, api, attributes):
    emu.add_subscriber(attributes={"age": 30})
    body = assert_main_error(api.broadcast(attributes=attributes), 400)
    assert "attributes" in body["message"]
    assert_nothing_sent(emu)


@pytest.mark.parametrize("attributes", [[], [[]], [[{"key": "age", "op": "gt", "value": 1}], []]])
def test_broadcast_empty_attribute_filter_is_refused_in_json(emu, api, attributes):
    emu.add_subscriber(attributes={"age": 30})
    r = api.post_json("/apiv1/notifications", {**BROADCAST, "attributes": attributes})
    assert "attributes" in assert_main_error(r, 400)["message"]
    assert_nothing_sent(emu)


# ---- 13: a JSON body's attributes as a real nested array -------------------------------------


def test_broadcast_json_attributes_as_a_nested_array(emu, api):
    old = emu.add_subscriber(attributes={"age": 30})
    emu.add_subscriber(attributes={"age": 10})
    groups = [[{"key": "age", "op": "gt", "value": 20}]]
    r = api.post_json("/apiv1/notifications", {**BROADCAST, "attributes": groups})
    assert r.status_code == 200, r.text
    assert emu.notifications()[0]["request"]["attributes"] == groups
    assert [d["subscriber_hash"] for d in emu.deliveries()] == [old]


# ---- 11: drip send_to with a key the spec does not have --------------------------------------


@pytest.mark.parametrize("key", ["include_device_types", "include_segment", "Include_segments"])
def test_drip_send_to_unknown_key_is_refused(emu, api, key):
    r = api.create_drip(send_to={key: ["desktop"]})
    assert key in assert_campaign_error(r, 400)
    r = api.get("/apiv1/drips")
    assert r.json()["data"] == []


@pytest.mark.parametrize("key", ["sendTo", "send_to_", "include_segments"])
def test_drip_body_unknown_key_is_refused(emu, api, key):
    r = api.create_drip(**{key: {"include_countries": ["FR"]}})
    assert key in assert_campaign_error(r, 400)
    assert api.get("/apiv1/drips").json()["data"] == []


def test_drip_send_to_known_keys_are_accepted(api):
    r = api.create_drip(send_to={"include_countries": ["FR"], "exclude_cities": ["Paris"]})
    assert r.status_code == 200, r.text


# ---- 4: every main-interface answer is JSON in the spec's shapes -----------------------------


@pytest.mark.parametrize("path", ["/apiv1/triggers/%FF", "/apiv1/drips/%FF", "/apiv1/drips/%C3%28"])
def test_undecodable_path_id_is_an_invalid_request(api, path):
    r = api.get(path)
    assert r.headers["content-type"].startswith("application/json"), r.text
    assert_campaign_error(r, 400)


# ---- 5: a key header that is not text is an incorrect key, not a missing one ------------------


def test_events_key_that_is_not_text_is_401000(emu):
    r = requests.post(
        emu.events_url + "/api/v1/events",
        data=b'{"event_name": "x", "profile_id": "p"}',
        headers={"Api-Key": b"k\xff", "Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    assert_event_error(r, 401, 401000)


def test_main_key_that_is_not_text_is_api_key_invalid(emu):
    r = requests.get(
        emu.base_url + "/apiv1/triggers", headers={"Api-Key": b"k\xff"}, timeout=TIMEOUT
    )
    assert_main_error(r, 401, "API KEY Invalid")


# ---- 3: drips are never back-dated ----------------------------------------------------------


def _after_midnight(emu) -> dt.datetime:
    """The emulator's clock, moved if needed so that 00:00:01 UTC today is in the past."""
    now = emu.now
    if now.time() < dt.time(0, 10):
        now = emu.advance(3600)
    return now


def test_drip_same_day_time_already_past_is_not_back_dated(emu, api):
    start = _after_midnight(emu)
    schedule = {"type": "after", "value": 0, "unit": "days", "at": "00:00:01"}
    assert (
        api.create_drip(notifications=[drip_notification(schedule_options=schedule)]).status_code
        == 200
    )
    h = emu.add_subscriber()
    (d,) = emu.deliveries(h, status="all")
    assert d["sent_at"] >= start


def test_drip_series_never_goes_back_in_time(emu, api):
    start = _after_midnight(emu)
    notifications = [
        drip_notification(),
        drip_notification(
            schedule_options={"type": "after", "value": 0, "unit": "days", "at": "00:00:01"}
        ),
    ]
    assert api.create_drip(notifications=notifications).status_code == 200
    h = emu.add_subscriber()
    first, second = emu.deliveries(h, status="all")
    assert start <= first["queued_at"] <= second["queued_at"]


# ---- 6: trigger notifications have no null strings -------------------------------------------


def test_trigger_notification_image_urls_are_never_null(emu, api):
    trigger_id = seed_trigger(emu)  # its second notification has no images
    r = api.get(f"/apiv1/triggers/{trigger_id}")
    for n in r.json()["data"]["notifications"]:
        for key in ("image_url", "big_image_url"):
            assert key not in n or isinstance(n[key], str), n
    with emu.client() as client:
        second = client.triggers.get(trigger_id).notifications[1]
        assert second.image_url is None and second.big_image_url is None


# ---- 7: dates and times in the spec's exact formats ------------------------------------------


@pytest.mark.parametrize(
    "value", ["2024-01- 5", "2024- 1-05", "2024-1-05", "+2024-01-05", "02024-01-05"]
)
def test_analytics_dates_must_be_exactly_yyyy_mm_dd(api, value):
    r = api.get("/apiv1/triggers", params={"analytics_start_at": value})
    assert "analytics_start_at" in assert_campaign_error(r, 400)
    r = api.get(
        "/apiv1/analytics/summary", params={"from": value, "to": "2024-02-01", "group_by": "day"}
    )
    assert "from" in assert_main_error(r, 400)["message"]


@pytest.mark.parametrize(
    "value",
    [
        "2030-1-2 3:4:5",
        "+2030-01-02 03:04:05",
        "2030-01-02  03:04:05",
        "2030-01-02 03:04:5",
        "2030-01-02 3:04:05",
        "2030-02-30 03:04:05",
    ],
)
def test_valid_from_utc_must_be_exactly_the_spec_format(emu, api, value):
    r = api.broadcast(notification_type="later", valid_from_utc=value)
    assert "valid_from_utc" in assert_main_error(r, 400)["message"]
    assert emu.notifications() == []


@pytest.mark.parametrize(
    "value", ["2024-1-1", "2024-01-1", "+2024-01-01", "2024-01-01T1:00:00", "2024-01-01T10:00"]
)
def test_from_and_to_date_must_be_iso_8601(emu, api, value):
    for field in ("from_date", "to_date"):
        assert field in assert_main_error(api.broadcast(**{field: value}), 400)["message"]
    assert emu.notifications() == []


@pytest.mark.parametrize(
    "value",
    [
        "2024-01-01",
        "2024-01-01T10:00:00Z",
        "2024-01-01T10:00:00",
        "2024-01-01 10:00:00",
        "2024-01-01T10:00:00.5+02:00",
        "2024-01-01t10:00:00z",  # RFC 3339 allows lowercase
    ],
)
def test_from_date_iso_8601_forms_are_accepted(api, value):
    assert api.broadcast(from_date=value).status_code == 200


@pytest.mark.parametrize(
    "schedule",
    [
        {"type": "after", "value": 1, "unit": "days", "at": "1:2:3"},
        {"type": "after", "value": 1, "unit": "days", "at": "01:02"},
        {"type": "after", "value": 1, "unit": "dow", "at": "01:2:03"},
        {"type": "after", "value": 5, "unit": "minutes", "at": "garbage"},
    ],
)
def test_drip_at_must_be_hh_mm_ss(api, schedule):
    notifications = [drip_notification(), drip_notification(schedule_options=schedule)]
    assert "at" in assert_campaign_error(api.create_drip(notifications=notifications), 400)


@pytest.mark.parametrize("at", ["10:00:00", ""])
def test_drip_minutes_with_a_valid_or_empty_at_is_accepted(api, at):
    # `at` is not used with minutes: an empty one (common in copied bodies) is no `at`.
    schedule = {"type": "after", "value": 5, "unit": "minutes", "at": at}
    notifications = [drip_notification(), drip_notification(schedule_options=schedule)]
    assert api.create_drip(notifications=notifications).status_code == 200


def test_drip_days_with_an_empty_at_is_refused(api):
    schedule = {"type": "after", "value": 1, "unit": "days", "at": ""}
    notifications = [drip_notification(), drip_notification(schedule_options=schedule)]
    assert "at" in assert_campaign_error(api.create_drip(notifications=notifications), 400)


# ---- 8: pages past the last one --------------------------------------------------------------


@pytest.mark.parametrize("path", ["/apiv1/triggers", "/apiv1/drips"])
@pytest.mark.parametrize("page", [4294967296, 9223372036854775807])
def test_a_large_page_is_an_empty_page(emu, api, path, page):
    seed_trigger(emu)
    r = api.get(path, params={"page": page})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["data"] == [] and body["meta"]["page"] == page


def test_a_page_past_every_integer_has_a_correct_message(api):
    message = assert_campaign_error(
        api.get("/apiv1/triggers", params={"page": "99999999999999999999999"})
    )
    assert message == "page must be at most 9223372036854775807"


# ---- 10: whole numbers written as floats ------------------------------------------------------


@pytest.mark.parametrize(
    "overrides",
    [
        {"expiry": 86400.0},
        {"require_interaction": 1.0},
        {"schedule_options": {"type": "after", "value": 2.0, "unit": "minutes"}},
    ],
)
def test_drip_whole_number_floats_are_numbers(api, overrides):
    later = {"schedule_options": {"type": "after", "value": 5, "unit": "minutes"}}
    notifications = [drip_notification(), drip_notification(**{**later, **overrides})]
    r = api.create_drip(notifications=notifications)
    assert r.status_code == 200, r.text
    drip = api.get(f"/apiv1/drips/{r.json()['drip_id']}").json()["data"]
    second = drip["notifications"][1]
    assert second["expiry"] == 86400 and second["require_interaction"] == 1


@pytest.mark.parametrize("overrides", [{"expiry": 86400.5}, {"require_interaction": 0.5}])
def test_drip_fractional_numbers_are_refused(api, overrides):
    message = assert_campaign_error(api.create_drip(notifications=[drip_notification(**overrides)]))
    assert "integer" in message and next(iter(overrides)) in message


# ---- 12: at most the spec's two button slots -------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"multi_element_title3": "b", "multi_element_url3": "https://x.example/"},
        {
            "multi_element_title1": "a",
            "multi_element_url1": "https://x.example/a",
            "multi_element_title3": "c",
            "multi_element_url3": "https://x.example/c",
        },
        {"multi_element_image0": "https://x.example/i.png"},
    ],
)
def test_button_slots_beyond_two_are_refused(emu, api, fields):
    body = assert_main_error(api.broadcast(**fields), 400)
    assert "multi_element_" in body["message"]
    assert emu.notifications() == []


def test_second_button_slot_alone_is_one_button(emu, api):
    r = api.broadcast(multi_element_title2="b", multi_element_url2="https://x.example/b")
    assert r.status_code == 200, r.text
    actions: list[dict[str, Any]] = emu.notifications()[0]["request"]["actions"]
    assert [a["label"] for a in actions] == ["b"]


def test_second_button_slot_alone_names_its_own_fields(emu, api):
    r = api.broadcast(multi_element_title2="b", multi_element_url2="not a url")
    assert "multi_element_url2" in assert_main_error(r, 400)["message"]
