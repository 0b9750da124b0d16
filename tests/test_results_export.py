"""A data engineer's nightly export (issue 58, items 5 and 6): every result a list call
returns (a `Page` of campaigns, a list of models, summary rows) goes to Parquet with polars
and with pandas, to CSV, and into duckdb by the obvious one-liner, and reads back with its
values and its types: aware datetimes, dates, ints, floats, nested models as structs. Summary
rows' days are dates, and the rows are JSON as the models are. Every result is read over
real HTTP from the emulator of the `emu` fixture."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import json
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from client_support import drip_notification
from conftest import seed_trigger

import pushwire
from pushwire import Client, Segment
from pushwire.testing import Emulator

pl = pytest.importorskip("polars")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

DAYS = 3  # of history, today included


# The second step of a drip: a day later, at ten.
NEXT_DAY = {"type": "after", "value": 1, "unit": "days", "at": "10:00:00"}


def seed_history(emu: Emulator) -> None:
    """A small site with three days behind it: segments, two drips and two triggered
    campaigns (one of each with UTM parameters, one without), and a broadcast a day, some of
    them viewed and clicked."""
    vip = emu.create_segment("VIP")
    emu.create_segment("Newsletter")
    for device_type in ("desktop", "mobile", "tablet", "desktop"):
        emu.add_subscriber(device_type=device_type, subscribed_at=emu.now - dt.timedelta(days=2))
    with emu.client() as client:
        client.drips.create(
            "Welcome",
            [
                drip_notification(actions=[{"label": "Shop", "url": "https://shop.example/"}]),
                drip_notification(title="Day two", schedule_options=NEXT_DAY),
            ],
            send_to={"include_segments": [vip]},
            utm_params={"utm_source": "push", "utm_medium": "web", "utm_campaign": "welcome"},
        )
        client.drips.create("Win back", [drip_notification(title="We miss you")])
        seed_trigger(emu)
        emu.create_trigger(
            campaign_name="Browse", campaign_type="browse", rules={"start_event_name": "view"}
        )
        for day in range(DAYS - 1):
            emu.advance(dt.timedelta(days=1))
            client.notifications.create(
                title=f"Sale, day {day}", message="Half price", url="https://shop.example/sale"
            )
            sent = emu.deliveries(source="broadcast")[-4:]
            for i, delivery in enumerate(sent[: 3 - day]):
                emu.record_view(delivery["delivery_id"])
                if i == 0:
                    emu.record_click(delivery["delivery_id"])


def summary(client: Client, emu: Emulator) -> Any:
    today = emu.now.date()
    return client.analytics.summary(today - dt.timedelta(days=DAYS - 1), today)


def named(name: str, campaigns: Any) -> Any:
    (campaign,) = [c for c in campaigns if c.campaign_name == name]
    return campaign


# Each list result a call returns, by the call that returns it.
RESULTS: dict[str, Callable[[Client, Emulator], Any]] = {
    "triggers.list": lambda c, e: c.triggers.list(),
    "drips.list": lambda c, e: c.drips.list(),
    "drips.list().data": lambda c, e: c.drips.list().data,
    "triggers.iter": lambda c, e: list(c.triggers.iter()),
    "triggers.get().notifications": lambda c, e: (
        c.triggers.get(named("Abandoned cart", c.triggers.list()).trigger_id).notifications
    ),
    "drips.get().notifications": lambda c, e: (
        c.drips.get(named("Welcome", c.drips.list()).drip_id).notifications
    ),
    "segments.list": lambda c, e: c.segments.list(),
    "analytics.summary": summary,
}


@pytest.fixture(params=list(RESULTS))
def result(request: pytest.FixtureRequest, emu: Emulator) -> Any:
    """One kind of list result, read from a site with a history."""
    seed_history(emu)
    with emu.client() as client:
        out = RESULTS[request.param](client, emu)
    assert len(out) >= 2, request.param
    return out


def python_rows(result: Any) -> list[dict[str, Any]]:
    """The rows a dataframe of `result` holds, as Python values: each model's fields (nested
    models as dicts), each summary row as it is."""
    return [dict(r) if isinstance(r, dict) else dataclasses.asdict(r) for r in result]


def kind(value: Any) -> str:
    if isinstance(value, dt.datetime):
        assert value.tzinfo is not None, value
        return "datetime"
    for name, types in (
        ("date", dt.date),
        ("bool", bool),
        ("int", int),
        ("float", float),
        ("str", str),
        ("struct", dict),
        ("list", list),
    ):
        if isinstance(value, types):
            return name
    raise AssertionError(f"a value of an unexpected type: {value!r}")


def kinds(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Each column's kind, from its first value that is not None (a column of None only has
    none)."""
    out = {}
    for name in rows[0]:
        values = [r[name] for r in rows if r[name] is not None]
        if values:
            out[name] = kind(values[0])
    return out


ARROW_KINDS: dict[str, Callable[[Any], bool]] = {
    "datetime": lambda t: pa.types.is_timestamp(t) and t.tz == "UTC",
    "date": pa.types.is_date32,
    "bool": pa.types.is_boolean,
    "int": pa.types.is_int64,
    "float": pa.types.is_float64,
    "str": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
    "struct": pa.types.is_struct,
    "list": lambda t: pa.types.is_list(t) or pa.types.is_large_list(t),
}

DUCKDB_KINDS: dict[str, Callable[[str], bool]] = {
    "datetime": lambda t: t == "TIMESTAMP WITH TIME ZONE",
    "date": lambda t: t == "DATE",
    "bool": lambda t: t == "BOOLEAN",
    "int": lambda t: t in ("BIGINT", "INTEGER"),
    "float": lambda t: t == "DOUBLE",
    "str": lambda t: t == "VARCHAR",
    "struct": lambda t: t.startswith("STRUCT("),
    "list": lambda t: t.endswith("[]"),
}


def assert_parquet_file(path: Path, expected: list[dict[str, Any]]) -> None:
    """The file holds the rows, each column of the type its values have in Python, as
    pyarrow, polars and duckdb read it."""
    schema = pq.read_schema(path)
    for name, k in kinds(expected).items():
        assert ARROW_KINDS[k](schema.field(name).type), (name, k, schema.field(name).type)
    assert schema.names == list(expected[0])
    assert pq.read_table(path).to_pylist() == expected
    assert pl.read_parquet(path).to_dicts() == expected
    assert_duckdb(duckdb.sql(f"select * from read_parquet('{path}')"), expected)


def assert_duckdb(relation: Any, expected: list[dict[str, Any]]) -> None:
    types = dict(zip(relation.columns, map(str, relation.types)))
    for name, k in kinds(expected).items():
        assert DUCKDB_KINDS[k](types[name]), (name, k, types[name])
    assert [dict(zip(relation.columns, row)) for row in relation.fetchall()] == expected


def test_polars_writes_every_result_to_parquet(result: Any, tmp_path: Path) -> None:
    path = tmp_path / "export.parquet"
    pl.DataFrame(result).write_parquet(path)
    assert_parquet_file(path, python_rows(result))


def test_pandas_writes_every_result_to_parquet(result: Any, tmp_path: Path) -> None:
    path = tmp_path / "export.parquet"
    pd.DataFrame(result).to_parquet(path, index=False)
    assert_parquet_file(path, python_rows(result))
    back = pd.read_parquet(path)
    for name, k in kinds(python_rows(result)).items():
        if k == "datetime":
            assert str(back[name].dtype).endswith(", UTC]"), (name, back[name].dtype)
        elif k == "int":
            assert back[name].dtype == "int64", (name, back[name].dtype)


def test_duckdb_reads_every_result_from_either_frame(result: Any, tmp_path: Path) -> None:
    expected = python_rows(result)
    # duckdb finds a frame by its variable's name, which ruff cannot see used.
    polars_frame = pl.DataFrame(result)  # noqa: F841
    pandas_frame = pd.DataFrame(result)  # noqa: F841
    assert_duckdb(duckdb.sql("select * from polars_frame"), expected)
    assert_duckdb(duckdb.sql("select * from pandas_frame"), expected)
    for frame in ("polars_frame", "pandas_frame"):
        path = tmp_path / f"{frame}.parquet"
        duckdb.sql(f"copy (select * from {frame}) to '{path}' (format parquet)")
        assert_duckdb(duckdb.sql(f"select * from '{path}'"), expected)


def assert_csv_file(
    path: Path, expected: list[dict[str, Any]], nested: Optional[Callable[[str], Any]] = None
) -> None:
    """The CSV as duckdb's sniffer reads it: times as aware timestamps, days as dates, ints
    and floats as numbers, each value as it was; a nested value as text (that `nested`, if
    given, reads back)."""
    relation = duckdb.read_csv(str(path))
    assert relation.columns == list(expected[0])
    types = dict(zip(relation.columns, map(str, relation.types)))
    read = [dict(zip(relation.columns, row)) for row in relation.fetchall()]
    for name, k in kinds(expected).items():
        values = [e[name] for e in expected]
        if k in ("struct", "list"):
            assert types[name] == "VARCHAR", (name, types[name])
            if nested is not None:
                assert [None if r[name] is None else nested(r[name]) for r in read] == values
        elif k == "str":
            # CSV has no types: a text of digits (a segment's id) is sniffed as a number.
            assert [None if r[name] is None else str(r[name]) for r in read] == values, name
        else:
            assert DUCKDB_KINDS[k](types[name]), (name, k, types[name])
            assert [r[name] for r in read] == values, name


def test_every_result_writes_to_csv(result: Any, tmp_path: Path) -> None:
    expected = python_rows(result)
    path = tmp_path / "export.csv"
    # pandas writes a nested model as its Python text, which `ast` reads back.
    pd.DataFrame(result).to_csv(path, index=False)
    assert_csv_file(path, expected, ast.literal_eval)
    # duckdb writes one in its own literal syntax, which it reads back as the type it was.
    for frame in (pl.DataFrame(result), pd.DataFrame(result)):  # noqa: B007 (duckdb reads it)
        source = duckdb.sql("select * from frame")
        types = dict(zip(source.columns, map(str, source.types)))
        duckdb.sql(f"copy (select * from frame) to '{path}' (header)")
        assert_csv_file(path, expected)
        back = duckdb.read_csv(str(path), dtype=types)
        assert [dict(zip(back.columns, row)) for row in back.fetchall()] == expected
    # polars writes no nested column to CSV (its rule for any frame): its flat columns.
    frame = pl.DataFrame(result)
    flat = frame.select(name for name, dtype in frame.schema.items() if not dtype.is_nested())
    flat.write_csv(path)
    assert_csv_file(path, [{n: e[n] for n in flat.columns} for e in expected])


# -- summary rows: days as dates, JSON as the models are ---------------------------------------


def test_summary_days_are_dates_that_every_tool_reads_as_dates(emu: Emulator) -> None:
    seed_history(emu)
    today = emu.now.date()
    with emu.client() as client:
        rows = summary(client, emu)
        # A week row's day is its Monday, or the range's first day: a date all the same.
        weeks = client.analytics.summary(today - dt.timedelta(days=13), today, group_by="week")
    assert all(type(r["date"]) is dt.date and r["date"].weekday() == 0 for r in weeks[1:])
    assert [r["date"] for r in rows] == [today - dt.timedelta(days=d) for d in (2, 1, 0)]
    assert all(type(r["date"]) is dt.date for r in rows)
    assert pl.DataFrame(rows).schema["date"] == pl.Date
    frame = pd.DataFrame(rows)
    assert str(duckdb.sql("select date from frame").types[0]) == "DATE"
    # pandas has no date type: made datetime64 in the same line, its time-based windows work.
    daily = frame.astype({"date": "datetime64[s]"}).set_index("date")
    assert daily["view_count"].rolling("2D").sum().tolist() == [0, 3, 5]


def test_summary_rows_are_json_as_the_models_are(emu: Emulator) -> None:
    flask = pytest.importorskip("flask")
    seed_history(emu)
    with emu.client() as client:
        rows = summary(client, emu)
        segments = client.segments.list()
    as_json = rows.to_dict()
    assert [r["date"] for r in as_json] == [r["date"].isoformat() for r in rows]
    assert as_json[-1] == {**rows[-1], "date": rows[-1]["date"].isoformat()}
    assert json.loads(json.dumps(as_json)) == as_json == json.loads(rows.to_json())
    assert isinstance(as_json[-1]["ctr"], float) and as_json[-1]["view_count"] == 2
    # The rows themselves are left as they were.
    assert type(rows[0]["date"]) is dt.date
    # A list of models too: each as its to_dict().
    assert segments.to_dict() == [s.to_dict() for s in segments]
    app = flask.Flask(__name__)
    with app.app_context():
        assert flask.jsonify(rows.to_dict()).get_json() == as_json
        assert flask.jsonify(segments.to_dict()).get_json() == segments.to_dict()


# -- extra: the fields the spec does not list ----------------------------------------------------


def test_unlisted_fields_stay_in_the_json_and_out_of_the_columns(tmp_path: Path) -> None:
    pydantic = pytest.importorskip("pydantic")
    odd = Segment.from_dict({"segment_id": "9", "segment_name": "Beta", "color": "red"})
    plain = Segment.from_dict({"segment_id": "10", "segment_name": "Gamma"})
    assert odd.extra == {"color": "red"} and plain.extra == {}
    # Carried by the constructor, replace(), to_dict() and pydantic...
    assert dataclasses.replace(odd, segment_name="Beta 2").extra == {"color": "red"}
    assert odd.to_dict() == {"segment_id": "9", "segment_name": "Beta", "color": "red"}
    adapter = pydantic.TypeAdapter(Segment)
    assert adapter.dump_python(odd)["extra"] == {"color": "red"}
    assert adapter.validate_json(adapter.dump_json(odd)) == odd
    assert Segment(**dataclasses.asdict(odd), extra=odd.extra) == odd
    # ...and no field: the columns are the spec's, whatever a row carries beyond them.
    assert [f.name for f in dataclasses.fields(Segment)] == ["segment_id", "segment_name"]
    assert dataclasses.asdict(odd) == {"segment_id": "9", "segment_name": "Beta"}
    assert hash(odd) == hash(dataclasses.replace(odd, extra={}))
    for frame in (pl.DataFrame([plain, odd]), pl.from_pandas(pd.DataFrame([plain, odd]))):
        assert frame.columns == ["segment_id", "segment_name"]
        frame.write_parquet(tmp_path / "segments.parquet")
    assert pushwire.ResultList([plain]).to_dict() == [plain.to_dict()]
