"""The examples run as a user would run them, and say what they should."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(name: str, without: str = "") -> str:
    """The example's output, run as a script; ``without`` names a package to hide from it,
    as if it were not installed."""
    command = [sys.executable, str(EXAMPLES / name)]
    if without:
        hide = f"import runpy, sys; sys.modules[{without!r}] = None; "
        command[1:] = ["-c", f"{hide}runpy.run_path({command[1]!r}, run_name='__main__')"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
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
    # 1 + 2 + ... + 14 subscribers joined over two weeks; a 7-day window on the 14th holds
    # 8 + ... + 14 of them.
    assert "total new subscribers (pandas): 105" in out
    assert "2026-03-14                14               77" in out
    assert "│ date       ┆ i64" in out  # the dtypes' row: polars reads the date as a Date


def test_analytics_example_runs_with_pandas_only() -> None:
    pytest.importorskip("pandas")
    out = run("analytics_to_dataframe.py", without="polars")
    assert "total new subscribers (pandas): 105" in out
    assert "polars is not installed: pip install polars" in out


def test_web_backend_sends_a_broadcast_and_tracks_an_event() -> None:
    pytest.importorskip("flask")
    out = run("web_backend.py")
    assert "POST /promotions -> 201 {'notification_id': 1}" in out
    assert "POST /promotions -> 422" in out and "'field': 'title'" in out
    assert "POST /promotions -> 503 Retry-After: 30" in out
    assert "events seen by the service: ['order_placed']" in out


def test_fastapi_app_serves_results_as_its_models() -> None:
    out = run("fastapi_app.py")
    assert "POST /drips -> {'drip_id': 1}" in out
    # The drip's time as FastAPI wrote it: ISO 8601 in UTC.
    written = out.split("GET /drips -> ", 1)[1].split()[0]
    assert dt.datetime.fromisoformat(written.replace("Z", "+00:00")).utcoffset() == dt.timedelta(0)
    assert "GET /segments -> ['VIP']" in out
    assert "Drip, " in out and "Segment" in out
