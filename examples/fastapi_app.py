"""A FastAPI service over pushwire's results, as docs/results.md shows it: the results are
its response models and return types, an input model its request body.

    PUSHWIRE_API_KEY=... uvicorn examples.fastapi_app:app     # against the service
    python examples/fastapi_app.py                             # against the emulator

Run as a script, it serves the emulator's site through FastAPI's test client and prints
what a few requests answer.
"""

from __future__ import annotations

from fastapi import FastAPI

import pushwire
from pushwire import Drip, NewDrip, Page, Segment

app = FastAPI(title="Shop notifications")


def client() -> pushwire.Client:
    """The client of this process, made on first use (from PUSHWIRE_* variables)."""
    if not hasattr(app.state, "pushwire"):
        app.state.pushwire = pushwire.Client()
    made: pushwire.Client = app.state.pushwire
    return made


@app.get("/segments", response_model=list[Segment])
def segments() -> list[Segment]:
    return client().segments.list()


@app.get("/drips")
def drips(page: int = 1) -> Page[Drip]:
    return client().drips.list(page=page)


@app.get("/drips/{drip_id}")
def drip(drip_id: int) -> Drip:
    return client().drips.get(drip_id)


@app.post("/drips")
def create_drip(new: NewDrip) -> dict[str, int]:
    drip_id = client().drips.create(new.campaign_name, new.notifications, send_to=new.send_to)
    return {"drip_id": drip_id}


def main() -> None:
    from fastapi.testclient import TestClient

    from pushwire.testing import Emulator

    with Emulator() as emu:
        emu.create_segment("VIP")
        app.state.pushwire = emu.client()
        with TestClient(app) as http:
            made = http.post(
                "/drips",
                json={
                    "campaign_name": "Welcome",
                    "notifications": [
                        {
                            "title": "Hello",
                            "message": "Thanks for joining",
                            "url": "https://shop.example",
                            "image_url": "https://shop.example/icon.png",
                            "big_image_url": "https://shop.example/banner.png",
                            "require_interaction": 0,
                            "expiry": 86400,
                            "schedule_options": {"type": "rightaway"},
                        }
                    ],
                },
            ).json()
            print("POST /drips ->", made)
            print("GET /drips ->", http.get("/drips").json()["data"][0]["created_at_utc"])
            print("GET /segments ->", [s["segment_name"] for s in http.get("/segments").json()])
            schemas = http.get("/openapi.json").json()["components"]["schemas"]
            print("schemas:", ", ".join(sorted(schemas)))
        app.state.pushwire.close()


if __name__ == "__main__":
    main()
