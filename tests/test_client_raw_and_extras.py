"""The hatches beyond the typed methods, through both clients over real HTTP against the
emulator: ``client.with_raw_response`` (the answer as it came, and ``parse()``), and the
per-call ``extra_headers``, ``extra_query``, ``extra_body`` and ``timeout``."""

from __future__ import annotations

import datetime as dt
import json
import textwrap
import time
import urllib.parse
from typing import Any

import pytest
from client_support import BROADCAST, Driver, api_requests, drip_notification, mypy_errors

import pushwire
from pushwire import APIResponse, APITimeoutError, BadRequestError, Headers, ValidationError
from pushwire.testing import Emulator

KEY = "sk_live_raw_and_extras_0123456789"


# --- with_raw_response -------------------------------------------------------------------


def test_a_raw_broadcast_shows_its_answer_and_parses_to_the_plain_result(
    drv: Driver, emu: Emulator
) -> None:
    r = drv(drv.client.with_raw_response.notifications.create, **BROADCAST)
    assert isinstance(r, APIResponse)
    (logged,) = api_requests(emu)
    assert r.status_code == 200
    assert r.http_version == "HTTP/1.1"
    assert r.method == "POST"
    assert r.url == f"{emu.base_url}/apiv1/notifications"
    assert isinstance(r.headers, Headers)
    assert r.headers["X-Request-Id"] == logged["request_id"]
    assert r.headers["content-type"].startswith("application/json")
    body = json.loads(r.content)
    assert body["success"] is True
    assert r.json() == body and r.text == r.content.decode()
    # parse() is what the plain call returns: the id of the broadcast the emulator holds.
    notification_id = r.parse()
    assert isinstance(notification_id, int) and notification_id == body["notification_id"]
    assert r.parse() is r.parse()
    assert [n["notification_id"] for n in emu.notifications()] == [notification_id]
    assert isinstance(r.elapsed, dt.timedelta) and r.elapsed > dt.timedelta(0)
    assert r.retries_taken == 0
    assert repr(r) == f"<APIResponse [200] POST {emu.base_url}/apiv1/notifications>"


def test_parse_gives_what_the_plain_call_gives_for_every_kind_of_result(
    drv: Driver, emu: Emulator
) -> None:
    c = drv.client
    raw = c.with_raw_response
    emu.create_segment("vip")
    emu.add_subscriber(profile_id="1")
    drv(c.segments.add_profiles, "vip", [1])
    segments = drv(raw.segments.list).parse()
    assert segments == drv(c.segments.list)
    # The plain call's own type: a ResultList, which notebooks show as a table.
    assert type(segments) is type(drv(c.segments.list))
    drip_id = drv(raw.drips.create, "Welcome", [drip_notification()]).parse()
    assert drv(raw.drips.get, drip_id).parse() == drv(c.drips.get, drip_id)
    page = drv(raw.drips.list, limit=5).parse()
    assert [d.drip_id for d in page.data] == [drip_id]
    assert drv(raw.analytics.subscribers).parse() == drv(c.analytics.subscribers)
    rows = drv(raw.analytics.summary, "2026-01-01", "2026-01-03").parse()
    assert rows == drv(c.analytics.summary, "2026-01-01", "2026-01-03")
    assert drv(raw.products.update, [{"product_id": "p1", "price": 3}]).parse() is None
    assert drv(raw.segments.remove_profiles, "vip", [1]).parse() is None


def test_a_raw_answer_keeps_repeated_headers_and_the_event_interfaces_url(
    drv: Driver, emu: Emulator
) -> None:
    emu.inject_fault("/apiv1/segments", headers={"Set-Cookie": ["a=1", "b=2"], "X-Shard": 3})
    r = drv(drv.client.with_raw_response.segments.list, segment_type="all")
    assert r.headers.get_list("set-cookie") == ["a=1", "b=2"]
    assert r.headers["x-shard"] == "3"
    assert r.url == f"{emu.base_url}/apiv1/segments?segment_type=all"
    e = drv(drv.client.with_raw_response.events.track, "signup", profile_id=7)
    assert e.method == "POST" and e.url.startswith(emu.events_url)
    assert e.parse() is None
    (event,) = api_requests(emu, "/api/v1/events")
    assert e.headers["x-request-id"] == event["request_id"]


def test_a_retried_call_shows_its_last_attempts_answer(drv: Driver, emu: Emulator) -> None:
    emu.inject_fault("/apiv1/segments", status=503, times=1)
    r = drv(drv.client.with_raw_response.segments.list)
    first, second = api_requests(emu, "/apiv1/segments")
    assert (first["status"], second["status"]) == (503, 200)
    assert r.status_code == 200 and r.retries_taken == 1
    assert r.headers["x-request-id"] == second["request_id"]


def test_a_failed_raw_call_raises_as_the_plain_call_does(drv: Driver, emu: Emulator) -> None:
    with pytest.raises(BadRequestError) as info:
        drv(drv.client.with_raw_response.drips.get, 424242)
    assert info.value.request_id == api_requests(emu)[0]["request_id"]


def test_an_answer_the_typed_read_cannot_take_is_returned_raw_and_parse_raises(
    drv: Driver, emu: Emulator
) -> None:
    # The service renamed a field: the answer is a success the typed read cannot take.
    trigger_id = emu.create_trigger(campaign_name="Cart", rules={"start_event_name": "cart"})
    changed = {"success": True, "campaign": {"campaign_name": "Cart"}}
    path = f"/apiv1/triggers/{trigger_id}"
    emu.inject_fault(path, status=200, body=changed, headers={"X-Api-Version": "2"})
    r = drv(drv.client.with_raw_response.triggers.get, trigger_id)
    assert r.status_code == 200 and r.json() == changed
    assert r.headers["x-api-version"] == "2" and r.method == "GET"
    with pytest.raises(pushwire.APIError, match="unexpected shape") as read:
        r.parse()
    assert read.value.status_code == 200
    # The same for a list whose field was renamed.
    renamed = {"success": True, "rows": [{"date": "2026-01-01"}]}
    emu.inject_fault("/apiv1/analytics/summary", status=200, body=renamed)
    rows = drv(drv.client.with_raw_response.analytics.summary, "2026-01-01", "2026-01-02")
    assert rows.json() == renamed
    with pytest.raises(pushwire.APIError, match="unexpected shape"):
        rows.parse()
    # The plain call raises it, as it did.
    emu.inject_fault(path, status=200, body=changed)
    with pytest.raises(pushwire.APIError, match="unexpected shape"):
        drv(drv.client.triggers.get, trigger_id)
    # Errors by what the service said still raise from the raw call: a refusal, a 4xx.
    emu.inject_fault(path, status=200, body={"success": False, "message": "no such campaign"})
    with pytest.raises(pushwire.APIError, match="no such campaign"):
        drv(drv.client.with_raw_response.triggers.get, trigger_id)
    with pytest.raises(BadRequestError):
        drv(drv.client.with_raw_response.drips.get, 424242)
    # And the real answer reads as before.
    assert drv(drv.client.with_raw_response.triggers.get, trigger_id).parse().campaign_name == (
        "Cart"
    )


def test_calls_of_many_requests_have_no_raw_answer_and_say_so(drv: Driver) -> None:
    raw = drv.client.with_raw_response
    with pytest.raises(AttributeError, match="sends many requests"):
        raw.segments.add_subscribers_bulk  # noqa: B018
    with pytest.raises(AttributeError, match="sends many requests"):
        raw.events.track_many  # noqa: B018
    with pytest.raises(AttributeError, match="sends many requests"):
        raw.drips.iter  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        raw.drips.nope  # noqa: B018


def test_the_key_shows_nowhere_in_a_raw_answer(emu: Emulator) -> None:
    # A gateway that echoes the key in a header and the body, and a query naming it.
    emu.add_site(KEY)
    emu.inject_fault("/apiv1/segments", headers={"X-Echo": KEY})
    with pushwire.Client(api_key=KEY, base_url=emu.base_url) as c:
        r = c.with_raw_response.segments.list(extra_query={"echo": KEY})
    shown = f"{r!r} {r.url} {r.headers.multi_items()} {r.content!r}"
    assert KEY not in shown and urllib.parse.quote(KEY) not in shown
    assert r.headers["x-echo"] == "[redacted]"
    assert "echo=%5Bredacted%5D" in r.url or "echo=[redacted]" in r.url


def test_a_clients_with_options_has_its_own_raw_view(drv: Driver, emu: Emulator) -> None:
    raw = drv.client.with_raw_response
    assert drv.client.with_raw_response is raw  # made once per client
    short = drv.client.with_options(timeout=0.3)
    assert short.with_raw_response is not raw
    emu.inject_fault("/apiv1/segments", delay=1.5, times=1)
    t0 = time.monotonic()
    with pytest.raises(APITimeoutError):
        drv(short.with_raw_response.segments.list)
    assert time.monotonic() - t0 < 1.2


# --- extra_headers, extra_query, extra_body, timeout -------------------------------------


def test_extra_headers_and_query_reach_the_service_on_every_method(
    drv: Driver, emu: Emulator
) -> None:
    extras = {"extra_headers": {"X-Trace": "t-1"}, "extra_query": {"beta": 1, "ids": [4, 5]}}
    drv(drv.client.segments.list, **extras)
    drv(drv.client.drips.list, limit=3, **extras)
    drv(drv.client.events.track, "signup", profile_id=1, **extras)
    logged = api_requests(emu)
    assert [r["path"] for r in logged] == ["/apiv1/segments", "/apiv1/drips", "/api/v1/events"]
    for r in logged:
        assert r["headers"]["x-trace"] == "t-1"
        query = urllib.parse.parse_qs(r["query"])
        assert query["beta"] == ["1"] and query["ids[0]"] == ["4"] and query["ids[1]"] == ["5"]
    # The call's own query comes first, and is still there.
    assert urllib.parse.parse_qs(logged[1]["query"])["limit"] == ["3"]


def test_an_extra_header_replaces_a_default_one_for_that_call_only(emu: Emulator) -> None:
    with emu.client(default_headers={"X-Team": "growth"}) as c:
        c.segments.list(extra_headers={"x-team": "data"})
        c.segments.list()
    teams = [r["headers"]["x-team"] for r in api_requests(emu)]
    assert teams == ["data", "growth"]


def test_extra_body_is_sent_in_the_calls_form_with_the_specs_array_spelling(
    drv: Driver, emu: Emulator
) -> None:
    drv(
        drv.client.notifications.create,
        **BROADCAST,
        extra_body={"campaign_tag": "bf", "tags": ["a", "b"], "n": 3, "beta": True},
    )
    (logged,) = api_requests(emu)
    form = urllib.parse.parse_qs(logged["body"])
    assert form["notification_title"] == [BROADCAST["title"]]
    assert form["campaign_tag"] == ["bf"]
    assert form["tags[0]"] == ["a"] and form["tags[1]"] == ["b"]
    assert form["n"] == ["3"] and form["beta"] == ["true"]
    # The service took the broadcast with the fields it does not know.
    assert len(emu.notifications()) == 1


def test_extra_body_is_merged_into_a_json_body_and_sent_as_given(
    drv: Driver, emu: Emulator
) -> None:
    # Both JSON interfaces refuse fields they do not know (spec 7): the extras were sent as
    # given, and the service's answer is the caller's to read.
    with pytest.raises(BadRequestError, match="Invalid data"):
        drv(drv.client.events.track, "signup", profile_id=1, extra_body={"source": {"app": 1}})
    with pytest.raises(BadRequestError, match="labels is not allowed"):
        drv(
            drv.client.drips.create,
            "Welcome",
            [drip_notification()],
            extra_body={"labels": ["q4"]},
        )
    event, drip = api_requests(emu)
    sent = json.loads(event["body"])
    assert sent["event_name"] == "signup" and sent["source"] == {"app": 1}
    body = json.loads(drip["body"])
    assert body["campaign_name"] == "Welcome" and body["labels"] == ["q4"]


@pytest.mark.parametrize(
    ("call", "options", "field", "named"),
    [
        (
            "broadcast",
            {"extra_body": {"notification_title": "x"}},
            "extra_body",
            "notification_title",
        ),
        ("broadcast", {"extra_body": {"include_segments": [9]}}, "extra_body", "include_segments"),
        ("drip", {"extra_body": {"campaign_name": "x"}}, "extra_body", "campaign_name"),
        ("event", {"extra_body": {"event_name": "x"}}, "extra_body", "event_name"),
        ("segments", {"extra_query": {"segment_type": "x"}}, "extra_query", "segment_type"),
        ("segments", {"extra_body": {"a": 1}}, "extra_body", "GET"),
        ("segments", {"extra_headers": {"Api-Key": "other"}}, "extra_headers", "key"),
        ("segments", {"extra_headers": {"content-length": "0"}}, "extra_headers", "content-length"),
        ("segments", {"extra_headers": {"Host": "x.example"}}, "extra_headers", "Host"),
        (
            "segments",
            {"extra_headers": {"Content-Type": "text/plain"}},
            "extra_headers",
            "Content-Type",
        ),
        ("segments", {"extra_headers": {"X-A": 1}}, "extra_headers", "str"),
        ("segments", {"extra_body": ["a"]}, "extra_body", "mapping"),
        ("segments", {"timeout": 0}, "timeout", "positive"),
        ("broadcast", {"extra_body": {"meta": {"k": "v"}}}, "extra_body", "a dict"),
        ("segments", {"extra_query": {"m": [[1]]}}, "extra_query", "lists or dicts"),
    ],
)
def test_an_extra_that_would_replace_what_the_call_sends_is_refused_by_name(
    drv: Driver, emu: Emulator, call: str, options: dict[str, Any], field: str, named: str
) -> None:
    c = drv.client
    calls = {
        # Unchecked segments: the client's read of the site's segments is sent before the
        # request its extras go on is built.
        "broadcast": lambda: drv(
            c.notifications.create,
            **BROADCAST,
            include_segments=[1],
            check_segments=False,
            **options,
        ),
        "drip": lambda: drv(c.drips.create, "Welcome", [drip_notification()], **options),
        "event": lambda: drv(c.events.track, "signup", profile_id=1, **options),
        "segments": lambda: drv(c.segments.list, segment_type="all", **options),
    }
    with pytest.raises(ValidationError) as info:
        calls[call]()
    assert info.value.field == field
    assert named in str(info.value)
    assert api_requests(emu) == []  # nothing was sent


def test_a_misspelt_option_is_a_type_error_and_sends_nothing(drv: Driver, emu: Emulator) -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'extra_header'"):
        drv(drv.client.segments.list, extra_header={"X-A": "b"})
    assert api_requests(emu) == []


def test_a_per_call_timeout_bounds_that_call_only(drv: Driver, emu: Emulator) -> None:
    emu.inject_fault("/apiv1/segments", delay=1.5, times=2)
    t0 = time.monotonic()
    with pytest.raises(APITimeoutError, match="0.3 s"):
        drv(drv.client.segments.list, timeout=0.3)
    assert time.monotonic() - t0 < 1.2
    # The client's own timeout (5 s) still applies to the next call, which waits it out.
    assert drv(drv.client.segments.list) == []
    assert drv.client.timeout == 5.0
    # None is no timeout, as in the constructor.
    assert drv(drv.client.segments.list, timeout=None) == []


def test_options_apply_to_every_request_of_a_batch_and_a_bulk_call(
    drv: Driver, emu: Emulator
) -> None:
    events = [{"event_name": "view", "profile_id": i} for i in range(300)]
    results = drv(drv.client.events.track_many, events, extra_headers={"X-Batch": "b1"})
    assert results == [None] * 300
    logged = api_requests(emu, "/api/v1/events")
    assert len(logged) == 300
    assert {r["headers"].get("x-batch") for r in logged} == {"b1"}
    segment_id = emu.create_segment("big")
    hashes = [f"h{i}" for i in range(1200)]
    result = drv(
        drv.client.segments.add_subscribers_bulk,
        segment_id,
        hashes,
        extra_headers={"X-Batch": "b2"},
    )
    assert len(result.chunks) == 3
    chunks = api_requests(emu, "/apiv1/segments/addSegmentWithHash")
    assert len(chunks) == 3
    assert {r["headers"].get("x-batch") for r in chunks} == {"b2"}


def test_with_options_and_per_call_options_combine(emu: Emulator) -> None:
    with emu.client(timeout=5.0) as c:
        r = c.with_options(max_retries=0).with_raw_response.segments.list(
            extra_headers={"X-A": "1"}, timeout=2
        )
    assert r.status_code == 200
    assert api_requests(emu)[0]["headers"]["x-a"] == "1"


# --- what type checkers see ----------------------------------------------------------------


def test_mypy_sees_the_raw_responses_and_the_request_options(tmp_path) -> None:
    (tmp_path / "good.py").write_text(
        textwrap.dedent(
            """
            import pushwire
            from pushwire import APIResponse, Segment


            def run(c: pushwire.Client) -> None:
                r: APIResponse[int] = c.with_raw_response.notifications.create(
                    title="t", message="m", url="u", extra_body={"x": [1]}, timeout=2.0
                )
                notification_id: int = r.parse()
                status: int = r.status_code
                rows: list[Segment] = c.with_raw_response.segments.list().parse()
                c.segments.list(extra_headers={"X-A": "b"}, extra_query={"q": 1}, timeout=None)


            async def arun(c: pushwire.AsyncClient) -> None:
                r: APIResponse[int] = await c.with_raw_response.drips.create("n", [])
                drip_id: int = r.parse()
                await c.events.track("e", profile_id=1, extra_headers={"X": "y"})
            """
        )
    )
    (tmp_path / "bad.py").write_text(
        textwrap.dedent(
            """
            import pushwire


            def run(c: pushwire.Client) -> None:
                c.segments.list(extra_header={"X-A": "b"})
                c.with_raw_response.segments.add_subscribers_bulk(1, ["h"])
                text: str = c.with_raw_response.notifications.create(
                    title="t", message="m", url="u"
                ).parse()
                c.segments.list(timeout="soon")
            """
        )
    )
    errors = mypy_errors(tmp_path)
    assert sorted({e.split(":")[0:2][1] for e in errors if e.startswith("bad.py")}) == [
        "11",
        "6",
        "7",
        "8",
    ], errors
    assert not [e for e in errors if e.startswith("good.py")], errors


def test_the_options_and_raw_response_are_public_names() -> None:
    assert pushwire.APIResponse is APIResponse
    assert set(pushwire.RequestOptions.__annotations__) == {
        "extra_headers",
        "extra_query",
        "extra_body",
        "timeout",
    }
