"""``examples/web_backend.py`` under each failure of the push service: the Flask app (through
its test client) calls the emulator over real HTTP, and its caller gets an answer it can act
on, never a traceback, never the key."""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_support import api_requests

from pushwire.testing import Emulator

pytest.importorskip("flask")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import web_backend  # noqa: E402

SALE = {"title": "Sale", "message": "Today only", "url": "https://shop.example/sale"}
NOTIFICATIONS = "/apiv1/notifications"


@pytest.fixture
def web(emu: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The example's app, configured for the emulator as a deployment is: by environment.
    No retries unless a test asks, so that a refusal reaches the app at once."""
    monkeypatch.setenv("PUSHWIRE_API_KEY", emu.api_key)
    monkeypatch.setenv("PUSHWIRE_BASE_URL", emu.base_url)
    monkeypatch.setenv("PUSHWIRE_EVENTS_URL", emu.events_url)
    monkeypatch.setenv("PUSHWIRE_MAX_RETRIES", "0")
    web_backend.push.cache_clear()
    yield web_backend.app.test_client()
    if web_backend.push.cache_info().currsize:
        web_backend.push().close()
    web_backend.push.cache_clear()


def test_a_promotion_goes_to_its_segment(web: Any, emu: Emulator) -> None:
    vip = emu.create_segment("vip")
    alice = emu.add_subscriber(segments=[vip])
    emu.add_subscriber()
    r = web.post("/promotions", json={**SALE, "include_segments": [vip]})
    assert (r.status_code, r.get_json()) == (201, {"notification_id": 1})
    assert [d["subscriber_hash"] for d in emu.deliveries()] == [alice]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**SALE, "title": "x" * 100}, "title"),
        ({"title": "Sale", "url": "https://shop.example"}, "message"),
        ({**SALE, "include_segments": ["vip"]}, "include_segments[0]"),  # a name, not an id
    ],
)
def test_bad_input_is_422_naming_the_field(web: Any, emu: Emulator, body: Any, field: str) -> None:
    r = web.post("/promotions", json=body)
    assert r.status_code == 422 and r.get_json()["field"] == field
    assert api_requests(emu) == []  # refused before sending


def test_a_rate_limit_is_503_with_the_services_retry_after(web: Any, emu: Emulator) -> None:
    emu.inject_fault(NOTIFICATIONS, status=429, retry_after=7)
    r = web.post("/promotions", json=SALE)
    assert (r.status_code, r.headers["Retry-After"]) == (503, "7")
    assert "nothing was sent" in r.get_json()["error"]
    assert emu.notifications() == []


def test_an_unavailable_service_is_503_with_its_retry_after(web: Any, emu: Emulator) -> None:
    emu.inject_fault(NOTIFICATIONS, status=503, retry_after=4)
    r = web.post("/promotions", json=SALE)
    assert (r.status_code, r.headers["Retry-After"]) == (503, "4")


def test_a_passing_rate_limit_is_absorbed_by_the_clients_retry(
    web: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PUSHWIRE_MAX_RETRIES", "2")
    emu.inject_fault(NOTIFICATIONS, status=429, retry_after=0)
    assert web.post("/promotions", json=SALE).status_code == 201
    assert [r["status"] for r in api_requests(emu, NOTIFICATIONS)] == [429, 200]


def test_an_unreachable_service_is_503_nothing_sent(
    web: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:  # a port nothing listens on: the connection is refused
        s.bind(("127.0.0.1", 0))
        monkeypatch.setenv("PUSHWIRE_BASE_URL", f"http://127.0.0.1:{s.getsockname()[1]}")
    r = web.post("/promotions", json=SALE)
    assert (r.status_code, r.headers["Retry-After"]) == (503, "60")


@pytest.mark.parametrize(
    ("fault", "sent"),
    [
        ({"drop": "after"}, 1),
        ({"drop": "before"}, 0),  # the client cannot tell it from "after"
        ({"status": 500, "processed": True}, 1),
        ({"status": 502}, 0),
    ],
)
def test_an_unknown_outcome_is_502_and_never_resent(
    web: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch, fault: Any, sent: int
) -> None:
    monkeypatch.setenv("PUSHWIRE_MAX_RETRIES", "2")  # retries allowed, none taken
    emu.inject_fault(NOTIFICATIONS, **fault)
    r = web.post("/promotions", json=SALE)
    assert r.status_code == 502
    assert r.get_json()["outcome_unknown"] is True
    assert "may have gone out" in r.get_json()["error"]
    assert len(api_requests(emu, NOTIFICATIONS)) == 1
    assert len(emu.notifications()) == sent


def test_a_refused_key_is_a_server_fault_that_never_shows_the_key(
    web: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-live-wrong-key-0123456789"
    monkeypatch.setenv("PUSHWIRE_API_KEY", key)
    with caplog.at_level(logging.DEBUG):
        r = web.post("/promotions", json=SALE)
    assert r.status_code == 500
    assert r.get_json() == {"error": web_backend.NOT_CONFIGURED}
    assert "refused our API key" in caplog.text
    assert key not in caplog.text and key not in r.get_data(as_text=True)


def test_a_missing_key_is_a_server_fault_not_bad_input(
    web: Any, emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PUSHWIRE_API_KEY")
    r = web.post("/promotions", json=SALE)
    assert (r.status_code, r.get_json()) == (500, {"error": web_backend.NOT_CONFIGURED})
    monkeypatch.setenv("PUSHWIRE_API_KEY", emu.api_key)  # fixed: the next request works
    assert web.post("/promotions", json=SALE).status_code == 201


def test_a_refusal_the_client_cannot_foresee_is_422(web: Any, emu: Emulator) -> None:
    emu.inject_fault(NOTIFICATIONS, status=400, body={"success": False, "message": "No audience"})
    r = web.post("/promotions", json=SALE)
    assert (r.status_code, r.get_json()) == (422, {"error": "No audience"})


def test_an_order_is_placed_whatever_happens_to_its_tracking(web: Any, emu: Emulator) -> None:
    emu.inject_fault("/api/v1/events", status=500)
    r = web.post("/orders", json={"customer_id": "alice", "total": 42.5})
    assert r.status_code == 201
    assert emu.events() == []
