"""``client.request(...)``, the call for an endpoint this release has no method for, through
both clients and their ``with_raw_response`` over real HTTP against the emulator: the answer
as ``with_raw_response`` gives it, both interfaces, forms and JSON, the key sent only to the
configured roots, retries by method, and outcome-unknown as the typed calls have it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any, Optional

import pytest
from client_support import BROADCAST, Driver, api_requests
from conftest import QuietHandler, serving

import pushwire
from pushwire import APIResponse, ValidationError
from pushwire.testing import Emulator


def test_a_get_returns_the_answer_with_the_body_parsed_as_json(drv: Driver, emu: Emulator) -> None:
    emu.create_segment("vip")
    emu.create_segment("trial")
    r = drv(drv.client.request, "GET", "/apiv1/segments", query={"limit": 1})
    assert isinstance(r, APIResponse)
    assert r.status_code == 200 and r.method == "GET"
    assert r.url == f"{emu.base_url}/apiv1/segments?limit=1"
    body = r.parse()
    assert body == r.json() and body["success"] is True
    assert [s["segment_name"] for s in body["segments"]] == [
        s.segment_name for s in drv(drv.client.segments.list, limit=1)
    ]
    (logged, _) = api_requests(emu, "/apiv1/segments")
    assert logged["method"] == "GET" and logged["query"] == "limit=1"


# The broadcast as spec 4.13's form names its fields.
FORM = {f"notification_{name}": value for name, value in BROADCAST.items()}


def test_a_form_post_acts_once_and_the_raw_view_has_the_same_call(
    drv: Driver, emu: Emulator
) -> None:
    for request in (drv.client.request, drv.client.with_raw_response.request):
        r = drv(request, "POST", "/apiv1/notifications", form=FORM)
        assert r.status_code == 200
        notification_id = r.parse()["notification_id"]
        assert notification_id == emu.notifications()[-1]["notification_id"]
    assert [n["request"]["notification_title"] for n in emu.notifications()] == ["Sale"] * 2


def test_a_json_body_and_a_list_query_are_sent_as_the_spec_spells_them(
    drv: Driver, emu: Emulator
) -> None:
    r = drv(
        drv.client.request,
        "post",
        "/api/v1/events",
        body={"event_name": "signup", "device_token_hash": "h1", "data": {"plan": "pro"}},
        interface="events",
    )
    assert r.status_code in (200, 201, 202) and r.method == "POST"
    assert r.url == f"{emu.events_url}/api/v1/events"
    (event,) = emu.events()
    assert event["event_name"] == "signup" and event["data"] == {"plan": "pro"}
    drv(drv.client.request, "GET", "/apiv1/segments", query={"ids": ["a", "b"], "on": True})
    logged = api_requests(emu, "/apiv1/segments")[-1]
    assert logged["query"] == "ids%5B0%5D=a&ids%5B1%5D=b&on=true"


def test_an_empty_answer_parses_to_none(drv: Driver, emu: Emulator) -> None:
    r = drv(drv.client.request, "HEAD", "/apiv1/segments")
    assert r.status_code == 200 and r.content == b"" and r.parse() is None


class _Text(QuietHandler):
    def do_GET(self) -> None:
        self.reply(200, b"<html>maintenance</html>", "text/html")


@pytest.fixture
def text_server() -> Iterator[str]:
    """A loopback server that answers every GET with an HTML page (a proxy's maintenance
    page), as the emulator's routes never do."""
    with serving(_Text) as url:
        yield url


def test_an_answer_that_is_not_json_raises_on_parse_with_its_text_kept(
    text_server: str,
) -> None:
    with pushwire.Client(api_key="sk_test_request_0123456789", base_url=text_server) as client:
        r = client.request("GET", "/apiv1/status")
    assert r.status_code == 200 and "maintenance" in r.text
    with pytest.raises(pushwire.APIError, match="not JSON"):
        r.parse()


def test_an_error_status_raises_the_typed_calls_error(drv: Driver, emu: Emulator) -> None:
    with pytest.raises(pushwire.BadRequestError, match="segment id does not exist"):
        drv(drv.client.request, "POST", "/apiv1/segments/delete", form={"segment_id": 99})
    with pytest.raises(pushwire.NotFoundError):
        drv(drv.client.request, "GET", "/apiv1/no-such-endpoint")


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("https://collector.example/apiv1/segments", "configured hosts only"),
        ("//collector.example/apiv1/segments", "configured hosts only"),
        ("/segments", "must begin with /apiv1"),
        ("/apiv1/segments?limit=1", "pass query="),
        ("/apiv1/../admin/reset", "'..'"),
    ],
)
def test_a_path_off_the_configured_root_is_refused_before_anything_is_sent(
    drv: Driver, emu: Emulator, path: str, says: str
) -> None:
    with pytest.raises(ValidationError, match=says) as info:
        drv(drv.client.request, "GET", path)
    assert info.value.field == "path"
    assert api_requests(emu) == []


def test_a_whole_url_on_the_configured_root_is_taken(drv: Driver, emu: Emulator) -> None:
    r = drv(drv.client.request, "GET", f"{emu.base_url}/apiv1/segments")
    assert r.status_code == 200 and r.url == f"{emu.base_url}/apiv1/segments"
    # The same host on another port is another place.
    other = emu.base_url.rsplit(":", 1)[0] + ":9"
    with pytest.raises(ValidationError, match="configured hosts only"):
        drv(drv.client.request, "GET", f"{other}/apiv1/segments")


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"method": "GET", "path": "/apiv1/segments", "body": {"a": 1}}, "body"),
        ({"method": "POST", "path": "/apiv1/x", "body": {}, "form": {}}, "form"),
        ({"method": "POST", "path": "/apiv1/x", "form": {"nested": {"a": 1}}}, "form"),
        ({"method": "GET", "path": "/apiv1/x", "headers": {"Api-Key": "other"}}, "headers"),
        ({"method": "GET", "path": "/apiv1/x", "headers": {"Content-Type": "a/b"}}, "headers"),
        ({"method": "GET", "path": "/apiv1/x", "interface": "admin"}, "interface"),
        ({"method": "G T", "path": "/apiv1/x"}, "method"),
    ],
)
def test_bad_arguments_are_refused_by_name_before_anything_is_sent(
    drv: Driver, emu: Emulator, arguments: dict[str, Any], field: str
) -> None:
    arguments = dict(arguments)
    method, path = arguments.pop("method"), arguments.pop("path")
    with pytest.raises(ValidationError) as info:
        drv(drv.client.request, method, path, **arguments)
    assert info.value.field == field
    assert api_requests(emu) == []


def test_headers_are_sent_and_the_key_only_as_the_client_sends_it(
    drv: Driver, emu: Emulator
) -> None:
    drv(drv.client.request, "GET", "/apiv1/segments", headers={"X-Trace-Tag": "nightly"})
    (logged,) = api_requests(emu)
    headers = {k.lower(): v for k, v in logged["headers"].items()}
    assert headers["x-trace-tag"] == "nightly"
    assert "api-key" not in headers or emu.api_key not in headers["api-key"]


def test_a_post_is_not_resent_once_it_may_have_acted(drv: Driver, emu: Emulator) -> None:
    emu.inject_fault("/apiv1/notifications", status=500, processed=True)
    with pytest.raises(pushwire.ServerError) as info:
        drv(drv.client.request, "POST", "/apiv1/notifications", form=FORM)
    assert info.value.outcome_unknown
    assert len(api_requests(emu, "/apiv1/notifications")) == 1
    assert len(emu.notifications()) == 1


def test_a_post_said_idempotent_and_a_get_are_retried(drv: Driver, emu: Emulator) -> None:
    emu.inject_fault("/apiv1/segments", status=500)
    r = drv(drv.client.request, "GET", "/apiv1/segments")
    assert r.status_code == 200 and r.retries_taken == 1
    emu.inject_fault("/apiv1/segments/delete", status=502)
    emu.create_segment("vip")
    (segment,) = emu.segments()
    r = drv(
        drv.client.request,
        "POST",
        "/apiv1/segments/delete",
        form={"segment_id": segment["segment_id"]},
        idempotent=True,
    )
    assert r.status_code == 200 and r.retries_taken == 1
    assert emu.segments() == []


def test_its_retries_are_logged_as_the_typed_calls_are(
    drv: Driver, emu: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pushwire")
    emu.inject_fault("/apiv1/segments", status=503, retry_after=0)
    drv(drv.client.request, "GET", "/apiv1/segments")
    drv(drv.client.segments.list)
    emu.inject_fault("/apiv1/segments", status=503, retry_after=0)
    drv(drv.client.segments.list)
    retries = [m for m in caplog.messages if m.startswith("retrying GET /apiv1/segments ")]
    assert len(retries) == 2, caplog.messages
    assert retries[0].split(" in ")[0] == retries[1].split(" in ")[0]


def test_a_call_timeout_bounds_it(drv: Driver, emu: Emulator) -> None:
    emu.inject_fault("/apiv1/segments", delay=2.0, times=5)
    with pytest.raises(pushwire.APITimeoutError):
        drv(drv.client.request, "GET", "/apiv1/segments", timeout=0.2)


def test_without_an_events_url_the_events_interface_is_refused_by_name(emu: Emulator) -> None:
    with pushwire.Client(api_key=emu.api_key, base_url=emu.base_url) as client:
        with pytest.raises(ValidationError) as info:
            client.request("POST", "/api/v1/events", body={}, interface="events")
    assert info.value.field == "events_url"
    assert api_requests(emu) == []


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request 200 with an empty JSON object, recording its path and key."""

    seen: list[tuple[str, Optional[str]]] = []

    def _answer(self) -> None:
        _Recorder.seen.append((self.path, self.headers.get("api-key")))
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def two_services() -> Iterator[str]:
    """One loopback host serving two services under their own paths, as a gateway does:
    the client's root is ``{root}/svc-a``; ``{root}/svc-b`` is another service."""
    with serving(_Recorder) as root:
        yield root


# Every spelling of a dot segment a URL parser or a server normalises: percent-encoded in
# either case, backslashes, mixed, double encoding, Unicode full stops and slashes.
ESCAPES = [
    "/apiv1/%2e%2e/%2e%2e/svc-b/admin",
    "/apiv1/%2E%2E/%2E%2E/svc-b/admin",
    "/apiv1/.%2E/x",
    "/apiv1/%2e./x",
    "/apiv1/%2e/x",
    "/apiv1\\..\\..\\svc-b\\admin",
    "/apiv1/..\\..\\svc-b/admin",
    "/apiv1/%5c..%5c..%5csvc-b",
    "/apiv1/..%2f..%2fsvc-b/admin",
    "/apiv1/%252e%252e/%252e%252e/svc-b/admin",
    "/apiv1/%25252e%25252e/x",
    "/apiv1/\uff0e\uff0e/\uff0e\uff0e/svc-b/admin",
    "/apiv1/%EF%BC%8E%EF%BC%8E/x",
    "/apiv1/..\uff0fsvc-b",
    "/apiv1/segments/./../../svc-b",
    # Path parameters (`..;/`, read as `..` by Tomcat and Spring), NFKC's dots and slashes,
    # overlong UTF-8, IIS's %u, and ends a server may trim or stop at.
    "/apiv1/..;/..;/svc-b/admin",
    "/apiv1/..;x=1/..;x=1/svc-b",
    "/apiv1/%2e%2e;/%2e%2e;/svc-b",
    "/apiv1/\u2025/\u2025/svc-b/admin",
    "/apiv1/\ufe30/\ufe30/svc-b",
    "/apiv1/..\ufe68..\ufe68svc-b",
    "/apiv1/%c0%ae%c0%ae/%c0%ae%c0%ae/svc-b",
    "/apiv1/%e0%80%ae%e0%80%ae/x",
    "/apiv1/%u002e%u002e/%u002e%u002e/svc-b",
    "/apiv1/..%00/..%00/svc-b",
    "/apiv1/..%20/..%20/svc-b",
    "/apiv1/.../x",
]


@pytest.mark.parametrize("path", ESCAPES)
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_path_normalised_off_the_root_is_refused_with_nothing_sent(
    two_services: str, kind: str, path: str
) -> None:
    _Recorder.seen.clear()
    where = {"api_key": "sk-root-secret-1", "base_url": f"{two_services}/svc-a", "max_retries": 0}
    if kind == "sync":
        with pushwire.Client(**where) as client, pytest.raises(ValidationError) as info:
            client.request("GET", path)
    else:

        async def call() -> None:
            async with pushwire.AsyncClient(**where) as client:
                await client.request("GET", path)

        with pytest.raises(ValidationError) as info:
            asyncio.run(call())
    assert info.value.field == "path"
    assert _Recorder.seen == []


@pytest.mark.parametrize(
    ("path", "reached"),
    [
        # Dots within a name, and a name's parameters, stay where they are.
        ("/apiv1/a%2Eb/c..d", "/svc-a/apiv1/a%2Eb/c..d"),
        ("/apiv1/a..b;v=1/x%3Bz", "/svc-a/apiv1/a..b;v=1/x%3Bz"),
        ("/apiv1/segments", "/svc-a/apiv1/segments"),
    ],
)
def test_a_path_under_the_root_reaches_it_with_the_key(
    two_services: str, path: str, reached: str
) -> None:
    _Recorder.seen.clear()
    where = {"api_key": "sk-root-secret-1", "base_url": f"{two_services}/svc-a"}
    with pushwire.Client(**where) as client:
        assert client.request("GET", path).status_code == 200
    assert _Recorder.seen == [(reached, "sk-root-secret-1")]


@pytest.mark.parametrize("path", ["/apiv1/segments\r\nX-Injected: 1", "/apiv1/seg\tments"])
def test_a_control_character_in_a_path_is_refused_not_dropped(
    drv: Driver, emu: Emulator, path: str
) -> None:
    with pytest.raises(ValidationError, match="control characters") as info:
        drv(drv.client.request, "GET", path)
    assert info.value.field == "path"
    assert api_requests(emu) == []
