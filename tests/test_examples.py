"""The examples run as a user would run them, and say what they should."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart_walks_every_endpoint_with_the_client() -> None:
    out = run("quickstart.py")
    for call in [
        "segments.list",
        "add_subscribers",
        "add/remove_profiles",
        "triggers.list",
        "triggers.get",
        "drips.create/get",
        "notifications.create",
        "products.update",
        "events.track",
        "analytics.summary",
        "analytics.subscribers",
        "ValidationError      -> title",
        "BadRequestError      -> 400",
        "AsyncClient          -> 100 events",
    ]:
        assert call in out, f"{call!r} missing from:\n{out}"


def test_raw_http_example_runs_with_the_standard_library_only() -> None:
    out = run("raw_http.py")
    assert "notification" in out.lower()


def test_analytics_rows_load_into_pandas_and_polars() -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("polars")
    out = run("analytics_to_dataframe.py")
    # 1 + 2 + ... + 7 subscribers joined over the week.
    assert "total new subscribers (pandas): 28" in out


def test_web_backend_sends_a_broadcast_and_tracks_an_event() -> None:
    pytest.importorskip("flask")
    out = run("web_backend.py")
    assert "POST /promotions -> 201 {'notification_id': 1}" in out
    assert "POST /promotions -> 422" in out and "'field': 'title'" in out
    assert "events seen by the service: ['order_placed']" in out
