"""A broadcast checked without sending it (issue 58, item 3): ``NewBroadcast`` makes every
check of ``notifications.create`` but the site's as it is built, ``notifications.validate``
checks its segments against the site, the emulator says how many subscribers it would reach
(nothing sent), and ``notifications.create(broadcast)`` sends exactly it. A Flask admin's
confirmation page drives the whole of it, over HTTP against the emulator."""

from __future__ import annotations

import datetime as dt
import html
import json

import pytest
from client_support import api_requests

import pushwire
from pushwire import NewBroadcast
from pushwire.errors import ValidationError

SALE = {"title": "Flash sale", "message": "Half price today", "url": "https://shop.example/sale"}


def test_building_one_makes_the_checks_that_need_no_site_and_sends_nothing(emu):
    with pytest.raises(ValidationError) as info:
        NewBroadcast(**SALE, type="later", valid_from_utc=dt.datetime(2001, 1, 1, 9))
    assert info.value.field == "valid_from_utc"
    with pytest.raises(ValidationError) as info:
        NewBroadcast(**SALE, include_segments=["vip"])
    assert info.value.field == "include_segments[0]"
    with pytest.raises(ValidationError) as info:
        NewBroadcast(**{**SALE, "title": "x" * 86})
    assert info.value.field == "title"
    assert api_requests(emu) == []


def test_it_reads_as_it_will_be_sent_and_survives_json(emu):
    when = (emu.now + dt.timedelta(days=2)).replace(tzinfo=None, microsecond=0)
    shop = pushwire.Action(label="Shop", url="https://shop.example/")
    b = NewBroadcast(**SALE, valid_from_utc=when.strftime("%Y-%m-%dT%H:%M"),
                     include_segments=[7], include_countries=("FR",), actions=[shop])  # fmt: skip
    assert b.type == "later"
    assert b.valid_from_utc == when.replace(second=0).strftime("%Y-%m-%d %H:%M:%S")
    assert b.include_segments == ("7",) and b.include_countries == ("FR",)
    assert b.actions == ({"label": "Shop", "url": "https://shop.example/"},)
    again = NewBroadcast.from_dict(json.loads(b.to_json()))
    assert again == b
    with pytest.raises(ValidationError) as info:
        NewBroadcast.from_dict({"message": "m", "url": "https://shop.example/"})
    assert info.value.field == "title"
    with pytest.raises(ValidationError) as info:
        NewBroadcast.from_dict({**b.to_dict(), "titel": "typo"})
    assert info.value.field == "titel"


def test_what_was_confirmed_cannot_change_before_it_is_sent(emu):
    # The caller's own lists and dicts, changed after the broadcast was built, change nothing.
    rule = {"key": "plan", "op": "eq", "value": "gold"}
    segments = [emu.create_segment("vip")]
    b = NewBroadcast(**SALE, include_segments=segments, attributes=[[rule]], expiry=60)
    rule["value"], segments[0] = "free", "999"
    with pytest.raises(AttributeError):
        b.include_segments.append("999")  # type: ignore[union-attr]
    emu.client().notifications.create(b)
    sent = emu.notifications()[0]["request"]
    assert sent["attributes"] == [[{"key": "plan", "op": "eq", "value": "gold"}]]
    assert sent["include_segments"] == [b.include_segments[0]] != ["999"]


def test_a_draft_reaches_no_one_and_a_misspelt_filter_is_refused(emu):
    emu.add_subscriber()
    assert emu.audience(NewBroadcast(**SALE)) == 1
    assert emu.audience(NewBroadcast(**SALE, type="draft")) == 0
    with pytest.raises(ValueError, match="include_segmnts"):
        emu.audience({"include_segmnts": ["1"]})


def test_validate_checks_the_segments_and_sends_no_broadcast(drv, emu):
    vip = emu.create_segment("vip")
    to_vip = NewBroadcast(**SALE, include_segments=[vip])
    assert drv(drv.client.notifications.validate, to_vip) is None
    with pytest.raises(ValidationError) as info:
        drv(drv.client.notifications.validate,
            NewBroadcast(**SALE, include_segments=[vip], exclude_segments=[99]))  # fmt: skip
    assert info.value.field == "exclude_segments[0]"
    assert api_requests(emu, "/apiv1/notifications") == [] and emu.notifications() == []


def test_the_emulator_counts_its_audience_and_create_sends_exactly_it(drv, emu):
    vip = emu.create_segment("vip")
    for country in ("FR", "FR", "DE"):
        emu.add_subscriber(country=country, segments=[vip])
    emu.add_subscriber(country="FR")
    b = NewBroadcast(**SALE, include_segments=[vip], include_countries=["FR"])
    assert emu.audience(b) == 2
    assert emu.notifications() == [] and emu.deliveries() == []  # nothing made
    with pytest.raises(TypeError):
        drv(drv.client.notifications.create, b, title="Another")
    nid = drv(drv.client.notifications.create, b)
    (n,) = emu.notifications()
    assert n["notification_id"] == nid
    assert {k: v for k, v in n["request"].items() if v not in (None, [])} == b.spec_fields()
    assert len(emu.deliveries(notification_id=nid)) == 2 == emu.audience(n["request"])


def test_a_flask_confirmation_page_sends_what_it_showed(emu):
    flask = pytest.importorskip("flask")
    app = flask.Flask(__name__)
    app.secret_key = "test-only"  # signs the session: the browser cannot change it
    client = emu.client()

    @app.post("/broadcasts/confirm")
    def confirm() -> str:
        form = flask.request.form
        try:
            b = NewBroadcast(title=form["title"], message=form["message"], url=form["url"],
                             valid_from_utc=form.get("when") or None,
                             include_segments=form.getlist("segment"))  # fmt: skip
            client.notifications.validate(b)
        except ValidationError as e:
            return f"<p class=error>{html.escape(e.field or '')}: {html.escape(e.message)}</p>"
        flask.session["broadcast"] = b.to_json()
        # A real site has no audience count; the test's page asks the emulator for one.
        return f"<p>{html.escape(b.title)} at {b.valid_from_utc or 'once'} to {emu.audience(b)} subscribers</p>"  # noqa: E501

    @app.post("/broadcasts/send")
    def send() -> str:
        b = NewBroadcast.from_dict(json.loads(flask.session.pop("broadcast")))
        return f"Broadcast #{client.notifications.create(b)} created"

    vip = emu.create_segment("vip")
    for _ in range(3):
        emu.add_subscriber(segments=[vip])
    emu.add_subscriber()
    web = app.test_client()
    form = {**SALE, "segment": [vip]}

    page = web.post("/broadcasts/confirm", data={**form, "when": "2001-01-01T09:00"}).text
    assert "valid_from_utc" in page and "2001" in page  # the typed-wrong year, named
    page = web.post("/broadcasts/confirm", data={**form, "segment": ["424242"]}).text
    assert "include_segments[0]" in page
    assert emu.notifications() == []

    page = web.post("/broadcasts/confirm", data=form).text
    assert "Flash sale at once to 3 subscribers" in page
    assert emu.notifications() == []  # confirming sent nothing
    done = web.post("/broadcasts/send").text
    (n,) = emu.notifications()
    assert done == f"Broadcast #{n['notification_id']} created"
    assert n["request"]["include_segments"] == [vip]
    assert len(emu.deliveries(notification_id=n["notification_id"])) == 3
