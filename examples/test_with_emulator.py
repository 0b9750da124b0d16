"""Testing your own code against the emulator, with the ``pushwire_emulator`` fixture.

The fixture comes with pushwire (a pytest plugin): each test gets a running emulator with
fresh state. Run with ``pytest examples/test_with_emulator.py``.
"""

from __future__ import annotations

import pushwire
from pushwire.testing import Emulator


# -- the code under test: your application's own function -----------------------------------
def announce_restock(client: pushwire.Client, product_id: str, segment_id: int) -> int:
    """Marks a product back in stock and tells the segment that wanted it."""
    client.products.update([{"product_id": product_id, "price": 25.0, "availability": "inStock"}])
    return client.notifications.create(
        title="Back in stock",
        message=f"{product_id} is available again",
        url=f"https://shop.example/p/{product_id}",
        include_segments=[segment_id],
    )


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
