"""A broadcast or a drip naming a segment the site does not have is refused before it is sent
(issue 58, item 2): the service would accept it and send to nobody (or exclude nobody). The
client reads the site's segments once, then again for an id it has not seen, so a segment
made a second ago is found; ``check_segments=False`` sends unchecked. Both clients, over HTTP
against the emulator."""

from __future__ import annotations

import pytest
from client_support import api_requests, drip_notification

from pushwire.errors import ValidationError

BROADCAST = {"title": "Sale", "message": "Half price today", "url": "https://shop.example/sale"}
DRIP_STEP = drip_notification()


def lists_sent(emu) -> int:
    return len(api_requests(emu, "/apiv1/segments"))


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
    assert client.notifications.create(**BROADCAST, include_segments=[seg], idempotency_key="k")
    assert client.idempotency.status("k") == "done"


def test_the_calls_extras_and_raw_answer_are_its_own_request_not_the_segment_read(drv, emu):
    vip = emu.create_segment("vip")
    raw = drv(drv.client.with_raw_response.notifications.create, **BROADCAST,
              include_segments=[vip], extra_headers={"x-campaign": "c1"})  # fmt: skip
    listed, created = api_requests(emu)
    assert listed["path"] == "/apiv1/segments" and "x-campaign" not in listed["headers"]
    assert created["path"] == "/apiv1/notifications"
    assert created["headers"]["x-campaign"] == "c1"
    assert raw.method == "POST" and raw.url.endswith("/apiv1/notifications")
    assert raw.parse() == emu.notifications()[0]["notification_id"]
