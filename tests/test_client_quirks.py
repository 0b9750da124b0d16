"""Answers a real service (or a gateway before it) may give, and inputs the client must send
as written or refuse: never a changed value, a wrong id, or a write reported as refused that
the service took."""

from __future__ import annotations

import gzip
import http.server
import json
import threading
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests

import pushwire
from pushwire.testing import Emulator


class Canned(http.server.ThreadingHTTPServer):
    """Answers every request with `self.answer` (status, headers, body); keeps the bodies."""

    daemon_threads = True

    def __init__(self) -> None:
        self.answer: tuple[int, dict[str, str], bytes] = (200, {}, b"{}")
        self.bodies: list[bytes] = []
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def set(self, body: Any, status: int = 200, **headers: str) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {k.replace("_", "-"): v for k, v in headers.items()}
        headers.setdefault("Content-Type", "application/json")
        self.answer = (status, headers, raw)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Canned
    protocol_version = "HTTP/1.1"

    def _any(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        self.server.bodies.append(self.rfile.read(n) if n else b"")
        status, headers, body = self.server.answer
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if status != 204:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 204:
            self.wfile.write(body)

    do_GET = do_POST = _any

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def canned() -> Iterator[Canned]:
    server = Canned()
    yield server
    server.shutdown()
    server.server_close()


def client_of(server: Canned) -> pushwire.Client:
    return pushwire.Client(
        api_key="quirk-key-123", base_url=server.url, events_url=server.url, backoff_base=0
    )


BROADCAST = {"title": "Sale", "message": "Half price", "url": "https://shop.example/"}


@pytest.mark.parametrize(
    "status,body",
    [(200, b"<html>gateway</html>"), (204, b""), (200, b'{"success": "yes"}')],
    ids=["html", "no_content", "odd_success"],
)
def test_a_write_answered_2xx_that_cannot_be_read_has_an_unknown_outcome(
    canned: Canned, status: int, body: bytes
):
    canned.set(body, status=status)
    with client_of(canned) as c:
        with pytest.raises(pushwire.APIError) as info:
            c.notifications.create(**BROADCAST)
        assert info.value.status_code == status
        assert info.value.outcome_unknown, "the service took it: resending may send it twice"
        assert len(canned.bodies) == 1  # not retried
        # A read answered so is an error, and nothing is unknown about it.
        with pytest.raises(pushwire.APIError) as info:
            c.segments.list()
        assert not info.value.outcome_unknown


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "bom"])
def test_a_compressed_answer_or_one_with_a_byte_order_mark_is_read(canned: Canned, encoding):
    body = json.dumps(
        {"success": True, "segments": [{"segment_id": "7", "segment_name": "café"}], "count": 1}
    ).encode()
    if encoding == "gzip":
        canned.set(gzip.compress(body), Content_Encoding="gzip")
    elif encoding == "deflate":
        canned.set(zlib.compress(body), Content_Encoding="deflate")
    else:
        canned.set(b"\xef\xbb\xbf" + body)
    with client_of(canned) as c:
        (seg,) = c.segments.list()
    assert (seg.segment_id, seg.segment_name) == ("7", "café")


def test_a_decompressed_answer_is_bounded_by_max_response_size(canned: Canned):
    bomb = gzip.compress(b'{"success": true, "pad": "' + b"0" * (64 << 20) + b'"}')
    assert len(bomb) < 1 << 20
    canned.set(bomb, Content_Encoding="gzip")
    with client_of(canned) as c, pytest.raises(pushwire.ResponseTooLargeError):
        c.with_options(max_response_size=8 << 20).segments.list()


LONE = b"caf\xe9".decode("utf-8", "surrogateescape")


def test_a_lone_surrogate_is_refused_before_sending_not_replaced(emu: Emulator):
    with emu.client() as c:
        calls = [
            ("profile_id", lambda: c.events.track("signup", profile_id=LONE)),
            ("profile_ids[0]", lambda: c.segments.add_profiles("vip", [LONE])),
            ("title", lambda: c.notifications.create(**{**BROADCAST, "title": LONE})),
            ("data.name", lambda: c.events.track("signup", profile_id="p", data={"name": LONE})),
        ]
        for field, call in calls:
            with pytest.raises(pushwire.ValidationError) as info:
                call()
            assert info.value.field == field
            assert "surrogate" in str(info.value)
    assert emu.requests() == []


@pytest.mark.parametrize("sent", [18446744073709551615, 9223372036854775808, 5.5])
def test_a_created_id_the_client_cannot_hold_exactly_is_not_replaced_by_another(
    canned: Canned, sent: Any, caplog: pytest.LogCaptureFixture
):
    canned.set(b'{"success": true, "notification_id": ' + str(sent).encode() + b"}")
    with client_of(canned) as c:
        assert c.notifications.create(**BROADCAST) == 0
    assert "no usable notification_id" in caplog.text


def test_an_id_past_64_bits_fails_the_read_naming_it_rather_than_clamping(canned: Canned):
    canned.set(b'{"success": true, "data": {"trigger_id": 18446744073709551615}}')
    with client_of(canned) as c, pytest.raises(pushwire.APIError) as info:
        c.triggers.get(1)
    assert "trigger_id" in str(info.value)


def test_segment_ids_sent_as_numbers_read_as_their_digits(canned: Canned):
    canned.set(
        b'{"success": true, "count": 2, "segments": ['
        b'{"segment_id": 12.0, "segment_name": "a"},'
        b'{"segment_id": 18446744073709551615, "segment_name": "b"}]}'
    )
    with client_of(canned) as c:
        assert [s.segment_id for s in c.segments.list()] == ["12", "18446744073709551615"]


@pytest.mark.parametrize("name", ["Content-Length", "transfer-encoding", "Host", "Connection"])
def test_default_headers_cannot_set_the_messages_framing(emu: Emulator, name: str):
    with pytest.raises(pushwire.ValidationError) as info:
        emu.client(default_headers={name: "3"})
    assert info.value.field == "default_headers" and name in str(info.value)


def test_numpy_float32_values_are_sent_as_written(emu: Emulator):
    np = pytest.importorskip("numpy")
    with emu.client() as c:
        c.products.update([{"product_id": "p1", "price": np.float32(19.99)}])
        c.events.track("view", profile_id="p", data={"score": np.float32(0.1)})
    bodies = [r["body"] for r in emu.requests()]
    assert '"price":19.99' in bodies[0]
    assert '"score":0.1' in bodies[1]
    assert emu.products()[0]["product"]["price"] == 19.99


def test_an_empty_distribution_sent_as_a_list_reads_as_empty(canned: Canned):
    canned.set({"success": True, "data": []})
    with client_of(canned) as c:
        assert c.analytics.subscribers() == {}
    canned.set({"success": True, "data": {"country": {"US": 3}, "city": []}})
    with client_of(canned) as c:
        assert c.analytics.subscribers() == {"country": {"US": 3}, "city": {}}


def test_an_empty_types_list_is_refused_not_sent_as_every_dimension(emu: Emulator):
    with emu.client() as c, pytest.raises(pushwire.ValidationError) as info:
        c.analytics.subscribers(types=[])
    assert info.value.field == "types"
    assert emu.requests() == []


@pytest.mark.parametrize(
    "content_type,body",
    [
        (
            "application/x-www-form-urlencoded; charset=ISO-8859-1",
            b"notification_title=caf%E9&notification_message=m&notification_url=https%3A%2F%2Fx.example%2F",
        ),
        ("application/json; charset=latin1", b'{"products": []}'),
    ],
)
def test_the_emulator_refuses_a_body_in_a_charset_other_than_utf8(emu, content_type, body):
    path = "/apiv1/notifications" if "form" in content_type else "/apiv1/products"
    r = requests.post(
        emu.base_url + path,
        headers={"Api-Key": emu.api_key, "Content-Type": content_type},
        data=body,
        timeout=10,
    )
    assert r.status_code == 400 and "charset" in r.json()["message"]
    assert emu.notifications() == []
    ok = requests.post(
        emu.base_url + "/apiv1/notifications",
        headers={"Api-Key": emu.api_key},
        data={
            **{f"notification_{k}": v for k, v in BROADCAST.items()},
            "notification_title": "café",
        },
        timeout=10,
    )
    assert ok.status_code == 200
    assert emu.notifications()[0]["request"]["notification_title"] == "café"
