"""A broadcast or a drip naming a segment the site does not have is refused before it is sent
(issue 58, item 2): the service would accept it and send to nobody (or exclude nobody). The
client reads the site's segments once, then again for an id it has not seen, so a segment
made a second ago is found; ``check_segments=False`` sends unchecked. Both clients, over HTTP
against the emulator."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse

import pytest
from client_support import api_requests, drip_notification
from conftest import serving

import pushwire
from pushwire.errors import ValidationError

BROADCAST = {"title": "Sale", "message": "Half price today", "url": "https://shop.example/sale"}
DRIP_STEP = drip_notification()


def lists_sent(emu) -> int:
    """How many times the client read the site's segments (each read is a page from offset
    0, then the pages after it)."""
    return sum("offset=0&" in r["query"] for r in api_requests(emu, "/apiv1/segments"))


def test_an_unknown_segment_id_is_refused_by_name_and_nothing_is_sent(drv, emu):
    vip = emu.create_segment("vip")
    for field in ("include_segments", "exclude_segments"):
        with pytest.raises(ValidationError) as info:
            drv(drv.client.notifications.create, **BROADCAST, **{field: [vip, 424242]})
        assert info.value.field == f"{field}[1]"
        assert "segment 424242" in info.value.message
        assert "check_segments=False" in info.value.message
    assert emu.notifications() == []
    assert api_requests(emu, "/apiv1/notifications") == []


def test_known_ids_are_read_once_and_a_segment_made_since_is_found(drv, emu):
    vip = emu.create_segment("vip")
    drv(drv.client.notifications.create, **BROADCAST, include_segments=[vip])
    drv(drv.client.notifications.create, **BROADCAST, exclude_segments=[str(vip)])
    assert lists_sent(emu) == 1  # the second broadcast used the first one's read
    # Made (in the dashboard, by another worker) after the client read the site's segments.
    new = emu.create_segment("new")
    drv(drv.client.notifications.create, **BROADCAST, include_segments=[new])
    assert lists_sent(emu) == 2  # an id not seen reads them again, once
    sent = [n["request"]["include_segments"] for n in emu.notifications()]
    assert sorted(sent, key=str) == sorted([[str(vip)], None, [str(new)]], key=str)


def test_the_sites_own_segments_count_as_known(drv, emu):
    geo = emu.create_segment("United States", segment_type="geo")
    drv(drv.client.notifications.create, **BROADCAST, include_segments=[geo])
    assert len(emu.notifications()) == 1


def test_check_segments_false_sends_unchecked(drv, emu):
    drv(drv.client.notifications.create, **BROADCAST, include_segments=[424242],
        check_segments=False)  # fmt: skip
    assert lists_sent(emu) == 0
    (n,) = emu.notifications()
    assert n["request"]["include_segments"] == ["424242"]


def test_a_segment_this_client_deleted_is_refused_at_once(drv, emu):
    old = emu.create_segment("old")
    drv(drv.client.notifications.create, **BROADCAST, include_segments=[old])
    drv(drv.client.segments.delete, old)
    with pytest.raises(ValidationError) as info:
        drv(drv.client.notifications.create, **BROADCAST, include_segments=[old])
    assert info.value.field == "include_segments[0]"
    assert len(emu.notifications()) == 1


def test_a_drips_send_to_is_checked_too(drv, emu):
    vip = emu.create_segment("vip")
    with pytest.raises(ValidationError) as info:
        drv(drv.client.drips.create, "Welcome", [DRIP_STEP],
            send_to={"include_segments": [vip], "exclude_segments": [777]})  # fmt: skip
    assert info.value.field == "send_to.exclude_segments[0]"
    assert api_requests(emu, "/apiv1/drips") == []
    drip = drv(drv.client.drips.create, "Welcome", [DRIP_STEP],
               send_to={"include_segments": [vip]})  # fmt: skip
    assert drip > 0
    drv(drv.client.drips.create, "Welcome", [DRIP_STEP],
        send_to={"include_segments": [777]}, check_segments=False)  # fmt: skip
    assert len(api_requests(emu, "/apiv1/drips")) == 2


def test_a_keyed_broadcast_refused_for_its_segment_leaves_its_key_free(emu, tmp_path):
    client = emu.client(idempotency_store=f"sqlite:///{tmp_path}/keys.db")
    with pytest.raises(ValidationError):
        client.notifications.create(**BROADCAST, include_segments=[5], idempotency_key="k")
    assert client.idempotency.status("k") is None  # released: nothing was sent
    assert emu.notifications() == []
    seg = emu.create_segment("vip")
    nid = client.notifications.create(**BROADCAST, include_segments=[seg], idempotency_key="k")
    assert client.idempotency.status("k") == "done"
    # Checked or not, it is the same broadcast: a re-run without the check replays it.
    again = client.notifications.create(
        **BROADCAST, include_segments=[seg], idempotency_key="k", check_segments=False
    )
    assert again == nid and len(emu.notifications()) == 1


def test_the_calls_extras_and_raw_answer_are_its_own_request_not_the_segment_read(drv, emu):
    vip = emu.create_segment("vip")
    raw = drv(drv.client.with_raw_response.notifications.create, **BROADCAST,
              include_segments=[vip], extra_headers={"x-campaign": "c1"})  # fmt: skip
    *listed, created = api_requests(emu)
    assert {r["path"] for r in listed} == {"/apiv1/segments"}
    assert all("x-campaign" not in r["headers"] for r in listed)
    assert created["path"] == "/apiv1/notifications"
    assert created["headers"]["x-campaign"] == "c1"
    assert raw.method == "POST" and raw.url.endswith("/apiv1/notifications")
    assert raw.parse() == emu.notifications()[0]["notification_id"]


def test_an_id_is_sent_in_the_plain_digits_it_was_checked_as(drv, emu):
    # " 1" passes as segment 1; sent as typed, a drip's audience (compared as text) would
    # not exclude the members of segment 1.
    vip = emu.create_segment("vip")
    drv(drv.client.notifications.create, **BROADCAST, include_segments=[f" {vip}", f"00{vip}"])
    assert emu.notifications()[0]["request"]["include_segments"] == [vip, vip]
    drip = drv(drv.client.drips.create, "Welcome", [DRIP_STEP],
               send_to={"exclude_segments": [f"+{vip}", f"{vip}\n"]})  # fmt: skip
    assert drip > 0
    sent = json.loads(api_requests(emu, "/apiv1/drips")[-1]["body"])
    assert sent["send_to"]["exclude_segments"] == [vip, vip]


def test_the_segment_read_and_the_send_share_the_calls_timeout(emu):
    vip = emu.create_segment("vip")
    emu.inject_fault("/apiv1/segments", delay=2.0)
    client = emu.client(timeout=0.5, max_retries=0)
    with pytest.raises(pushwire.APITimeoutError) as info:
        client.notifications.create(**BROADCAST, include_segments=[vip])
    assert info.value.outcome_unknown is False
    assert emu.notifications() == []


class _CappedSegments(BaseHTTPRequestHandler):
    """A service that answers at most two segments a page, whatever the limit asked."""

    def do_GET(self) -> None:  # noqa: N802
        query = parse_qs(urlparse(self.path).query)
        offset = int(query.get("offset", ["0"])[0])
        page = [{"segment_id": str(i), "segment_name": f"s{i}"} for i in range(1, 8)][
            offset : offset + 2
        ]
        self._answer({"success": True, "segments": page, "count": len(page)})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer({"success": True, "notification_id": 9})

    def _answer(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_a_service_that_pages_fewer_than_asked_is_read_to_its_end():
    with serving(_CappedSegments) as url:
        client = pushwire.Client(api_key="k" * 16, base_url=url, max_retries=0)
        assert client.notifications.create(**BROADCAST, include_segments=[7]) == 9
        with pytest.raises(ValidationError):
            client.notifications.create(**BROADCAST, include_segments=[8])
        client.close()


def test_a_bad_shape_is_named_as_that_before_any_segment_is_read(drv, emu):
    with pytest.raises(ValidationError) as info:
        drv(drv.client.notifications.create, **BROADCAST, include_segments=[424242, "vip"])
    assert info.value.field == "include_segments[1]" and "name" in info.value.message
    assert api_requests(emu) == []  # neither the read nor the broadcast
