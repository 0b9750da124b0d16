"""Testing your own code against the emulator, with the ``pushwire_emulator`` fixture.

The fixture comes with pushwire (a pytest plugin): each test gets a running emulator with
fresh state. Run with ``pytest examples/test_with_emulator.py``.
"""

from __future__ import annotations

import datetime as dt
from typing import Optional

import pushwire
from pushwire.testing import Emulator


# -- the code under test: your application's own function -----------------------------------
def announce_restock(client: pushwire.Client, product_id: str, segment_id: str) -> int:
    """Marks a product back in stock and tells the segment that wanted it."""
    client.products.update([{"product_id": product_id, "price": 25.0, "availability": "inStock"}])
    return client.notifications.create(
        title="Back in stock",
        message=f"{product_id} is available again",
        url=f"https://shop.example/p/{product_id}",
        include_segments=[segment_id],
    )


def send_flash_sale(client: pushwire.Client, at: Optional[dt.datetime] = None) -> str:
    """Sends (or schedules, ``at`` in the site's time zone) the flash sale once: after an
    error whose outcome is unknown it must not send again (a second broadcast), but leave
    it to a person to check."""
    try:
        client.notifications.create(
            title="Flash sale",
            message="Two hours only",
            url="https://shop.example/sale",
            valid_from_utc=at,
        )
    except pushwire.APIError as e:
        if e.outcome_unknown:
            return "check by hand"
        raise
    return "sent"


# -- the tests ---------------------------------------------------------------------------------
def test_restock_updates_the_product_and_broadcasts_once(pushwire_emulator: Emulator) -> None:
    emu = pushwire_emulator
    waitlist = emu.create_segment("waitlist")

    notification_id = announce_restock(emu.client(), "sku-42", waitlist)

    [product] = emu.products()
    assert product["product"]["availability"] == "inStock"
    [broadcast] = emu.notifications()
    assert broadcast["notification_id"] == notification_id
    assert broadcast["request"]["include_segments"] == [str(waitlist)]


def test_restock_reports_a_service_outage(pushwire_emulator: Emulator) -> None:
    emu = pushwire_emulator
    emu.inject_fault("/apiv1/products", status=500, times=5)
    client = emu.client(max_retries=0)
    try:
        announce_restock(client, "sku-42", emu.create_segment("waitlist"))
    except pushwire.ServerError as e:
        assert e.status_code == 500
    else:
        raise AssertionError("the outage was not reported")
    assert emu.notifications() == []  # nothing was broadcast


def test_a_sale_answered_500_after_it_went_out_is_not_sent_twice(
    pushwire_emulator: Emulator,
) -> None:
    emu = pushwire_emulator
    shopper = emu.add_subscriber()
    # The service sends the broadcast, then fails: the client hears 500.
    emu.inject_fault("/apiv1/notifications", status=500, processed=True)
    assert send_flash_sale(emu.client()) == "check by hand"
    assert len(emu.deliveries(shopper)) == 1  # one broadcast, not two


def test_a_scheduled_sale_goes_out_at_its_time(pushwire_emulator: Emulator) -> None:
    emu = pushwire_emulator
    shopper = emu.add_subscriber()
    now = emu.freeze_clock()  # the clock moves only when the test says
    at = (now + dt.timedelta(hours=2)).replace(microsecond=0)
    # valid_from_utc is site-local time, naive (the emulator's site is on UTC)
    assert send_flash_sale(emu.client(), at=at.replace(tzinfo=None)) == "sent"
    emu.travel_to(at - dt.timedelta(seconds=1))
    assert emu.deliveries(shopper) == []
    emu.advance(1)
    [delivery] = emu.deliveries(shopper)
    assert delivery["sent_at"] == at
