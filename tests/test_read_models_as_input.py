"""A model read from the service is accepted where its input goes: read, create a copy, read
the copy, and the two are equal but for their read-only fields (ids, order, analytics,
timestamps). Hand-written dicts keep their checks: a typo is still refused."""

from __future__ import annotations

from typing import Any

import pytest
from client_support import Driver, drip_notification, drip_series
from conftest import seed_trigger

import pushwire
from pushwire import Action, Audience, DripNotification, UtmParams, ValidationError
from pushwire.testing import Emulator

NOTIFICATION_READ_ONLY = {"id", "order", "analytics"}


def without(d: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


def seed_drip(drv: Driver, emu: Emulator, **kwargs: Any) -> int:
    drip_id: int = drv(drv.client.drips.create, "Welcome", drip_series(), **kwargs)
    return drip_id


def copied(drv: Driver, drip_id: int, notifications: Any, **kwargs: Any) -> Any:
    copy_id = drv(drv.client.drips.create, "Copy", notifications, **kwargs)
    assert copy_id != drip_id
    return drv(drv.client.drips.get, copy_id)


@pytest.mark.parametrize("form", ["models", "dicts"])
def test_a_drips_notifications_are_copied_into_a_new_drip(drv: Driver, emu: Emulator, form: str):
    drip_id = seed_drip(drv, emu)
    # Some analytics on the original, so that they are there to be left out.
    emu.advance(1)
    original = drv(drv.client.drips.get, drip_id)
    given = original.notifications
    if form == "dicts":
        given = [n.to_dict() for n in given]
    copy = copied(drv, drip_id, given)
    assert len(copy.notifications) == 3
    for a, b in zip(original.notifications, copy.notifications):
        assert without(a.to_dict(), NOTIFICATION_READ_ONLY) == without(
            b.to_dict(), NOTIFICATION_READ_ONLY
        )
    assert {n.id for n in copy.notifications}.isdisjoint({n.id for n in original.notifications})


def test_a_copied_notification_is_validated_as_any_input(drv: Driver, emu: Emulator):
    original = drv(drv.client.drips.get, seed_drip(drv, emu))
    bad = original.notifications[0].to_dict()
    bad["expiry"] = 40 * 86400  # over the spec's 28 days
    with pytest.raises(ValidationError) as info:
        drv(drv.client.drips.create, "Copy", [bad])
    assert info.value.field == "notifications[0].expiry"
    # A read model built by hand with a bad value is checked too.
    bad_model = DripNotification.from_dict({**bad, "expiry": 3600, "url": "not a url"})
    with pytest.raises(ValidationError) as info:
        drv(drv.client.drips.create, "Copy", [bad_model])
    assert info.value.field == "notifications[0].url"
    assert [r for r in emu.requests() if r["method"] == "POST"][1:] == []


def test_a_typo_in_a_hand_written_notification_is_still_refused(drv: Driver, emu: Emulator):
    with pytest.raises(ValidationError) as info:
        drv(drv.client.drips.create, "Typo", [drip_notification(titel="Hi")])
    assert info.value.field == "notifications[0].titel"
    with pytest.raises(ValidationError) as info:
        drv(drv.client.drips.create, "Typo", [drip_notification(analytic={"views": 3})])
    assert info.value.field == "notifications[0].analytic"
    assert emu.requests() == []


def test_actions_read_from_a_drip_go_into_a_broadcast(drv: Driver, emu: Emulator):
    original = drv(drv.client.drips.get, seed_drip(drv, emu))
    actions = original.notifications[0].actions
    assert all(isinstance(a, Action) for a in actions)
    for given in (actions, [a.to_dict() for a in actions]):
        drv(
            drv.client.notifications.create,
            title="Sale",
            message="Half price",
            url="https://shop.example/sale",
            actions=given,
        )
    sent = emu.notifications()
    assert len(sent) == 2
    copies = [
        [{k: v for k, v in b.items() if v is not None} for b in n["request"]["actions"]]
        for n in sent
    ]
    expected = [{k: v for k, v in a.to_dict().items() if v is not None} for a in actions]
    assert copies == [expected, expected]


@pytest.mark.parametrize(
    "shape",
    [
        {"utm_source": "push", "utm_medium": "web", "utm_campaign": "welcome", "utm_term": "t"},
        {"enabled": True, "source": "push", "medium": "web", "campaign": "welcome"},
    ],
    ids=["utm_keys", "service_sample_shape"],
)
def test_utm_params_read_from_a_drip_go_into_its_copy(drv: Driver, emu: Emulator, shape):
    original = drv(drv.client.drips.get, seed_drip(drv, emu, utm_params=shape))
    assert isinstance(original.utm_params, UtmParams)
    for given in (original.utm_params, original.utm_params.to_dict()):
        copy = copied(drv, original.drip_id, original.notifications, utm_params=given)
        assert copy.utm_params == original.utm_params


def test_an_audience_read_from_a_drip_becomes_the_copys_send_to(drv: Driver, emu: Emulator):
    vip = emu.create_segment("vip")
    churned = emu.create_segment("churned")
    send_to = {
        "include_segments": [str(vip)],
        "exclude_segments": [str(churned)],
        "include_countries": ["US"],
    }
    original = drv(drv.client.drips.get, seed_drip(drv, emu, send_to=send_to))
    for given in (original.audience, original.audience.to_dict()):
        copy = copied(drv, original.drip_id, original.notifications, send_to=given)
        assert copy.audience == original.audience
    # The copies reach exactly whom the original does: its series starts for a subscriber
    # who joins its audience.
    people = {
        "us_vip": emu.add_subscriber(country="US", segments=[vip]),
        "us": emu.add_subscriber(country="US"),
        "fr_vip": emu.add_subscriber(country="FR", segments=[vip]),
        "us_vip_churned": emu.add_subscriber(country="US", segments=[vip, churned]),
    }
    emu.advance(60)
    reached: dict[int, set[str]] = {}
    for d in emu.deliveries():
        if d["source"] == "drip":
            reached.setdefault(d["source_id"], set()).add(d["subscriber_hash"])
    assert len(reached) == 3
    assert all(r == {people["us_vip"]} for r in reached.values())


@pytest.mark.parametrize(
    "audience,field",
    [
        (
            {
                "filter": {
                    "value": [
                        [{"field": "country", "op": "in", "value": ["US"]}],
                        [{"field": "country", "op": "in", "value": ["FR"]}],
                    ]
                }
            },
            "send_to.filter.value",
        ),
        (
            {"filter": {"value": [[{"field": "device", "op": "in", "value": ["mobile"]}]]}},
            "send_to.filter.value[0][0].field",
        ),
        (
            {"filter": {"value": [[{"field": "country", "op": "in", "value": []}]]}},
            "send_to.filter.value[0][0].value",
        ),
        (
            {"filter": {"value": [[{"field": "country", "op": "near", "value": ["US"]}]]}},
            "send_to.filter.value[0][0].op",
        ),
    ],
    ids=["or_groups", "device_rule", "empty_in", "unknown_op"],
)
def test_an_audience_send_to_cannot_express_is_refused_before_sending(
    drv: Driver, emu: Emulator, audience: dict[str, Any], field: str
):
    for given in (audience, Audience.from_dict(audience)):
        with pytest.raises(ValidationError) as info:
            drv(drv.client.drips.create, "Copy", [drip_notification()], send_to=given)
        assert info.value.field == field
    assert emu.requests() == []


def test_products_read_from_the_emulator_are_sent_again_as_they_are(drv: Driver, emu: Emulator):
    drv(
        drv.client.products.update,
        [
            {"product_id": "sku-1", "price": 19.5},
            {"product_id": "sku-2", "price": 5, "availability": "outOfStock", "variant_id": "red"},
        ],
    )
    first = emu.products()
    emu.advance(60)
    drv(drv.client.products.update, first)
    again = emu.products()
    assert [p["product"] for p in again] == [p["product"] for p in first]
    assert [p["updated_at"] for p in again] != [p["updated_at"] for p in first]
    # Each entry's product as a model, too.
    drv(drv.client.products.update, [pushwire.Product.from_dict(p["product"]) for p in again])
    assert [p["product"] for p in emu.products()] == [p["product"] for p in first]
    # A typo beside the product is still refused, not taken for the emulator's entry.
    with pytest.raises(ValidationError):
        drv(drv.client.products.update, [{**first[0], "updated": "now"}])


def test_a_triggered_campaign_read_from_the_service_seeds_a_copy_in_the_emulator(
    drv: Driver, emu: Emulator
):
    original = drv(drv.client.triggers.get, seed_trigger(emu))
    copy_id = emu.create_trigger(**original.to_dict())
    copy = drv(drv.client.triggers.get, copy_id)
    read_only = {"trigger_id", "created_at_utc", "updated_at_utc", "analytics"}
    a, b = without(original.to_dict(), read_only), without(copy.to_dict(), read_only)
    strip = [without(n, NOTIFICATION_READ_ONLY) for n in a.pop("notifications")]
    assert strip == [without(n, NOTIFICATION_READ_ONLY) for n in b.pop("notifications")]
    assert a == b
    # A misspelt field of a hand-written seed is still refused.
    with pytest.raises(ValueError, match="campaign_nmae"):
        emu.create_trigger(**{**original.to_dict(), "campaign_nmae": "x"})


def test_a_read_notifications_dict_with_fields_beyond_the_spec_is_copied(
    drv: Driver, emu: Emulator
):
    original = drv(drv.client.drips.get, seed_drip(drv, emu))
    # What a service that sends more than the spec reads as: the extra kept in `extra`.
    read = DripNotification.from_dict({**original.notifications[0].to_dict(), "status": "on"})
    assert read.extra == {"status": "on"}
    copy = copied(drv, original.drip_id, [read.to_dict()])
    assert copy.notifications[0].title == read.title and copy.notifications[0].extra == {}
    # Without the read shape's own fields, the same key is a hand-written typo.
    hand = without(read.to_dict(), NOTIFICATION_READ_ONLY)
    with pytest.raises(ValidationError) as info:
        drv(drv.client.drips.create, "Copy", [hand])
    assert info.value.field == "notifications[0].status"


def rules(*group: dict[str, Any]) -> dict[str, Any]:
    return {"filter": {"value": [list(group)]}}


@pytest.mark.parametrize(
    "audience,field",
    [
        ({"filter": {"value": []}}, "send_to.filter.value"),
        (
            rules(
                {"field": "segments", "op": "in", "value": [1]},
                {"field": "segments", "op": "in", "value": [2]},
            ),
            "send_to.filter.value[0][1].field",
        ),
        (rules({"field": "segments", "op": "all", "value": [1]}), "send_to.filter.value[0][0].op"),
        (
            rules({"field": "country", "op": "in", "value": [None]}),
            "send_to.filter.value[0][0].value",
        ),
    ],
    ids=["no_group", "two_in_rules_on_one_field", "all_with_values", "null_value"],
)
def test_an_audience_that_would_be_widened_is_refused(
    drv: Driver, emu: Emulator, audience: dict[str, Any], field: str
):
    with pytest.raises(ValidationError) as info:
        drv(drv.client.drips.create, "Copy", [drip_notification()], send_to=audience)
    assert info.value.field == field
    assert emu.requests() == []


def test_two_exclusions_on_one_field_exclude_both(drv: Driver, emu: Emulator):
    a, b = emu.create_segment("a"), emu.create_segment("b")
    audience = rules(
        {"field": "segments", "op": "nin", "value": [a]},
        {"field": "segments", "op": "nin", "value": [b]},
    )
    copy_id = drv(drv.client.drips.create, "Copy", [drip_notification()], send_to=audience)
    people = {
        "a": emu.add_subscriber(segments=[a]),
        "b": emu.add_subscriber(segments=[b]),
        "none": emu.add_subscriber(),
    }
    emu.advance(60)
    reached = {d["subscriber_hash"] for d in emu.deliveries() if d["source_id"] == copy_id}
    assert reached == {people["none"]}
