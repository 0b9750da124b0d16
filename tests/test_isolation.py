"""Sites stay apart in the service's behaviour too: one key's broadcasts, events and product
updates never reach another site's subscribers, campaigns or analytics. And the events
interface's field-by-field refusals reach the user as ``BadRequestError.details``."""

from __future__ import annotations

import pytest

import pushwire
from pushwire.testing import Emulator


def test_behaviour_never_crosses_sites(pushwire_emulator: Emulator) -> None:
    emu = pushwire_emulator
    emu.add_site("site-b-key")
    a_client = emu.client()
    b_client = pushwire.Client(
        api_key="site-b-key", base_url=emu.base_url, events_url=emu.events_url
    )
    emu.add_subscriber("a1", profile_id="shared-profile", country="US")
    emu.add_subscriber("b1", profile_id="shared-profile", country="US", api_key="site-b-key")
    for key in (None, "site-b-key"):
        emu.add_alert("a1" if key is None else "b1", "sku-1", api_key=key)
    rules = {"start_event_name": "go", "stop_event_name": "stop"}
    note = [{"title": "T", "message": "M", "url": "https://x.example"}]
    emu.create_trigger(
        campaign_name="b-trigger", rules=rules, notifications=note, api_key="site-b-key"
    )
    emu.create_trigger(
        campaign_name="b-drop",
        campaign_type="price_drop",
        rules=rules,
        notifications=note,
        options={"campaign": {"price_drop_threshold": {"type": "percentage", "value": 5}}},
        api_key="site-b-key",
    )

    a_client.notifications.create(title="A", message="only A", url="https://a.example")
    a_client.events.track("go", profile_id="shared-profile")
    a_client.products.update([{"product_id": "sku-1", "price": 100}])
    a_client.products.update([{"product_id": "sku-1", "price": 50}])

    assert [d["subscriber_hash"] for d in emu.deliveries()] == ["a1"]
    assert emu.deliveries(api_key="site-b-key") == []
    today = emu.now.date()
    [row_b] = b_client.analytics.summary(today, today)
    assert row_b["notification_sent"] == 0 and row_b["net_subscriber_sent"] == 0
    [row_a] = a_client.analytics.summary(today, today)
    assert row_a["net_subscriber_sent"] == 1
    assert all(t.analytics.sentcount == 0 for t in b_client.triggers.list().data)
    assert b_client.analytics.subscribers(types=["country"]) == {"country": {"US": 1}}
    assert emu.products(api_key="site-b-key") == []


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_event_refusals_carry_their_details(pushwire_emulator: Emulator, kind: str) -> None:
    emu = pushwire_emulator
    details = [
        {"message": '"data.total" must be a number', "path": ["data", "total"]},
        {"message": '"event_name" is required', "path": ["event_name"]},
    ]
    emu.inject_fault(
        "/api/v1/events",
        status=400,
        body={"error": {"message": "Invalid data", "code": 1003, "details": details}},
    )
    with pytest.raises(pushwire.BadRequestError) as info:
        if kind == "sync":
            emu.client().events.track("checkout", profile_id="p")
        else:
            import asyncio

            asyncio.run(emu.async_client().events.track("checkout", profile_id="p"))
    err = info.value
    assert err.status_code == 400 and err.code == 1003
    assert err.message == "Invalid data"
    assert err.details == details
    assert emu.events() == []
