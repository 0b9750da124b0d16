"""Every endpoint of spec section 4 over real HTTP: the success shapes (spec section 2),
authentication (section 5), form array spellings, site isolation and pagination."""

from __future__ import annotations

import pytest
import requests
from client_support import drip_notification
from conftest import (
    SUMMARY_FIELDS,
    TIMEOUT,
    Api,
    assert_campaign_error,
    assert_event_error,
    assert_main_error,
    is_int,
    is_number,
    parse_utc,
    seed_trigger,
)

ANALYTICS_KEYS = {"views", "clicks", "sentcount", "unsubscribed", "ctr"}


def assert_analytics(a: dict) -> None:
    assert ANALYTICS_KEYS <= set(a)
    for k in ANALYTICS_KEYS:
        assert is_number(a[k]), (k, a[k])


def assert_meta(meta: dict, total: int, page: int, per_page: int, last_page: int) -> None:
    assert meta == {"total": total, "page": page, "perPage": per_page, "lastPage": last_page}
    assert all(is_int(v) for v in meta.values())


# ---- 4.1, 4.2 triggered campaigns -------------------------------------------------------------


def test_view_triggered_campaign_has_the_fields_of_2_1_and_its_notifications(emu, api):
    trigger_id = seed_trigger(emu)
    r = api.get(f"/apiv1/triggers/{trigger_id}")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True
    t = body["data"]
    assert t["trigger_id"] == trigger_id and is_int(t["trigger_id"])
    assert t["campaign_name"] == "Abandoned cart"
    assert t["campaign_type"] == "trigger"
    assert t["status"] in {"draft", "active", "pause", "deleted"}
    assert t["site_id"] == emu.site_id and is_int(t["site_id"])
    parse_utc(t["created_at_utc"])
    parse_utc(t["updated_at_utc"])
    assert is_int(t["daily_trigger_limit"]) and is_int(t["weekly_trigger_limit"])
    assert t["rules"] == {"start_event_name": "cart_add", "stop_event_name": "purchase"}
    assert_analytics(t["analytics"])
    assert t["options"]["result_name"] == "purchase"
    assert t["utm_params"]["utm_source"] == "push"

    first, second = t["notifications"]
    assert is_int(first["id"]) and first["order"] == 1 and second["order"] == 2
    assert first["title"] == "Hi {{name}}, you left something"
    assert first["expiry"] == 3600 and is_int(first["expiry"])
    assert first["require_interaction"] in (0, 1)
    assert first["actions"] == [{"label": "Open cart", "url": "https://shop.example/cart"}]
    assert first["schedule_options"]["type"] == "rightaway"
    assert second["schedule_options"] == {
        "type": "after",
        "value": 1,
        "unit": "days",
        "at": "10:00:00",
    }
    assert_analytics(first["analytics"])


def test_view_triggered_campaign_accepts_an_analytics_range(emu, api):
    trigger_id = seed_trigger(emu)
    r = api.get(
        f"/apiv1/triggers/{trigger_id}",
        params={"analytics_start_at": "2024-01-01", "analytics_end_at": "2024-01-31"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["data"]["trigger_id"] == trigger_id


def test_list_triggered_campaigns_newest_first_without_notifications(emu, api):
    first = seed_trigger(emu, "first")
    second = seed_trigger(emu, "second")
    r = api.get("/apiv1/triggers")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True
    assert [t["trigger_id"] for t in body["data"]] == [second, first]
    assert all("notifications" not in t for t in body["data"])
    assert_analytics(body["data"][0]["analytics"])
    assert_meta(body["meta"], total=2, page=1, per_page=10, last_page=1)


def test_price_drop_campaign_gets_the_default_campaign_expiry(emu, api):
    trigger_id = seed_trigger(
        emu,
        "Price drop",
        campaign_type="price_drop",
        options={"campaign": {"price_drop_threshold": {"type": "percentage", "value": 10}}},
    )
    t = api.get(f"/apiv1/triggers/{trigger_id}").json()["data"]
    assert t["campaign_type"] == "price_drop"
    assert t["options"]["campaign"]["expiry"] == "2592000"
    assert t["options"]["campaign"]["price_drop_threshold"]["type"] == "percentage"


# ---- 4.3-4.5 drips ----------------------------------------------------------------------------


def test_create_drip_returns_a_numeric_drip_id_and_reads_back(emu, api):
    second = drip_notification(
        title="Day two",
        schedule_options={"type": "after", "value": 1, "unit": "days", "at": "09:30:00"},
        actions=[
            {"label": "Shop", "url": "https://shop.example/"},
            {
                "label": "Help",
                "url": "https://shop.example/help",
                "image_url": "https://x.io/i.png",
            },
        ],
    )
    r = api.create_drip(
        "Onboarding",
        notifications=[drip_notification(), second],
        send_to={"include_segments": ["12"], "exclude_countries": ["FR"]},
        utm_params={"utm_source": "push", "utm_medium": "web", "utm_campaign": "onboard"},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True
    drip_id = body["drip_id"]
    assert is_int(drip_id)

    r = api.get(f"/apiv1/drips/{drip_id}")
    assert r.status_code == 200, r.text
    d = r.json()["data"]
    assert d["drip_id"] == drip_id
    assert d["campaign_name"] == "Onboarding"
    assert d["drip_type"] in {"generic", "welcome"}
    assert d["status"] in {"draft", "active", "pause", "deleted"}
    assert d["site_id"] == emu.site_id
    parse_utc(d["created_at_utc"])
    parse_utc(d["updated_at_utc"])
    assert isinstance(d["options"]["result_name"], str)
    assert_analytics(d["analytics"])
    assert d["utm_params"]["utm_campaign"] == "onboard"
    rules = [rule for group in d["audience"]["filter"]["value"] for rule in group]
    assert {"field": "segments", "op": "in", "value": [12]} in rules
    assert {"field": "country", "op": "nin", "value": ["FR"]} in rules

    n1, n2 = d["notifications"]
    assert is_int(n1["id"]) and (n1["order"], n2["order"]) == (1, 2)
    assert n1["title"] == "Welcome aboard" and n2["title"] == "Day two"
    assert n1["expiry"] == 86400 and n1["require_interaction"] == 1
    assert n2["schedule_options"]["unit"] == "days" and n2["schedule_options"]["at"] == "09:30:00"
    assert len(n2["actions"]) == 2
    assert_analytics(n1["analytics"])


def test_create_drip_accepts_the_sample_utm_shape(api):
    utm = {"enabled": True, "source": "push", "medium": "web", "campaign": "c", "term": "t"}
    r = api.create_drip(utm_params=utm)
    assert r.status_code == 200, r.text
    d = api.get(f"/apiv1/drips/{r.json()['drip_id']}").json()["data"]
    assert d["utm_params"]["utm_source"] == "push"
    assert d["utm_params"]["utm_term"] == "t"


def test_drip_with_a_weekday_schedule(api):
    n2 = drip_notification(
        schedule_options={"type": "after", "value": 1, "unit": "dow", "at": "08:00:00"}
    )
    r = api.create_drip(notifications=[drip_notification(), n2])
    assert r.status_code == 200, r.text


def test_list_drips_newest_first_without_notifications(api):
    ids = [api.create_drip(f"drip {i}").json()["drip_id"] for i in range(3)]
    body = api.get("/apiv1/drips").json()
    assert body["success"] is True
    assert [d["drip_id"] for d in body["data"]] == ids[::-1]
    assert all("notifications" not in d for d in body["data"])
    assert_meta(body["meta"], total=3, page=1, per_page=10, last_page=1)


def test_drip_list_pagination_arithmetic(api):
    ids = [api.create_drip(f"drip {i}").json()["drip_id"] for i in range(23)]
    newest_first = ids[::-1]
    seen = []
    for page, size in [(1, 10), (2, 10), (3, 3)]:
        body = api.get("/apiv1/drips", params={"page": page, "limit": 10}).json()
        assert len(body["data"]) == size
        assert_meta(body["meta"], total=23, page=page, per_page=10, last_page=3)
        seen += [d["drip_id"] for d in body["data"]]
    assert seen == newest_first
    past = api.get("/apiv1/drips", params={"page": 4, "limit": 10}).json()
    assert past["data"] == []
    assert past["meta"]["lastPage"] == 3
    whole = api.get("/apiv1/drips", params={"limit": 500}).json()
    assert len(whole["data"]) == 23
    assert_meta(whole["meta"], total=23, page=1, per_page=500, last_page=1)


def test_empty_campaign_lists_have_last_page_1(api):
    for path in ["/apiv1/drips", "/apiv1/triggers"]:
        body = api.get(path).json()
        assert body["success"] is True and body["data"] == []
        assert_meta(body["meta"], total=0, page=1, per_page=10, last_page=1)


def test_trigger_list_pagination_arithmetic(emu, api):
    ids = [seed_trigger(emu, f"t{i}") for i in range(7)]
    pages = [api.get("/apiv1/triggers", params={"page": p, "limit": 3}).json() for p in (1, 2, 3)]
    assert [len(p["data"]) for p in pages] == [3, 3, 1]
    assert [t["trigger_id"] for p in pages for t in p["data"]] == ids[::-1]
    assert all(p["meta"]["lastPage"] == 3 and p["meta"]["total"] == 7 for p in pages)


# ---- 4.6-4.9 segments -------------------------------------------------------------------------


def test_view_segments_gives_string_ids_and_a_count(emu, api):
    vip = emu.create_segment("vip")
    news = emu.create_segment("newsletter")
    emu.create_segment("France", segment_type="geo")
    body = api.get("/apiv1/segments").json()
    assert body["success"] is True
    assert body["count"] == 2 and is_int(body["count"])
    assert {(s["segment_id"], s["segment_name"]) for s in body["segments"]} == {
        (str(vip), "vip"),
        (str(news), "newsletter"),
    }
    assert all(isinstance(s["segment_id"], str) for s in body["segments"])

    everything = api.get("/apiv1/segments", params={"segment_type": "all"}).json()
    assert everything["count"] == 3
    assert "France" in {s["segment_name"] for s in everything["segments"]}

    one = api.get("/apiv1/segments", params={"segment_id": str(vip)}).json()
    assert one["segments"] == [{"segment_id": str(vip), "segment_name": "vip"}]
    assert one["count"] == 1


def test_view_segments_limit_and_offset_window(emu, api):
    ids = [emu.create_segment(f"s{i}") for i in range(5)]
    all_ids = [s["segment_id"] for s in api.get("/apiv1/segments").json()["segments"]]
    assert sorted(all_ids) == sorted(str(i) for i in ids)
    window = api.get("/apiv1/segments", params={"limit": 2, "offset": 1}).json()
    assert window["count"] == 2
    assert [s["segment_id"] for s in window["segments"]] == all_ids[1:3]
    past = api.get("/apiv1/segments", params={"offset": 5}).json()
    assert past["segments"] == [] and past["count"] == 0


def test_add_subscribers_to_a_segment_by_hash(emu, api):
    seg = emu.create_segment("vip")
    a = emu.add_subscriber()
    b = emu.add_subscriber()
    emu.add_subscriber()
    r = api.post_form(
        "/apiv1/segments/addSegmentWithHash",
        {"segment_id": str(seg), "subscriber_hash[0]": a, "subscriber_hash[1]": b},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True and isinstance(body["message"], str) and body["message"]
    (held,) = emu.segments()
    assert sorted(held["members"]) == sorted([a, b])


@pytest.mark.parametrize(
    "encode",
    [
        lambda hs: [(f"subscriber_hash[{i}]", h) for i, h in enumerate(hs)],
        lambda hs: [("subscriber_hash[]", h) for h in hs],
        lambda hs: [("subscriber_hash", h) for h in hs],
    ],
    ids=["indexed", "brackets", "repeated"],
)
def test_form_arrays_in_every_spelling(emu, api, encode):
    seg = emu.create_segment("vip")
    hashes = [emu.add_subscriber() for _ in range(3)]
    r = api.post_form(
        "/apiv1/segments/addSegmentWithHash", [("segment_id", str(seg))] + encode(hashes)
    )
    assert r.status_code == 200, r.text
    assert sorted(emu.segments()[0]["members"]) == sorted(hashes)


def test_indexed_keys_out_of_order_still_form_one_array(emu, api):
    a = emu.add_subscriber(profile_id="p-a")
    b = emu.add_subscriber(profile_id="p-b")
    emu.create_segment("vip")
    r = api.post_form(
        "/apiv1/profile",
        "profile_id%5B1%5D=p-b&segment_name=vip&profile_id%5B0%5D=p-a&operation=add",
        headers=api.headers({"Content-Type": "application/x-www-form-urlencoded"}),
    )
    assert r.status_code == 200, r.text
    assert sorted(emu.segments()[0]["members"]) == sorted([a, b])


def test_broadcast_target_lists_in_every_spelling(emu, api):
    emu.add_subscriber(profile_id="p1")
    cases = [
        [("include_segments[0]", "1"), ("include_segments[1]", "2")],
        [("include_segments[]", "1"), ("include_segments[]", "2")],
        [("include_segments", "1"), ("include_segments", "2")],
    ]
    base = [
        ("notification_title", "t"),
        ("notification_message", "m"),
        ("notification_url", "https://x.example/"),
    ]
    for case in cases:
        r = api.post_form("/apiv1/notifications", base + case)
        assert r.status_code == 200, r.text
    stored = emu.notifications()
    assert [n["request"]["include_segments"] for n in stored] == [["1", "2"]] * 3


def test_delete_segment_removes_it_and_its_memberships(emu, api):
    seg = emu.create_segment("vip")
    keep = emu.create_segment("keep")
    emu.add_subscriber(segments=[seg, keep])
    r = api.post_form("/apiv1/segments/delete", {"segment_id": seg})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True and isinstance(body["message"], str) and body["message"]
    listed = api.get("/apiv1/segments").json()["segments"]
    assert [s["segment_id"] for s in listed] == [str(keep)]
    again = api.post_form("/apiv1/segments/delete", {"segment_id": seg})
    assert_main_error(again, 400, "Your enter segment id does not exist")


def test_add_and_remove_subscribers_by_profile_id(emu, api):
    emu.create_segment("vip")
    a = emu.add_subscriber(profile_id="user-1")
    emu.add_subscriber(profile_id="user-2")
    r = api.post_form(
        "/apiv1/profile", {"segment_name": "vip", "profile_id[0]": "user-1", "operation": "add"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["success"] is True
    assert emu.segments()[0]["members"] == [a]
    r = api.post_form(
        "/apiv1/profile", {"segment_name": "vip", "profile_id[0]": "user-1", "operation": "delete"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["success"] is True
    assert emu.segments()[0]["members"] == []


def test_profile_ids_are_free_text(emu, api):
    emu.create_segment("vip")
    odd = "ünïcode & spaces=100%"
    h = emu.add_subscriber(profile_id=odd)
    r = api.post_form(
        "/apiv1/profile", {"segment_name": "vip", "profile_id[0]": odd, "operation": "add"}
    )
    assert r.status_code == 200, r.text
    assert emu.segments()[0]["members"] == [h]


# ---- 4.10, 4.11 analytics ---------------------------------------------------------------------


def test_summary_analytics_rows_per_day(emu, api):
    emu.add_subscriber(device_type="desktop", subscribed_at="2024-03-02T10:00:00Z")
    emu.add_subscriber(device_type="mobile", subscribed_at="2024-03-02T11:00:00Z")
    emu.add_subscriber(device_type="desktop", subscribed_at="2024-03-03T09:00:00Z")
    r = api.get(
        "/apiv1/analytics/summary",
        params={"from": "2024-03-01", "to": "2024-03-03", "group_by": "day"},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True
    rows = body["data"]
    assert [row["date"] for row in rows] == ["2024-03-01", "2024-03-02", "2024-03-03"]
    for row in rows:
        assert SUMMARY_FIELDS <= set(row)
        assert all(is_number(row[f]) for f in SUMMARY_FIELDS)
    assert [row["subscriber_count"] for row in rows] == [0, 2, 1]
    assert rows[1]["mobile_subscriber_count"] == 1
    assert rows[1]["desktop_subscriber_count"] == 1


def test_subscriber_distribution_by_dimension(emu, api):
    emu.add_subscriber(country="FR", city="Paris", device_type="desktop", platform="windows")
    emu.add_subscriber(country="FR", city="Lyon", device_type="mobile", platform="android")
    emu.add_subscriber(country="DE", city="Berlin", device_type="mobile", platform="android")
    body = api.get("/apiv1/subscribers/analytics/summary").json()
    assert body["success"] is True
    data = body["data"]
    assert {"city", "country", "device", "device_type", "state"} <= set(data)
    assert data["country"] == {"FR": 2, "DE": 1}
    assert data["device_type"] == {"desktop": 1, "mobile": 2}
    assert all(is_int(n) for counts in data.values() for n in counts.values())

    picked = api.get("/apiv1/subscribers/analytics/summary", params={"type": "country,platform"})
    assert picked.status_code == 200, picked.text
    assert picked.json()["data"] == {
        "country": {"FR": 2, "DE": 1},
        "platform": {"windows": 1, "android": 2},
    }


# ---- 4.12 products ----------------------------------------------------------------------------


def test_product_update(emu, api):
    r = api.post_json(
        "/apiv1/products",
        {
            "products": [
                {"product_id": "sku-1", "price": 19.99},
                {
                    "product_id": "sku-2",
                    "price": 5,
                    "availability": "outOfStock",
                    "variant_id": "red",
                },
            ]
        },
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"success": True}
    held = {p["product"]["product_id"]: p["product"] for p in emu.products()}
    assert held["sku-1"]["price"] == 19.99
    assert held["sku-2"]["availability"] == "outOfStock"
    assert held["sku-2"]["variant_id"] == "red"


# ---- 4.13 broadcasts --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [None, "now", "later", "draft"])
def test_create_broadcast_of_each_type(emu, api, kind):
    fields = {}
    if kind:
        fields["notification_type"] = kind
    if kind == "later":
        fields["valid_from_utc"] = "2030-01-02 15:04:05"
    r = api.broadcast(**fields)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["success"] is True
    assert is_int(body["notification_id"])
    (stored,) = emu.notifications()
    assert stored["notification_id"] == body["notification_id"]
    assert (
        stored["status"]
        == {None: "sent", "now": "sent", "later": "scheduled", "draft": "draft"}[kind]
    )


def test_targeted_broadcast_with_every_parameter(emu, api):
    seg = emu.create_segment("vip")
    emu.add_subscriber(profile_id="user-1", segments=[seg])
    r = api.post_form(
        "/apiv1/notifications",
        {
            "notification_title": "Flash sale",
            "notification_message": "Two hours only",
            "notification_url": "https://shop.example/flash",
            "image_url": "https://shop.example/icon.png",
            "big_image_url": "https://shop.example/big.png",
            "notification_type": "now",
            "profile_id[0]": "user-1",
            "include_segments[0]": str(seg),
            "exclude_segments[0]": "999",
            "include_countries[0]": "FR",
            "exclude_countries[0]": "DE",
            "include_states[0]": "IDF",
            "include_cities[0]": "Paris",
            "include_device_types[0]": "desktop",
            "include_browsers[0]": "chrome",
            "from_date": "2024-01-01",
            "to_date": "2024-12-31T23:59:59Z",
            "require_interaction": "0",
            "notification_expiry": "60",
            "subscriber_hash[0]": "abc",
            "attributes": '[[{"key": "age", "op": "gt", "value": 20}]]',
            "multi_element_title1": "Buy",
            "multi_element_url1": "https://shop.example/buy",
            "multi_element_image1": "https://shop.example/buy.png",
            "multi_element_title2": "Later",
            "multi_element_url2": "https://shop.example/later",
        },
    )
    assert r.status_code == 200, r.text
    req = emu.notifications()[0]["request"]
    assert req["include_countries"] == ["FR"]
    assert req["notification_expiry"] == 60
    assert req["attributes"] == [[{"key": "age", "op": "gt", "value": 20}]]
    assert [a["label"] for a in req["actions"]] == ["Buy", "Later"]


def test_broadcast_attributes_parameter_capitalised(emu, api):
    r = api.broadcast(Attributes='[[{"key": "age", "op": "gt", "value": 20}]]')
    assert r.status_code == 200, r.text
    assert emu.notifications()[0]["request"]["attributes"][0][0]["op"] == "gt"


def test_notification_ids_are_distinct_and_increasing(api):
    ids = [api.broadcast().json()["notification_id"] for _ in range(3)]
    assert ids == sorted(set(ids))


# ---- 4.14 events ------------------------------------------------------------------------------


def test_track_event_by_profile_id_and_by_device_token_hash(emu, api):
    r = api.track({"event_name": "cart_add", "profile_id": "user-1", "data": {"sku": "a", "n": 2}})
    assert r.status_code == 200, r.text
    assert r.json() == {"error_code": 0, "data": {}}
    r = api.track({"event_name": "purchase", "device_token_hash": "h1", "data": {"paid": True}})
    assert r.status_code == 200, r.text
    events = emu.events()
    assert [(e["event_name"], e["profile_id"], e["device_token_hash"]) for e in events] == [
        ("cart_add", "user-1", None),
        ("purchase", None, "h1"),
    ]
    assert events[0]["data"] == {"sku": "a", "n": 2}


def test_track_event_with_both_ids_and_iso_date_value(api):
    r = api.track(
        {
            "event_name": "signup",
            "profile_id": "p",
            "device_token_hash": "h",
            "data": {"when": "2024-05-01T10:00:00Z", "score": 1.5},
        }
    )
    assert r.status_code == 200, r.text


# ---- section 5: authentication ----------------------------------------------------------------

MAIN_READS = [
    "/apiv1/triggers",
    "/apiv1/triggers/1",
    "/apiv1/drips",
    "/apiv1/drips/1",
    "/apiv1/segments",
    "/apiv1/analytics/summary?from=2024-01-01&to=2024-01-02&group_by=day",
    "/apiv1/subscribers/analytics/summary",
]
MAIN_WRITES = [
    "/apiv1/drips",
    "/apiv1/segments/addSegmentWithHash",
    "/apiv1/segments/delete",
    "/apiv1/profile",
    "/apiv1/products",
    "/apiv1/notifications",
]


@pytest.mark.parametrize("key", [None, "", "wrong-key"], ids=["missing", "empty", "wrong"])
def test_main_interface_rejects_a_missing_or_wrong_key_on_every_endpoint(emu, api, key):
    headers = {} if key is None else {"Api-Key": key}
    for path in MAIN_READS:
        r = requests.get(emu.base_url + path, headers=headers, timeout=TIMEOUT)
        assert r.status_code == 401, path
        assert r.json() == {"success": False, "message": "API KEY Invalid"}, path
    for path in MAIN_WRITES:
        r = requests.post(emu.base_url + path, headers=headers, data={"x": "1"}, timeout=TIMEOUT)
        assert r.status_code == 401, path
        assert r.json() == {"success": False, "message": "API KEY Invalid"}, path
    assert emu.notifications() == []


def test_events_interface_missing_key_is_401002(emu):
    r = requests.post(
        emu.events_url + "/api/v1/events",
        json={"event_name": "x", "profile_id": "p"},
        timeout=TIMEOUT,
    )
    assert_event_error(r, 401, 401002)
    assert emu.events() == []


def test_events_interface_wrong_key_is_401000(emu):
    r = requests.post(
        emu.events_url + "/api/v1/events",
        json={"event_name": "x", "profile_id": "p"},
        headers={"Api-Key": "nope"},
        timeout=TIMEOUT,
    )
    assert_event_error(r, 401, 401000)
    assert emu.events() == []


@pytest.mark.parametrize("header", ["Api-Key", "api_key", "api-key", "Api_key"])
def test_every_header_spelling_authenticates_on_both_interfaces(emu, header):
    h = {header: emu.api_key}
    r = requests.get(emu.base_url + "/apiv1/segments", headers=h, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    r = requests.post(
        emu.base_url + "/apiv1/notifications",
        headers=h,
        data={
            "notification_title": "t",
            "notification_message": "m",
            "notification_url": "https://a.b/",
        },
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text
    r = requests.post(
        emu.events_url + "/api/v1/events",
        headers=h,
        json={"event_name": "x", "profile_id": "p"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text
    assert len(emu.events()) == 1


@pytest.mark.parametrize("header", ["Api-Key", "api_key", "api-key", "Api_key"])
def test_every_header_spelling_with_a_wrong_key_is_refused(emu, header):
    h = {header: "not-the-key"}
    r = requests.get(emu.base_url + "/apiv1/segments", headers=h, timeout=TIMEOUT)
    assert_main_error(r, 401, "API KEY Invalid")
    r = requests.post(
        emu.events_url + "/api/v1/events",
        headers=h,
        json={"event_name": "x", "profile_id": "p"},
        timeout=TIMEOUT,
    )
    assert_event_error(r, 401, 401000)


def test_the_key_of_one_interface_is_not_a_path_on_the_other(emu, api):
    """The two interfaces are separate: /api/v1/events is not on the main base address."""
    r = requests.post(
        emu.base_url + "/api/v1/events",
        headers=api.headers(),
        json={"event_name": "x", "profile_id": "p"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 404
    assert r.json()["success"] is False
    assert emu.events() == []


# ---- site isolation ---------------------------------------------------------------------------


@pytest.fixture
def other(emu) -> Api:
    emu.add_site("other-key")
    a = Api(emu, "other-key")
    yield a
    a.http.close()


def test_a_second_site_has_its_own_id_and_empty_data(emu, api, other):
    site_b = emu.add_site("other-key")
    assert site_b != emu.site_id
    seed_trigger(emu)
    api.create_drip()
    emu.create_segment("vip")
    assert other.get("/apiv1/triggers").json()["data"] == []
    assert other.get("/apiv1/drips").json()["data"] == []
    assert other.get("/apiv1/segments").json()["segments"] == []
    drip_id = other.create_drip().json()["drip_id"]
    d = other.get(f"/apiv1/drips/{drip_id}").json()["data"]
    assert d["site_id"] == site_b


def test_a_key_cannot_read_another_sites_campaigns(emu, api, other):
    trigger_id = seed_trigger(emu)
    drip_id = api.create_drip().json()["drip_id"]
    assert "does not exist" in assert_campaign_error(other.get(f"/apiv1/triggers/{trigger_id}"))
    assert "does not exist" in assert_campaign_error(other.get(f"/apiv1/drips/{drip_id}"))
    # and the owner still can
    assert api.get(f"/apiv1/triggers/{trigger_id}").status_code == 200
    assert api.get(f"/apiv1/drips/{drip_id}").status_code == 200


def test_a_key_cannot_read_change_or_delete_another_sites_segments(emu, api, other):
    seg = emu.create_segment("vip")
    sub = emu.add_subscriber(profile_id="user-1")
    r = other.get("/apiv1/segments", params={"segment_id": str(seg)})
    assert r.status_code == 200 and r.json()["segments"] == []
    r = other.post_form(
        "/apiv1/segments/addSegmentWithHash", {"segment_id": seg, "subscriber_hash[0]": sub}
    )
    assert_main_error(r, 400, "Your enter segment id does not exist")
    r = other.post_form("/apiv1/segments/delete", {"segment_id": seg})
    assert_main_error(r, 400, "Your enter segment id does not exist")
    r = other.post_form(
        "/apiv1/profile", {"segment_name": "vip", "profile_id[0]": "user-1", "operation": "add"}
    )
    assert r.status_code == 400 and r.json()["success"] is False
    (held,) = emu.segments()
    assert held["segment_id"] == seg and held["members"] == []


def test_a_sites_own_segment_does_not_reach_another_sites_subscribers(emu, api, other):
    sub_a = emu.add_subscriber(profile_id="user-1")
    seg_b = emu.create_segment("vip", api_key="other-key")
    r = other.post_form(
        "/apiv1/segments/addSegmentWithHash", {"segment_id": seg_b, "subscriber_hash[0]": sub_a}
    )
    assert r.status_code == 200
    r = other.post_form(
        "/apiv1/profile", {"segment_name": "vip", "profile_id[0]": "user-1", "operation": "add"}
    )
    assert r.status_code == 200
    assert emu.segments(api_key="other-key")[0]["members"] == []
    assert emu.subscribers()[0]["segments"] == []


def test_broadcasts_events_and_products_stay_with_their_site(emu, api, other):
    emu.add_subscriber(profile_id="user-1")
    assert api.broadcast(**{"profile_id[0]": "user-1"}).status_code == 200
    r = other.broadcast(**{"profile_id[0]": "user-1"})
    assert_main_error(r, 400, "No Subcribers Found for the given profile_id")
    assert other.track({"event_name": "x", "profile_id": "p"}).status_code == 200
    assert other.post_json("/apiv1/products", {"products": [{"product_id": "a", "price": 1}]}).ok
    assert len(emu.notifications()) == 1 and emu.notifications(api_key="other-key") == []
    assert emu.events() == [] and len(emu.events(api_key="other-key")) == 1
    assert emu.products() == [] and len(emu.products(api_key="other-key")) == 1
    dist = other.get("/apiv1/subscribers/analytics/summary").json()["data"]
    assert all(counts == {} for counts in dist.values())
