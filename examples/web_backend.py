"""A Flask backend that sends a broadcast and tracks an event, with one shared client.

Create the client once per process (at import): it pools connections, is thread-safe, and
survives the fork of gunicorn's ``--preload`` or Celery's prefork workers. Configuration
comes from ``PUSHWIRE_API_KEY``, ``PUSHWIRE_BASE_URL`` and ``PUSHWIRE_EVENTS_URL``.

    python examples/web_backend.py      # runs the views against the embedded emulator
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue

import pushwire

app = Flask(__name__)


@lru_cache(maxsize=1)
def push() -> pushwire.Client:
    """The process's one client, made on first use (after settings are loaded)."""
    return pushwire.Client(timeout=10.0)


@app.post("/promotions")
def create_promotion() -> ResponseReturnValue:
    body: dict[str, Any] = request.get_json(force=True)
    try:
        notification_id = push().notifications.create(
            title=body["title"],
            message=body["message"],
            url=body["url"],
            include_segments=body.get("segments"),
        )
    except pushwire.ValidationError as e:
        return jsonify(error=str(e), field=e.field), 422
    except (pushwire.APIConnectionError, pushwire.ServerError) as e:
        # Never retried blindly: with outcome_unknown, the broadcast may have gone out.
        return jsonify(error=str(e), outcome_unknown=e.outcome_unknown), 502
    return jsonify(notification_id=notification_id), 201


@app.post("/orders")
def place_order() -> ResponseReturnValue:
    body: dict[str, Any] = request.get_json(force=True)
    # The order is placed whatever happens to its tracking: bounded to two seconds on the
    # shared client's connections, and logged rather than failing the request.
    try:
        push().with_options(timeout=2.0).events.track(
            "order_placed", profile_id=body["customer_id"], data={"total": body["total"]}
        )
    except pushwire.PushwireError as e:
        app.logger.warning("order_placed not tracked: %s", e)
    return jsonify(ok=True), 201


def main() -> None:
    from pushwire.testing import Emulator

    with Emulator(api_key="backend-key") as emu:
        os.environ.update(
            PUSHWIRE_API_KEY=emu.api_key,
            PUSHWIRE_BASE_URL=emu.base_url,
            PUSHWIRE_EVENTS_URL=emu.events_url,
        )
        vip = emu.create_segment("vip")
        web = app.test_client()
        ok = web.post(
            "/promotions",
            json={
                "title": "Sale",
                "message": "Today only",
                "url": "https://shop.example",
                "segments": [vip],
            },
        )
        print("POST /promotions ->", ok.status_code, ok.get_json())
        bad = web.post(
            "/promotions", json={"title": "x" * 100, "message": "m", "url": "https://shop.example"}
        )
        print("POST /promotions ->", bad.status_code, bad.get_json())
        order = web.post("/orders", json={"customer_id": "alice", "total": 42.5})
        print("POST /orders     ->", order.status_code, order.get_json())
        print("events seen by the service:", [e["event_name"] for e in emu.events()])


if __name__ == "__main__":
    main()
