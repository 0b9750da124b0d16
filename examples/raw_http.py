"""Every endpoint of the push notification service API over raw HTTP, without the client.

Starts the local emulator that ships with pushwire, seeds it with a few subscribers, segments
and a triggered campaign, then calls each endpoint with nothing but the standard library
(urllib.request, json, urllib.parse), printing one line per call. Point BASE_URL, EVENTS_URL
and API_KEY at the real service and the same requests work there.

    python examples/raw_http.py
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Optional

from pushwire.testing import Emulator


class Service:
    """The two interfaces of the service, spoken in plain HTTP."""

    def __init__(self, base_url: str, events_url: str, api_key: str) -> None:
        self.base_url = base_url
        self.events_url = events_url
        self.api_key = api_key

    def call(
        self,
        method: str,
        url: str,
        *,
        query: Optional[dict[str, Any]] = None,
        form: Optional[list[tuple[str, str]]] = None,
        body: Any = None,
    ) -> tuple[int, Any]:
        headers = {"Api-Key": self.api_key, "Accept": "application/json"}
        data = None
        if query:
            url += "?" + urllib.parse.urlencode(query)
        if form is not None:
            # Arrays go as indexed keys: name[0]=a&name[1]=b (already spelled so by callers).
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:  # 4xx/5xx still carry a JSON body
            return e.code, json.loads(e.read() or b"null")

    def main(self, method: str, path: str, **kw: Any) -> tuple[int, Any]:
        return self.call(method, self.base_url + "/apiv1" + path, **kw)

    def events(self, body: Any) -> tuple[int, Any]:
        return self.call("POST", self.events_url + "/api/v1/events", body=body)


def indexed(name: str, values: list[str]) -> list[tuple[str, str]]:
    return [(f"{name}[{i}]", v) for i, v in enumerate(values)]


def show(label: str, status: int, summary: str) -> None:
    print(f"{label:<44} HTTP {status}  {summary}")


def expect(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"unexpected answer: {what}")


def main() -> int:
    with Emulator(api_key="quickstart-key") as emu:
        print(f"emulator: main {emu.base_url}, events {emu.events_url}\n")

        # Seed what the service would already hold: subscribers, segments, a trigger.
        vip = emu.create_segment("vip")
        emu.create_segment("newsletter")
        alice = emu.add_subscriber(
            profile_id="alice", country="FR", city="Paris", device_type="desktop"
        )
        bob = emu.add_subscriber(
            profile_id="bob", country="DE", city="Berlin", device_type="mobile"
        )
        emu.add_subscriber(profile_id="carol", country="FR", city="Lyon", device_type="mobile")
        trigger_id = emu.create_trigger(
            campaign_name="Abandoned cart",
            rules={"start_event_name": "cart_add", "stop_event_name": "purchase"},
            notifications=[
                {
                    "title": "You left something, {{name}}",
                    "message": "Your cart is waiting",
                    "url": "https://shop.example/cart",
                }
            ],
        )

        svc = Service(emu.base_url, emu.events_url, emu.api_key)

        # 4.1 / 4.2 triggered campaigns
        status, r = svc.main("GET", f"/triggers/{trigger_id}")
        expect(status == 200 and r["success"], "view trigger")
        t = r["data"]
        show(
            "4.1  GET /apiv1/triggers/{id}",
            status,
            f"{t['campaign_name']!r} starts on {t['rules']['start_event_name']!r}, "
            f"{len(t['notifications'])} notification(s)",
        )
        status, r = svc.main("GET", "/triggers", query={"page": 1, "limit": 10})
        expect(status == 200, "list triggers")
        show("4.2  GET /apiv1/triggers", status, f"{len(r['data'])} campaign(s), meta {r['meta']}")

        # 4.3 - 4.5 drips
        drip = {
            "campaign_name": "Welcome series",
            "notifications": [
                {
                    "title": "Welcome!",
                    "message": "Thanks for subscribing",
                    "url": "https://shop.example/welcome",
                    "image_url": "https://shop.example/icon.png",
                    "big_image_url": "https://shop.example/banner.png",
                    "require_interaction": 1,
                    "expiry": 86400,
                    "schedule_options": {"type": "rightaway"},
                },
                {
                    "title": "Our best sellers",
                    "message": "Picked for you",
                    "url": "https://shop.example/best",
                    "image_url": "https://shop.example/icon.png",
                    "big_image_url": "https://shop.example/best.png",
                    "require_interaction": 0,
                    "expiry": 86400,
                    "schedule_options": {
                        "type": "after",
                        "value": 1,
                        "unit": "days",
                        "at": "10:00:00",
                    },
                    "actions": [{"label": "Shop now", "url": "https://shop.example/best"}],
                },
            ],
            "send_to": {"include_segments": [str(vip)]},
            "utm_params": {"utm_source": "push", "utm_medium": "web", "utm_campaign": "welcome"},
        }
        status, r = svc.main("POST", "/drips", body=drip)
        expect(status == 200 and r["success"], "create drip")
        drip_id = r["drip_id"]
        show("4.3  POST /apiv1/drips", status, f"drip_id {drip_id}")
        status, r = svc.main("GET", "/drips")
        expect(status == 200, "list drips")
        show(
            "4.4  GET /apiv1/drips",
            status,
            f"{r['meta']['total']} drip(s), lastPage {r['meta']['lastPage']}",
        )
        status, r = svc.main("GET", f"/drips/{drip_id}")
        expect(status == 200, "view drip")
        show(
            "4.5  GET /apiv1/drips/{id}",
            status,
            f"{r['data']['campaign_name']!r} with {len(r['data']['notifications'])} notifications",
        )

        # 4.6 - 4.9 segments
        status, r = svc.main(
            "POST",
            "/segments/addSegmentWithHash",
            form=[("segment_id", str(vip))] + indexed("subscriber_hash", [alice, bob]),
        )
        expect(status == 200 and r["success"], "add by hash")
        show("4.6  POST /apiv1/segments/addSegmentWithHash", status, r["message"])
        for operation, done in (("add", "joined"), ("delete", "left")):
            status, r = svc.main(
                "POST",
                "/profile",
                form=[("segment_name", "newsletter"), ("operation", operation)]
                + indexed("profile_id", ["carol"]),
            )
            expect(status == 200 and r["success"], f"profile {operation}")
            show(f"4.8  POST /apiv1/profile ({operation})", status, f"carol {done} 'newsletter'")
        status, r = svc.main("GET", "/segments", query={"limit": 10, "offset": 0})
        expect(status == 200, "view segments")
        names = ", ".join(f"{s['segment_id']}={s['segment_name']}" for s in r["segments"])
        show("4.9  GET /apiv1/segments", status, f"count {r['count']}: {names}")

        # 4.10 / 4.11 analytics
        today = emu.now.date().isoformat()
        status, r = svc.main(
            "GET", "/analytics/summary", query={"from": today, "to": today, "group_by": "day"}
        )
        expect(status == 200, "summary")
        row = r["data"][0]
        show(
            "4.10 GET /apiv1/analytics/summary",
            status,
            f"{row['date']}: {row['subscriber_count']} new subscribers",
        )
        status, r = svc.main(
            "GET", "/subscribers/analytics/summary", query={"type": "country,device_type"}
        )
        expect(status == 200, "distribution")
        show("4.11 GET /apiv1/subscribers/analytics/summary", status, json.dumps(r["data"]))

        # 4.12 products
        status, r = svc.main(
            "POST",
            "/products",
            body={"products": [{"product_id": "sku-42", "price": 17.5, "availability": "inStock"}]},
        )
        expect(status == 200 and r["success"], "products")
        show("4.12 POST /apiv1/products", status, "sku-42 now 17.5, in stock")

        # 4.13 broadcasts: now, later, draft, and a targeted one
        base = [
            ("notification_title", "Summer sale"),
            ("notification_message", "Everything 20% off today"),
            ("notification_url", "https://shop.example/sale"),
        ]
        for kind, extra in [
            ("now", []),
            ("later", [("valid_from_utc", "2030-07-01 09:00:00")]),
            ("draft", []),
            ("now", indexed("include_segments", [str(vip)]) + indexed("include_countries", ["FR"])),
        ]:
            status, r = svc.main(
                "POST", "/notifications", form=base + [("notification_type", kind)] + extra
            )
            expect(status == 200 and r["success"], f"broadcast {kind}")
            label = "targeted" if extra and kind == "now" else kind
            show(
                f"4.13 POST /apiv1/notifications ({label})",
                status,
                f"notification_id {r['notification_id']}",
            )

        # 4.14 events, on their own interface
        status, r = svc.events(
            {"event_name": "cart_add", "profile_id": "alice", "data": {"sku": "sku-42"}}
        )
        expect(status == 200 and r["error_code"] == 0, "track event")
        show("4.14 POST /api/v1/events", status, json.dumps(r))

        # What errors look like (section 7).
        status, r = Service(emu.base_url, emu.events_url, "wrong-key").main("GET", "/segments")
        expect(status == 401, "401")
        show("     GET /apiv1/segments (wrong key)", status, json.dumps(r))
        status, r = svc.main("POST", "/segments/delete", form=[("segment_id", "999999")])
        expect(status == 400, "unknown segment")
        show("     POST /apiv1/segments/delete (unknown)", status, r["message"])
        status, r = svc.events({"profile_id": "alice"})
        expect(status == 400, "bad event")
        show("     POST /api/v1/events (no event_name)", status, json.dumps(r["error"]["details"]))

        # 4.7 delete segment, last since the calls above use it
        status, r = svc.main("POST", "/segments/delete", form=[("segment_id", str(vip))])
        expect(status == 200 and r["success"], "delete segment")
        show("4.7  POST /apiv1/segments/delete", status, r["message"])

        print(f"\n{len(emu.requests())} requests served; the emulator saw the key as [redacted].")
    return 0


if __name__ == "__main__":
    sys.exit(main())
