"""A Flask backend that sends a broadcast and tracks an event, with one shared client.

    pip install pushwire flask
    python examples/web_backend.py      # runs the views against the embedded emulator

Create the client once per process (on first use): it pools connections, is thread-safe, and
survives the fork of gunicorn's ``--preload`` or Celery's prefork workers. Configuration
comes from ``PUSHWIRE_API_KEY``, ``PUSHWIRE_BASE_URL`` and ``PUSHWIRE_EVENTS_URL``.

The client has already retried what was safe to retry; ``push_failed`` turns what is left
into an answer for this backend's caller:

- bad input: 422, naming the field;
- rate limited, or the service unavailable, or unreachable (nothing was sent): 503 with a
  ``Retry-After``;
- our key refused, or a setting missing: 500, a fault of this server (logged, never shown);
- the broadcast may have gone out (``outcome_unknown``): 502, saying so. Never resend it
  blindly: that could send it twice.
"""

from __future__ import annotations

import math
import os
from functools import lru_cache

from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue

import pushwire

app = Flask(__name__)


class NotConfigured(Exception):
    """The client's settings are missing or malformed: this server's fault, not the caller's."""


@lru_cache(maxsize=1)
def push() -> pushwire.Client:
    """The process's one client, made on first use (after settings are loaded)."""
    try:
        # `timeout` bounds a whole call, its retries and their waits: a handler never hangs,
        # and a Retry-After longer than that comes back at once as the error.
        return pushwire.Client(timeout=10.0)
    except pushwire.ValidationError as e:  # no PUSHWIRE_API_KEY, a malformed PUSHWIRE_TIMEOUT
        raise NotConfigured(str(e)) from e


@app.post("/promotions")
def create_promotion() -> ResponseReturnValue:
    body = request.get_json(force=True)
    if not isinstance(body, dict):
        return jsonify(error="the body must be a JSON object"), 400
    # The JSON fields are the client's argument names, so a ValidationError's `field` is the
    # caller's field ("" is refused as missing). Segments are given by id, not by name.
    notification_id = push().notifications.create(
        title=body.get("title", ""),
        message=body.get("message", ""),
        url=body.get("url", ""),
        include_segments=body.get("include_segments"),
    )
    return jsonify(notification_id=notification_id), 201


@app.post("/orders")
def place_order() -> ResponseReturnValue:
    body = request.get_json(force=True)
    # The order is placed whatever happens to its tracking: bounded to two seconds on the
    # shared client's connections, and logged rather than failing the request.
    try:
        push().with_options(timeout=2.0).events.track(
            "order_placed", profile_id=body["customer_id"], data={"total": body["total"]}
        )
    except (pushwire.PushwireError, NotConfigured) as e:
        app.logger.warning("order_placed not tracked: %s", e)
    return jsonify(ok=True), 201


NOT_CONFIGURED = "push notifications are misconfigured on this server"


@app.errorhandler(NotConfigured)
def not_configured(e: NotConfigured) -> ResponseReturnValue:
    app.logger.error("pushwire client not configured: %s", e)
    return jsonify(error=NOT_CONFIGURED), 500


@app.errorhandler(pushwire.PushwireError)
def push_failed(e: pushwire.PushwireError) -> ResponseReturnValue:
    """What a failed call to the push service becomes for this backend's caller."""
    if isinstance(e, pushwire.ValidationError):
        # Refused by the client, before anything was sent: the caller's input.
        return jsonify(error=str(e), field=e.field), 422
    if isinstance(e, (pushwire.APIError, pushwire.APIConnectionError)) and e.outcome_unknown:
        # A dropped connection, a timeout or a 500 after the request left: the service may
        # have sent it. Whoever resends must check first (emails, the dashboard).
        app.logger.error("broadcast outcome unknown: %s", e)
        message = "the push service failed mid-request: the broadcast may have gone out"
        return jsonify(error=message, outcome_unknown=True), 502
    if isinstance(e, pushwire.AuthenticationError):
        # Our key was refused: a configuration fault. Errors never hold the key, but the
        # caller gets no detail either.
        app.logger.error("the push service refused our API key: %s", e)
        return jsonify(error=NOT_CONFIGURED), 500
    if isinstance(e, (pushwire.RateLimitError, pushwire.ServerError, pushwire.APIConnectionError)):
        # Rate limited, unavailable (503) or never reached: nothing was sent, so the caller
        # may send the same request again, after the service's wait.
        message = "the push service is busy or unreachable: nothing was sent, try again later"
        return jsonify(error=message), 503, {"Retry-After": retry_after(e)}
    if isinstance(e, pushwire.APIError) and e.status_code in (400, 404):
        # The service refused the input for a reason the client cannot check beforehand.
        return jsonify(error=e.message), 422
    app.logger.error("push service error: %s", e)
    return jsonify(error="the push service refused the request"), 502


def retry_after(e: pushwire.PushwireError) -> str:
    """The seconds our caller should wait: the service's wait, rounded up; else a minute."""
    if isinstance(e, pushwire.RateLimitError) and e.retry_after is not None:
        return str(math.ceil(e.retry_after))
    if isinstance(e, pushwire.APIError):  # a 503's own header, seconds or an HTTP date
        return e.headers.get("Retry-After", "60")
    return "60"


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
        sale = {"title": "Sale", "message": "Today only", "url": "https://shop.example"}
        ok = web.post("/promotions", json={**sale, "include_segments": [vip]})
        print("POST /promotions ->", ok.status_code, ok.get_json())
        bad = web.post("/promotions", json={**sale, "title": "x" * 100})
        print("POST /promotions ->", bad.status_code, bad.get_json())
        emu.inject_fault("/apiv1/notifications", status=429, retry_after=30)
        busy = web.post("/promotions", json=sale)
        print("POST /promotions ->", busy.status_code, "Retry-After:", busy.headers["Retry-After"])
        order = web.post("/orders", json={"customer_id": "alice", "total": 42.5})
        print("POST /orders     ->", order.status_code, order.get_json())
        print("events seen by the service:", [e["event_name"] for e in emu.events()])


if __name__ == "__main__":
    main()
