"""The error bodies of spec section 7 and every limit of section 8, each just inside and just
outside, plus malformed input: always an answer in the interface's error shape, never a
dropped connection."""

from __future__ import annotations

import json

import pytest
import requests
from client_support import drip_notification
from conftest import (
    TIMEOUT,
    assert_campaign_error,
    assert_event_error,
    assert_main_error,
    detail_paths,
    seed_trigger,
)


def without(query: dict[str, str], field: str) -> dict[str, str]:
    """The query with one of its fields left out (each required field missing in turn)."""
    return {k: v for k, v in query.items() if k != field}


# ---- campaign lists: page and limit (8) -------------------------------------------------------


@pytest.mark.parametrize("path", ["/apiv1/triggers", "/apiv1/drips"])
@pytest.mark.parametrize(
    "params,ok",
    [
        ({"page": 1}, True),
        ({"page": 0}, False),
        ({"page": -1}, False),
        ({"page": "two"}, False),
        ({"limit": 1}, True),
        ({"limit": 500}, True),
        ({"limit": 0}, False),
        ({"limit": 501}, False),
        ({"limit": "1.5"}, False),
        ({"page": "99999999999999999999999"}, False),
    ],
)
def test_campaign_list_page_and_limit_bounds(api, path, params, ok):
    r = api.get(path, params=params)
    if ok:
        assert r.status_code == 200, r.text
        meta = r.json()["meta"]
        assert meta["page"] == params.get("page", 1)
        assert meta["perPage"] == params.get("limit", 10)
    else:
        assert_campaign_error(r, 400)


@pytest.mark.parametrize("path", ["/apiv1/triggers", "/apiv1/drips", "/apiv1/triggers/1"])
@pytest.mark.parametrize(
    "params",
    [
        {"analytics_start_at": "01/02/2024"},
        {"analytics_end_at": "2024-13-01"},
        {"analytics_start_at": "2024-02-01", "analytics_end_at": "2024-01-01"},
    ],
)
def test_campaign_reads_reject_a_bad_analytics_range(emu, api, path, params):
    seed_trigger(emu)
    assert_campaign_error(api.get(path, params=params), 400)


@pytest.mark.parametrize("raw", ["abc", "0", "-3", "1.5"])
def test_campaign_path_ids_must_be_positive_integers(api, raw):
    assert_campaign_error(api.get(f"/apiv1/triggers/{raw}"), 400)
    assert_campaign_error(api.get(f"/apiv1/drips/{raw}"), 400)


def test_unknown_campaign_ids_are_invalid_requests(api):
    assert "does not exist" in assert_campaign_error(api.get("/apiv1/triggers/424242"))
    assert "does not exist" in assert_campaign_error(api.get("/apiv1/drips/424242"))


# ---- drip creation (4.3, 2.8) -----------------------------------------------------------------


def test_drip_expiry_bound_is_28_days_in_seconds(api):
    assert api.create_drip(notifications=[drip_notification(expiry=2419200)]).status_code == 200
    r = api.create_drip(notifications=[drip_notification(expiry=2419201)])
    assert "expiry" in assert_campaign_error(r)
    assert_campaign_error(api.create_drip(notifications=[drip_notification(expiry=0)]))


def test_drip_notification_allows_two_actions_not_three(api):
    action = {"label": "Go", "url": "https://shop.example/"}
    assert api.create_drip(notifications=[drip_notification(actions=[action] * 2)]).ok
    r = api.create_drip(notifications=[drip_notification(actions=[action] * 3)])
    assert "actions" in assert_campaign_error(r)


@pytest.mark.parametrize(
    "field", ["title", "message", "url", "image_url", "big_image_url", "schedule_options"]
)
def test_drip_notification_required_fields(api, field):
    n = drip_notification()
    del n[field]
    assert_campaign_error(api.create_drip(notifications=[n]))


@pytest.mark.parametrize(
    "body",
    [
        {"notifications": [drip_notification()]},
        {"campaign_name": "x"},
        {"campaign_name": "   ", "notifications": [drip_notification()]},
        {"campaign_name": "x", "notifications": []},
    ],
    ids=["no-name", "no-notifications", "blank-name", "empty-notifications"],
)
def test_drip_body_required_fields(api, body):
    assert_campaign_error(api.post_json("/apiv1/drips", body))


@pytest.mark.parametrize(
    "schedule,ok",
    [
        ({"type": "after", "value": 30, "unit": "minutes"}, True),
        ({"type": "after", "value": 2, "unit": "days", "at": "10:00:00"}, True),
        ({"type": "after", "value": 6, "unit": "dow", "at": "10:00:00"}, True),
        ({"type": "after", "value": 7, "unit": "dow", "at": "10:00:00"}, False),
        ({"type": "after", "value": 2, "unit": "days"}, False),
        ({"type": "after", "value": 2, "unit": "days", "at": "25:00:00"}, False),
        ({"type": "after", "value": 2, "unit": "days", "at": "10:00:60"}, False),
        ({"type": "after", "unit": "minutes"}, False),
        ({"type": "after", "value": 5}, False),
        ({"type": "after", "value": 5, "unit": "hours"}, False),
        ({"type": "rightaway"}, False),
        ({"type": "sometime"}, False),
    ],
)
def test_drip_schedule_of_a_later_notification(api, schedule, ok):
    r = api.create_drip(
        notifications=[drip_notification(), drip_notification(schedule_options=schedule)]
    )
    if ok:
        assert r.status_code == 200, r.text
    else:
        assert_campaign_error(r)


def test_drip_rejects_a_non_web_url_and_bad_require_interaction(api):
    assert_campaign_error(api.create_drip(notifications=[drip_notification(url="not a url")]))
    assert_campaign_error(api.create_drip(notifications=[drip_notification(require_interaction=2)]))


def test_drip_utm_params_need_source_medium_campaign(api):
    assert_campaign_error(api.create_drip(utm_params={"utm_source": "push"}))


# ---- segments (4.6-4.9) -----------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "abc", "0", "-1", "1.5"])
@pytest.mark.parametrize("path", ["/apiv1/segments/addSegmentWithHash", "/apiv1/segments/delete"])
def test_invalid_segment_id_message(api, path, raw):
    r = api.post_form(path, {"segment_id": raw, "subscriber_hash[0]": "h"})
    assert_main_error(r, 400, "Enter a valid segment id")


@pytest.mark.parametrize("path", ["/apiv1/segments/addSegmentWithHash", "/apiv1/segments/delete"])
def test_missing_segment_id_message(api, path):
    r = api.post_form(path, {"subscriber_hash[0]": "h"})
    assert_main_error(r, 400, "Enter a valid segment id")


@pytest.mark.parametrize("path", ["/apiv1/segments/addSegmentWithHash", "/apiv1/segments/delete"])
def test_unknown_segment_id_message(api, path):
    r = api.post_form(path, {"segment_id": "4242", "subscriber_hash[0]": "h"})
    assert_main_error(r, 400, "Your enter segment id does not exist")


@pytest.mark.parametrize("field", ["include_segments[0]", "exclude_segments[0]"])
def test_a_segment_name_in_a_broadcast_is_refused_and_nothing_is_sent(emu, api, field):
    vip = emu.create_segment("vip")
    emu.add_subscriber(segments=[vip])
    body = assert_main_error(api.broadcast(**{field: "vip"}), 400)
    assert field in body["message"] and "segment_id" in body["message"]
    assert emu.notifications() == [] and emu.deliveries(status="all") == []
    # The id, as the emulator and GET /apiv1/segments give it, reaches the member.
    (listed,) = api.get("/apiv1/segments").json()["segments"]
    assert listed["segment_id"] == vip
    assert api.broadcast(**{"include_segments[0]": vip}).status_code == 200
    assert len(emu.deliveries()) == 1


def test_a_segment_name_in_a_drip_audience_is_refused(emu, api):
    emu.create_segment("vip")
    message = assert_campaign_error(api.create_drip(send_to={"include_segments": ["vip"]}))
    assert "send_to.include_segments[0]" in message
    assert api.get("/apiv1/drips").json()["data"] == []


def test_view_segments_with_an_invalid_segment_id(api):
    assert_main_error(api.get("/apiv1/segments", params={"segment_id": "abc"}), 400)


@pytest.mark.parametrize(
    "count,ok", [(1, True), (500, True), (501, False)], ids=["1", "500", "501"]
)
def test_add_with_hash_takes_at_most_500_hashes(emu, api, count, ok):
    seg = emu.create_segment("vip")
    form = {"segment_id": seg}
    form.update({f"subscriber_hash[{i}]": f"h{i}" for i in range(count)})
    r = api.post_form("/apiv1/segments/addSegmentWithHash", form)
    if ok:
        assert r.status_code == 200, r.text
        assert r.json()["success"] is True
    else:
        assert "500" in assert_main_error(r, 400)["message"]


def test_add_with_hash_requires_hashes(emu, api):
    seg = emu.create_segment("vip")
    assert_main_error(api.post_form("/apiv1/segments/addSegmentWithHash", {"segment_id": seg}), 400)


@pytest.mark.parametrize(
    "params,ok",
    [
        ({"limit": 1}, True),
        ({"limit": 0}, False),
        ({"limit": -5}, False),
        ({"offset": 0}, True),
        ({"offset": -1}, False),
        ({"offset": "x"}, False),
    ],
)
def test_view_segments_limit_and_offset_bounds(emu, api, params, ok):
    emu.create_segment("a")
    emu.create_segment("b")
    r = api.get("/apiv1/segments", params=params)
    if ok:
        assert r.status_code == 200, r.text
        assert r.json()["count"] == (1 if "limit" in params else 2)
    else:
        assert_main_error(r, 400)


MEMBERSHIP = {"segment_name": "vip", "profile_id[0]": "p", "operation": "add"}


@pytest.mark.parametrize(
    "form",
    [
        *(without(MEMBERSHIP, field) for field in MEMBERSHIP),
        {**MEMBERSHIP, "operation": "merge"},
        {**MEMBERSHIP, "segment_name": "nope"},
    ],
    ids=["no-name", "no-profiles", "no-operation", "bad-operation", "unknown-segment"],
)
def test_profile_membership_failures(emu, api, form):
    emu.create_segment("vip")
    assert_main_error(api.post_form("/apiv1/profile", form), 400)


# ---- analytics (4.10, 4.11) -------------------------------------------------------------------


SUMMARY = {"from": "2024-01-01", "to": "2024-01-02", "group_by": "day"}


@pytest.mark.parametrize(
    "params",
    [
        *(without(SUMMARY, field) for field in SUMMARY),
        {**SUMMARY, "from": "2024/01/01"},
        {**SUMMARY, "from": "2024-01-03"},
        {**SUMMARY, "group_by": "fortnight"},
    ],
)
def test_summary_analytics_rejects_bad_queries(api, params):
    assert_main_error(api.get("/apiv1/analytics/summary", params=params), 400)


def test_summary_analytics_groups_by_week_and_month(api):
    weeks = api.get(
        "/apiv1/analytics/summary",
        params={"from": "2024-01-01", "to": "2024-01-21", "group_by": "week"},
    ).json()["data"]
    assert len(weeks) == 3
    months = api.get(
        "/apiv1/analytics/summary",
        params={"from": "2024-01-15", "to": "2024-03-10", "group_by": "month"},
    ).json()["data"]
    assert [m["date"] for m in months] == ["2024-01-15", "2024-02-01", "2024-03-01"]


def test_subscriber_distribution_rejects_an_unknown_dimension(api):
    r = api.get("/apiv1/subscribers/analytics/summary", params={"type": "country,planet"})
    assert_main_error(r, 400)


# ---- products (4.12) --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"products": []},
        {"products": "sku-1"},
        {"products": [{"price": 1}]},
        {"products": [{"product_id": "a"}]},
        {"products": [{"product_id": "a", "price": "cheap"}]},
        {"products": [{"product_id": "a", "price": -1}]},
        {"products": [{"product_id": "a", "price": 1, "availability": "soon"}]},
        {"products": [{"product_id": 7, "price": 1}]},
    ],
)
def test_product_update_rejects_bad_products(emu, api, body):
    assert_main_error(api.post_json("/apiv1/products", body), 400)
    assert emu.products() == []


# ---- broadcasts (4.13) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "missing,message",
    [
        ("notification_title", "The Title field is required."),
        ("notification_message", "The Message field is required."),
        ("notification_url", "The URL field is required."),
    ],
)
def test_broadcast_required_field_messages(emu, api, missing, message):
    r = api.broadcast(**{missing: ""})
    assert_main_error(r, 400, message)
    body = {
        "notification_title": "t",
        "notification_message": "m",
        "notification_url": "https://a.example/",
    }
    del body[missing]
    assert_main_error(api.post_form("/apiv1/notifications", body), 400, message)
    assert emu.notifications() == []


def test_broadcast_to_an_unknown_profile_id(emu, api):
    emu.add_subscriber(profile_id="known")
    r = api.broadcast(**{"profile_id[0]": "stranger"})
    assert_main_error(r, 400, "No Subcribers Found for the given profile_id")
    r = api.broadcast(
        notification_type="later",
        valid_from_utc="2030-01-01 10:00:00",
        **{"profile_id[0]": "stranger"},
    )
    assert_main_error(r, 400, "No Subcribers Found for the given profile_id")
    assert api.broadcast(**{"profile_id[0]": "known"}).status_code == 200


LIMITS = [
    # (type, field, inside, outside)
    ("now", "notification_title", 85, 86),
    ("now", "notification_message", 135, 136),
    ("draft", "notification_title", 85, 86),
    ("draft", "notification_message", 135, 136),
    (None, "notification_title", 85, 86),
    ("later", "notification_title", 45, 46),
    ("later", "notification_message", 73, 74),
]


@pytest.mark.parametrize("kind,field,inside,outside", LIMITS)
def test_broadcast_title_and_message_lengths(emu, api, kind, field, inside, outside):
    extra = {}
    if kind:
        extra["notification_type"] = kind
    if kind == "later":
        extra["valid_from_utc"] = "2030-06-01 08:00:00"
    # Non-ASCII characters count as one character each.
    r = api.broadcast(**extra, **{field: "é" * inside})
    assert r.status_code == 200, r.text
    r = api.broadcast(**extra, **{field: "é" * outside})
    assert str(inside) in assert_main_error(r, 400)["message"]
    assert len(emu.notifications()) == 1


def test_scheduled_limits_do_not_apply_to_immediate_broadcasts(api):
    assert api.broadcast(notification_title="t" * 60, notification_message="m" * 100).ok


@pytest.mark.parametrize(
    "value,ok",
    [("1", True), ("40320", True), ("40321", False), ("0", False), ("ten", False)],
)
def test_broadcast_expiry_is_at_most_28_days_in_minutes(api, value, ok):
    r = api.broadcast(notification_expiry=value)
    if ok:
        assert r.status_code == 200, r.text
    else:
        assert_main_error(r, 400)


@pytest.mark.parametrize("count,ok", [(100, True), (101, False)])
def test_broadcast_subscriber_hash_entries(api, count, ok):
    r = api.broadcast(**{f"subscriber_hash[{i}]": f"h{i}" for i in range(count)})
    if ok:
        assert r.status_code == 200, r.text
    else:
        assert "100" in assert_main_error(r, 400)["message"]


@pytest.mark.parametrize("count,ok", [(100, True), (101, False)])
def test_broadcast_profile_id_entries(emu, api, count, ok):
    emu.add_subscriber(profile_id="p0")
    r = api.broadcast(**{f"profile_id[{i}]": f"p{i}" for i in range(count)})
    if ok:
        assert r.status_code == 200, r.text
    else:
        assert "100" in assert_main_error(r, 400)["message"]


@pytest.mark.parametrize(
    "valid_from,ok",
    [
        ("2030-01-01 00:00:00", True),
        ("2030-01-01 23:59:59", True),
        (None, False),
        ("2030-01-01 24:00:00", False),
        ("2030-01-01 10:60:00", False),
        ("2030-01-01 10:00:60", False),
        ("2030-01-01 10:00 pm", False),
        ("2030-01-01T10:00:00", False),
    ],
)
def test_scheduled_broadcast_valid_from_utc(api, valid_from, ok):
    extra = {"notification_type": "later"}
    if valid_from is not None:
        extra["valid_from_utc"] = valid_from
    r = api.broadcast(**extra)
    if ok:
        assert r.status_code == 200, r.text
    else:
        assert_main_error(r, 400)


@pytest.mark.parametrize(
    "fields",
    [
        {"notification_type": "soon"},
        {"notification_url": "not a url"},
        {"image_url": "ftp//x"},
        {"require_interaction": "2"},
        {"from_date": "yesterday"},
        {"attributes": "not json"},
        {"attributes": '[[{"key": "age", "op": "about", "value": 1}]]'},
        {"multi_element_title1": "Go"},
        {"multi_element_url1": "https://a.example/"},
    ],
)
def test_broadcast_rejects_bad_parameters(emu, api, fields):
    assert_main_error(api.broadcast(**fields), 400)
    assert emu.notifications() == []


# ---- events (4.14) ----------------------------------------------------------------------------


def test_event_without_a_name_lists_the_failing_field(emu, api):
    err = assert_event_error(api.track({"profile_id": "p"}), 400, 1003)
    assert detail_paths(err) == [["event_name"]]
    assert emu.events() == []


def test_event_lists_every_failing_field(api):
    body = {"data": {"_bad": 1, "fine": {"nested": True}}}
    err = assert_event_error(api.track(body), 400, 1003)
    paths = detail_paths(err)
    assert ["event_name"] in paths
    assert ["data", "_bad"] in paths
    assert ["data", "fine"] in paths
    assert any(p[0] in ("profile_id", "device_token_hash") for p in paths)


def accepted_or_refused_at(r: requests.Response, ok: bool, path: list[str]) -> None:
    """An event taken (200), or refused (400, code 1003) naming only the field at ``path``."""
    if ok:
        assert r.status_code == 200, r.text
    else:
        assert detail_paths(assert_event_error(r, 400, 1003)) == [path]


def test_event_needs_a_profile_id_or_device_token_hash(api):
    err = assert_event_error(api.track({"event_name": "x"}), 400, 1003)
    assert len(err["details"]) == 1


@pytest.mark.parametrize("length,ok", [(1, True), (64, True), (65, False)])
def test_event_name_length(api, length, ok):
    r = api.track({"event_name": "e" * length, "profile_id": "p"})
    accepted_or_refused_at(r, ok, ["event_name"])


@pytest.mark.parametrize(
    "name,ok",
    [
        ("Service.signup", False),
        ("Service.", False),
        ("service.signup", True),
        ("MyService.x", True),
    ],
)
def test_event_name_reserved_prefix(api, name, ok):
    r = api.track({"event_name": name, "profile_id": "p"})
    accepted_or_refused_at(r, ok, ["event_name"])


@pytest.mark.parametrize("length,ok", [(255, True), (256, False)])
def test_event_data_key_length(api, length, ok):
    key = "k" * length
    r = api.track({"event_name": "x", "profile_id": "p", "data": {key: 1}})
    accepted_or_refused_at(r, ok, ["data", key])


@pytest.mark.parametrize(
    "key", ["_lead", "-lead", "has space", "dotted.key", "emoji🙂", "ümlaut", ""]
)
def test_event_data_key_characters(api, key):
    r = api.track({"event_name": "x", "profile_id": "p", "data": {key: 1}})
    assert detail_paths(assert_event_error(r, 400, 1003)) == [["data", key]]


def test_event_data_key_good_characters(api):
    data = {"a": 1, "9lives": 2, "with-hyphen_and_underscore": 3, "Mixed09": "x"}
    assert api.track({"event_name": "x", "profile_id": "p", "data": data}).status_code == 200


@pytest.mark.parametrize("value", [None, [1], {"a": 1}])
def test_event_data_values_must_be_scalars(api, value):
    r = api.track({"event_name": "x", "profile_id": "p", "data": {"k": value}})
    assert detail_paths(assert_event_error(r, 400, 1003)) == [["data", "k"]]


def _data_of_size(n: int) -> dict:
    data = {"k": "a" * (n - len('{"k":""}'))}
    assert len(json.dumps(data, separators=(",", ":")).encode()) == n
    return data


@pytest.mark.parametrize("size,ok", [(4096, True), (4097, False)])
def test_event_data_payload_is_at_most_4096_bytes(api, size, ok):
    r = api.track({"event_name": "x", "profile_id": "p", "data": _data_of_size(size)})
    accepted_or_refused_at(r, ok, ["data"])


@pytest.mark.parametrize(
    "body,path",
    [
        ({"event_name": 5, "profile_id": "p"}, ["event_name"]),
        ({"event_name": "", "profile_id": "p"}, ["event_name"]),
        ({"event_name": "x", "profile_id": 5}, ["profile_id"]),
        ({"event_name": "x", "device_token_hash": ""}, ["device_token_hash"]),
        ({"event_name": "x", "profile_id": "p", "data": [1]}, ["data"]),
        ({"event_name": "x", "profile_id": "p", "extra": 1}, ["extra"]),
    ],
)
def test_event_wrong_types(api, body, path):
    assert detail_paths(assert_event_error(api.track(body), 400, 1003)) == [path]


# ---- malformed input: always an answer in the interface's shape --------------------------------


def raw_post(url: str, key: str, body: bytes, content_type: str | None) -> requests.Response:
    headers = {"Api-Key": key}
    if content_type is not None:
        headers["Content-Type"] = content_type
    return requests.post(url, data=body, headers=headers, timeout=TIMEOUT)


BAD_JSON_BODIES = [
    b"{",
    b"not json",
    b'{"a": 1,}',
    b"[1, 2]",
    b'"text"',
    b"",
    b"\xff\xfe\x00garbage",
    b"[" * 10000 + b"]" * 10000,
]


@pytest.mark.parametrize("body", BAD_JSON_BODIES)
def test_bad_json_on_drips_is_an_invalid_request(emu, body):
    r = raw_post(emu.base_url + "/apiv1/drips", emu.api_key, body, "application/json")
    assert_campaign_error(r, 400)


@pytest.mark.parametrize("body", BAD_JSON_BODIES)
def test_bad_json_on_products_is_a_400_message(emu, body):
    r = raw_post(emu.base_url + "/apiv1/products", emu.api_key, body, "application/json")
    assert_main_error(r, 400)


@pytest.mark.parametrize("body", BAD_JSON_BODIES)
def test_bad_json_on_events_is_code_1003(emu, body):
    r = raw_post(emu.events_url + "/api/v1/events", emu.api_key, body, "application/json")
    assert_event_error(r, 400, 1003)
    assert emu.events() == []


@pytest.mark.parametrize(
    "notifications",
    [
        "x",
        {"title": "t"},
        [1],
        [drip_notification(title={"text": "t"})],
        [drip_notification(message=["m"])],
        [drip_notification(expiry="a day")],
        [drip_notification(expiry=[1])],
        [drip_notification(require_interaction="yes")],
        [drip_notification(schedule_options="rightaway")],
        [drip_notification(actions="none")],
        [drip_notification(actions=[{"label": ["Go"], "url": "https://a.example/"}])],
    ],
)
def test_drip_with_wrong_json_types_is_an_invalid_request(emu, api, notifications):
    r = api.post_json("/apiv1/drips", {"campaign_name": "x", "notifications": notifications})
    assert_campaign_error(r, 400)
    assert api.get("/apiv1/drips").json()["data"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"campaign_name": 7, "notifications": [drip_notification()]},
        {"campaign_name": "x", "notifications": [drip_notification()], "send_to": "all"},
        {
            "campaign_name": "x",
            "notifications": [drip_notification()],
            "send_to": {"include_segments": "1"},
        },
        {"campaign_name": "x", "notifications": [drip_notification()], "utm_params": "push"},
    ],
)
def test_drip_with_wrong_top_level_types(api, body):
    assert_campaign_error(api.post_json("/apiv1/drips", body), 400)


@pytest.mark.parametrize(
    "url_path,kind",
    [
        ("/apiv1/drips", "campaign"),
        ("/apiv1/products", "main"),
        ("/apiv1/notifications", "main"),
        ("/apiv1/segments/delete", "main"),
        ("/apiv1/profile", "main"),
        ("/apiv1/segments/addSegmentWithHash", "main"),
    ],
)
@pytest.mark.parametrize(
    "content_type", ["text/plain", "multipart/mixed; boundary=x", "application/xml"]
)
def test_unknown_content_type_is_refused_in_the_endpoints_shape(emu, url_path, kind, content_type):
    r = raw_post(emu.base_url + url_path, emu.api_key, b"segment_id=1", content_type)
    if kind == "campaign":
        assert_campaign_error(r, 400)
    else:
        assert_main_error(r, 400)


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_events_need_a_json_content_type(emu, content_type):
    body = json.dumps({"event_name": "x", "profile_id": "p"}).encode()
    r = raw_post(emu.events_url + "/api/v1/events", emu.api_key, body, content_type)
    assert_event_error(r, 400, 1003)
    assert emu.events() == []


def test_json_content_type_with_a_charset_is_json(emu):
    body = json.dumps({"event_name": "x", "profile_id": "p"}).encode()
    r = raw_post(
        emu.events_url + "/api/v1/events", emu.api_key, body, "application/json; charset=utf-8"
    )
    assert r.status_code == 200, r.text


def test_form_endpoints_also_read_a_json_body(emu, api):
    seg = emu.create_segment("vip")
    h = emu.add_subscriber()
    r = api.post_json(
        "/apiv1/segments/addSegmentWithHash", {"segment_id": seg, "subscriber_hash": [h]}
    )
    assert r.status_code == 200, r.text
    assert emu.segments()[0]["members"] == [h]


@pytest.mark.parametrize(
    "body,message",
    [
        (b"%zz%%%=&&&==", "The Title field is required."),
        (b"\xff\xfe\xfd", "The Title field is required."),
        (b"a" * 5000, "The Title field is required."),
        # A key with brackets that are no array index is named, never read as another field.
        (b"notification_title[=x", None),
    ],
)
def test_garbled_form_bodies_get_an_answer(emu, body, message):
    r = raw_post(
        emu.base_url + "/apiv1/notifications",
        emu.api_key,
        body,
        "application/x-www-form-urlencoded",
    )
    got = assert_main_error(r, 400, message)["message"]
    if message is None:
        assert "notification_title[" in got


ONE_MIB = 1 << 20


@pytest.mark.parametrize(
    "url_attr,path,shape",
    [
        ("base_url", "/apiv1/products", "main"),
        ("base_url", "/apiv1/notifications", "main"),
        # a campaign endpoint's 4xx carries its error object (section 7), as its 400s do
        ("base_url", "/apiv1/drips", "campaign"),
        ("events_url", "/api/v1/events", "events"),
    ],
)
@pytest.mark.parametrize("size", [ONE_MIB + 1, 4 * ONE_MIB])
def test_oversized_body_is_413_not_a_dropped_connection(emu, url_attr, path, shape, size):
    url = getattr(emu, url_attr) + path
    r = raw_post(url, emu.api_key, b"x" * size, "application/json")
    assert r.status_code == 413
    if shape == "main":
        assert r.json()["success"] is False and r.json()["message"]
    elif shape == "campaign":
        assert r.json()["success"] is False
        assert r.json()["error"]["name"] == "InvalidRequestException"
    else:
        assert r.json()["error"]["message"]
    # the emulator keeps serving afterwards
    assert requests.get(emu.base_url + "/apiv1/segments", headers={"Api-Key": emu.api_key}).ok


def test_a_body_of_exactly_one_mib_is_read(emu):
    padding = "x" * (ONE_MIB - 200)
    body = json.dumps({"products": [{"product_id": "a", "price": 1, "variant_id": padding}]})
    body = body.encode() + b" " * (ONE_MIB - len(body.encode()))
    assert len(body) == ONE_MIB
    r = raw_post(emu.base_url + "/apiv1/products", emu.api_key, body, "application/json")
    assert r.status_code == 200, r.text


def test_chunked_oversized_body_is_413(emu):
    def chunks():
        for _ in range(20):
            yield b"x" * 65536

    r = requests.post(
        emu.base_url + "/apiv1/products",
        data=chunks(),
        headers={"Api-Key": emu.api_key, "Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 413


def test_unknown_paths_and_methods_answer_in_the_interface_shape(emu, api):
    assert_main_error(api.get("/apiv1/nothing"), 404)
    assert_main_error(api.get("/apiv1/notifications"), 405)
    assert_main_error(api.post_form("/apiv1/segments", {}), 405)
    r = requests.get(emu.events_url + "/api/v1/events", headers=api.headers(), timeout=TIMEOUT)
    assert r.status_code == 405 and r.json()["error"]["message"]
    r = requests.post(emu.events_url + "/api/v2/events", headers=api.headers(), timeout=TIMEOUT)
    assert r.status_code == 404 and r.json()["error"]["message"]


# ---- robustness: what fuzzing found (helper-28) -----------------------------------------------


def post_a_malformed_chunk(emu, path: str) -> str:
    """The raw answer to a POST whose chunked body has a chunk size that is not hex."""
    import socket

    host, port = emu.base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nApi-Key: ".encode()
            + emu.api_key.encode()
            + b"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"zz\r\n{}\r\n0\r\n\r\n"
        )
        return s.recv(4096).decode()


def test_a_malformed_chunked_body_is_400_not_413(emu):
    head = post_a_malformed_chunk(emu, "/apiv1/products")
    assert head.startswith("HTTP/1.1 400"), head
    assert '"success":false' in head.replace(" ", "")


def test_a_body_the_gate_cannot_read_is_refused_in_a_campaign_endpoint_s_shape(emu):
    # Section 7: a campaign endpoint's 4xx carries its error object, whether the route or the
    # gate in front of it (a malformed or oversized body) refuses the request.
    answer = post_a_malformed_chunk(emu, "/apiv1/drips")
    assert answer.startswith("HTTP/1.1 400"), answer
    body = json.loads(answer.split("\r\n\r\n", 1)[1])
    assert body["success"] is False
    assert body["error"]["name"] == "InvalidRequestException" and body["error"]["message"]
    r = requests.post(
        emu.base_url + "/apiv1/drips",
        data=b"x" * ((1 << 20) + 1),
        headers={"Api-Key": emu.api_key, "Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 413
    assert r.json()["error"]["name"] == "InvalidRequestException"
    # elsewhere on the main interface, the plain shape
    r = requests.post(
        emu.base_url + "/apiv1/products",
        data=b"x" * ((1 << 20) + 1),
        headers={"Api-Key": emu.api_key, "Content-Type": "application/json"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 413 and r.json()["success"] is False and r.json()["message"]


def test_a_status_fault_must_be_a_final_status(emu):
    for status in (100, 101, 199, 600):
        with pytest.raises(ValueError, match="from 200 to 599"):
            emu.inject_fault("/apiv1/segments", status=status)


def test_admin_query_strings_carry_booleans_and_numbers(emu):
    base = emu.base_url + "/_emulator"
    r = requests.post(f"{base}/add_subscriber?subscriber_hash=q1&online=false", timeout=5)
    assert r.status_code == 200, r.text
    assert [s["online"] for s in emu.subscribers() if s["subscriber_hash"] == "q1"] == [False]
    # a hash of digits stays text
    assert requests.post(f"{base}/add_subscriber?subscriber_hash=123", timeout=5).ok
    assert "123" in {s["subscriber_hash"] for s in emu.subscribers()}
    r = requests.post(f"{base}/inject_fault?path=/apiv1/segments&status=503&times=2", timeout=5)
    assert r.status_code == 200, r.text
    got = [
        requests.get(
            emu.base_url + "/apiv1/segments", headers={"Api-Key": emu.api_key}, timeout=5
        ).status_code
        for _ in range(3)
    ]
    assert got == [503, 503, 200]
    # a whole number however it is written is a count all the same
    for times in ("2.0", "2e0", "%2B2", "02"):
        r = requests.post(
            f"{base}/inject_fault?path=/apiv1/segments&status=503&times={times}", timeout=5
        )
        assert r.status_code == 200, (times, r.text)
        got = [
            requests.get(
                emu.base_url + "/apiv1/segments", headers={"Api-Key": emu.api_key}, timeout=5
            ).status_code
            for _ in range(3)
        ]
        assert got == [503, 503, 200], times
    assert requests.post(f"{base}/freeze_clock?frozen=true", timeout=5).json()["frozen"] is True
    # numbers as Python's float() writes and reads them, not only in JSON's syntax
    before = emu.now
    assert requests.post(f"{base}/advance?seconds=.5", timeout=5).status_code == 200
    assert (emu.now - before).total_seconds() == 0.5
    r = requests.post(f"{base}/add_subscriber?subscriber_hash=q2&online=maybe", timeout=5)
    assert r.status_code == 400 and "online must be true or false" in r.text


def test_a_broadcast_with_both_spellings_of_attributes_is_refused(emu, api):
    emu.add_subscriber(attributes={"age": 30})
    r = api.broadcast(
        attributes='[[{"attribute":"age","operator":"gt","value":20}]]',
        Attributes='[[{"attribute":"age","operator":"lt","value":20}]]',
    )
    assert r.status_code == 400 and "not both" in r.text
    assert emu.notifications() == []


def test_a_site_key_no_request_could_carry_is_refused(emu):
    # The gate trims the key a request sends, and a header carries only printable ASCII: such
    # a key would make every call of the emulator's own clients fail with a 401.
    with pytest.raises(ValueError, match="spaces"):
        emu.add_site(" padded ")
    with pytest.raises(ValueError, match="printable ASCII"):
        emu.add_site("clé-12345678")
    from pushwire.testing import Emulator

    for key, problem in ((" padded-key-1 ", "spaces"), ("clé-12345678", "printable ASCII")):
        with pytest.raises(ValueError, match=problem):
            Emulator(api_key=key)
    # a key with a space inside is sent as it is, and works
    with Emulator(api_key="test key 12345678") as spaced:
        assert spaced.client().segments.list() == []


def test_an_alert_campaign_expiry_past_a_century_is_refused_not_a_crash(emu, api):
    def inventory_campaign(expiry: str) -> int:
        return emu.create_trigger(
            campaign_name="Back",
            campaign_type="inventory",
            rules={"start_event_name": "s", "stop_event_name": "t"},
            notifications=[{"title": "t", "message": "m", "url": "https://shop.example/"}],
            options={"campaign": {"expiry": expiry}},
        )

    with pytest.raises(ValueError, match="options.campaign.expiry"):
        inventory_campaign("99999999999999")
    # the longest allowed works end to end
    inventory_campaign("3155760000")
    h = emu.add_subscriber()
    emu.add_alert(h, "p1")
    for availability in ("outOfStock", "inStock"):
        product = {"product_id": "p1", "price": 10, "availability": availability}
        r = api.post_json("/apiv1/products", {"products": [product]})
        assert r.status_code == 200, r.text
    assert len(emu.deliveries(h)) == 1


SLOW_CLIENT = """
import json, os, socket, sys, time
from pushwire.testing import EmulatorProcess

with EmulatorProcess(api_key="slow-key-123") as emu:
    host, port = emu.base_url.removeprefix("http://").split(":")
    # a head that never ends: closed after the read timeout
    a = socket.create_connection((host, int(port)), timeout=10)
    a.sendall(b"GET /apiv1/segm")
    t0 = time.monotonic()
    closed = a.recv(1024) == b""
    head_s = time.monotonic() - t0
    # a body that never ends: answered 408 in the interface's shape
    b = socket.create_connection((host, int(port)), timeout=10)
    b.sendall(b"POST /apiv1/products HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nApi-Key: slow-key-123\\r\\n"
              b"Content-Type: application/json\\r\\nContent-Length: 10\\r\\n\\r\\n{")
    answer = b.recv(4096).decode()
    print(json.dumps({"closed": closed, "head_s": head_s, "answer": answer}))
"""


STEADY_CLIENT = """
import json, socket, time
from pushwire.testing import EmulatorProcess

with EmulatorProcess(api_key="slow-key-123") as emu:
    host, port = emu.base_url.removeprefix("http://").split(":")
    body = json.dumps(
        {"products": [{"product_id": "p1", "price": 10, "availability": "inStock"}]}
    ).encode()
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(b"POST /apiv1/products HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nApi-Key: slow-key-123\\r\\n"
              b"Content-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body))
    # the body comes slowly, over 2.4 s, but never stops for as long as the 1 s timeout
    step = len(body) // 6 + 1
    for i in range(0, len(body), step):
        s.sendall(body[i : i + step])
        time.sleep(0.4)
    answer = s.recv(4096).decode()
    print(json.dumps({"answer": answer, "products": len(emu.admin("products"))}))
"""


def test_a_slow_body_that_keeps_arriving_is_read_to_its_end():
    import os
    import subprocess
    import sys

    env = dict(os.environ, PUSHWIRE_EMULATOR_READ_TIMEOUT="1")
    run = subprocess.run(
        [sys.executable, "-c", STEADY_CLIENT], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["answer"].startswith("HTTP/1.1 200"), out
    assert out["products"] == 1


def test_a_request_that_stops_arriving_is_given_up(tmp_path):
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, PUSHWIRE_EMULATOR_READ_TIMEOUT="1")
    run = subprocess.run(
        [sys.executable, "-c", SLOW_CLIENT], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["closed"] and 0.5 < out["head_s"] < 5, out
    assert out["answer"].startswith("HTTP/1.1 408"), out
    assert '"success":false' in out["answer"].replace(" ", "")
