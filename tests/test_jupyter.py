"""Results in Jupyter: ``progress=True`` draws tqdm's bar when tqdm is installed (the
built-in line otherwise) and closes it however the call ends; the models, ``Page``, the
lists calls return and ``BulkResult`` render as HTML tables or cards, escaped and cut to a
readable size, while ``repr()`` and ``==`` stay those of the plain objects. Every result
here comes from a real call to the emulator."""

from __future__ import annotations

import asyncio
import datetime as dt
import pickle
import re
import sys
from typing import Any

import pandas as pd
import pytest
import tqdm.auto

import pushwire
from pushwire import BulkResult, ResultList, ValidationError
from pushwire._bulk import reporting
from pushwire._html import render
from pushwire.testing import Emulator

BY_HASH = "/apiv1/segments/addSegmentWithHash"
CARTS = {"start_event_name": "cart_add", "stop_event_name": "purchase"}


def subscribers(emu: Emulator, n: int) -> tuple[int, list[str]]:
    segment = emu.create_segment("everyone")
    return segment, [emu.add_subscriber(f"h{i:04}") for i in range(n)]


def add_in_bulk(emu: Emulator, kind: str, segment: int, hashes: list[str]) -> BulkResult:
    """``add_subscribers_bulk(progress=True)``, chunks in order, on either client."""
    if kind == "sync":
        with emu.client() as client:
            return client.segments.add_subscribers_bulk(
                segment, hashes, concurrency=1, progress=True
            )

    async def go() -> BulkResult:
        async with emu.async_client() as client:
            return await client.segments.add_subscribers_bulk(
                segment, hashes, concurrency=1, progress=True
            )

    return asyncio.run(go())


def last_line(stderr: str) -> str:
    """What a terminal shows last: bars redraw their line after a carriage return."""
    return re.split(r"[\r\n]", stderr.rstrip("\n"))[-1]


def body_rows(html: str) -> int:
    [body] = re.findall(r"<tbody>(.*?)</tbody>", html)
    return body.count("<tr>")


# -- progress=True -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_progress_true_draws_tqdms_bar_and_closes_it(
    emu: Emulator, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    segment, hashes = subscribers(emu, 1200)

    result = add_in_bulk(emu, kind, segment, hashes)

    assert result.ok and result.succeeded == 1200
    err = capsys.readouterr().err
    # tqdm's bar (its percentage and `|` frame), finished, its line ended by its close().
    assert re.search(r"add_subscribers: 100%\|\S+\| 1200/1200 \[", last_line(err)), err
    assert err.endswith("\n")


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_without_tqdm_progress_true_draws_the_built_in_bar(
    emu: Emulator, kind: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # `import tqdm.auto` fails
    segment, hashes = subscribers(emu, 1200)

    result = add_in_bulk(emu, kind, segment, hashes)

    assert result.ok
    err = capsys.readouterr().err
    assert last_line(err) == "add_subscribers [" + "#" * 30 + "] 1200/1200"
    assert err.endswith("\n") and "%|" not in err


# tqdm's notebook bar, refused, then fails again in its own __del__ (tqdm's, not ours).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_tqdms_notebook_bar_without_ipywidgets_falls_back_to_the_built_in_bar(
    emu: Emulator, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What tqdm.auto gives in Jupyter with tqdm before 4.66: the notebook bar, which refuses
    # to start (ImportError) without ipywidgets, as it does outside a notebook.
    import tqdm.notebook

    monkeypatch.setattr(tqdm.auto, "tqdm", tqdm.notebook.tqdm)
    segment, hashes = subscribers(emu, 1200)

    result = add_in_bulk(emu, "sync", segment, hashes)

    assert result.ok
    err = capsys.readouterr().err
    assert last_line(err) == "add_subscribers [" + "#" * 30 + "] 1200/1200"
    assert err.endswith("\n")


def test_ctrl_c_while_tqdms_bar_draws_closes_the_bar(
    emu: Emulator, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C during a blocking bulk call surfaces in the Python code it runs: the bar's.
    bars: list[Any] = []

    class Interrupted(tqdm.auto.tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            bars.append(self)

        def update(self, n: int = 1) -> None:
            super().update(n)
            raise KeyboardInterrupt

    monkeypatch.setattr(tqdm.auto, "tqdm", Interrupted)
    segment, hashes = subscribers(emu, 1200)
    client = emu.client()

    with pytest.raises(KeyboardInterrupt):
        client.segments.add_subscribers_bulk(segment, hashes, concurrency=1, progress=True)

    [bar] = bars
    assert bar.n == 500 and bar.disable  # closed at the first chunk's report
    err = capsys.readouterr().err
    assert " 500/1200 [" in last_line(err) and err.endswith("\n")
    assert len(emu.requests(BY_HASH)) == 1  # the call stopped there


def test_the_built_in_bar_ends_its_line_when_a_call_stops(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(KeyboardInterrupt), reporting(True, "add_profiles") as bar:
        assert bar is not None
        bar(500, 1200)
        raise KeyboardInterrupt
    bar(1200, 1200)  # a report arriving late (an async call's) draws nothing
    assert capsys.readouterr().err == "\radd_profiles [" + "#" * 12 + "-" * 18 + "] 500/1200\n"


def test_a_call_refused_before_sending_draws_no_bar(
    emu: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValidationError):
        emu.client().segments.add_subscribers_bulk(0, ["h1"], progress=True)
    assert capsys.readouterr().err == ""


# -- HTML -----------------------------------------------------------------------------------


def test_a_model_is_an_escaped_card_of_its_fields(emu: Emulator) -> None:
    hostile = "<script>alert('pwned')</script> & co"
    trigger_id = emu.create_trigger(
        campaign_name=hostile,
        rules=CARTS,
        notifications=[{"title": "<b>Come back</b>", "message": "m", "url": "https://a.example"}],
    )
    campaign = emu.client().triggers.get(trigger_id)

    html = render(campaign)

    assert "<script" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt; &amp; co" in html
    assert "<caption><strong>TriggeredCampaign</strong></caption>" in html
    assert f"<tr><th>trigger_id</th><td>{trigger_id}</td></tr>" in html
    # A nested model is one compact cell; a nested list spells its first entries.
    assert "{start_event_name: &#x27;cart_add&#x27;, stop_event_name: &#x27;purchase&#x27;}" in html
    assert "title: &#x27;&lt;b&gt;Come back&lt;/b&gt;&#x27;" in html
    # repr() is the plain one.
    assert repr(campaign).startswith(f"TriggeredCampaign(trigger_id={trigger_id}, ")


def test_a_long_value_is_cut_and_shown_whole_on_hover(emu: Emulator) -> None:
    name = "Winter sale " + "x" * 300
    emu.create_trigger(campaign_name=name, rules=CARTS)
    [campaign] = emu.client().triggers.list()

    html = render(campaign)

    assert f'<span title="{name}">{name[:199]}…</span>' in html  # a card's cells: 200
    assert f'<span title="{name}">{name[:79]}…</span>' in render([campaign])  # a table's: 80


def test_a_page_is_a_table_with_its_place_in_the_list(emu: Emulator) -> None:
    for i in range(42):
        emu.create_trigger(campaign_name=f"<i>campaign {i}</i>", rules=CARTS)
    client = emu.client()

    page = client.triggers.list(page=1, limit=20)
    html = render(page)

    assert "<caption>page 1 of 3, 42 items</caption>" in html
    assert body_rows(html) == 20
    headers = re.findall(r"<th>(\w+)</th>", html)
    assert headers[:3] == ["trigger_id", "campaign_name", "campaign_type"]
    assert "&lt;i&gt;campaign 41&lt;/i&gt;" in html and "<i>" not in html
    last = render(client.triggers.list(page=3, limit=20))
    assert "<caption>page 3 of 3, 42 items</caption>" in last and body_rows(last) == 2
    empty = render(client.triggers.list(page=9, limit=20))
    assert "no items" in empty and body_rows(empty) == 1


def test_a_list_of_results_is_a_plain_list_that_renders_as_a_table(emu: Emulator) -> None:
    for i in range(60):
        emu.create_segment(f"segment {i:02} <&>")
    client = emu.client()

    segments = client.segments.list()

    assert isinstance(segments, ResultList) and isinstance(segments, list)
    plain = list(segments)
    assert segments == plain and plain == segments
    assert repr(segments) == repr(plain)
    assert pickle.loads(pickle.dumps(segments)) == plain
    assert segments._repr_html_() == render(segments)
    html = render(segments)
    assert "<caption>60 items</caption>" in html
    assert body_rows(html) == 50  # the first 50 rows, then a line for the rest
    assert "… 10 more" in html
    assert "segment 59 &lt;&amp;&gt;" in html and "<&>" not in html  # newest first
    assert re.findall(r"<th>(\w+)</th>", html) == ["segment_id", "segment_name"]


def test_analytics_rows_render_as_a_table_and_still_load_into_pandas(emu: Emulator) -> None:
    for day in range(3):
        emu.add_subscriber(subscribed_at=dt.datetime(2026, 3, 1 + day, 12, tzinfo=dt.timezone.utc))

    rows = emu.client().analytics.summary(dt.date(2026, 3, 1), dt.date(2026, 3, 3))

    assert isinstance(rows, ResultList)
    assert [r["subscriber_count"] for r in rows] == [1, 1, 1]
    html = render(rows)
    assert "<caption>3 items</caption>" in html and body_rows(html) == 3
    assert "<td>2026-03-01</td>" in html and "<th>click_count</th>" in html
    frame = pd.DataFrame(rows)
    assert frame.shape == (3, len(rows[0])) and frame["subscriber_count"].sum() == 3


def test_async_lists_render_too(emu: Emulator) -> None:
    emu.create_segment("vip")

    async def go() -> list[pushwire.Segment]:
        async with emu.async_client() as client:
            return await client.segments.list()

    segments = asyncio.run(go())
    assert isinstance(segments, ResultList) and "<td>vip</td>" in render(segments)


def test_a_bulk_result_shows_its_summary_and_failed_chunks(emu: Emulator) -> None:
    segment, hashes = subscribers(emu, 1200)
    client = emu.client()
    emu.inject_fault(BY_HASH, status=400)  # the first chunk fails

    result = client.segments.add_subscribers_bulk(segment, hashes, concurrency=1)

    html = result._repr_html_()
    assert html == render(result)
    assert "failed: 3 chunks of 1,200 items, 700 sent; 1 chunk failed (500 items)" in html
    assert "<caption>failed chunks</caption>" in html and body_rows(html) == 1
    cells = re.findall(r"<td>(.*?)</td>", html)
    assert cells[:4] == ["0", "0 to 499", "BadRequestError", "400"]
    assert repr(result) == "BulkResult(chunks=3, succeeded=700, failed_chunks=1)"

    again = render(client.segments.add_subscribers_bulk(segment, result.failed_items))
    assert "ok: 1 chunk of 500 items, 500 sent" in again and "<table" not in again


def test_the_rust_results_hand_jupyter_this_html(emu: Emulator) -> None:
    # `_repr_html_` of the models and of Page (in Rust) is render()'s.
    emu.create_trigger(campaign_name="Cart", rules=CARTS)
    client = emu.client()
    page = client.triggers.list()
    [segment] = [pushwire.Segment(segment_id="1", segment_name="<vip>")]
    assert page._repr_html_() == render(page)
    assert page[0]._repr_html_() == render(page[0])
    assert segment._repr_html_() == render(segment)
    assert "&lt;vip&gt;" in segment._repr_html_()
