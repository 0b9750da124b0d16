"""The inspector page of issue 21, ``GET {base_url}/_emulator/ui``: what it is served as, its
live stream, the admin operations it reads, and the page itself in a real browser.

The browser tests drive headless Chromium through selenium and the Debian packages
``chromium`` and ``chromium-driver`` (``make test`` installs them where it can: see
``SYSTEM_DEPS`` in the Makefile). Where no browser can be had they are skipped with the
reason; ``PUSHWIRE_REQUIRE_BROWSER=1`` makes a missing browser a failure instead. Each
browser test saves a screenshot, ``inspector-<test>.png``, in ``$PUSHWIRE_ARTIFACTS`` (by
default ``test-artifacts/`` at the root of the repository).

Images in these tests come from a local HTTP server: nothing reaches the network, and no
failed image load can show as a console error.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

import pytest
import requests
from browser_support import CHROMIUM_FLAGS
from client_support import drip_notification
from conftest import QuietHandler, serving

from pushwire.testing import Emulator

ROOT = Path(__file__).resolve().parent.parent
PAGE_FILE = ROOT / "src" / "emulator" / "ui" / "inspector.html"
ARTIFACTS = Path(os.environ.get("PUSHWIRE_ARTIFACTS") or ROOT / "test-artifacts")
TIMEOUT = 10  # seconds any wait in the browser may take
# A 1x1 PNG: the notifications' icons and images.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8cfc0f01f0005000201d7c1b94c0000000049454e44ae426082"
)


# -- helpers --------------------------------------------------------------------------------
def page_files() -> dict[str, str]:
    """The files the page loads as the repository writes them, by name: those its HTML names
    (``ui/<name>``) and those its script modules import (``./<name>``), followed from the
    entry."""
    ui = PAGE_FILE.parent
    named = re.findall(r'="ui/([^"]+)"', PAGE_FILE.read_text(encoding="utf-8"))
    files: dict[str, str] = {}
    while named:
        name = named.pop()
        if name not in files:
            files[name] = (ui / name).read_text(encoding="utf-8")
            named += re.findall(r'from "\./([^"]+)"', files[name])
    return files


def admin(emu: Emulator, op: str, **args: Any) -> Any:
    """An admin operation over HTTP, as the page calls it."""
    answer = requests.post(f"{emu.base_url}/_emulator/{op}", json=args, timeout=TIMEOUT)
    assert answer.status_code == 200, (op, answer.status_code, answer.text)
    return answer.json()


def naive(when: dt.datetime) -> dt.datetime:
    """A time as ``valid_from_utc`` reads it: site-local (UTC here), without a zone."""
    return when.astimezone(dt.timezone.utc).replace(tzinfo=None)


def page_time(iso: str) -> str:
    """An ISO time as the page prints it."""
    when = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


@pytest.fixture(scope="module")
def image_url() -> Iterator[str]:
    """The URL of a PNG served from this process."""

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 (the handler's name)
            self.reply(200, PNG, "image/png")

    with serving(Handler) as url:
        yield f"{url}/icon.png"


@pytest.fixture(scope="module")
def images(image_url: str) -> dict[str, str]:
    """A notification's icon and banner, both the PNG served from this process."""
    return {"image_url": image_url, "big_image_url": image_url}


# -- the page as served ---------------------------------------------------------------------
def test_page_is_served_whole_with_no_external_asset_and_nothing_inline() -> None:
    with Emulator() as emu:
        answer = requests.get(emu.ui_url, timeout=TIMEOUT)
        files = page_files()
        served = {name: requests.get(f"{emu.ui_url}/{name}", timeout=TIMEOUT) for name in files}
        unknown = requests.get(f"{emu.ui_url}/nothing.js", timeout=TIMEOUT)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("text/html")
    html = answer.text
    # The page built into the emulator is the one in the repository, and so is each file it
    # loads (a stale build, a file left out of the build, or a placeholder, fails here).
    assert html == PAGE_FILE.read_text(encoding="utf-8")
    assert {"inspector.css", "inspector.js", "dom.js", "page.js", "live.js"} <= set(files)
    # Every script and style sheet in the repository's ui/ is one the page loads.
    assert set(files) == {p.name for p in PAGE_FILE.parent.iterdir() if p.suffix in (".js", ".css")}
    for name, got in served.items():
        assert got.status_code == 200, name
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        assert got.headers["Content-Type"].startswith(kind), name
        assert got.headers["X-Content-Type-Options"] == "nosniff", name
        assert got.text == files[name], name
    assert unknown.status_code == 404 and "nothing.js" in unknown.json()["error"]
    # Nothing inline: one script, a module by its path on the emulator, and no style element
    # or attribute, no event-handler attribute.
    assert re.findall(r"<script\b[^>]*>", html, re.I) == [
        '<script type="module" src="ui/inspector.js">'
    ]
    assert not re.search(r"<style|\sstyle\s*=|\son[a-z]+\s*=", html, re.I)
    # The policy the browser enforces allows nothing else: the emulator's own scripts and
    # style sheets, its own routes to read, images from anywhere (the notifications').
    policy = {
        d.split()[0]: d.split()[1:] for d in answer.headers["Content-Security-Policy"].split(";")
    }
    assert policy["script-src"] == ["'self'"] and policy["style-src"] == ["'self'"]
    assert policy["default-src"] == ["'self'"] and policy["connect-src"] == ["'self'"]
    assert "unsafe" not in answer.headers["Content-Security-Policy"]
    # Nothing fetched from elsewhere: every URL the page and its files name is the page's own
    # (relative) or data:, but SVG's namespace, a name that is never fetched.
    for tag in re.findall(r"<(?:link|img|iframe|source|object|embed)\b[^>]*>", html, re.I):
        for value in re.findall(r"\b(?:href|src|data)\s*=\s*[\"']?([^\"'\s>]*)", tag, re.I):
            assert value.startswith(("data:", "ui/")), tag
    everything = html + "".join(files.values())
    assert not re.search(r"@import|@font-face", everything, re.I)
    for value in re.findall(r"url\(\s*[\"']?([^\"')]*)", files["inspector.css"], re.I):
        assert value.startswith("data:"), value
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", everything, re.I))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls


def test_the_base_url_and_the_admin_root_lead_to_the_page() -> None:
    with Emulator() as emu:
        for path in ("", "/", "/_emulator", "/_emulator/", "/_emulator/ui/"):
            answer = requests.get(emu.base_url + path, timeout=TIMEOUT, allow_redirects=False)
            assert answer.status_code == 303, path
            assert answer.headers["Location"] == "/_emulator/ui", path
        # The API around them is unchanged: no key is still 401, an unknown path 404.
        assert requests.get(emu.base_url + "/apiv1/segments", timeout=TIMEOUT).status_code == 401
        unknown = requests.get(
            emu.base_url + "/apiv1/nothing", headers={"Api-Key": emu.api_key}, timeout=TIMEOUT
        )
        assert unknown.status_code == 404


def test_page_url_is_the_emulators_and_the_console_script_prints_it() -> None:
    with Emulator() as emu:
        assert emu.ui_url == f"{emu.base_url}/_emulator/ui"
    process = subprocess.Popen(
        [sys.executable, "-m", "pushwire.emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        served = dict(process.stdout.readline().strip().split("=", 1) for _ in range(4))
        assert served["PUSHWIRE_UI_URL"] == served["PUSHWIRE_BASE_URL"] + "/_emulator/ui"
        answer = requests.get(served["PUSHWIRE_UI_URL"], timeout=TIMEOUT)
        assert answer.status_code == 200 and "<html" in answer.text
    finally:
        process.terminate()
        process.wait(timeout=TIMEOUT)
        if process.stdout is not None:
            process.stdout.close()


class Stream:
    """The inspector's server-sent events, read with a bounded wait."""

    def __init__(self, emu: Emulator) -> None:
        url = urlsplit(emu.base_url)
        self.conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=TIMEOUT)
        self.conn.request("GET", "/_emulator/ui/stream", headers={"Accept": "text/event-stream"})
        self.answer = self.conn.getresponse()

    def next(self, timeout: float = TIMEOUT) -> tuple[str, dict[str, Any]]:
        """The next event's name and data; ``socket.timeout`` when none comes in time."""
        assert self.conn.sock is not None
        self.conn.sock.settimeout(timeout)
        name, data = "message", ""
        while True:
            line = self.answer.readline().decode()
            if not line:
                raise EOFError("the stream ended")
            line = line.rstrip("\r\n")
            if line == "" and data:
                return name, json.loads(data)
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()

    def close(self) -> None:
        self.conn.close()


def test_stream_tells_of_each_change_and_not_of_reads() -> None:
    with Emulator() as emu:
        emu.add_subscriber(profile_id="ada")
        stream = Stream(emu)
        try:
            assert stream.answer.status == 200
            assert stream.answer.getheader("Content-Type", "").startswith("text/event-stream")
            name, first = stream.next()  # one at connect
            assert name == "change" and isinstance(first["version"], int)

            emu.client().notifications.create(title="Hi", message="m", url="https://a.example")
            name, second = stream.next()
            assert name == "change" and second["version"] > first["version"]

            # A mutating admin operation is a change too.
            admin(emu, "advance", seconds=60)
            assert stream.next()[1]["version"] > second["version"]

            # Reads are not: the page re-reads on every change, and must not loop.
            for op in ("broadcasts", "requests", "sites", "now", "subscribers", "summary"):
                admin(emu, op)
            with pytest.raises(socket.timeout):
                stream.next(timeout=1.0)
        finally:
            stream.close()


# -- the admin operations the page reads ----------------------------------------------------
def test_sites_name_each_site_without_its_key() -> None:
    with Emulator(api_key="default-key-0123456789") as emu:
        second = emu.add_site("second-site-key-abcdef")
        emu.add_subscriber(api_key="second-site-key-abcdef")
        emu.add_subscriber(api_key="second-site-key-abcdef")
        sites = admin(emu, "sites")
    assert "default-key-0123456789" not in json.dumps(sites)
    assert "second-site-key-abcdef" not in json.dumps(sites)
    by_id = {s["site_id"]: s for s in sites}
    assert by_id[second]["subscribers"] == 2
    assert by_id[second]["default"] is False
    assert [s["default"] for s in sites].count(True) == 1
    for s in sites:
        assert set(s) >= {"site_id", "key_hint", "subscribers", "default"}
        assert isinstance(s["key_hint"], str)


def test_broadcasts_newest_first_with_audience_status_and_counts(
    image_url: str, images: dict[str, str]
) -> None:
    with Emulator() as emu:
        vip = emu.create_segment("vip")
        ada = emu.add_subscriber(profile_id="ada", country="US", segments=[vip])
        emu.add_subscriber(profile_id="bob", country="DE")
        with emu.client() as client:
            first = client.notifications.create(
                title="First",
                message="to vip",
                url="https://shop.example/a",
                **images,
                include_segments=[vip],
                exclude_countries=["FR"],
                actions=[{"label": "Buy", "url": "https://shop.example/buy"}],
                expiry=60,
            )
            later = client.notifications.create(
                title="Later",
                message="m",
                url="https://shop.example/b",
                type="later",
                valid_from_utc=naive(emu.now + dt.timedelta(hours=2)),
            )
        [delivery] = emu.deliveries(subscriber_hash=ada)
        emu.record_view(delivery["delivery_id"])
        emu.record_click(delivery["delivery_id"])

        listed = admin(emu, "broadcasts")
        assert [b["notification_id"] for b in listed] == [later, first]
        newest, oldest = listed
        assert newest["status"] == "scheduled"
        assert newest["due_at"] is not None
        assert newest["audience"] == {}
        assert newest["deliveries"] == 0
        assert oldest["status"] == "sent"
        assert oldest["title"] == "First" and oldest["message"] == "to vip"
        assert oldest["url"] == "https://shop.example/a"
        assert oldest["image_url"] == image_url and oldest["big_image_url"] == image_url
        assert oldest["actions"] == [{"label": "Buy", "url": "https://shop.example/buy"}]
        assert oldest["expiry_minutes"] == 60
        # Only the filters given, under the spec's names.
        assert set(oldest["audience"]) == {"include_segments", "exclude_countries"}
        assert oldest["audience"]["exclude_countries"] == ["FR"]
        counts = {k: oldest[k] for k in ("deliveries", "delivered", "pending", "expired")}
        assert counts == {"deliveries": 1, "delivered": 1, "pending": 0, "expired": 0}
        assert (oldest["views"], oldest["clicks"]) == (1, 1)
        assert admin(emu, "broadcasts", limit=1, offset=1) == [oldest]

        # The clock brings the scheduled one out.
        emu.advance(3 * 3600)
        assert admin(emu, "broadcasts", limit=1)[0]["status"] == "sent"


def test_a_broadcasts_counts_follow_each_delivery_and_survive_a_restart(tmp_path: Path) -> None:
    def walked(emu: Emulator, nid: int) -> dict[str, int]:
        """The counts as the deliveries themselves tell them."""
        ds = emu.deliveries(notification_id=nid, status="all")
        out = {s: sum(d["status"] == s for d in ds) for s in ("delivered", "pending", "expired")}
        out["views"] = sum(d["viewed_at"] is not None for d in ds)
        out["clicks"] = sum(d["clicked_at"] is not None for d in ds)
        return {"deliveries": len(ds), **out}

    def shown(emu: Emulator, nid: int) -> dict[str, int]:
        [b] = [b for b in admin(emu, "broadcasts") if b["notification_id"] == nid]
        return {
            k: b[k] for k in ("deliveries", "delivered", "pending", "expired", "views", "clicks")
        }

    with Emulator() as emu:
        hashes = emu.add_subscribers([{"online": i % 3 != 0} for i in range(300)])
        emu.unsubscribe(hashes[1])
        with emu.client() as client:
            nid = client.notifications.create(
                title="t", message="m", url="https://shop.example/", expiry=60
            )
            other = client.notifications.create(
                title="u", message="m", url="https://shop.example/", subscriber_hash=hashes[:10]
            )
        assert (
            shown(emu, nid)
            == walked(emu, nid)
            == {
                "deliveries": 299,
                "delivered": 199,
                "pending": 100,
                "expired": 0,
                "views": 0,
                "clicks": 0,
            }
        )
        for d in emu.deliveries(notification_id=nid)[:40]:
            emu.record_view(d["delivery_id"])
            if d["delivery_id"] % 2:
                emu.record_click(d["delivery_id"])
        for h in hashes[0:90:3]:  # thirty waiting devices come online
            emu.set_online(h, True)
        emu.advance(61 * 60)  # the other seventy expire
        counts = shown(emu, nid)
        assert counts == walked(emu, nid)
        assert (counts["delivered"], counts["pending"], counts["expired"]) == (229, 0, 70)
        assert counts["views"] == 40 and 0 < counts["clicks"] < 40
        assert shown(emu, other) == walked(emu, other)
        path = emu.save(tmp_path / "site.state")
    with Emulator.load(path) as again:
        assert shown(again, nid) == counts
        assert shown(again, other) == walked(again, other)


def test_campaign_reads_carry_schedules_and_what_each_sent(images: dict[str, str]) -> None:
    def step(title: str, schedule: dict[str, Any]) -> dict[str, Any]:
        return drip_notification(
            title=title,
            message=f"{title} message",
            url="https://shop.example/" + title.lower(),
            schedule_options=schedule,
            **images,
        )

    with Emulator() as emu:
        trigger_id = emu.create_trigger(
            campaign_name="Cart",
            status="active",
            rules={"start_event_name": "add_to_cart", "stop_event_name": "purchase"},
            notifications=[step("Forgot", {"type": "rightaway"})],
        )
        client = emu.client()
        drip_id = client.drips.create(
            "Welcome",
            [
                step("Hello", {"type": "rightaway"}),
                step("Tips", {"type": "after", "value": 30, "unit": "minutes"}),
            ],
        )
        emu.add_subscriber(profile_id="ada")
        client.events.track("add_to_cart", profile_id="ada")

        [trigger] = admin(emu, "triggers")
        assert trigger["trigger_id"] == trigger_id
        assert trigger["rules"]["start_event_name"] == "add_to_cart"
        assert trigger["notifications"][0]["schedule_options"]["type"] == "rightaway"
        assert trigger["analytics"]["sentcount"] == 1
        assert trigger["notifications"][0]["analytics"]["sentcount"] == 1

        [drip] = admin(emu, "drips")
        assert drip["drip_id"] == drip_id and drip["campaign_name"] == "Welcome"
        schedules = [n["schedule_options"] for n in drip["notifications"]]
        assert schedules[1] == {"type": "after", "value": 30, "unit": "minutes"}
        assert drip["analytics"]["sentcount"] == 1
        assert [n["analytics"]["sentcount"] for n in drip["notifications"]] == [1, 0]


def test_subscribers_paged_and_one_by_hash() -> None:
    with Emulator() as emu:
        hashes = [emu.add_subscriber(profile_id=f"p{i}") for i in range(5)]
        page = admin(emu, "subscribers", limit=2, offset=1, meta=True)
        assert page["total"] == 5
        assert [s["subscriber_hash"] for s in page["entries"]] == hashes[1:3]
        assert [s["subscriber_hash"] for s in admin(emu, "subscribers", limit=2)] == hashes[:2]
        one = admin(emu, "subscribers", subscriber_hash=hashes[3])
        assert one["subscriber_hash"] == hashes[3] and one["profile_id"] == "p3"


def test_summary_rows_per_day() -> None:
    with Emulator() as emu:
        ada = emu.add_subscriber(profile_id="ada")
        emu.add_subscriber(profile_id="bob")
        emu.client().notifications.create(title="Hi", message="m", url="https://a.example")
        emu.record_view(emu.deliveries(subscriber_hash=ada)[0]["delivery_id"])
        today = emu.now.date()
        rows = admin(
            emu,
            "summary",
            **{"from": str(today - dt.timedelta(days=6)), "to": str(today), "group_by": "day"},
        )
        fields = {"date", "subscriber_count", "unsubscribed_count", "notification_sent"}
        fields |= {"net_subscriber_sent", "view_count", "click_count", "ctr"}
        for row in rows:
            assert set(row) >= fields
        # Distinct notifications sent, and their deliveries.
        assert sum(r["notification_sent"] for r in rows) == 1
        assert sum(r["net_subscriber_sent"] for r in rows) == 2
        assert sum(r["view_count"] for r in rows) == 1
        assert sum(r["subscriber_count"] for r in rows) == 2
        # Without dates: the 30 days up to the emulator's today.
        assert sum(r["net_subscriber_sent"] for r in admin(emu, "summary")) == 2
        bad = requests.post(
            f"{emu.base_url}/_emulator/summary", json={"group_by": "hour"}, timeout=TIMEOUT
        )
        assert bad.status_code == 400 and "group_by" in bad.json()["error"]


def test_site_id_stands_for_the_key_and_requests_have_a_duration() -> None:
    with Emulator() as emu:
        other = emu.add_site("other-site-key-000111")
        emu.create_segment("theirs", api_key="other-site-key-000111")
        assert [s["segment_name"] for s in admin(emu, "segments", site_id=other)] == ["theirs"]
        assert admin(emu, "segments") == []
        missing = requests.post(
            f"{emu.base_url}/_emulator/segments", json={"site_id": 999}, timeout=TIMEOUT
        )
        assert missing.status_code == 400
        emu.client().segments.list()
        [entry] = admin(emu, "requests", path="/apiv1/segments*")
        assert isinstance(entry["duration_ms"], (int, float)) and entry["duration_ms"] >= 0
        retention = admin(emu, "retention", site_id=other)
        assert set(retention) == {"retention", "requests", "events"}
        assert set(retention["requests"]) == {"kept", "pruned"}


# -- the page in a browser ------------------------------------------------------------------
def _browser_paths() -> tuple[Optional[str], Optional[str], str]:
    browser = next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )
    driver = shutil.which("chromedriver")
    missing = [n for n, p in (("chromium", browser), ("chromedriver", driver)) if not p]
    why = (
        f"no {' and no '.join(missing)} on PATH (the Debian packages chromium and "
        "chromium-driver; `make test` installs them as root)"
    )
    return browser, driver, why


def _cannot(reason: str) -> None:
    if os.environ.get("PUSHWIRE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"PUSHWIRE_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _cannot("selenium is not installed (requirements-dev.txt)")
    chromium, chromedriver, why = _browser_paths()
    if not chromium or not chromedriver:
        _cannot(why)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in CHROMIUM_FLAGS:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(options=options, service=Service(chromedriver))
    except Exception as e:  # the browser is there but does not start
        _cannot(f"headless Chromium did not start: {type(e).__name__}: {e}".strip())
    driver.set_page_load_timeout(TIMEOUT * 3)
    yield driver
    driver.quit()


class Page:
    """The inspector open in the browser, on one emulator."""

    def __init__(self, driver: Any, emu: Emulator) -> None:
        self.driver = driver
        self.emu = emu

    def wait(self, what: Callable[[Any], Any], message: str = "", timeout: float = TIMEOUT) -> Any:
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(
            self.driver, timeout, ignored_exceptions=(StaleElementReferenceException,)
        ).until(what, message)

    def find(self, css: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def tab(self, name: str) -> None:
        self.find(f"#tab-{name}").click()
        self.wait(lambda d: self.find(f"#view-{name}").is_displayed(), f"the {name} view")

    def broadcast(self, title: str) -> Any:
        """The card of the broadcast titled so, once the page shows it."""

        def card(_: Any) -> Any:
            for c in self.find_all("[data-testid=broadcast]"):
                if c.find_element("css selector", "[data-testid=preview-title]").text == title:
                    return c
            return False

        return self.wait(card, f"a broadcast titled {title!r}")

    def console_errors(self) -> list[dict[str, Any]]:
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"inspector-{name}.png"
        assert self.driver.save_screenshot(str(path)), path
        return path


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh emulator and the inspector open on it, live; no console error by the end."""
    with Emulator(api_key="inspector-secret-key-7f3a9c") as emu:
        browser.get("about:blank")
        browser.get_log("browser")  # what an earlier page left
        browser.get(emu.ui_url)
        p = Page(browser, emu)
        p.wait(lambda d: p.find("#live").get_attribute("data-state") == "live", "the live stream")
        p.wait(lambda d: re.match(r"\d{4}-\d\d-\d\d ", p.find("#clock").text), "the clock")
        # Set once: still there at the end means the page was never reloaded.
        browser.execute_script("window.__sameDocument = 'yes';")
        yield p
        try:
            p.screenshot(request.node.name)
            assert p.console_errors() == []
        finally:
            # The page leaves before the emulator stops, or its stream would log the refusal.
            browser.get("about:blank")


def not_reloaded(p: Page) -> None:
    assert p.driver.execute_script("return window.__sameDocument;") == "yes"


def test_page_loads_with_no_console_error(page: Page) -> None:
    for tab in ("broadcasts", "campaigns", "subscribers", "events", "requests", "analytics"):
        page.tab(tab)
        assert not page.find("#error-banner").is_displayed()
    page.tab("faults")
    assert page.find("[data-testid=broadcast-list]").get_attribute("id") == "broadcast-list"
    assert page.console_errors() == []
    # The log is read for real: an error the page logs is seen.
    page.driver.execute_script("console.error('pushwire-probe');")
    assert any("pushwire-probe" in e["message"] for e in page.console_errors())
    shot = page.screenshot("loaded")
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    not_reloaded(page)


def test_the_browser_refuses_inline_script_and_style_on_the_page(browser: Any) -> None:
    with Emulator() as emu:
        browser.get("about:blank")
        browser.get_log("browser")
        browser.get(emu.ui_url)
        p = Page(browser, emu)
        p.wait(lambda d: p.find("#live").get_attribute("data-state") == "live", "the live stream")
        # Markup that text ever became would not run: an inline script and an inline style
        # put in the page are refused, each with a policy violation the page can see.
        browser.execute_script(
            "window.__violations = [];"
            "document.addEventListener('securitypolicyviolation',"
            " function (e) { window.__violations.push(e.effectiveDirective); });"
            "var s = document.createElement('script');"
            "s.textContent = 'window.__inlineRan = true;';"
            "document.body.appendChild(s);"
            "var d = document.createElement('div'); d.id = 'styled';"
            "d.setAttribute('style', 'width: 123px'); document.body.appendChild(d);"
        )
        seen = p.wait(
            lambda d: len(v := d.execute_script("return window.__violations;")) == 2 and v,
            "both refusals",
        )
        ran = browser.execute_script("return window.__inlineRan === true;")
        width = browser.execute_script(
            "return document.getElementById('styled').getBoundingClientRect().width;"
        )
        browser.get_log("browser")  # the two refusals, logged as errors
        browser.get("about:blank")
    assert ran is False
    assert width != 123
    assert sorted(seen) == ["script-src-elem", "style-src-attr"]


def test_a_browser_at_the_base_url_or_the_admin_root_reaches_the_inspector(browser: Any) -> None:
    with Emulator() as emu:
        for path in ("", "/_emulator/", "/_emulator/ui/"):
            browser.get("about:blank")
            browser.get(emu.base_url + path)
            p = Page(browser, emu)
            live = p.find  # bound now: the wait reads this page's element
            p.wait(
                lambda d, find=live: find("#live").get_attribute("data-state") == "live",
                f"the live stream, from {path!r}",
            )
            assert browser.current_url.split("#")[0] == emu.ui_url, path
        browser.get("about:blank")


def test_broadcast_sent_by_a_test_appears_with_its_preview(
    page: Page, image_url: str, images: dict[str, str]
) -> None:
    emu = page.emu
    vip = emu.create_segment("vip")
    emu.add_subscriber(profile_id="ada", segments=[vip])
    page.wait(lambda d: "No broadcast yet" in page.find("#broadcast-list").text, "empty list")

    emu.client().notifications.create(
        title="Spring sale",
        message="Everything 20% off",
        url="https://shop.example/sale",
        **images,
        include_segments=[vip],
        actions=[
            {"label": "Shop now", "url": "https://shop.example/now"},
            {"label": "Later", "url": "https://shop.example/later"},
        ],
    )
    card = page.broadcast("Spring sale")
    preview = card.find_element("css selector", "[data-testid=preview]")
    assert preview.find_element("css selector", "[data-testid=preview-message]").text == (
        "Everything 20% off"
    )
    assert preview.find_element("css selector", "[data-testid=preview-host]").text == (
        "shop.example"
    )
    buttons = preview.find_elements("css selector", "[data-testid=preview-action]")
    assert [b.text for b in buttons] == ["Shop now", "Later"]
    assert "https://shop.example/sale" in preview.text
    shown = preview.find_elements("css selector", "img")
    assert shown and all(i.get_attribute("src") == image_url for i in shown)
    assert card.get_attribute("data-status") == "sent"
    assert "vip" in card.find_element("css selector", "[data-testid=audience]").text
    delivered = "[data-testid=count-delivered] b"
    page.wait(
        lambda d: page.broadcast("Spring sale").find_element("css selector", delivered).text == "1",
        "one delivered",
    )
    not_reloaded(page)


def test_advance_one_hour_sends_a_scheduled_broadcast(page: Page) -> None:
    emu = page.emu
    ada = emu.add_subscriber(profile_id="ada")
    emu.client().notifications.create(
        title="In half an hour",
        message="m",
        url="https://shop.example",
        type="later",
        valid_from_utc=naive(emu.now + dt.timedelta(minutes=30)),
    )
    card = page.broadcast("In half an hour")
    assert card.get_attribute("data-status") == "scheduled"
    [listed] = admin(emu, "broadcasts")
    status = card.find_element("css selector", "[data-testid=broadcast-status]").text
    assert status == f"scheduled · {page_time(listed['due_at'])}"
    assert emu.deliveries(subscriber_hash=ada) == []

    page.find("#advance-1h").click()
    page.wait(
        lambda d: page.broadcast("In half an hour").get_attribute("data-status") == "sent",
        "the broadcast sent",
    )
    assert len(emu.deliveries(subscriber_hash=ada)) == 1
    not_reloaded(page)


def test_request_log_shows_each_requests_trace(page: Page) -> None:
    emu = page.emu
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    headers = {"Api-Key": emu.api_key, "traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"}
    requests.get(f"{emu.base_url}/apiv1/segments", headers=headers, timeout=TIMEOUT)
    requests.get(f"{emu.base_url}/apiv1/drips", headers={"Api-Key": emu.api_key}, timeout=TIMEOUT)
    assert [r["trace_id"] for r in emu.requests()] == [trace_id, None]
    page.tab("requests")
    page.wait(lambda d: len(page.find_all("[data-testid=request-trace]")) == 2, "two requests")
    traced, untraced = reversed(page.find_all("[data-testid=request-trace]"))  # newest first
    assert traced.get_attribute("title") == trace_id and traced.text == trace_id[:8] + "…"
    assert untraced.text == ""


def test_request_log_shows_statuses_faults_and_no_key(page: Page) -> None:
    emu = page.emu
    client = emu.client(max_retries=0)
    emu.inject_fault("/apiv1/segments", status=503)
    with pytest.raises(Exception):  # noqa: B017 (the client's error for a 503)
        client.segments.list()
    client.segments.list()
    emu.add_subscriber(profile_id="ada")
    client.notifications.create(title="Hi", message="m", url="https://a.example")
    page.tab("requests")

    def rows(_: Any = None) -> list[tuple[str, str]]:
        return [
            (r.get_attribute("data-path"), r.get_attribute("data-status"))
            for r in page.find_all("[data-testid=request-row]")
        ]

    page.wait(lambda d: len(rows()) == 3, "three requests")
    # Newest first.
    assert rows() == [
        ("/apiv1/notifications", "200"),
        ("/apiv1/segments", "200"),
        ("/apiv1/segments", "503"),
    ]
    faulted = page.find_all("[data-testid=request-row]")[2]
    assert faulted.find_element("css selector", "[data-testid=request-fault]").text
    assert "http-5" in faulted.find_element(
        "css selector", "[data-testid=request-status]"
    ).get_attribute("class")
    assert re.search(r"\d ms", faulted.text)

    page.find("#req-status").send_keys("503")
    page.wait(lambda d: rows() == [("/apiv1/segments", "503")], "the 503 alone")
    page.find("#req-clear-filters").click()
    page.find("#req-path").send_keys("/apiv1/notif*")
    page.wait(lambda d: rows() == [("/apiv1/notifications", "200")], "the path's alone")

    # The details of a request: its headers, the key redacted.
    page.find("[data-testid=request-row]").click()
    detail = page.wait(lambda d: page.find("[data-testid=request-detail]"), "the details")
    assert "[redacted]" in detail.text
    assert emu.api_key not in page.driver.page_source

    # Pruned by retention, and said so.
    emu.set_retention(2)
    page.wait(lambda d: "1 request pruned" in page.find("#requests-pruned").text, "pruned")
    page.wait(lambda d: "1 pruned" in page.find("[data-testid=retention-requests]").text, "")
    assert emu.api_key not in page.driver.page_source


def test_site_switcher_shows_another_sites_data(page: Page) -> None:
    from selenium.webdriver.support.ui import Select

    emu = page.emu
    other_key = "second-site-secret-key-42"
    other = emu.add_site(other_key)
    emu.add_subscriber(profile_id="here")
    emu.add_subscriber(profile_id="there", api_key=other_key)
    emu.client().notifications.create(title="Default site only", message="m", url="https://a.b")
    emu.client(api_key=other_key).notifications.create(
        title="Second site only", message="m", url="https://c.d"
    )
    page.broadcast("Default site only")
    select = page.wait(
        lambda d: len(Select(page.find("#site-select")).options) == 2 and page.find("#site-select"),
        "two sites",
    )
    Select(select).select_by_value(str(other))
    page.broadcast("Second site only")
    titles = [t.text for t in page.find_all("[data-testid=preview-title]")]
    assert titles == ["Second site only"]
    page.tab("subscribers")
    page.wait(lambda d: "there" in page.find("#subscriber-table").text, "their subscriber")
    assert "here" not in page.find("#subscriber-table").text.split()
    source = page.driver.page_source
    assert other_key not in source and emu.api_key not in source


def test_hostile_text_is_shown_as_text(page: Page) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    emu = page.emu
    emu.add_subscriber(profile_id="ada", attributes={"note": "<b id=pwned-attr>x</b>"})
    title = "<img src=x onerror=alert(1)>"
    message = "<script>window.__pwned = 1</script>"
    emu.client().notifications.create(
        title=title,
        message=message,
        url="https://shop.example",
        actions=[{"label": "<i id=pwned-action>go</i>", "url": "https://shop.example/go"}],
    )

    # Read through waits: the live page may draw the card again between a find and a read.
    def shown(testid: str) -> str:
        return str(
            page.broadcast(title).find_element("css selector", f"[data-testid={testid}]").text
        )

    page.wait(lambda d: shown("preview-message") == message, "the message, as text")
    page.wait(lambda d: shown("preview-action") == "<i id=pwned-action>go</i>", "the button")
    page.tab("subscribers")
    page.wait(lambda d: page.find("[data-testid=subscriber-row]").click() or True, "a row")
    attrs = page.wait(lambda d: page.find("[data-testid=subscriber-attributes]"), "attributes")
    assert "<b id=pwned-attr>x</b>" in attrs.text
    assert page.find_all("#pwned-attr, #pwned-action") == []
    assert page.driver.execute_script("return window.__pwned === undefined;")
    images = page.driver.execute_script(
        "return Array.from(document.images).map(function (i) { return i.getAttribute('src'); });"
    )
    assert "x" not in images
    with pytest.raises(NoAlertPresentException):
        page.driver.switch_to.alert.text  # noqa: B018 (an alert open would answer)


def test_subscriber_page_shows_attributes_segments_and_notifications(page: Page) -> None:
    emu = page.emu
    vip = emu.create_segment("vip")
    ada = emu.add_subscriber(
        profile_id="ada", country="US", attributes={"plan": "pro"}, segments=[vip]
    )
    emu.client().notifications.create(title="For ada", message="m", url="https://a.example")
    page.tab("subscribers")
    row = page.wait(lambda d: page.find(f"[data-hash='{ada}']"), "ada's row")
    row.click()
    detail = page.wait(lambda d: page.find("[data-testid=subscriber-detail]"), "the page")
    page.wait(lambda d: page.find_all("[data-testid=delivery-row]"), "the deliveries")
    assert page.find("[data-testid=subscriber-hash]").text == ada
    assert "plan" in page.find("[data-testid=subscriber-attributes]").text
    assert "vip" in page.find("[data-testid=subscriber-segments]").text
    assert "For ada" in page.find("[data-testid=delivery-row]").text
    # A notification sent meanwhile shows there too.
    emu.client().notifications.create(title="Again", message="m", url="https://a.example")
    page.wait(lambda d: len(page.find_all("[data-testid=delivery-row]")) == 2, "the second")
    assert detail.is_displayed()


def test_the_subscriber_list_names_segments_when_it_is_the_first_view(browser: Any) -> None:
    with Emulator() as emu:
        vip = emu.create_segment("vip-first")
        ada = emu.add_subscriber(segments=[vip])
        browser.get(emu.ui_url + "#subscribers")
        page = Page(browser, emu)
        try:
            page.wait(
                lambda d: "vip-first" in page.find(f"[data-hash='{ada}']").text,
                "the segment's name in ada's row",
            )
        finally:
            browser.get("about:blank")


def test_seven_tabs_all_load_and_follow_changes_on_one_stream(browser: Any) -> None:
    # A browser keeps six connections to a host: a stream per tab would leave the sixth
    # tab unable to load (its page load times out).
    with Emulator() as emu:
        home = browser.current_window_handle
        opened: list[str] = []
        try:
            browser.get(emu.ui_url + "#subscribers")
            for _ in range(6):
                browser.switch_to.new_window("tab")
                opened.append(browser.current_window_handle)
                browser.get(emu.ui_url + "#subscribers")
            seventh = Page(browser, emu)
            seventh.wait(
                lambda d: seventh.find("#live").get_attribute("data-state") == "live",
                "the seventh tab live",
            )
            # One tab holds the stream (the first, which asked first); six wait their turn.
            locks = browser.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "navigator.locks.query().then(q => done([q.held.length, q.pending.length]));"
            )
            assert locks == [1, 6]
            emu.add_subscriber()
            seventh.wait(
                lambda d: seventh.find("#count-subscribers").text == "1",
                "the new subscriber counted in the seventh tab, unreloaded",
            )
            # The first tab, which holds the stream, leaves; another tab takes it over.
            browser.switch_to.window(home)
            browser.get("about:blank")
            browser.switch_to.window(opened[-1])
            emu.add_subscriber()
            # The count is the header's, read before the list: the list follows it.
            seventh.wait(
                lambda d: (
                    seventh.find("#count-subscribers").text == "2"
                    and len(seventh.find_all("[data-testid=subscriber-row]")) == 2
                ),
                "the next change seen once another tab holds the stream",
            )
        finally:
            for handle in opened:
                browser.switch_to.window(handle)
                browser.close()
            browser.switch_to.window(home)
            browser.get("about:blank")


TABS = ("subscribers", "campaigns", "broadcasts", "events", "requests")


def test_counts_read_with_separators_and_the_pager_reaches_either_end(page: Page) -> None:
    emu = page.emu
    emu.generate_subscribers(1234, seed=1)
    subs = [s["subscriber_hash"] for s in emu.subscribers()]
    with emu.client() as client:
        client.notifications.create(title="Everyone", message="m", url="https://shop.example/")
        client.events.track("page_view", profile_id="nobody")
    many = page.driver.execute_script("return (1234).toLocaleString();")
    assert many != "1234", "the browser's locale writes no separator: the test cannot tell"
    page.tab("broadcasts")
    page.wait(
        lambda d: (
            page.broadcast("Everyone")
            .find_element("css selector", "[data-testid=count-deliveries] b")
            .text
            == many
        ),
        "1,234 deliveries",
    )
    kept = admin(emu, "retention")["requests"]["kept"]
    assert kept >= 2
    kept_shown = page.driver.execute_script("return arguments[0].toLocaleString();", kept)
    page.wait(
        lambda d: (
            [page.find(f"#count-{t}").text for t in TABS] == [many, "0", "1", "1", kept_shown]
        ),
        "each tab's count beside its name",
    )
    page.tab("subscribers")
    page.wait(lambda d: page.find("#subscribers-total").text == f"({many})", "the total")

    def rows_end(first: str, last: str) -> Callable[[Any], bool]:
        def shown(_: Any) -> bool:
            rows = page.find_all("[data-testid=subscriber-row]")
            hashes = [r.get_attribute("data-hash") for r in rows]
            return bool(hashes) and (hashes[0], hashes[-1]) == (first, last)

        return shown

    pager = "#subscriber-pager [data-testid=page-{}]"
    page.find(pager.format("last")).click()
    page.wait(rows_end(subs[1200], subs[-1]), "the last page: the last 34 subscribers")
    assert page.find(pager.format("of")).text == "page 25 of 25"
    assert page.find(pager.format("next")).get_attribute("disabled") is not None
    page.find(pager.format("first")).click()
    page.wait(rows_end(subs[0], subs[49]), "the first page again")
    assert page.find(pager.format("prev")).get_attribute("disabled") is not None
    not_reloaded(page)


def test_campaigns_show_their_steps(page: Page, images: dict[str, str]) -> None:
    emu = page.emu
    emu.create_trigger(
        campaign_name="Abandoned cart",
        status="active",
        rules={"start_event_name": "add_to_cart", "stop_event_name": "purchase"},
        notifications=[
            drip_notification(
                title="Forgot something?",
                message="Your cart waits",
                url="https://shop.example/cart",
                **images,
                require_interaction=0,
                schedule_options={"type": "after", "value": 30, "unit": "minutes"},
            )
        ],
    )
    page.tab("campaigns")
    trigger = page.wait(lambda d: page.find("[data-testid=trigger]"), "the trigger")
    assert "Abandoned cart" in trigger.text and "add_to_cart" in trigger.text
    step = trigger.find_element("css selector", "[data-testid=campaign-step]")
    assert "after 30 minutes" in step.text and "Forgot something?" in step.text


def test_analytics_chart_is_drawn(page: Page) -> None:
    emu = page.emu
    hashes = [emu.add_subscriber(profile_id=p) for p in ("ada", "bob", "cy")]
    emu.client().notifications.create(title="Hi", message="m", url="https://a.example")
    emu.record_view(emu.deliveries(subscriber_hash=hashes[0])[0]["delivery_id"])
    emu.record_click(emu.deliveries(subscriber_hash=hashes[0])[0]["delivery_id"])
    page.tab("analytics")
    chart = page.wait(lambda d: page.find("svg#analytics-chart"), "the chart")
    page.wait(
        lambda d: (
            page.find("svg#analytics-chart").get_attribute("data-total-net-subscriber-sent") == "3"
        ),
        "three delivered",
    )
    chart = page.find("svg#analytics-chart")
    assert chart.get_attribute("data-total-notification-sent") == "1"
    assert chart.get_attribute("data-total-view-count") == "1"
    assert chart.get_attribute("data-total-click-count") == "1"
    assert chart.get_attribute("data-total-subscriber-count") == "3"
    series = {
        p.get_attribute("data-series"): p.get_attribute("d")
        for p in chart.find_elements("css selector", "path.series")
    }
    assert set(series) == {
        "notification_sent",
        "net_subscriber_sent",
        "view_count",
        "click_count",
        "subscriber_count",
        "unsubscribed_count",
    }
    # One point a day, 30 days.
    assert all(d.count("L") == 29 for d in series.values()), series
    assert chart.size["width"] > 300 and chart.size["height"] > 100


def test_controls_freeze_inject_a_fault_and_reset(page: Page) -> None:
    emu = page.emu
    page.find("#freeze-toggle").click()
    page.wait(lambda d: page.find("#freeze-toggle").get_attribute("aria-pressed") == "true", "")
    first = admin(emu, "now")["now"]
    time.sleep(0.05)
    assert admin(emu, "now")["now"] == first  # frozen
    page.find("#freeze-toggle").click()
    page.wait(lambda d: page.find("#freeze-toggle").get_attribute("aria-pressed") == "false", "")

    page.tab("faults")
    status = page.find("#fault-status")
    status.clear()
    status.send_keys("429")
    path = page.find("#fault-path")
    path.clear()
    path.send_keys("/apiv1/segments")
    page.find("#fault-inject").click()
    page.wait(lambda d: "Injected" in page.find("#fault-result").text, "the fault injected")
    answer = requests.get(
        f"{emu.base_url}/apiv1/segments", headers={"Api-Key": emu.api_key}, timeout=TIMEOUT
    )
    assert answer.status_code == 429
    page.wait(lambda d: "429" in page.find("#faulted-wrap").text, "the faulted request")

    emu.add_subscriber(profile_id="ada")
    emu.client().notifications.create(title="Before reset", message="m", url="https://a.b")
    page.tab("broadcasts")
    page.broadcast("Before reset")
    page.find("#reset").click()
    page.driver.switch_to.alert.accept()
    page.wait(lambda d: "No broadcast yet" in page.find("#broadcast-list").text, "reset")
    assert admin(emu, "subscribers") == []


def test_subscriber_page_gone_after_a_reset_goes_back_to_the_list(page: Page) -> None:
    emu = page.emu
    ada = emu.add_subscriber(profile_id="ada")
    page.tab("subscribers")
    page.wait(lambda d: page.find(f"[data-hash='{ada}']"), "ada's row").click()
    page.wait(lambda d: page.find("[data-testid=subscriber-hash]").text == ada, "ada's page")
    emu.reset()
    page.wait(lambda d: page.find("#subscriber-index").is_displayed(), "the list")
    page.wait(lambda d: "No subscriber" in page.find("#subscriber-table-wrap").text, "empty")
    assert not page.find("#error-banner").is_displayed()


# -- the inspector behind an admin token ------------------------------------------------------
def test_an_emulator_with_an_admin_token_asks_the_browser_once_and_keeps_working(
    browser: Any,
) -> None:
    from selenium.webdriver.common.by import By

    with Emulator(admin_token="inspector-t0ken") as emu:
        browser.get("about:blank")
        browser.get_log("browser")
        browser.get(emu.ui_url)
        p = Page(browser, emu)
        # The sign-in form, not the inspector.
        field = p.wait(lambda d: d.find_element(By.NAME, "token"), "the sign-in form")
        assert "--admin-token" in browser.page_source
        field.send_keys("wrong-token")
        field.submit()
        p.wait(lambda d: "not this emulator's" in d.page_source, "the refusal")
        field = browser.find_element(By.NAME, "token")
        field.send_keys("inspector-t0ken")
        field.submit()
        p.wait(lambda d: p.find("#live").get_attribute("data-state") == "live", "the live stream")
        # The token is kept where the page's scripts cannot read it.
        assert "inspector-t0ken" not in browser.execute_script("return document.cookie;")
        cookie = browser.get_cookie("pushwire_admin_token")
        assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        # The page's own writes go through: the cookie and its own origin.
        answer = browser.execute_async_script(
            "var done = arguments[0];"
            "fetch('create_segment', {method: 'POST', headers: {'Content-Type':"
            " 'application/json'}, body: JSON.stringify({name: 'from-the-page'})})"
            ".then(function (r) { done(r.status); });"
        )
        assert answer == 200
        assert "from-the-page" in {s["segment_name"] for s in emu.segments()}
        browser.get("about:blank")
    # Without it, a program is told what to send.
    with Emulator(admin_token="inspector-t0ken") as emu:
        r = requests.get(f"{emu.base_url}/_emulator/now", timeout=10)
        assert r.status_code == 401 and "Authorization: Bearer" in r.json()["error"]
        ok = requests.get(
            f"{emu.base_url}/_emulator/now",
            headers={"Authorization": "Bearer inspector-t0ken"},
            timeout=10,
        )
        assert ok.status_code == 200
        # The API itself is not behind the admin token.
        api = requests.get(
            f"{emu.base_url}/apiv1/segments", headers={"Api-Key": emu.api_key}, timeout=10
        )
        assert api.status_code == 200
