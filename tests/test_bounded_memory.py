"""An answer larger than `max_response_size` fails the call promptly, and the process holds no
more than the bound: a server streaming an endless body, or announcing 2 GB, cannot make a
worker grow until the OOM killer takes it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator

import pytest
from conftest import serve_in_threads

import pushwire
from pushwire.testing import Emulator

MiB = 1 << 20


class Flood:
    """A loopback server whose answer never ends: in mode `chunked` it streams chunks without
    end, in mode `announced` it declares a 2 GB Content-Length and streams toward it.
    `/apiv1/segments` gets a small JSON answer (a client's warm-up call). Each connection is
    served until the client goes (or 60 s pass)."""

    def __init__(self) -> None:
        self.mode = "chunked"
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.requests: list[str] = []
        self.sent_bytes = 0
        serve_in_threads(self.sock, self._serve)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(65536)
                if not data:
                    return
                head += data
            line = head.split(b"\r\n", 1)[0].decode()
            self.requests.append(line)
            if "/segments" in line:
                body = b'{"success": true, "segments": [], "count": 0}'
                # Closed after it: the client must not keep the connection.
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Connection: close\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                return
            chunked = self.mode == "chunked"
            if chunked:
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n"
                )
            else:
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 2147483648\r\n\r\n"
                )
            piece = b'{"pad": "' + b"x" * (256 * 1024) + b'"}'
            frame = f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece
            deadline = time.monotonic() + 60
            try:
                while time.monotonic() < deadline:
                    conn.sendall(frame)
                    self.sent_bytes += len(frame)
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def flood() -> Iterator[Flood]:
    server = Flood()
    yield server
    server.close()


# Run in a fresh interpreter: its peak RSS (ru_maxrss) is this call's alone.
PROBE = textwrap.dedent(
    """
    import asyncio, json, resource, sys, time
    import pushwire

    url, kind, method, cap = sys.argv[1:5]
    opts = {"api_key": "k-flood-probe", "base_url": url, "events_url": url, "timeout": 60,
            "backoff_base": 0}
    if cap != "default":
        opts["max_response_size"] = int(cap)

    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def call(c):
        if method == "read":
            return c.drips.get(1)
        return c.notifications.create(title="t", message="m", url="https://x.example/")

    out = {}
    if kind == "sync":
        c = pushwire.Client(**opts)
        c.segments.list()                       # warm: runtime, pool, first connection
        before, t0 = peak(), time.monotonic()
        try:
            call(c)
        except pushwire.PushwireError as e:
            out["error"] = [type(e).__name__, str(e), e.outcome_unknown,
                            getattr(e, "max_response_size", None)]
    else:
        async def main():
            async with pushwire.AsyncClient(**opts) as c:
                await c.segments.list()
                before, t0 = peak(), time.monotonic()
                try:
                    await call(c)
                except pushwire.PushwireError as e:
                    out["error"] = [type(e).__name__, str(e), e.outcome_unknown,
                                    getattr(e, "max_response_size", None)]
                return before, t0
        before, t0 = asyncio.run(main())
    out["seconds"] = time.monotonic() - t0
    out["growth"] = peak() - before
    print(json.dumps(out))
    """
)


def probe(flood: Flood, mode: str, kind: str, method: str, cap: str) -> dict:
    flood.mode = mode
    out = subprocess.run(
        [sys.executable, "-c", PROBE, flood.url, kind, method, cap],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    result: dict = json.loads(out.stdout)
    return result


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize(
    "method,cap", [("read", "default"), ("read", str(8 * MiB)), ("write", str(8 * MiB))]
)
def test_an_endless_answer_fails_promptly_within_the_bound(
    flood: Flood, kind: str, method: str, cap: str
):
    bound = 64 * MiB if cap == "default" else int(cap)
    r = probe(flood, "chunked", kind, method, cap)
    name, message, outcome_unknown, size = r["error"]
    assert name == "ResponseTooLargeError"
    assert size == bound and f"max_response_size={bound}" in message
    assert outcome_unknown is (method == "write")
    assert r["seconds"] < 10
    # The process held the bound at most, plus a small margin (the runtime's own buffers).
    assert r["growth"] < bound + 16 * MiB, r
    # Sent once, never retried: the same request would get the same answer.
    assert sum("/segments" not in line for line in flood.requests) == 1


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_an_announced_2_gb_answer_is_refused_before_reading(flood: Flood, kind: str):
    r = probe(flood, "announced", kind, "read", "default")
    name, message, _, size = r["error"]
    assert name == "ResponseTooLargeError"
    assert "2147483648 bytes (Content-Length)" in message and size == 64 * MiB
    assert r["seconds"] < 5
    assert r["growth"] < 16 * MiB, r


def test_the_bound_is_a_setting_of_the_client_and_of_with_options(emu: Emulator):
    for i in range(60):
        emu.create_segment(f"segment number {i} with a long enough name")
    with emu.client() as client:
        assert client.max_response_size == 64 * MiB
        assert len(client.segments.list()) == 60
        small = client.with_options(max_response_size=1024)
        assert small.max_response_size == 1024 and client.max_response_size == 64 * MiB
        with pytest.raises(pushwire.ResponseTooLargeError) as info:
            small.segments.list()
        assert isinstance(info.value, pushwire.APIConnectionError)
        assert info.value.max_response_size == 1024 and not info.value.outcome_unknown
        # The view keeps the other settings; the client itself is unchanged.
        assert small.timeout == client.timeout
        assert len(client.segments.list()) == 60
    with emu.client(max_response_size=2048) as tight:
        with pytest.raises(pushwire.ResponseTooLargeError):
            tight.segments.list()
    # A pickled error keeps its attributes (a Celery task's failure).
    import pickle

    again = pickle.loads(pickle.dumps(info.value))
    assert again.max_response_size == 1024 and str(again) == str(info.value)
    assert type(again)(*again.args).max_response_size == 1024


@pytest.mark.parametrize("bad", [0, 1023, 2**41, -5, 1.5, True])
def test_a_bad_bound_is_refused_naming_it(emu: Emulator, bad):
    with pytest.raises(pushwire.ValidationError) as info:
        emu.client(max_response_size=bad)
    assert info.value.field == "max_response_size"
    with emu.client() as client, pytest.raises(pushwire.ValidationError) as info:
        client.with_options(max_response_size=bad)
    assert info.value.field == "max_response_size"
