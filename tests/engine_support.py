"""Helpers of the behaviour-engine acceptance tests (tests/test_engine_*.py).

The tests drive the emulator through ``pushwire.Client`` over real HTTP and read what the
service "sent" from ``emu.deliveries()``. Expected times are computed from values the test
set (or read once), never from when the test happened to look.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any, Optional

from pushwire.testing import Emulator

UTC = dt.timezone.utc
IST = dt.timezone(dt.timedelta(hours=5, minutes=30))
URL = "https://shop.example/"


def offset(spec: str) -> dt.timezone:
    """``"+05:30"`` as a ``datetime.timezone``."""
    sign = -1 if spec.startswith("-") else 1
    h, m = spec[1:].split(":")
    return dt.timezone(sign * dt.timedelta(hours=int(h), minutes=int(m)))


def advance_to(emu: Emulator, target: dt.datetime) -> dt.datetime:
    """Moves the clock to ``target`` (a few milliseconds past it at most); returns the clock."""
    now = emu.now
    assert target >= now, (target, now)
    return emu.advance((target - now).total_seconds())


def next_utc_time(emu: Emulator, hour: int, minute: int = 0, *, tz: dt.tzinfo = UTC) -> dt.datetime:
    """The next instant, at least a minute after the clock, at ``hour:minute`` in ``tz``."""
    now = emu.now.astimezone(tz)
    t = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    while t <= now + dt.timedelta(minutes=1):
        t += dt.timedelta(days=1)
    return t.astimezone(UTC)


def by_subscriber(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r["subscriber_hash"]].append(r)
    return dict(out)


def recipients(
    emu: Emulator, *, source: Optional[str] = None, source_id: Optional[int] = None, **kw: Any
) -> set[str]:
    """Subscriber hashes that were handed a delivery (of ``source``/``source_id`` if given)."""
    return {
        d["subscriber_hash"]
        for d in emu.deliveries(**kw)
        if (source is None or d["source"] == source)
        and (source_id is None or d["source_id"] == source_id)
    }


def timeline(
    emu: Emulator, source: str, source_id: int, **kw: Any
) -> dict[str, list[tuple[int, dt.datetime]]]:
    """For each subscriber: (notification_id, sent_at) of a campaign's deliveries, in order."""
    out: dict[str, list[tuple[int, dt.datetime]]] = defaultdict(list)
    for d in emu.deliveries(**kw):
        if d["source"] == source and d["source_id"] == source_id:
            out[d["subscriber_hash"]].append((d["notification_id"], d["sent_at"]))
    return {k: sorted(v, key=lambda x: (x[1], x[0])) for k, v in out.items()}


def campaign_notification(title: str, schedule: dict[str, Any], **over: Any) -> dict[str, Any]:
    """A triggered or drip notification (spec 2.2 / 2.8)."""
    n: dict[str, Any] = {
        "title": title,
        "message": f"{title} message",
        "url": URL + title.replace(" ", "-").lower(),
        "image_url": URL + "icon.png",
        "big_image_url": URL + "big.png",
        "require_interaction": 1,
        "expiry": 7 * 86400,
        "schedule_options": schedule,
    }
    n.update(over)
    return n


RIGHTAWAY = {"type": "rightaway"}


def after_minutes(n: int) -> dict[str, Any]:
    return {"type": "after", "value": n, "unit": "minutes"}


def after_days(n: int, at: str) -> dict[str, Any]:
    return {"type": "after", "value": n, "unit": "days", "at": at}


def after_dow(day: int, at: str) -> dict[str, Any]:
    return {"type": "after", "value": day, "unit": "dow", "at": at}
