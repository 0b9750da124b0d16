"""How the tests and benches/inspector_browser.py start headless Chromium: its flags."""

from __future__ import annotations

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",  # root in CI containers
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--window-size=1400,1000",
    "--no-first-run",
    "--disable-extensions",
    "--disable-background-networking",
    "--lang=en-US",  # counts written 1,234 whatever the machine's locale
    # A page left for about:blank would stay in the back-forward cache with its live
    # EventSource open; six of them use up Chromium's connections to the emulator.
    "--disable-features=BackForwardCache",
)
