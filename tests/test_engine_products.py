"""Issue 4, behaviour 4: product alerts (spec 2.4, 2.11, 4.12).

A ``price_drop`` campaign notifies the holders of alerts on a product when an update drops
its price by at least the threshold below the price the alert was set at (percent of it, or
an absolute amount; inclusive); an ``inventory`` campaign when the availability turns
inStock from outOfStock.
An alert fires once per campaign, and not once it is older than options.campaign.expiry.
"""

from __future__ import annotations

from typing import Any, Optional

from engine_support import RIGHTAWAY, campaign_notification

from pushwire.testing import Emulator


def alert_campaign(
    emu: Emulator, kind: str, threshold: Optional[dict[str, Any]] = None, expiry: str = ""
) -> int:
    campaign: dict[str, Any] = {}
    if threshold:
        campaign["price_drop_threshold"] = threshold
    if expiry:
        campaign["expiry"] = expiry
    return emu.create_trigger(
        campaign_name=f"{kind} {threshold or ''}",
        campaign_type=kind,
        rules={"start_event_name": f"{kind}-start", "stop_event_name": f"{kind}-stop"},
        notifications=[
            campaign_notification(
                "{{product_id}} now {{price}}", RIGHTAWAY, message="was {{old_price}}"
            )
        ],
        options={"campaign": campaign},
    )


def fired(emu: Emulator) -> set[tuple[str, int]]:
    return {(d["subscriber_hash"], d["source_id"]) for d in emu.deliveries(status="all")}


def test_price_drop_thresholds(emu: Emulator) -> None:
    pct = alert_campaign(emu, "price_drop", {"type": "percentage", "value": 10})
    absolute = alert_campaign(emu, "price_drop", {"type": "absolute", "value": 15})
    for h in ("a", "b", "c", "d", "late"):
        emu.add_subscriber(h)
    emu.add_alert("a", "P1")
    emu.add_alert("b", "P1")
    emu.add_alert("c", "P2")  # another product
    with emu.client() as client:
        client.products.update(
            [{"product_id": "P1", "price": 100}, {"product_id": "P2", "price": 100}]
        )
        assert fired(emu) == set()
        client.products.update([{"product_id": "P1", "price": 91}])  # 9%: below 10%
        assert fired(emu) == set()
        client.products.update([{"product_id": "P1", "price": 100}])  # a rise
        assert fired(emu) == set()
        client.products.update([{"product_id": "P1", "price": 89}])  # 11%, 11 absolute
        assert fired(emu) == {("a", pct), ("b", pct)}
        (d,) = [d for d in emu.deliveries("a")]
        assert (d["title"], d["message"]) == ("P1 now 89", "was 100")
        emu.add_alert("late", "P1")
        # 89 -> 74: 16.9% and exactly 15 (inclusive). The percentage campaign already
        # notified a and b, so only its new alert fires; the absolute one fires for all.
        client.products.update([{"product_id": "P1", "price": 74}])
        assert fired(emu) == {
            ("a", pct),
            ("b", pct),
            ("a", absolute),
            ("b", absolute),
            ("late", pct),
            ("late", absolute),
        }
        client.products.update([{"product_id": "P1", "price": 10}])  # each alert fired once
        client.products.update([{"product_id": "P2", "price": 85.5}])  # 14.5: absolute no
        assert ("c", pct) in fired(emu) and ("c", absolute) not in fired(emu)
    assert len(emu.deliveries(status="all")) == 7
    assert "d" not in {d["subscriber_hash"] for d in emu.deliveries(status="all")}


def test_back_in_stock_and_variants(emu: Emulator) -> None:
    inventory = alert_campaign(emu, "inventory")
    for h in ("oos", "plain", "first", "red", "blue", "any", "none"):
        emu.add_subscriber(h)
    emu.add_alert("oos", "P-oos")
    emu.add_alert("plain", "P-plain")
    emu.add_alert("first", "P-first")
    emu.add_alert("red", "P-var", "red")
    emu.add_alert("blue", "P-var", "blue")
    emu.add_alert("any", "P-var")
    with emu.client() as client:
        client.products.update(
            [
                {"product_id": "P-oos", "price": 5, "availability": "outOfStock"},
                {"product_id": "P-plain", "price": 5, "availability": "inStock"},
                {"product_id": "P-first", "price": 5},  # first update: nothing to return from
                {"product_id": "P-var", "variant_id": "red", "price": 5,
                 "availability": "outOfStock"},
                {"product_id": "P-var", "variant_id": "blue", "price": 5,
                 "availability": "inStock"},
            ]
        )  # fmt: skip
        assert fired(emu) == set()
        client.products.update(
            [
                {"product_id": "P-oos", "price": 5, "availability": "inStock"},
                {"product_id": "P-plain", "price": 4},  # a plain in-stock update
                {"product_id": "P-var", "variant_id": "red", "price": 5},  # default inStock
                {"product_id": "P-var", "variant_id": "blue", "price": 5},
            ]
        )
        assert fired(emu) == {("oos", inventory), ("red", inventory), ("any", inventory)}
        # Out and back again: an alert fires once per campaign.
        client.products.update([{"product_id": "P-oos", "price": 5, "availability": "outOfStock"}])
        client.products.update([{"product_id": "P-oos", "price": 5, "availability": "inStock"}])
    assert len(emu.deliveries()) == 3
    (d,) = emu.deliveries("red")
    assert d["title"] == "P-var now 5"


def test_alerts_older_than_the_campaign_expiry_do_not_fire(emu: Emulator) -> None:
    inventory = alert_campaign(emu, "inventory", expiry="3600")
    pct = alert_campaign(emu, "price_drop", {"type": "percentage", "value": 10})  # 30 days
    for h in ("old", "new", "month"):
        emu.add_subscriber(h)
    with emu.client() as client:
        client.products.update([{"product_id": "P", "price": 100, "availability": "outOfStock"}])
        emu.add_alert("old", "P")
        emu.advance(3600 + 5)
        emu.add_alert("new", "P")
        client.products.update([{"product_id": "P", "price": 100, "availability": "inStock"}])
        assert fired(emu) == {("new", inventory)}
        # The default expiry is 30 days: "old" is 1 hour old, still within it.
        emu.add_alert("month", "Q")
        client.products.update([{"product_id": "Q", "price": 100}])
        emu.advance(30 * 86400 + 60)
        client.products.update([{"product_id": "P", "price": 50}, {"product_id": "Q", "price": 50}])
    # "old" and "new" are past 30 days by now too, so nothing more fired.
    assert fired(emu) == {("new", inventory)}
    assert pct not in {d["source_id"] for d in emu.deliveries(status="all")}


def test_price_drop_within_the_default_expiry_fires(emu: Emulator) -> None:
    pct = alert_campaign(emu, "price_drop", {"type": "percentage", "value": 10})
    emu.add_subscriber("a")
    with emu.client() as client:
        client.products.update([{"product_id": "P", "price": 100}])
        emu.add_alert("a", "P")
        emu.advance(29 * 86400)
        client.products.update([{"product_id": "P", "price": 90}])
    assert fired(emu) == {("a", pct)}


def test_a_drop_is_measured_from_the_price_the_alert_was_set_at(emu: Emulator) -> None:
    # A price that falls 10% in steps since the subscriber asked still reaches a 10% alert:
    # what they saw is what a drop is measured from, not the update before.
    pct = alert_campaign(emu, "price_drop", {"type": "percentage", "value": 10})
    emu.add_subscriber("early")  # alert before the product has any price
    emu.add_subscriber("seen")  # alert at 100
    emu.add_subscriber("later")  # alert at 95
    emu.add_alert("early", "P")
    with emu.client() as client:
        client.products.update([{"product_id": "P", "price": 100}])  # early's baseline
        emu.add_alert("seen", "P")
        client.products.update([{"product_id": "P", "price": 95}])  # 5%
        emu.add_alert("later", "P")
        assert fired(emu) == set()
        client.products.update([{"product_id": "P", "price": 90}])  # 10% from 100; 5.3% from 95
        assert fired(emu) == {("early", pct), ("seen", pct)}
        client.products.update([{"product_id": "P", "price": 85.5}])  # 10% from 95
        assert fired(emu) == {("early", pct), ("seen", pct), ("later", pct)}
