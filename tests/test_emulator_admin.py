"""The emulator's own side: the request log (key redacted), reset, injected faults, the clock,
the `/_emulator/{op}` HTTP routes and `python -m pushwire.emulator`."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from urllib.parse import quote, quote_plus

import pytest
import requests
from conftest import (
    TIMEOUT,
    Api,
    assert_event_error,
    assert_main_error,
    aware_utc,
    parse_utc,
)

import pushwire
from pushwire.testing import Emulator

# ---- the records' times --------------------------------------------------------------------


def test_every_time_in_the_emulators_records_is_an_aware_datetime(emu):
    vip = emu.create_segment("vip")
    hashes = [emu.add_subscriber(profile_id="p1", segments=[vip]), emu.add_subscriber()]
    emu.add_alert(hashes[0], "sku-1")
    client = emu.client()
    client.notifications.create(
        title="Sale", message="m", url="https://shop.example", include_segments=[vip]
    )
    client.events.track("viewed", profile_id="p1")
    client.products.update([{"product_id": "sku-1", "price": 9}])
    emu.unsubscribe(hashes[1])
    records = {
        "subscribers": emu.subscribers(),
        "segments": emu.segments(),
        "notifications": emu.notifications(),
        "events": emu.events(),
        "products": emu.products(),
        "alerts": emu.alerts(),
        "requests": emu.requests(),
        "deliveries": emu.deliveries(status="all"),
    }
    seen = set()
    for name, rows in records.items():
        assert rows, name
        for row in rows:
            for key, value in row.items():
                if key.endswith("_at") and value is not None:
                    aware_utc(value)
                    seen.add(f"{name}.{key}")
    # Each kind of record's own times were among them.
    assert {
        "subscribers.subscribed_at",
        "subscribers.unsubscribed_at",
        "segments.created_at",
        "notifications.created_at",
        "events.received_at",
        "products.updated_at",
        "alerts.created_at",
        "requests.received_at",
        "deliveries.sent_at",
    } <= seen
    # Segment ids are one type wherever they are read back: the str segments.list() gives.
    assert isinstance(vip, str)
    assert [s.segment_id for s in client.segments.list()] == [vip]
    assert [s["segment_id"] for s in records["segments"]] == [vip]
    assert records["subscribers"][0]["segments"] == [vip]


# ---- the request log --------------------------------------------------------------------------


def test_each_logged_request_names_the_trace_its_headers_carry(emu, api):
    w3c = "4bf92f3577b34da6a3ce929d0e0e4736"
    sentry = "771a43a4192642f0b136d5159a501700"
    api.get(
        "/apiv1/segments", headers=api.headers({"traceparent": f"00-{w3c}-00f067aa0ba902b7-01"})
    )
    api.get(
        "/apiv1/segments", headers=api.headers({"sentry-trace": f"{sentry}-b7ad6b7169203331-1"})
    )
    api.get("/apiv1/segments", headers=api.headers({"traceparent": "00-" + "0" * 32 + "-0-01"}))
    api.get("/apiv1/segments")
    assert [r["trace_id"] for r in emu.requests()] == [w3c, sentry, None, None]


def test_requests_are_logged_in_order_with_their_status(emu, api):
    api.get("/apiv1/segments", params={"limit": 5})
    api.broadcast()
    api.track({"event_name": "x", "profile_id": "p"})
    requests.get(emu.base_url + "/apiv1/drips", timeout=TIMEOUT)
    log = emu.requests()
    assert [(e["interface"], e["method"], e["path"], e["status"]) for e in log] == [
        ("main", "GET", "/apiv1/segments", 200),
        ("main", "POST", "/apiv1/notifications", 200),
        ("events", "POST", "/api/v1/events", 200),
        ("main", "GET", "/apiv1/drips", 401),
    ]
    assert log[0]["query"] == "limit=5"
    assert "notification_title=Sale" in log[1]["body"]
    assert json.loads(log[2]["body"]) == {"event_name": "x", "profile_id": "p"}
    aware_utc(log[0]["received_at"])


def test_admin_calls_are_not_in_the_request_log(emu, api):
    emu.create_segment("vip")
    requests.get(emu.base_url + "/_emulator/now", timeout=TIMEOUT)
    assert emu.requests() == []


@pytest.mark.parametrize("key", ["test-key", "sk_live/Ab+c=d 9%"])
def test_the_key_appears_nowhere_in_the_request_log(key):
    with Emulator(api_key=key) as emu:
        api = Api(emu)
        wrong = "wrong-" + key
        for header in ["Api-Key", "api_key", "api-key", "Api_key"]:
            api.get("/apiv1/segments", headers={header: key})
            api.get("/apiv1/segments", headers={header: wrong})
            api.track({"event_name": "x", "profile_id": "p"}, headers={header: key})
        # a key pasted into a query string, a form body, a JSON body and a path
        api.get("/apiv1/segments", params={"api_key": key})
        api.broadcast(notification_message=f"key is {key}")
        api.post_json("/apiv1/products", {"products": [{"product_id": key, "price": 1}]})
        api.track({"event_name": "x", "profile_id": key})
        api.get("/apiv1/triggers/" + quote(key, safe=""))
        log = emu.requests()
        assert len(log) == 17
        text = json.dumps(log, ensure_ascii=False, default=str)
        for secret in [key, wrong]:
            assert secret not in text
            assert quote(secret, safe="") not in text
            assert quote_plus(secret) not in text
        assert all(
            v == "[redacted]"
            for e in log
            for name, v in e["headers"].items()
            if name in ("api-key", "api_key")
        )
        api.http.close()


def test_clear_requests(emu, api):
    api.get("/apiv1/segments")
    emu.clear_requests()
    assert emu.requests() == []
    api.get("/apiv1/drips")
    assert [e["path"] for e in emu.requests()] == ["/apiv1/drips"]


# ---- reset ------------------------------------------------------------------------------------


def test_reset_gives_a_fresh_emulator(emu, api):
    emu.add_site("other-key")
    emu.create_segment("vip")
    emu.add_subscriber(profile_id="p")
    api.create_drip()
    api.broadcast()
    api.track({"event_name": "x", "profile_id": "p"})
    emu.inject_fault("/apiv1/segments", status=500, times=5)
    emu.advance(86400)

    emu.reset()

    assert emu.requests() == []
    assert emu.segments() == [] and emu.subscribers() == []
    assert emu.notifications() == [] and emu.events() == []
    assert api.get("/apiv1/drips").json()["data"] == []
    assert api.get("/apiv1/segments").status_code == 200  # fault gone
    other = requests.get(emu.base_url + "/apiv1/segments", headers={"Api-Key": "other-key"})
    assert_main_error(other, 401, "API KEY Invalid")
    assert abs((emu.now - dt.datetime.now(dt.timezone.utc)).total_seconds()) < 60


def test_ids_start_over_after_reset(emu, api):
    first = api.create_drip().json()["drip_id"]
    emu.reset()
    assert api.create_drip().json()["drip_id"] == first


# ---- faults -----------------------------------------------------------------------------------


def test_fault_with_status_and_retry_after(emu, api):
    emu.inject_fault("/apiv1/segments", status=429, retry_after=7, times=2)
    for _ in range(2):
        r = api.get("/apiv1/segments")
        assert r.status_code == 429
        assert r.headers["Retry-After"] == "7"
        assert_main_error(r, 429)
    assert api.get("/apiv1/segments").status_code == 200


def test_fault_status_on_the_events_interface_uses_its_shape(emu, api):
    emu.inject_fault("/api/v1/events", status=500)
    assert_event_error(api.track({"event_name": "x", "profile_id": "p"}), 500, 1001)
    assert emu.events() == []
    assert api.track({"event_name": "x", "profile_id": "p"}).status_code == 200


def test_fault_prefix_and_method(emu, api):
    emu.inject_fault("/apiv1/drips*", status=503, method="GET", times=3)
    assert api.create_drip().status_code == 200  # POST: not matched
    assert api.get("/apiv1/drips").status_code == 503
    assert api.get("/apiv1/drips/1").status_code == 503
    assert api.get("/apiv1/segments").status_code == 200
    assert api.get("/apiv1/drips/1").status_code == 503
    assert api.get("/apiv1/drips/1").status_code == 200


def test_fault_fires_only_on_its_path(emu, api):
    emu.inject_fault("/apiv1/notifications", status=500)
    assert api.get("/apiv1/segments").status_code == 200
    r = api.broadcast()
    assert_main_error(r, 500)
    assert emu.notifications() == []


def test_fault_delay(emu, api):
    emu.inject_fault("/apiv1/segments", delay=0.4)
    start = time.monotonic()
    assert api.get("/apiv1/segments").status_code == 200
    assert time.monotonic() - start >= 0.4
    start = time.monotonic()
    api.get("/apiv1/segments")
    assert time.monotonic() - start < 0.4


def test_fault_delay_then_timeout_on_the_client(emu, api):
    emu.inject_fault("/apiv1/segments", delay=1.0)
    with pytest.raises(requests.exceptions.Timeout):
        api.http.get(emu.base_url + "/apiv1/segments", headers=api.headers(), timeout=0.2)


def test_drop_after_the_request_was_processed(emu, api):
    emu.inject_fault("/apiv1/notifications", drop="after")
    with pytest.raises(requests.exceptions.ConnectionError):
        api.broadcast(notification_title="lost answer")
    (stored,) = emu.notifications()
    assert stored["request"]["notification_title"] == "lost answer"
    assert api.broadcast().status_code == 200  # the fault is used up
    assert len(emu.notifications()) == 2


@pytest.mark.parametrize("drop", ["before", True])
def test_drop_before_the_request_was_processed(emu, api, drop):
    emu.inject_fault("/apiv1/notifications", drop=drop)
    with pytest.raises(requests.exceptions.ConnectionError):
        api.broadcast()
    assert emu.notifications() == []
    assert api.broadcast().status_code == 200
    assert len(emu.notifications()) == 1


@pytest.mark.parametrize("status", [500, 502, 504])
def test_a_status_after_processing_answers_an_error_for_a_write_that_was_done(emu, api, status):
    # What outcome_unknown stands for: the broadcast went out, the client hears a 5xx.
    emu.inject_fault("/apiv1/notifications", status=status, processed=True)
    r = api.broadcast(notification_title="done anyway")
    assert r.status_code == status
    (stored,) = emu.notifications()
    assert stored["request"]["notification_title"] == "done anyway"
    (logged,) = emu.requests()
    assert (logged["status"], logged["fault"]) == (status, f"status {status}, after processing")
    # without processed=, the same fault comes before: nothing is done
    emu.inject_fault("/apiv1/notifications", status=status)
    assert api.broadcast().status_code == status
    assert len(emu.notifications()) == 1
    assert emu.requests()[-1]["fault"] == f"status {status}"


def test_a_delay_after_processing_times_the_client_out_after_the_write(emu, api):
    emu.inject_fault("/apiv1/notifications", delay=1.0, processed=True)
    with pytest.raises(requests.exceptions.Timeout):
        api.http.post(
            emu.base_url + "/apiv1/notifications",
            data={
                "notification_title": "t",
                "notification_message": "m",
                "notification_url": "https://shop.example/",
            },
            headers=api.headers(),
            timeout=0.3,
        )
    assert len(emu.notifications()) == 1  # processed before the client gave up


def test_a_client_that_resends_after_an_unknown_outcome_is_caught(emu):
    # The test an application writes for its own "never double-send" rule can fail.
    emu.add_subscriber()
    client = emu.client(max_retries=2, backoff_base=0)
    emu.inject_fault("/apiv1/notifications", status=500, processed=True)
    with pytest.raises(pushwire.ServerError) as info:
        client.notifications.create(title="t", message="m", url="https://shop.example/")
    assert info.value.outcome_unknown
    assert len(emu.deliveries()) == 1  # sent once, and not retried by the client
    client.notifications.create(title="t", message="m", url="https://shop.example/")
    assert len(emu.deliveries()) == 2  # an app resending blindly shows as a second one
    client.close()


def test_requests_without_a_fault_say_so(emu, api):
    api.get("/apiv1/segments")
    emu.inject_fault("/apiv1/segments", drop="after")
    with pytest.raises(requests.exceptions.ConnectionError):
        api.get("/apiv1/segments")
    assert [(e["status"], e["fault"]) for e in emu.requests()] == [
        (200, None),
        (200, "drop after processing"),
    ]


@pytest.mark.parametrize(
    "fault",
    [
        {},
        {"drop": "before"},
        {"drop": "after"},
        # processed into the old state first, then the status: a 503 would be retried
        {"status": 503, "processed": True},
    ],
)
def test_a_request_waiting_out_a_delay_when_reset_runs_never_lands(emu, api, fault):
    # A test that ends with a slow request in flight must not leak it into the next one,
    # not even through the client's retry of an idempotent write. A delay that was to end in
    # a dropped connection or a failure is answered 410 too: either would be retried into
    # the new state.
    import threading

    emu.add_subscriber(profile_id="a")
    emu.create_segment("vip")
    emu.inject_fault("/apiv1/profile", delay=0.8, **fault)
    client = emu.client(max_retries=2, backoff_base=0)
    outcome = []

    def add() -> None:
        try:
            client.segments.add_profiles("vip", ["a"])
            outcome.append("ok")
        except pushwire.APIError as e:
            outcome.append(e.status_code)

    t = threading.Thread(target=add)
    t.start()
    time.sleep(0.3)
    emu.reset()  # the next test's fixture
    emu.add_subscriber(profile_id="a")
    emu.create_segment("vip")
    t.join(5)
    assert outcome == [410]
    assert emu.requests() == []
    assert [s["members"] for s in emu.segments() if s["segment_name"] == "vip"] == [[]]
    client.close()


OTHER_KEY = "other-key-12345678"


def race_resets(emu, work, seconds: float = 2.0, workers: int = 1) -> None:
    """Runs `work()` over and over on `workers` threads while another resets the emulator
    and adds the site of OTHER_KEY back, as the next test's fixture would, for `seconds`;
    `work` returns False to stop its thread early."""
    import threading

    emu.add_site(OTHER_KEY)
    stop = time.monotonic() + seconds

    def worker() -> None:
        while time.monotonic() < stop and work() is not False:
            pass

    def resetter() -> None:
        while time.monotonic() < stop:
            emu.reset()
            emu.add_site(OTHER_KEY)

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    threads.append(threading.Thread(target=resetter))
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 10)


def test_requests_racing_a_reset_are_answered_by_one_state_or_410_never_500(emu):
    # A suite whose background threads still call while the next test's fixture resets: a
    # request checked as current, then overtaken by the reset before its route ran, found
    # its site gone (a 500 from a panic) or wrote into the fresh state.
    import collections

    client = emu.client(api_key=OTHER_KEY, max_retries=0, timeout=5)
    seen: collections.Counter[object] = collections.Counter()

    def read() -> None:
        try:
            client.segments.list()
            seen[200] += 1
        except pushwire.APIError as e:
            seen[e.status_code] += 1

    race_resets(emu, read)
    assert set(seen) <= {200, 401, 410}, seen
    assert seen[200] > 0, seen
    client.close()


def test_seeding_another_site_while_a_reset_removes_it_is_refused_not_a_panic(emu):
    # The site is looked up by its key, then seeded: a reset in between removed it, and the
    # admin route panicked (its connection closed, no answer).
    import itertools
    import threading

    outcomes: list[str] = []
    n = itertools.count()
    local = threading.local()

    def seed() -> bool:
        session = local.__dict__.setdefault("session", requests.Session())
        body = {"api_key": OTHER_KEY, "subscriber_hash": f"h{next(n)}"}
        try:
            r = session.post(f"{emu.base_url}/_emulator/add_subscriber", json=body, timeout=5)
        except requests.ConnectionError as e:
            outcomes.append(f"no answer: {e}")
            return False
        if r.status_code == 200:
            outcomes.append("ok")
        elif r.status_code == 400 and "no site has that api_key" in r.text:
            outcomes.append("refused")
        else:
            outcomes.append(f"{r.status_code} {r.text}")
        return True

    race_resets(emu, seed, workers=2)
    assert set(outcomes) <= {"ok", "refused"}, [o for o in outcomes if o not in ("ok", "refused")]
    assert "ok" in outcomes


def test_a_status_written_after_clear_requests_lands_on_no_other_entry(emu, api):
    # A delayed answer's status belongs to its own request, which clear_requests removed.
    import threading

    emu.inject_fault("/apiv1/notifications", status=503, delay=0.6, processed=True)
    t = threading.Thread(target=api.broadcast)
    t.start()
    time.sleep(0.3)
    emu.clear_requests()
    api.get("/apiv1/segments")
    t.join(5)
    assert [(e["path"], e["status"]) for e in emu.requests()] == [("/apiv1/segments", 200)]


def test_drop_on_the_events_interface(emu, api):
    emu.inject_fault("/api/v1/events", drop="after")
    with pytest.raises(requests.exceptions.ConnectionError):
        api.track({"event_name": "x", "profile_id": "p"})
    assert len(emu.events()) == 1


def test_clear_faults(emu, api):
    emu.inject_fault("/apiv1/*", status=500, times=10)
    emu.clear_faults()
    assert api.get("/apiv1/segments").status_code == 200


@pytest.mark.parametrize(
    "kwargs",
    [
        {"path": "/apiv1/segments"},
        {"path": "apiv1/segments", "status": 500},
        {"path": "/apiv1/segments", "status": 1000},
        {"path": "/apiv1/segments", "drop": "sometimes"},
        {"path": "/apiv1/segments", "delay": -1},
        {"path": "/apiv1/segments", "processed": True},
        {"path": "/apiv1/segments", "processed": True, "drop": "after"},
    ],
)
def test_bad_fault_specs_are_refused(emu, kwargs):
    path = kwargs.pop("path")
    with pytest.raises(ValueError):
        emu.inject_fault(path, **kwargs)


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/notifications", "no route"),  # without /apiv1
        ("/apiv1/segments/", "no route"),  # a trailing /
        ("/apiv1/triggers/{trigger_id}", "no route"),  # a placeholder, not an id
        ("/apiv2/*", "no route"),
        ("/apiv1/segments?segment_type=all", "query string"),
    ],
)
def test_a_fault_that_could_never_fire_is_refused(emu, path, says):
    # A test of the caller's error handling must not pass because its fault never fired.
    with pytest.raises(ValueError) as info:
        emu.inject_fault(path, status=500)
    assert says in str(info.value) and repr(path) not in ("",)
    assert "/apiv1/notifications" in str(info.value) or says == "query string"


@pytest.mark.parametrize("times", [0, -1])
def test_a_fault_fires_at_least_once(emu, times):
    with pytest.raises(ValueError) as info:
        emu.inject_fault("/apiv1/segments", status=500, times=times)
    assert "times must be a positive integer" in str(info.value)


def test_every_path_the_clients_call_can_take_a_fault(emu):
    # The list of routes faults are checked against follows the service's routes.
    from client_support import drip_notification

    segment = emu.create_segment("vip")
    hashes = [emu.add_subscriber(f"h{i}", profile_id=f"p{i}") for i in range(2)]
    trigger = emu.create_trigger(campaign_name="Cart", rules={"start_event_name": "cart"})
    with emu.client() as c:
        c.triggers.get(trigger)
        c.triggers.list()
        drip = c.drips.create("W", [drip_notification()])
        c.drips.get(drip)
        c.drips.list()
        c.segments.list()
        c.segments.add_subscribers(segment, hashes)
        c.segments.add_profiles("vip", ["p0"])
        c.segments.remove_profiles("vip", ["p0"])
        c.analytics.summary("2026-01-01", "2026-01-02")
        c.analytics.subscribers()
        c.products.update([{"product_id": "a", "price": 1}])
        c.notifications.create(title="t", message="m", url="https://shop.example/")
        c.events.track("cart", profile_id="p1")
        c.segments.delete(segment)
    paths = {r["path"] for r in emu.requests()}
    assert len(paths) == 13, sorted(paths)  # add and remove profiles share one
    for path in paths:
        emu.inject_fault(path, status=503, times=1)
        emu.inject_fault(path.rsplit("/", 1)[0] + "/*", status=503, times=1)


# ---- the clock --------------------------------------------------------------------------------


def test_now_starts_at_wall_time_and_advance_moves_it(pushwire_emulator):
    # The package's fixture, at wall time (the suite's `emu` starts at CLOCK_START).
    emu = pushwire_emulator
    wall = dt.datetime.now(dt.timezone.utc)
    assert emu.now.tzinfo is not None
    assert abs((emu.now - wall).total_seconds()) < 5
    moved = emu.advance(3600)
    assert 3595 < (moved - wall).total_seconds() < 3605
    assert abs((emu.now - moved).total_seconds()) < 5


def test_advanced_clock_dates_what_the_service_records(emu, api):
    expected = emu.advance(2 * 86400)  # the emulator's clock (from CLOCK_START), not the wall's
    drip_id = api.create_drip().json()["drip_id"]
    created = parse_utc(api.get(f"/apiv1/drips/{drip_id}").json()["data"]["created_at_utc"])
    assert abs((created - expected).total_seconds()) < 60
    api.track({"event_name": "x", "profile_id": "p"})
    assert abs((aware_utc(emu.events()[0]["received_at"]) - expected).total_seconds()) < 60
    api.broadcast()
    assert abs((aware_utc(emu.notifications()[0]["created_at"]) - expected).total_seconds()) < 60


def test_advance_refuses_a_negative_time(emu):
    with pytest.raises(ValueError):
        emu.advance(-1)


# ---- seeding errors ---------------------------------------------------------------------------


def test_seeding_errors_are_value_errors(emu):
    emu.add_subscriber(subscriber_hash="h1")
    with pytest.raises(ValueError):
        emu.add_subscriber(subscriber_hash="h1")
    with pytest.raises(ValueError):
        emu.add_subscriber(segments=[999])
    with pytest.raises(ValueError):
        emu.create_trigger(campaign_name="x")  # no rules
    with pytest.raises(ValueError):
        emu.create_trigger(
            campaign_name="x", rules={"start_event_name": "a"}, campaign_type="nonsense"
        )
    with pytest.raises(ValueError):
        emu.add_site("")


# ---- /_emulator/{op} over HTTP ----------------------------------------------------------------


def admin(emu: Emulator, op: str, method: str = "POST", **kw) -> requests.Response:
    return requests.request(method, f"{emu.base_url}/_emulator/{op}", timeout=TIMEOUT, **kw)


def test_admin_routes_seed_and_read_over_http(emu, api):
    r = admin(emu, "create_segment", json={"name": "vip"})
    assert r.status_code == 200, r.text
    seg = r.json()["segment_id"]
    r = admin(emu, "add_subscriber", json={"subscriber_hash": "h1", "profile_id": "p1"})
    assert r.json() == {"subscriber_hash": "h1"}
    r = admin(
        emu,
        "create_trigger",
        json={"campaign_name": "t", "rules": {"start_event_name": "a", "stop_event_name": "b"}},
    )
    trigger_id = r.json()["trigger_id"]
    assert api.get(f"/apiv1/triggers/{trigger_id}").status_code == 200
    assert api.get("/apiv1/segments").json()["segments"][0]["segment_id"] == str(seg)
    api.post_form(
        "/apiv1/segments/addSegmentWithHash", {"segment_id": seg, "subscriber_hash[0]": "h1"}
    )
    assert admin(emu, "segments", "GET").json()[0]["members"] == ["h1"]
    assert admin(emu, "subscribers", "GET").json()[0]["profile_id"] == "p1"
    assert [e["path"] for e in admin(emu, "requests", "GET").json()][-1] == (
        "/apiv1/segments/addSegmentWithHash"
    )
    api.broadcast()
    api.track({"event_name": "x", "profile_id": "p1"})
    api.post_json("/apiv1/products", {"products": [{"product_id": "a", "price": 2}]})
    assert len(admin(emu, "notifications", "GET").json()) == 1
    assert len(admin(emu, "events", "GET").json()) == 1
    assert len(admin(emu, "products", "GET").json()) == 1


def test_admin_routes_faults_clock_sites_and_reset(emu, api):
    r = admin(
        emu, "inject_fault", json={"path": "/apiv1/segments", "status": 503, "retry_after": 2}
    )
    assert r.status_code == 200, r.text
    assert api.get("/apiv1/segments").headers["Retry-After"] == "2"
    admin(emu, "inject_fault", json={"path": "/apiv1/segments", "status": 500})
    admin(emu, "clear_faults")
    assert api.get("/apiv1/segments").ok

    before = parse_utc(admin(emu, "now", "GET").json()["now"])
    after = parse_utc(admin(emu, "advance", params={"seconds": "120"}).json()["now"])
    assert 115 < (after - before).total_seconds() < 125
    after = parse_utc(admin(emu, "advance", json={"seconds": 60}).json()["now"])
    assert 175 < (after - before).total_seconds() < 185

    site = admin(emu, "add_site", json={"api_key": "k2"}).json()["site_id"]
    assert site != emu.site_id
    assert Api(emu, "k2").get("/apiv1/segments").ok
    admin(emu, "create_segment", json={"name": "theirs", "api_key": "k2"})
    assert Api(emu, "k2").get("/apiv1/segments").json()["count"] == 1
    assert api.get("/apiv1/segments").json()["count"] == 0

    admin(emu, "clear_requests")
    assert admin(emu, "requests", "GET").json() == []
    assert admin(emu, "reset").status_code == 200
    assert_main_error(Api(emu, "k2").get("/apiv1/segments"), 401, "API KEY Invalid")


def test_admin_routes_refuse_bad_input_with_a_message(emu):
    r = admin(emu, "teleport")
    assert r.status_code == 400 and "unknown operation" in r.json()["error"]
    r = admin(
        emu, "create_segment", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["error"]
    r = admin(emu, "create_segment", json={})
    assert r.status_code == 400 and "name" in r.json()["error"]
    r = admin(emu, "advance", json={"seconds": "soon"})
    assert r.status_code == 400


# ---- python -m pushwire.emulator --------------------------------------------------------------


def start_cli(*args: str) -> tuple[subprocess.Popen, dict[str, str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pushwire.emulator", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    urls: dict[str, str] = {}
    deadline = time.monotonic() + 15
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if "=" in line:
            name, value = line.strip().split("=", 1)
            urls[name] = value
        if line.startswith("serving"):
            return proc, urls
    proc.kill()
    raise AssertionError(f"the emulator did not start: {proc.stderr.read() if proc.stderr else ''}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_command_line_emulator_serves_and_stops_on_signal(sig):
    proc, urls = start_cli("--port", "0", "--api-key", "K")
    try:
        base, events = urls["PUSHWIRE_BASE_URL"], urls["PUSHWIRE_EVENTS_URL"]
        assert base.startswith("http://127.0.0.1:") and events.startswith("http://127.0.0.1:")
        assert base != events
        r = requests.get(base + "/apiv1/segments", headers={"Api-Key": "K"}, timeout=TIMEOUT)
        assert r.status_code == 200 and r.json()["success"] is True
        r = requests.get(base + "/apiv1/segments", headers={"Api-Key": "test-key"}, timeout=TIMEOUT)
        assert r.status_code == 401
        r = requests.post(
            events + "/api/v1/events",
            headers={"Api-Key": "K"},
            json={"event_name": "x", "profile_id": "p"},
            timeout=TIMEOUT,
        )
        assert r.status_code == 200
        assert (
            requests.get(base + "/_emulator/events", timeout=TIMEOUT).json()[0]["event_name"] == "x"
        )
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get(base + "/apiv1/segments", headers={"Api-Key": "K"}, timeout=2)


def test_command_line_emulator_takes_the_key_from_the_environment():
    os.environ["PUSHWIRE_API_KEY"] = "from-env"
    try:
        proc, urls = start_cli("--port", "0")
    finally:
        del os.environ["PUSHWIRE_API_KEY"]
    try:
        r = requests.get(
            urls["PUSHWIRE_BASE_URL"] + "/apiv1/segments",
            headers={"Api-Key": "from-env"},
            timeout=TIMEOUT,
        )
        assert r.status_code == 200
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_the_readme_lists_every_admin_route(emu):
    # Someone driving the emulator from another language works from that list.
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    start = readme.index("is also an HTTP route `/_emulator/{op}`")
    listed = readme[start : readme.index("\n- ", start)]
    missing = [op for op in emu._call("operations") if f"`{op}`" not in listed]
    assert missing == []


def test_deliveries_of_a_subscriber_that_does_not_exist_is_an_error(emu):
    # A test asserting "bob received nothing" must not pass on a misspelt hash.
    bob = emu.add_subscriber()
    assert emu.deliveries(bob) == []
    with pytest.raises(ValueError, match="does not exist"):
        emu.deliveries(bob + "x")


def test_a_frozen_clock_moves_only_when_told(emu, api):
    # "Not delivered yet, just before it is due" must not depend on how fast a test runs.
    emu.add_subscriber()
    frozen = emu.freeze_clock()
    due = frozen + dt.timedelta(seconds=2)  # to the second: 1 to 2 s ahead
    local = due.astimezone(emu.timezone)  # valid_from_utc is the site's time
    api.broadcast(notification_type="later", valid_from_utc=local.strftime("%Y-%m-%d %H:%M:%S"))
    time.sleep(1.3)
    assert emu.now == frozen
    assert emu.deliveries() == []
    emu.advance(0.5)
    assert emu.now == frozen + dt.timedelta(seconds=0.5) and emu.deliveries() == []
    emu.advance(1.5)
    assert len(emu.deliveries()) == 1
    # thawed, it runs on from where it stood; reset() thaws it too
    thawed = emu.freeze_clock(False)
    assert thawed == frozen + dt.timedelta(seconds=2)
    time.sleep(0.05)
    assert emu.now > thawed
    emu.freeze_clock()
    emu.reset()
    first = emu.now
    time.sleep(0.05)
    assert emu.now > first
