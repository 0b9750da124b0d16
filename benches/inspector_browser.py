"""The emulator's web inspector in a real headless Chromium, at a real audience size: for each
view, the wall time from the action (opening the page, clicking a tab, a pager button or a
row) until the view shows its content, median of 3. An in-process `Emulator` holds the
population of benches/inspector_scale.py, a broadcast to everyone and a small targeted one;
each wait polls the page every 10 ms (one WebDriver round trip, a few ms, per poll).

Tab clicks are timed on a page freshly opened on the Faults tab (cheap with the request log
off), so the view clicked has drawn nothing yet; the other actions act on the page as left.
Needs selenium, chromium and chromedriver (the Debian packages chromium, chromium-driver).

    cd benches && python inspector_browser.py 10000000
"""

from __future__ import annotations

import datetime as dt
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from emulator_scale import START, issue_40_population

# Chromium started as the tests start it.
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))
from browser_support import CHROMIUM_FLAGS

from pushwire.testing import Emulator

WAIT = 600.0  # seconds a view may take before the benchmark gives up on it
REPS = 3
FEW = 10  # subscribers the targeted broadcast names


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium driven by chromedriver, both found on PATH."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    names = ("chromium", "chromium-browser", "google-chrome")
    binary = next((p for p in map(shutil.which, names) if p), None)
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        sys.exit("needs chromium and chromedriver on PATH (Debian: chromium, chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in CHROMIUM_FLAGS:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.set_page_load_timeout(WAIT)
    driver.set_script_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()


class Inspector:
    """The inspector page in the browser; `until` polls a JS expression until it is truthy."""

    def __init__(self, driver: Any, url: str) -> None:
        self.driver = driver
        self.url = url

    def js(self, expression: str, *args: Any) -> Any:
        return self.driver.execute_script(f"return ({expression});", *args)

    def until(self, expression: str, *args: Any, what: str = "") -> float:
        """Waits for the expression; the time it was first seen true (perf_counter)."""
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, WAIT, poll_frequency=0.01).until(
            lambda _: self.js(expression, *args), what or expression
        )
        return time.perf_counter()

    def open(self, tab: str = "") -> float:
        """Opens the page afresh (on `tab`); the time the navigation began."""
        self.driver.get("about:blank")
        t0 = time.perf_counter()
        self.driver.get(self.url + (f"#{tab}" if tab else ""))
        return t0

    def click(self, css: str) -> float:
        """Clicks the first element matching `css`; the time of the click."""
        t0 = time.perf_counter()
        self.js("document.querySelector(arguments[0]).click()", css)
        return t0

    def errors(self) -> list[str]:
        logs = self.driver.get_log("browser")
        return [e["message"] for e in logs if e["level"] == "SEVERE"]


# What marks each view as drawn, as JS expressions (`shown(e)`: e laid out, not hidden).
SHOWN = "(e => !!e && e.offsetParent !== null)"
HEADER = (
    f"{SHOWN}(document.getElementById('clock')) && /\\d/.test(document.getElementById('clock')"
    ".textContent) && Array.from(document.querySelectorAll('#site-select option'))"
    ".some(o => o.textContent.includes(' ' + arguments[0].toLocaleString() + ' subscribers'))"
)
BROADCASTS = (
    "Array.from(document.querySelectorAll('[data-testid=broadcast]')).filter(c => "
    f"{SHOWN}(c)).length === 2 && Array.from(document.querySelectorAll("
    "'[data-testid=broadcast]')).some(c => c.querySelector('[data-testid=preview-title]')"
    ".textContent === 'All' && c.querySelector('[data-testid=count-deliveries] b')"
    ".textContent === arguments[0].toLocaleString())"
)
ANALYTICS = (
    f"{SHOWN}(document.getElementById('analytics-chart')) && Number(document.getElementById("
    "'analytics-chart').getAttribute('data-total-net-subscriber-sent')) === arguments[0]"
)
ROWS = "Array.from(document.querySelectorAll('[data-testid=subscriber-row]'))"
SUBSCRIBERS = (
    f"{ROWS}.filter(r => {SHOWN}(r)).length === 50 && "
    "document.getElementById('subscribers-total').textContent === "
    "'(' + arguments[0].toLocaleString() + ')'"
)
PAGE = (
    f"{ROWS}.filter(r => {SHOWN}(r)).length === 50 && {ROWS}[0].dataset.hash === arguments[0] "
    "&& document.getElementById('subscriber-pager').textContent"
    ".includes('page ' + arguments[1].toLocaleString() + ' of')"
)
LAST_PAGE = (
    f"{ROWS}.filter(r => {SHOWN}(r)).length > 0 && {ROWS}.at(-1).dataset.hash === arguments[0] "
    "&& document.getElementById('subscriber-pager').textContent"
    ".includes('page ' + arguments[1].toLocaleString() + ' of')"
)
SUBSCRIBER = (
    f"{SHOWN}(document.querySelector('[data-testid=subscriber-hash]')) && document."
    "querySelector('[data-testid=subscriber-hash]').textContent === arguments[0] && "
    "document.querySelectorAll('[data-testid=delivery-row]').length === arguments[1] && "
    "(document.querySelector('[data-testid=subscriber-segments]') || {textContent: ''})"
    ".textContent.includes('half (')"
)
NAMES = f"{ROWS}.filter(r => {SHOWN}(r)).some(r => r.cells[5].textContent.includes('half ('))"


def faults_loaded(page: Inspector) -> None:
    """Opens the page on the Faults tab and waits until it is drawn and idle."""
    page.open("faults")
    page.until(f"{SHOWN}(document.querySelector('#fault-stats p, #fault-stats .stats'))")


def measure(n: int) -> list[str]:
    times: dict[str, list[float]] = {}
    notes: list[str] = []

    def timed(name: str, t0: float, t1: float) -> None:
        times.setdefault(name, []).append(t1 - t0)

    with Emulator(record_requests=False) as emu:
        emu.travel_to(START + dt.timedelta(days=365))
        half = emu.create_segment("half")
        t0 = time.perf_counter()
        issue_40_population(emu, n, half)
        first: list[dict[str, Any]] = emu._call("subscribers", meta=True, limit=50, offset=0)[
            "entries"
        ]
        few = [s["subscriber_hash"] for s in first[:FEW]]
        with emu.client(timeout=600) as client:
            client.notifications.create(title="All", message="m", url="https://shop.example/")
            client.notifications.create(
                title="Few", message="m", url="https://shop.example/", subscriber_hash=few
            )
        print(f"population and broadcasts: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        second = emu._call("subscribers", meta=True, limit=1, offset=50)["entries"][0]
        last = emu._call("subscribers", meta=True, limit=1, offset=n - 1)["entries"][0]
        members = [s["subscriber_hash"] for s in first if int(half) in s["segments"]]

        with chromium() as driver:
            page = Inspector(driver, emu.base_url + "/_emulator/ui")
            for rep in range(REPS):
                # Opening the page: it lands on Broadcasts; the header fills first.
                t0 = page.open()
                timed(
                    "header (clock, site's subscriber count), page opened",
                    t0,
                    page.until(HEADER, n),
                )
                timed(
                    "broadcasts, page opened (2 cards, 'All' shows N)",
                    t0,
                    page.until(BROADCASTS, n),
                )

                # Each tab clicked on a page opened on Faults.
                for name, tab, test, arg in (
                    ("broadcasts tab clicked", "broadcasts", BROADCASTS, n),
                    (
                        "analytics tab clicked (summary chart, N + 10 deliveries)",
                        "analytics",
                        ANALYTICS,
                        n + FEW,
                    ),
                    ("subscribers tab clicked (50 rows, total N)", "subscribers", SUBSCRIBERS, n),
                ):
                    faults_loaded(page)
                    timed(name, page.click(f"#tab-{tab}"), page.until(test, arg, what=name))
                if rep == 0 and not page.js(NAMES):
                    notes.append(
                        "subscribers opened without Broadcasts first: the segments column "
                        "shows segment ids, not names"
                    )

                # The pager, from the first page on, to the last and back.
                timed(
                    "subscribers next page",
                    page.click("#subscriber-pager [data-testid=page-next]"),
                    page.until(PAGE, second["subscriber_hash"], 2),
                )
                timed(
                    "subscribers previous page",
                    page.click("#subscriber-pager [data-testid=page-prev]"),
                    page.until(PAGE, first[0]["subscriber_hash"], 1),
                )
                timed(
                    "subscribers last page",
                    page.click("#subscriber-pager [data-testid=page-last]"),
                    page.until(LAST_PAGE, last["subscriber_hash"], -(-n // 50)),
                )
                timed(
                    "subscribers first page",
                    page.click("#subscriber-pager [data-testid=page-first]"),
                    page.until(PAGE, first[0]["subscriber_hash"], 1),
                )

                # A subscriber's page: a different row each time (the last one drawn stays).
                hash_ = members[rep]
                deliveries = 2 if hash_ in few else 1
                t0 = page.click(f"[data-testid=subscriber-row][data-hash='{hash_}']")
                name = "a subscriber (row clicked: fields, segment name, deliveries)"
                timed(name, t0, page.until(SUBSCRIBER, hash_, deliveries, what=name))
                timed(
                    "back to all subscribers",
                    page.click("#subscriber-back"),
                    page.until(SUBSCRIBERS, n),
                )
                if rep == 0 and not page.js(NAMES):
                    notes.append(
                        "subscribers list: segment names missing even after a subscriber page"
                    )

            banner = page.js(
                "document.getElementById('error-banner').hidden ? '' : document.getElementById('error-banner').textContent"
            )
            if banner:
                notes.append(f"error banner: {banner}")
            notes.extend(f"console error: {e}" for e in page.errors())

    lines = [
        f"Inspector in headless Chromium, {n:,} subscribers, {n + FEW:,} deliveries",
        "",
        "| view | median of 3 |",
        "|---|---:|",
    ]
    lines += [f"| {k} | {statistics.median(v) * 1e3:,.0f} ms |" for k, v in times.items()]
    if notes:
        lines += ["", *(f"- {note}" for note in dict.fromkeys(notes))]
    return lines


if __name__ == "__main__":
    print("\n".join(measure(int(sys.argv[1]) if sys.argv[1:] else 1_000_000)))
