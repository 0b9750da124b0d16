"""A redirect is never followed: the key and the body stay with the configured host.

A server at ``base_url`` answers every request with a redirect to a second loopback address
(127.0.0.2), where a recording server listens. Whatever the status, the call, the client or
the form (single, batch, bulk), the call fails with an ``APIError`` naming the redirect's
target, the first server saw the request once, and the second saw nothing at all."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, Callable

import pytest

import pushwire
from pushwire.testing import EmulatorProcess

SECRET = "pw-live-redirect-KEY-4242"
REDIRECTS = [301, 302, 303, 307, 308]


class Recorder(http.server.ThreadingHTTPServer):
    """Records every request (method, path, headers, body) and answers as given."""

    daemon_threads = True

    def __init__(self, host: str, answer: Callable[[Recorder, str], tuple[int, dict[str, str]]]):
        self.seen: list[dict[str, Any]] = []
        self.answer = answer
        self.lock = threading.Lock()
        super().__init__((host, 0), _Handler)
        threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True).start()

    @property
    def root(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Recorder
    protocol_version = "HTTP/1.1"

    def _any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with self.server.lock:
            self.server.seen.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body,
                }
            )
        status, headers = self.server.answer(self.server, self.path)
        # An answer a careless client would read as a success: the recorder's own.
        payload = json.dumps({"success": True, "notification_id": 77, "data": []}).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _any

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def elsewhere() -> Iterator[Recorder]:
    """Another host: a second loopback address."""
    try:
        server = Recorder("127.0.0.2", lambda s, path: (200, {}))
    except OSError as e:  # pragma: no cover - every Linux routes 127/8 to lo
        pytest.skip(f"127.0.0.2 cannot be bound here: {e}")
    yield server
    server.shutdown()
    server.server_close()


def redirector(status: int, target: Recorder) -> Recorder:
    return Recorder("127.0.0.1", lambda s, path: (status, {"Location": f"{target.root}{path}"}))


def seg_ids(n: int) -> list[str]:
    return [f"{i:032x}" for i in range(n)]


# Each call as the sync and the async client make it: (name, sync call, async call).
CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("read", lambda c: c.segments.list()),
    (
        "broadcast",
        lambda c: c.notifications.create(
            title="Sale", message="Half price", url="https://shop.example/sale"
        ),
    ),
    ("event", lambda c: c.events.track("purchase", profile_id="u1")),
]


def sync_and_async(call: Callable[[Any], Any], root: str, kind: str) -> BaseException:
    opts: dict[str, Any] = {
        "api_key": SECRET,
        "base_url": root,
        "events_url": root,
        "backoff_base": 0,
        "max_retries": 3,
        "timeout": 10.0,
    }
    if kind == "sync":
        with pushwire.Client(**opts) as c, pytest.raises(pushwire.APIError) as info:
            call(c)
        return info.value

    async def run() -> BaseException:
        async with pushwire.AsyncClient(**opts) as c:
            with pytest.raises(pushwire.APIError) as info:
                await call(c)
            return info.value

    return asyncio.run(run())


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("status", REDIRECTS)
def test_a_redirect_is_an_error_and_nothing_reaches_the_other_host(
    elsewhere: Recorder, status: int, name: str, call: Callable[[Any], Any], kind: str
) -> None:
    origin = redirector(status, elsewhere)
    try:
        err = sync_and_async(call, origin.root, kind)
    finally:
        origin.shutdown()
        origin.server_close()
    assert isinstance(err, pushwire.APIError)
    assert err.status_code == status
    assert f"{elsewhere.root}/" in str(err), str(err)
    assert "not follow" in str(err)
    assert not err.outcome_unknown
    assert elsewhere.seen == []
    # Sent once to the configured host, never resent (a 3xx is not retried).
    assert len(origin.seen) == 1
    assert origin.seen[0]["headers"].get("api-key") == SECRET
    assert SECRET not in str(err) and SECRET not in repr(err)


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("status", [302, 307])
def test_batch_and_bulk_forms_follow_no_redirect(elsewhere: Recorder, status: int, kind: str):
    origin = redirector(status, elsewhere)
    opts: dict[str, Any] = {
        "api_key": SECRET,
        "base_url": origin.root,
        "events_url": origin.root,
        "backoff_base": 0,
        "timeout": 10.0,
    }
    events = [{"event_name": "view", "profile_id": f"u{i}"} for i in range(40)]

    async def run_async() -> tuple[list[Any], Any]:
        async with pushwire.AsyncClient(**opts) as c:
            tracked = await c.events.track_many(events)
            added = await c.segments.add_subscribers_bulk(3, seg_ids(2500))
            return tracked, added

    try:
        if kind == "sync":
            with pushwire.Client(**opts) as c:
                tracked = c.events.track_many(events)
                added = c.segments.add_subscribers_bulk(3, seg_ids(2500))
        else:
            tracked, added = asyncio.run(run_async())
    finally:
        origin.shutdown()
        origin.server_close()
    assert len(tracked) == 40
    for outcome in tracked:
        assert isinstance(outcome, pushwire.APIError) and outcome.status_code == status
        assert elsewhere.root in str(outcome)
    assert added.failed and added.succeeded == 0
    for chunk in added.failed:
        assert isinstance(chunk.error, pushwire.APIError) and chunk.error.status_code == status
    assert elsewhere.seen == []
    # Each event and each chunk sent once.
    assert len(origin.seen) == 40 + len(added.chunks)


def test_the_emulator_process_admin_client_follows_no_redirect_and_no_proxy(
    elsewhere: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An HTTP_PROXY of the environment is not where the emulator is.
    monkeypatch.setenv("HTTP_PROXY", elsewhere.root)
    monkeypatch.setenv("http_proxy", elsewhere.root)
    with EmulatorProcess(api_key=SECRET) as emu:
        assert emu.admin("create_segment", name="vip")["segment_id"]
        assert elsewhere.seen == []
        origin = redirector(307, elsewhere)
        real = emu.base_url
        try:
            emu.base_url = origin.root
            with pytest.raises(RuntimeError, match="redirect") as info:
                emu.admin("create_segment", name="copy")
        finally:
            emu.base_url = real
            origin.shutdown()
            origin.server_close()
        assert elsewhere.root in str(info.value)
        assert elsewhere.seen == []
        assert len(origin.seen) == 1


@pytest.mark.parametrize(
    "spelling",
    [
        SECRET,
        SECRET.replace("-", "%2D"),
        "".join(f"%{b:02X}" for b in SECRET.encode()),
        "".join(f"%25{b:02X}" for b in SECRET.encode()),
    ],
    ids=["raw", "partly_encoded", "encoded", "encoded_twice"],
)
def test_a_location_carrying_the_key_is_shown_without_it(elsewhere: Recorder, spelling: str):
    origin = Recorder(
        "127.0.0.1",
        lambda s, path: (
            302,
            {"Location": f"{elsewhere.root}/collect?k={spelling}&x=" + "y" * 5000},
        ),
    )
    try:
        err = sync_and_async(CALLS[0][1], origin.root, "sync")
    finally:
        origin.shutdown()
        origin.server_close()
    shown = str(err)
    assert f"{elsewhere.root}/collect?k=[redacted]" in shown
    for text in (shown, repr(err), str(err.args), repr(err.headers)):
        assert SECRET not in text and spelling not in text
    # The answer's own Location, as the error carries it: decoded, the key blanked.
    assert err.headers["location"].startswith(f"{elsewhere.root}/collect?k=[redacted]&x=y")
    assert len(shown) < 700  # a long Location is cut
    assert elsewhere.seen == []
