"""The emulator as an application's test double: where a test would pass against it but fail
against the service (or the reverse), found by a review that used it that way. Raw HTTP as
any client would send it, and the emulator's own admin surface."""

from __future__ import annotations

import datetime as dt
from urllib.parse import parse_qs, urlsplit

import pytest
from client_support import drip_notification
from conftest import (
    Api,
    assert_campaign_error,
    assert_event_error,
    assert_main_error,
    seed_trigger,
)

from pushwire.testing import Emulator

UTM = {"utm_source": "push", "utm_medium": "web", "utm_campaign": "welcome"}


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


# ---- UTM parameters are added to campaign URLs (2.5) ------------------------------------------


@pytest.mark.parametrize("shape", ["long", "sample"])
def test_a_drips_utm_parameters_are_in_the_urls_it_delivers(emu, api, shape):
    utm = (
        UTM
        if shape == "long"
        else {"enabled": True, "source": "push", "medium": "web", "campaign": "welcome"}
    )
    n = drip_notification(
        url="https://shop.example/p?a=1&utm_source=old&q=a%20b&flag#top",
        actions=[{"label": "Go", "url": "https://shop.example/go"}],
    )
    r = api.create_drip(notifications=[n], utm_params=utm)
    assert r.status_code == 200, r.text
    emu.add_subscriber("h1")
    (d,) = emu.deliveries("h1")
    # the rest of the URL kept byte for byte: its parameters, their encoding, the fragment
    assert d["url"] == (
        "https://shop.example/p?a=1&q=a%20b&flag"
        "&utm_source=push&utm_medium=web&utm_campaign=welcome#top"
    )


def test_a_triggers_utm_parameters_are_in_the_urls_it_delivers(emu, api):
    seed_trigger(emu)  # utm_source=push, utm_medium=web, utm_campaign=cart
    emu.add_subscriber("h1", profile_id="alice")
    r = api.track({"event_name": "cart_add", "profile_id": "alice", "data": {"name": "Al"}})
    assert r.status_code == 200, r.text
    (d,) = emu.deliveries("h1")
    assert query(d["url"]) == {
        "utm_source": ["push"],
        "utm_medium": ["web"],
        "utm_campaign": ["cart"],
    }
    assert d["title"] == "Hi Al, you left something"


def test_utm_parameters_replace_an_encoded_key_and_ignore_surrounding_spaces(emu, api):
    n = drip_notification(url="  https://shop.example/p?utm%5Fsource=old&a=1 ")
    assert api.create_drip(notifications=[n], utm_params=UTM).status_code == 200
    emu.add_subscriber("h1")
    (d,) = emu.deliveries("h1")
    assert (
        d["url"] == "https://shop.example/p?a=1&utm_source=push&utm_medium=web&utm_campaign=welcome"
    )


def test_a_campaign_without_utm_parameters_keeps_its_urls(emu, api):
    api.create_drip(notifications=[drip_notification(url="https://shop.example/p?a=1")])
    emu.add_subscriber("h1")
    assert emu.deliveries("h1")[0]["url"] == "https://shop.example/p?a=1"


# ---- a filter sent blank or null is refused, not lifted ---------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"attributes": ""},
        {"attributes": " "},
        {"from_date": ""},
        {"to_date": " "},
    ],
)
def test_a_broadcast_filter_sent_blank_is_refused(emu, api, body):
    emu.add_subscriber("h1")
    r = api.broadcast(**body)
    assert_main_error(r, 400)
    assert emu.notifications() == [] and emu.deliveries() == []


@pytest.mark.parametrize(
    "body",
    [{"include_segments": None}, {"profile_id": None}, {"attributes": None}, {"attributes": ""}],
)
def test_a_broadcast_filter_sent_as_json_null_or_blank_is_refused(emu, api, body):
    emu.add_subscriber("h1")
    r = api.post_json(
        "/apiv1/notifications",
        {
            "notification_title": "Sale",
            "notification_message": "Half price",
            "notification_url": "https://shop.example/",
            **body,
        },
    )
    assert_main_error(r, 400)
    assert emu.notifications() == []


def test_a_drip_audience_with_an_empty_include_list_is_refused(emu, api):
    r = api.create_drip(send_to={"include_segments": []})
    assert "send_to.include_segments" in assert_campaign_error(r)
    # an empty exclusion excludes no one, and is fine
    assert api.create_drip(send_to={"exclude_segments": []}).status_code == 200


def test_a_drip_notification_without_require_interaction_is_refused(emu, api):
    # Required by 2.8, and 0 and 1 mean opposite things: no default stands in for it.
    n = drip_notification()
    del n["require_interaction"]
    message = assert_campaign_error(api.create_drip(notifications=[n]))
    assert "require_interaction" in message
    assert (
        api.create_drip(notifications=[drip_notification(require_interaction=0)]).status_code == 200
    )


def test_a_drip_notification_without_expiry_is_told_it_is_required(emu, api):
    # Required by 2.8: "required", not "between 1 and 2419200", which reads as a wrong value.
    n = drip_notification()
    del n["expiry"]
    message = assert_campaign_error(api.create_drip(notifications=[n]))
    assert "expiry is required" in message
    assert emu.client().drips.list().total == 0


# ---- the events interface refuses null (Joi schema) ------------------------------------------


@pytest.mark.parametrize("key", ["profile_id", "device_token_hash", "data"])
def test_an_event_field_sent_as_null_is_refused(emu, api, key):
    body = {"event_name": "view", "profile_id": "p", "device_token_hash": "h", key: None}
    err = assert_event_error(api.track(body), 400, 1003)
    assert [d["path"] for d in err["details"]] == [[key]]
    assert emu.events() == []


# ---- faults: in the route's own error shape, and none that could never fire -----------------


def test_an_injected_401_is_the_interfaces_refused_key(emu, api):
    emu.inject_fault("/apiv1/segments", status=401)
    assert assert_main_error(api.get("/apiv1/segments"), 401)["message"] == "API KEY Invalid"
    emu.inject_fault("/api/v1/events", status=401)
    err = assert_event_error(api.track({"event_name": "x", "profile_id": "p"}), 401, 401000)
    assert err["message"] == "API key not found or incorrect"


def test_an_injected_4xx_on_a_campaign_endpoint_has_the_campaign_shape(emu, api):
    emu.inject_fault("/apiv1/triggers", status=400)
    assert assert_campaign_error(api.get("/apiv1/triggers"))
    emu.inject_fault("/apiv1/segments", status=400)
    assert_main_error(api.get("/apiv1/segments"), 400)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"path": "/apiv1/notifications", "status": 500, "method": "GET"}, "takes GET"),
        ({"path": "/apiv1/triggers/*", "status": 500, "method": "POST"}, "takes POST"),
        ({"path": "/apiv1/segments", "status": 500, "drop": "after"}, "not both"),
    ],
)
def test_a_fault_that_could_never_fire_as_written_is_refused(emu, kwargs, says):
    path = kwargs.pop("path")
    with pytest.raises(ValueError) as info:
        emu.inject_fault(path, **kwargs)
    assert says in str(info.value)


def test_random_faults_on_a_prefix_with_a_star_fire(emu, api):
    emu.inject_random_faults(1.0, kinds=["500"], path="/apiv1/segments*")
    assert api.get("/apiv1/segments").status_code == 500
    assert emu.fault_stats() != {}


def test_a_fault_on_head_fires_where_get_is_served(emu, api):
    emu.inject_fault("/apiv1/segments", status=500, method="HEAD")
    assert api.http.head(emu.base_url + "/apiv1/segments", headers=api.headers()).status_code == 500


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [({"kinds": []}, "at least one"), ({"path": "/nope"}, "no route")],
)
def test_random_faults_that_could_never_fire_are_refused(emu, kwargs, says):
    with pytest.raises(ValueError) as info:
        emu.inject_random_faults(1.0, **kwargs)
    assert says in str(info.value)


# ---- the admin surface refuses what it would misread ----------------------------------------


@pytest.mark.parametrize(
    "tz", ["+05:60", "+05:99", "+15:00", "+14:59", "-14:30", "", "Asia/Kolkata", "+5:3x"]
)
def test_a_time_zone_that_is_not_an_offset_is_refused(emu, tz):
    with pytest.raises(ValueError):
        emu.set_timezone(tz)


@pytest.mark.parametrize("tz", ["+14:00", "-14:00", "+05:45", "-09:30"])
def test_an_offset_within_14_hours_is_taken(emu, tz):
    emu.set_timezone(tz)


def test_seeding_refuses_misspelt_fields(emu):
    with pytest.raises(ValueError) as info:
        emu._call("add_subscriber", device_typ="mobile")
    assert "device_typ" in str(info.value)
    with pytest.raises(ValueError) as info:
        seed_trigger(
            emu,
            notifications=[
                {
                    "title": "t",
                    "message": "m",
                    "url": "https://shop.example/",
                    "schedule_option": {"type": "after", "value": 5, "unit": "minutes"},
                }
            ],
        )
    assert "notifications[0].schedule_option" in str(info.value)


def test_a_short_key_does_not_blank_the_words_it_appears_in():
    # A test key like "sale" is no secret: the log keeps "Flash sale" as sent. The key's
    # headers are redacted whatever its length.
    with Emulator(api_key="sale") as emu:
        api = Api(emu)
        api.broadcast(notification_title="Flash sale")
        (entry,) = emu.requests()
        assert "notification_title=Flash+sale" in entry["body"]
        assert entry["headers"]["api-key"] == "[redacted]"
        api.http.close()


# ---- the clock: a time of day a test can rely on ---------------------------------------------


def test_travel_to_puts_the_clock_at_a_time_of_day_in_the_sites_zone(emu, api):
    # "Sent at 10:00 site time" must not depend on when the test runs.
    emu.set_timezone("+08:00")
    zone = dt.timezone(dt.timedelta(hours=8))
    tomorrow = emu.now.astimezone(zone).date() + dt.timedelta(days=1)
    nine = dt.datetime.combine(tomorrow, dt.time(9, 0), zone)
    assert emu.travel_to(nine) == nine
    later = drip_notification(
        title="At ten",
        schedule_options={"type": "after", "value": 0, "unit": "days", "at": "10:00:00"},
    )
    assert api.create_drip(notifications=[drip_notification(), later]).status_code == 200
    emu.add_subscriber("h1")
    assert [d["title"] for d in emu.deliveries("h1")] == ["Welcome aboard"]
    emu.advance(30 * 60)
    assert len(emu.deliveries("h1")) == 1
    emu.advance(31 * 60)
    sent = emu.deliveries("h1")
    assert [d["title"] for d in sent] == ["Welcome aboard", "At ten"]
    assert sent[1]["sent_at"] == nine + dt.timedelta(hours=1)
    # travelling to now is staying; the clock never goes back, stays on the calendar, and
    # a naive time has no instant
    assert emu.travel_to(emu.now) <= emu.now
    with pytest.raises(ValueError):
        emu.travel_to(nine)
    with pytest.raises(ValueError):
        emu.travel_to(dt.datetime(9500, 1, 1, tzinfo=dt.timezone.utc))
    with pytest.raises(ValueError):
        emu.travel_to(dt.datetime(2099, 1, 1))
