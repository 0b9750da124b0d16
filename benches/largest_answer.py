"""The largest answers the API gives, measured against the emulator at the spec's limits:
the basis of the client's default `max_response_size` (README, "Bounded memory").

    python benches/largest_answer.py
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.request

from pushwire.testing import Emulator

LONG = "x" * 200


def notification(i: int) -> dict[str, object]:
    return {
        "title": f"{i} " + "T" * 80,
        "message": "M" * 130,
        "url": f"https://shop.example/{LONG}/{i}",
        "image_url": f"https://cdn.example/{LONG}/icon.png",
        "big_image_url": f"https://cdn.example/{LONG}/big.png",
        "expiry": 3600,
        "require_interaction": 1,
        "actions": [
            {
                "label": "A" * 40,
                "url": f"https://shop.example/{LONG}/a",
                "image_url": f"https://cdn.example/{LONG}/a.png",
            },
            {
                "label": "B" * 40,
                "url": f"https://shop.example/{LONG}/b",
                "image_url": f"https://cdn.example/{LONG}/b.png",
            },
        ],
        "schedule_options": {"type": "after", "value": 1, "unit": "days", "at": "10:00:00"},
    }


def size(emu: Emulator, path: str) -> int:
    req = urllib.request.Request(emu.base_url + path, headers={"Api-Key": emu.api_key})
    with urllib.request.urlopen(req) as r:
        body = r.read()
    json.loads(body)
    return len(body)


def main() -> None:
    with Emulator(record_requests=False) as emu:
        for t in range(500):
            emu.create_trigger(
                campaign_name=f"{t} " + "N" * 200,
                campaign_type="trigger",
                rules={"start_event_name": "E" * 64, "stop_event_name": "S" * 64},
                notifications=[notification(i) for i in range(20)],
                options={"result_name": "R" * 100},
                utm_params={"utm_source": LONG, "utm_medium": LONG, "utm_campaign": LONG},
            )
        rows = {
            "triggers.list(limit=500)": size(emu, "/apiv1/triggers?limit=500"),
            "triggers.get (20 notifications)": size(emu, "/apiv1/triggers/1"),
        }
        start = dt.date(2016, 1, 1)
        for d in range(0, 3660, 3):
            emu.add_subscriber(
                subscribed_at=(start + dt.timedelta(days=d)).isoformat(),
                country=f"C{d % 250}",
                city=f"City {d}",
                device="Mobile",
            )
        rows["analytics.summary (3,660 days by day)"] = size(
            emu, "/apiv1/analytics/summary?from=2016-01-01&to=2026-01-08&group_by=day"
        )
        rows["analytics.subscribers (1,220 cities)"] = size(
            emu, "/apiv1/subscribers/analytics/summary"
        )
    width = max(map(len, rows))
    for name, n in rows.items():
        print(f"{name:<{width}}  {n / 1024:8.1f} KiB")


if __name__ == "__main__":
    main()
