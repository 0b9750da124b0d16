"""Quick start: pushwire against the emulator that ships with it.

Starts the embedded emulator, seeds it with a few subscribers, segments and a triggered
campaign, then walks through every endpoint of the API with the client. Against the real
service, make the client with ``pushwire.Client()`` and set ``PUSHWIRE_API_KEY``,
``PUSHWIRE_BASE_URL`` and ``PUSHWIRE_EVENTS_URL``; every call below stays the same.

    make demo        # or: python examples/quickstart.py
"""

from __future__ import annotations

import asyncio
import datetime as dt

import pushwire
from pushwire import Action, NewDripNotification, ScheduleOptions
from pushwire.testing import Emulator


def seed(emu: Emulator) -> str:
    vip = emu.create_segment("vip")
    emu.add_subscriber(
        subscriber_hash="hash-alice",
        profile_id="alice",
        country="US",
        city="Austin",
        device_type="desktop",
        browser="chrome",
    )
    emu.add_subscriber(
        subscriber_hash="hash-bob", profile_id="bob", country="IN", device_type="mobile"
    )
    emu.create_trigger(
        campaign_name="Abandoned cart",
        rules={"start_event_name": "cart_abandoned", "stop_event_name": "order_placed"},
        notifications=[
            {
                "title": "Still thinking, {{name}}?",
                "message": "Your cart misses you",
                "url": "https://shop.example/cart",
            }
        ],
    )
    return vip


def walk(client: pushwire.Client, vip: str) -> None:
    # Segments (4.6-4.9)
    print("segments.list        ->", client.segments.list())
    print("add_subscribers      ->", client.segments.add_subscribers(vip, ["hash-alice"]))
    client.segments.add_profiles("vip", ["bob"])
    client.segments.remove_profiles("vip", ["bob"])
    print("add/remove_profiles  -> ok")

    # Triggered campaigns (4.1, 4.2)
    page = client.triggers.list(limit=10)
    print("triggers.list        ->", page)
    campaign = client.triggers.get(page.data[0].trigger_id)
    print("triggers.get         ->", campaign.campaign_name, campaign.rules)

    # Drips (4.3-4.5): create, then read it back
    drip_id = client.drips.create(
        "Welcome series",
        [
            NewDripNotification(
                title="Welcome!",
                message="Thanks for subscribing",
                url="https://shop.example/welcome",
                image_url="https://shop.example/icon.png",
                big_image_url="https://shop.example/banner.png",
                require_interaction=0,
                expiry=86400,
                schedule_options=ScheduleOptions(type="rightaway"),
            ),
            {  # a plain dict works wherever a model does
                "title": "Our best sellers",
                "message": "Picked for you",
                "url": "https://shop.example/best",
                "image_url": "https://shop.example/icon.png",
                "big_image_url": "https://shop.example/banner.png",
                "require_interaction": 1,
                "expiry": 86400,
                "schedule_options": {"type": "after", "value": 1, "unit": "days", "at": "10:00:00"},
            },
        ],
        send_to={"include_countries": ["US"]},
    )
    drip = client.drips.get(drip_id)
    print(
        "drips.create/get     ->",
        drip_id,
        drip.campaign_name,
        len(drip.notifications or []),
        "notifications",
    )
    print("drips.iter           ->", [d.drip_id for d in client.drips.iter()])

    # Broadcasts (4.13): now, later, draft
    sent = client.notifications.create(
        title="Flash sale",
        message="40% off for the next hour",
        url="https://shop.example/sale",
        include_segments=[vip],
        actions=[Action(label="Shop now", url="https://shop.example/sale")],
    )
    later = client.notifications.create(
        title="Tomorrow",
        message="See you then",
        url="https://shop.example",
        type="later",
        valid_from_utc=dt.datetime(2030, 1, 1, 9, 0, 0),
    )
    draft = client.notifications.create(
        title="Draft", message="Not yet", url="https://shop.example", type="draft"
    )
    print("notifications.create ->", sent, later, draft)

    # Products (4.12) and events (4.14)
    client.products.update([{"product_id": "sku-1", "price": 19.99, "availability": "inStock"}])
    print("products.update      -> ok")
    client.events.track("cart_abandoned", profile_id="alice", data={"name": "Alice"})
    print("events.track         -> ok")

    # Analytics (4.10, 4.11)
    today = dt.date.today()
    rows = client.analytics.summary(today - dt.timedelta(days=2), today)
    print("analytics.summary    ->", [(r["date"].isoformat(), r["subscriber_count"]) for r in rows])
    print("analytics.subscribers->", client.analytics.subscribers(types=["country"]))

    # Bad input never leaves the machine
    try:
        client.notifications.create(title="x" * 100, message="m", url="https://shop.example")
    except pushwire.ValidationError as e:
        print("ValidationError      ->", e.field, "|", e)
    # The service's own refusals are typed
    try:
        client.segments.delete(999999)
    except pushwire.BadRequestError as e:
        print("BadRequestError      ->", e.status_code, e.message)


async def walk_async(client: pushwire.AsyncClient) -> None:
    results = await asyncio.gather(
        *(client.events.track("page_view", profile_id="alice") for _ in range(100))
    )
    print("AsyncClient          ->", len(results), "events tracked concurrently")
    async for campaign in client.triggers.iter():
        print("async triggers.iter  ->", campaign.campaign_name)


def main() -> None:
    with Emulator(api_key="demo-key") as emu:
        vip = seed(emu)
        with emu.client() as client:
            walk(client, vip)
        asyncio.run(walk_async(emu.async_client()))
        print("the emulator received", len(emu.requests()), "requests")


if __name__ == "__main__":
    main()
