"""Shared helpers and fixtures of the tests. The emulator's acceptance tests talk plain HTTP
(``requests``, the ``api`` fixture) as any client of the service would; the client's drive
both clients (the ``drv`` fixture, see client_support.py). Nothing is mocked."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional

import pytest
import requests
from client_support import Driver, NoReaderPolicy, drip_notification, make_driver

from pushwire.testing import Emulator

# `pytester` runs pytest on files a test writes (tests/test_pytest_report.py).
pytest_plugins = ["pytester"]


def pytest_configure(config: pytest.Config) -> None:
    """The suite runs as in a terminal's foreground, however it was started. A shell starts a
    background job (``make test &``, a CI step's ``&``) with SIGINT ignored, which Python
    keeps and every process it starts inherits: the tests that press Ctrl-C on a blocking
    call or an emulator would find it ignored. A handler of Python's own is not inherited
    across ``exec``: the processes the tests start get the default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


TIMEOUT = 10


class Api:
    """Raw HTTP to both interfaces of one emulator, as the holder of one API key."""

    def __init__(self, emu: Emulator, key: Optional[str] = None) -> None:
        self.base_url = emu.base_url
        self.events_url = emu.events_url
        self.key = emu.api_key if key is None else key
        self.http = requests.Session()

    def headers(self, extra: Optional[dict[str, str]] = None) -> dict[str, str]:
        h = {"Api-Key": self.key}
        h.update(extra or {})
        return h

    def get(self, path: str, params: Any = None, **kw: Any) -> requests.Response:
        kw.setdefault("headers", self.headers())
        return self.http.get(self.base_url + path, params=params, timeout=TIMEOUT, **kw)

    def post_form(self, path: str, data: Any, **kw: Any) -> requests.Response:
        kw.setdefault("headers", self.headers())
        return self.http.post(self.base_url + path, data=data, timeout=TIMEOUT, **kw)

    def post_json(self, path: str, body: Any, **kw: Any) -> requests.Response:
        kw.setdefault("headers", self.headers())
        return self.http.post(self.base_url + path, json=body, timeout=TIMEOUT, **kw)

    def track(self, body: Any, **kw: Any) -> requests.Response:
        kw.setdefault("headers", self.headers())
        return self.http.post(self.events_url + "/api/v1/events", json=body, timeout=TIMEOUT, **kw)

    # Short forms of the requests most tests make.
    def broadcast(self, **fields: Any) -> requests.Response:
        body = {
            "notification_title": "Sale",
            "notification_message": "Everything half price",
            "notification_url": "https://shop.example/sale",
        }
        body.update(fields)
        return self.post_form("/apiv1/notifications", body)

    def create_drip(self, name: str = "Welcome", **overrides: Any) -> requests.Response:
        body = {"campaign_name": name, "notifications": [drip_notification()]}
        body.update(overrides)
        return self.post_json("/apiv1/drips", body)


def seed_trigger(emu: Emulator, name: str = "Abandoned cart", **overrides: Any) -> int:
    """A triggered campaign with two notifications, created through the emulator."""
    fields: dict[str, Any] = {
        "campaign_name": name,
        "campaign_type": "trigger",
        "rules": {"start_event_name": "cart_add", "stop_event_name": "purchase"},
        "notifications": [
            {
                "title": "Hi {{name}}, you left something",
                "message": "Your cart is waiting",
                "url": "https://shop.example/cart",
                "image_url": "https://shop.example/icon.png",
                "big_image_url": "https://shop.example/cart.png",
                "expiry": 3600,
                "require_interaction": 1,
                "actions": [{"label": "Open cart", "url": "https://shop.example/cart"}],
                "schedule_options": {"type": "rightaway"},
            },
            {
                "title": "Still thinking?",
                "message": "10% off if you order today",
                "url": "https://shop.example/cart?coupon=10",
                "schedule_options": {"type": "after", "value": 1, "unit": "days", "at": "10:00:00"},
            },
        ],
        "options": {"result_name": "purchase"},
        "utm_params": {"utm_source": "push", "utm_medium": "web", "utm_campaign": "cart"},
    }
    fields.update(overrides)
    return emu.create_trigger(**fields)


# The fields of one row of the summary analytics (spec 2.12), beside its `date`.
SUMMARY_FIELDS = {
    "subscriber_count",
    "desktop_subscriber_count",
    "mobile_subscriber_count",
    "unsubscribed_count",
    "desktop_unsubscribed_count",
    "mobile_unsubscribed_count",
    "notification_sent",
    "net_subscriber_sent",
    "view_count",
    "click_count",
    "ctr",
}


def run_pytest(where: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """pytest on the tests written in `where`, in a process of its own; it must pass."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(where)],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def serve_in_threads(sock: socket.socket, handle: Callable[[socket.socket], None]) -> None:
    """Accepts connections on the listening `sock` until it is closed, each one handled by
    `handle` on a thread of its own; returns at once (the accepting runs on a thread too)."""

    def accept() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


class QuietHandler(BaseHTTPRequestHandler):
    """The request handler of a loopback server a test runs: it logs nothing, and `reply`
    sends a whole answer."""

    def reply(self, status: int, body: bytes = b"", content_type: Optional[str] = None) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A loopback HTTP server answering with `handler` on a thread of its own, for the
    block: its root URL. It is shut down and its socket closed after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_utc(s: str) -> dt.datetime:
    """A UTC ISO 8601 timestamp of the service; fails unless it is one."""
    assert isinstance(s, str)
    t = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    assert t.utcoffset() == dt.timedelta(0), s
    return t


def aware_utc(t: Any) -> dt.datetime:
    """An instant of the emulator's records: an aware datetime in UTC; fails unless it is one."""
    assert isinstance(t, dt.datetime), t
    assert t.utcoffset() == dt.timedelta(0), t
    return t


def assert_main_error(r: requests.Response, status: int, message: Optional[str] = None) -> dict:
    """The `{success: false, message}` body of the main interface."""
    assert r.status_code == status, r.text
    body = r.json()
    assert body["success"] is False
    assert isinstance(body["message"], str) and body["message"]
    if message is not None:
        assert body["message"] == message
    return body


def assert_campaign_error(r: requests.Response, status: int = 400) -> str:
    """The `{success: false, error: {name: InvalidRequestException, message}}` body."""
    assert r.status_code == status, r.text
    body = r.json()
    assert body["success"] is False
    assert body["error"]["name"] == "InvalidRequestException"
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]["message"]


def assert_event_error(r: requests.Response, status: int, code: int) -> dict:
    """The `{error: {message, code, details?}}` body of the event-tracking interface."""
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}
    err = body["error"]
    assert err["code"] == code
    assert isinstance(err["message"], str) and err["message"]
    return err


def detail_paths(err: dict) -> list[list[str]]:
    """The `path` of every `details` entry (each also carries a message)."""
    for d in err["details"]:
        assert isinstance(d["message"], str) and d["message"]
        assert all(isinstance(p, str) for p in d["path"])
    return [d["path"] for d in err["details"]]


# `PUSHWIRE_TEST_LOOP=no-add-reader`: every asyncio loop of the run refuses `add_reader`, as
# Windows' default loop does, so the async tests run over the bridge's portable path
# (`make test` runs the async tests a second time so).
LOOP = os.environ.get("PUSHWIRE_TEST_LOOP", "default")
if LOOP == "no-add-reader":
    asyncio.set_event_loop_policy(NoReaderPolicy())
elif LOOP != "default":
    raise pytest.UsageError(f"PUSHWIRE_TEST_LOOP={LOOP!r}: 'default' or 'no-add-reader'")


# `make test-midnight` runs the emulator's and the engine's tests with the clock of every
# process moved by libfaketime to a few minutes before midnight (tests/faked_clock/), and
# with PUSHWIRE_TEST_TIMEZONE the default site of every emulator fixture in that zone.
FAKED_CLOCK = "faketime" in os.environ.get("LD_PRELOAD", "")
SITE_TIMEZONE = os.environ.get("PUSHWIRE_TEST_TIMEZONE")


def pytest_report_header() -> list[str]:
    lines = [f"asyncio loops: {LOOP} (PUSHWIRE_TEST_LOOP)"]
    if FAKED_CLOCK:
        lines.append(f"clock moved by libfaketime: {dt.datetime.now(dt.timezone.utc)} at start")
    if SITE_TIMEZONE:
        lines.append(f"site time zone of the fixtures: {SITE_TIMEZONE} (PUSHWIRE_TEST_TIMEZONE)")
    return lines


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On loops without `add_reader`, the tests of the blocking client are left out: they
    would run exactly as in the default run."""
    if LOOP == "default":
        return

    def params(item: pytest.Item) -> dict[str, object]:
        callspec = getattr(item, "callspec", None)
        return callspec.params if callspec is not None else {}

    keep: list[pytest.Item] = []
    sync: list[pytest.Item] = []
    for item in items:
        (sync if params(item).get("kind") == "sync" else keep).append(item)
    if sync:
        config.hook.pytest_deselected(items=sync)
        items[:] = keep


@pytest.fixture
def pushwire_emulator(pushwire_emulator: Emulator) -> Emulator:
    """The package's fixture, its default site in PUSHWIRE_TEST_TIMEZONE's zone if set."""
    if SITE_TIMEZONE:
        pushwire_emulator.set_timezone(SITE_TIMEZONE)
    return pushwire_emulator


def clock_start(wall: dt.datetime) -> dt.datetime:
    """The first Wednesday after `wall`'s day, at noon UTC."""
    day = wall.astimezone(dt.timezone.utc).date() + dt.timedelta(days=1)
    day += dt.timedelta(days=(2 - day.weekday()) % 7)
    return dt.datetime.combine(day, dt.time(12), dt.timezone.utc)


# Where the clock of the `emu` fixture starts (and of each `Emulator(start=CLOCK_START)`), so
# that what a test reads of the calendar (a daily cap, the day rows of the analytics, a time of
# day in the site's zone) never hangs on the hour the suite runs at (issue 57): noon UTC, away
# from midnight in every zone from -11:00 to +11:00, on a Wednesday, away from a week's edge.
# Its day is the wall clock's next Wednesday, not a date written here: the client checks a
# broadcast's time against the wall clock and refuses one that passed there hours ago, so
# the emulator's clock is kept a little ahead of it, as a test travels it.
# A test that reads the wall clock on purpose takes `pushwire_emulator` (at wall time) and must
# pass at any hour: `make test-midnight` runs it a few minutes before midnight.
CLOCK_START = clock_start(dt.datetime.now(dt.timezone.utc))


@pytest.fixture(autouse=True)
def _gil_stays_off() -> Iterator[None]:
    """Under `make test-ft` (a free-threaded CPython, PYTHON_GIL=0): the GIL still off after
    each test, whatever it imported or ran."""
    yield
    if os.environ.get("PUSHWIRE_EXPECT_NO_GIL") == "1":
        assert not getattr(sys, "_is_gil_enabled", lambda: True)(), "the GIL came back on"


@pytest.fixture
def emu(pushwire_emulator: Emulator) -> Emulator:
    """The emulator of the package's pytest fixture, fresh for each test, its clock running
    from CLOCK_START."""
    pushwire_emulator.travel_to(CLOCK_START)
    return pushwire_emulator


@pytest.fixture
def api(emu: Emulator) -> Api:
    """HTTP as the emulator's default site."""
    a = Api(emu)
    yield a
    a.http.close()


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    """Which client a test drives: each client test runs once with each."""
    return str(request.param)


@pytest.fixture
def drv(kind: str, emu: Emulator) -> Iterator[Driver]:
    """The client of `kind` on the emulator, closed after the test."""
    d = make_driver(kind, emu)
    yield d
    d.close()
