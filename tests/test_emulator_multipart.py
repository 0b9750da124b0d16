"""`multipart/form-data` bodies (Node's `form-data`/`FormData`, a browser form, `requests`'
`files=`) on the form-encoded endpoints read as the same form: the same field rules
(indexed, `[]` and repeated names), the same refusals, the same body cap."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import requests
from conftest import TIMEOUT, assert_main_error

from pushwire.testing import Emulator

BROADCAST = [
    ("notification_title", "Sale"),
    ("notification_message", "Everything half price"),
    ("notification_url", "https://shop.example/sale"),
]


def post_multipart(emu: Emulator, path: str, fields: list[tuple[str, Any]]) -> requests.Response:
    # `files=` with no file name makes plain fields of a multipart/form-data body.
    return requests.post(
        emu.base_url + path,
        headers={"Api-Key": emu.api_key},
        files=[(name, (None, value)) for name, value in fields],
        timeout=TIMEOUT,
    )


def post_urlencoded(emu: Emulator, path: str, fields: list[tuple[str, str]]) -> requests.Response:
    return requests.post(
        emu.base_url + path, headers={"Api-Key": emu.api_key}, data=fields, timeout=TIMEOUT
    )


@pytest.mark.parametrize(
    "countries",
    [
        [("include_countries[0]", "US"), ("include_countries[1]", "FR")],
        [("include_countries[1]", "FR"), ("include_countries[0]", "US")],
        [("include_countries[]", "US"), ("include_countries[]", "FR")],
        [("include_countries", "US"), ("include_countries", "FR")],
    ],
    ids=["indexed", "indexed_out_of_order", "brackets", "repeated"],
)
def test_a_multipart_broadcast_is_the_same_broadcast_as_its_urlencoded_twin(
    emu: Emulator, countries: list[tuple[str, str]]
):
    people = {c: emu.add_subscriber(country=c) for c in ("US", "FR", "DE")}
    r = post_multipart(emu, "/apiv1/notifications", BROADCAST + countries)
    assert r.status_code == 200, r.text
    multipart_id = r.json()["notification_id"]
    r = post_urlencoded(emu, "/apiv1/notifications", BROADCAST + countries)
    assert r.status_code == 200, r.text
    sent = {n["notification_id"]: n for n in emu.notifications()}
    assert sent[multipart_id]["request"] == sent[r.json()["notification_id"]]["request"]
    assert sent[multipart_id]["request"]["include_countries"] == ["US", "FR"]
    reached = {d["subscriber_hash"] for d in emu.deliveries() if d["source_id"] == multipart_id}
    assert reached == {people["US"], people["FR"]}


def test_subscribers_are_added_to_a_segment_by_a_multipart_body(emu: Emulator):
    seg = emu.create_segment("vip")
    hashes = [emu.add_subscriber() for _ in range(3)]
    fields = [("segment_id", str(seg))] + [
        (f"subscriber_hash[{i}]", h) for i, h in enumerate(hashes)
    ]
    r = post_multipart(emu, "/apiv1/segments/addSegmentWithHash", fields)
    assert r.status_code == 200, r.text
    members = next(s for s in emu.segments() if s["segment_id"] == seg)["members"]
    assert sorted(members) == sorted(hashes)


def test_a_multipart_body_keeps_the_form_refusals(emu: Emulator):
    # A bad array index names no field: refused as in a urlencoded body.
    r = post_multipart(emu, "/apiv1/notifications", BROADCAST + [("include_countries[x]", "US")])
    assert_main_error(r, 400)
    assert "include_countries[x]" in r.json()["message"]
    # A required field missing is the same refusal.
    r = post_multipart(emu, "/apiv1/notifications", BROADCAST[:2])
    assert_main_error(r, 400)
    assert emu.notifications() == []


def test_a_file_part_or_a_malformed_body_is_a_400_in_the_endpoints_shape(emu: Emulator):
    r = requests.post(
        emu.base_url + "/apiv1/notifications",
        headers={"Api-Key": emu.api_key},
        data=dict(BROADCAST),
        files={"notification_image_url": ("icon.png", b"\x89PNG...", "image/png")},
        timeout=TIMEOUT,
    )
    body = assert_main_error(r, 400)
    assert "notification_image_url" in body["message"] and "file" in body["message"]
    for content_type, raw in [
        ("multipart/form-data", b"--x\r\n"),  # no boundary parameter
        ("multipart/form-data; boundary=x", b"--x\r\nContent-Disposition: form-data"),  # cut
        ("multipart/form-data; boundary=x", b"no parts at all"),
    ]:
        r = requests.post(
            emu.base_url + "/apiv1/notifications",
            headers={"Api-Key": emu.api_key, "Content-Type": content_type},
            data=raw,
            timeout=TIMEOUT,
        )
        body = assert_main_error(r, 400)
        assert body["message"].startswith("Malformed multipart/form-data"), body
    assert emu.notifications() == []


def test_a_multipart_body_over_the_cap_is_413(emu: Emulator):
    r = post_multipart(
        emu, "/apiv1/notifications", BROADCAST + [("notification_message", "x" * (2 << 20))]
    )
    assert r.status_code == 413
    assert emu.notifications() == []


def test_a_json_endpoint_still_refuses_multipart(emu: Emulator):
    r = post_multipart(emu, "/apiv1/products", [("product_id", "p1"), ("price", "3")])
    assert_main_error(r, 400)


def test_nodes_own_form_data_posts_a_broadcast(emu: Emulator, tmp_path: Path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node FormData client cannot run here")
    people = {c: emu.add_subscriber(country=c) for c in ("US", "FR")}
    script = tmp_path / "broadcast.mjs"
    script.write_text(
        textwrap.dedent(
            """
            const [url, key] = process.argv.slice(2);
            const form = new FormData();
            form.append("notification_title", "Sale");
            form.append("notification_message", "Everything half price");
            form.append("notification_url", "https://shop.example/sale");
            form.append("include_countries[]", "US");
            const res = await fetch(url + "/apiv1/notifications", {
              method: "POST", headers: { "Api-Key": key }, body: form,
            });
            console.log(JSON.stringify({ status: res.status, body: await res.json() }));
            """
        )
    )
    out = subprocess.run(
        [node, str(script), emu.base_url, emu.api_key], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["status"] == 200, answer
    nid = answer["body"]["notification_id"]
    (sent,) = emu.notifications()
    assert sent["notification_id"] == nid
    reached = {d["subscriber_hash"] for d in emu.deliveries() if d["source_id"] == nid}
    assert reached == {people["US"]}
    # The request log shows what came: a multipart body.
    logged = [r for r in emu.requests() if r["path"] == "/apiv1/notifications"]
    assert logged and logged[0]["status"] == 200
