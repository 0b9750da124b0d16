"""Results as the tools of a Python stack take them (issue 45): pydantic and FastAPI, pandas
and polars, the dataclasses module, hashing, times as datetimes, JSON for Django and Flask.
Every result here was read over real HTTP from one emulator this module starts."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import pickle
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from client_support import drip_notification
from conftest import seed_trigger

import pushwire
from pushwire import (
    Drip,
    NewDrip,
    Page,
    Product,
    Segment,
    SendTo,
    TriggeredCampaign,
    _core,
)
from pushwire.testing import Emulator

UTC = dt.timezone.utc
MODELS = [getattr(_core, name) for name, _ in _core._model_fields()]


class Site:
    """One emulator with segments, drips and a trigger, and what it answered as raw JSON."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu
        self.client = emu.client()
        for name in ("Buyers", "Newsletter", "VIP"):
            emu.create_segment(name)
        self.segment_id = self.client.segments.list()[0].segment_id
        self.drip_ids = [
            self.client.drips.create(
                f"Welcome {i}",
                [
                    drip_notification(),
                    drip_notification(
                        title="Day two",
                        schedule_options={
                            "type": "after",
                            "value": 1,
                            "unit": "days",
                            "at": "10:00:00",
                        },
                    ),
                ],
                send_to={"include_segments": [self.segment_id]},
            )
            for i in range(3)
        ]
        self.trigger_id = seed_trigger(emu)

    def raw(self, path: str, **params: Any) -> Any:
        """The `data` of the service's answer to GET `path`, as JSON."""
        r = requests.get(
            self.emu.base_url + path, params=params, headers={"Api-Key": self.emu.api_key}
        )
        r.raise_for_status()
        return r.json()


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Emulator() as emu:
        s = Site(emu)
        yield s
        s.client.close()


@pytest.fixture(scope="module")
def results(site: Site) -> dict[str, Any]:
    """One result of each kind a call returns."""
    c = site.client
    drip = c.drips.get(site.drip_ids[0])
    trigger = c.triggers.get(site.trigger_id)
    return {
        "segments": c.segments.list(),
        "drips": c.drips.list(limit=10),
        "drip": drip,
        "trigger": trigger,
        "triggers": c.triggers.list(),
    }


def every_model_instance(results: dict[str, Any]) -> list[Any]:
    """Instances of every model class the core has: nested ones taken from the results read,
    the input models built."""
    found: dict[type, Any] = {}

    def walk(v: Any) -> None:
        if type(v) in MODELS and type(v) not in found:
            found[type(v)] = v
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                walk(getattr(v, f.name))
        elif isinstance(v, (list, tuple, Page)):
            for item in v:
                walk(item)

    for r in results.values():
        walk(r)
    built = [
        SendTo(include_segments=["1"], include_countries=["DE"]),
        NewDrip(campaign_name="x", notifications=[drip_notification()]),
        Product(product_id="p1", price=9.5),
        pushwire.AttributeRule(key="plan", op="eq", value="pro"),
        pushwire.NewDripNotification(**drip_notification()),
        pushwire.SummaryRow(date="2024-01-01", view_count=3, ctr=1.5),
        pushwire.Meta(total=1, page=1, per_page=10, last_page=1),
        pushwire.PriceDropThreshold(type="absolute", value=2.0),
        pushwire.CampaignOptions(expiry="60"),
        pushwire.GoalResult(name="purchase", count=1, value=9.5),
    ]
    for m in built:
        found.setdefault(type(m), m)
    missing = {cls.__name__ for cls in MODELS} - {t.__name__ for t in found}
    assert not missing, f"no instance of {missing}"
    return list(found.values())


# -- 3. the dataclasses module ---------------------------------------------------------------


def test_every_model_is_a_dataclass_to_the_dataclasses_module(results: dict[str, Any]) -> None:
    for m in every_model_instance(results):
        cls = type(m)
        assert dataclasses.is_dataclass(m) and dataclasses.is_dataclass(cls), cls
        names = [f.name for f in dataclasses.fields(m)]
        assert all(hasattr(m, n) for n in names), cls
        # Every key to_dict() writes (but the unlisted fields of `extra`) is a field: a field
        # the Rust struct has and its description lacks would show here.
        spec_names = {"perPage": "per_page", "lastPage": "last_page"}
        written = {spec_names.get(k, k) for k in m.to_dict()} - set(getattr(m, "extra", ()))
        assert written <= set(names), (cls, written - set(names))
        # `extra` (the unlisted fields) is an InitVar: an argument of the constructor and
        # `replace`, no field.
        init = names + (["extra"] if hasattr(m, "extra") else [])
        assert list(cls.__annotations__) == init == list(cls.__dataclass_fields__)
        d = dataclasses.asdict(m)
        assert list(d) == names
        t = dataclasses.astuple(m)
        assert len(t) == len(names)
        assert all(v == d[n] for n, v in zip(names, t) if not isinstance(d[n], (dict, list)))
        # Nested models come out as dicts, all the way down.
        assert "pushwire" not in repr(d), d
        # SendTo too: the include lists it leaves out are None (no filter), given back as such
        assert dataclasses.replace(m) == m
        assert copy.copy(m) == m and copy.deepcopy(m) == m
        assert pickle.loads(pickle.dumps(m)) == m
        assert cls.from_dict(m.to_dict()) == m
        assert isinstance(m, cls) and repr(m).startswith(f"{cls.__name__}(")
        assert cls.__match_args__ == tuple(init)


def test_replace_changes_a_field_and_checks_it(results: dict[str, Any]) -> None:
    drip = results["drip"]
    renamed = dataclasses.replace(drip, campaign_name="Renamed")
    assert renamed.campaign_name == "Renamed" and renamed.drip_id == drip.drip_id
    assert renamed.created_at_utc == drip.created_at_utc
    assert renamed != drip and drip.campaign_name != "Renamed"
    with pytest.raises(pushwire.ValidationError, match="drip_id"):
        dataclasses.replace(drip, drip_id="many")
    with pytest.raises(pushwire.ValidationError, match="no_such_field"):
        dataclasses.replace(drip, no_such_field=1)


def test_replace_never_widens_an_audience() -> None:
    whole = SendTo(
        include_segments=["1"],
        include_countries=["DE"],
        include_states=["BE"],
        include_cities=["Berlin"],
    )
    assert dataclasses.replace(whole, exclude_segments=["2"]).exclude_segments == ["2"]
    with pytest.raises(pushwire.ValidationError, match="include_segments is empty"):
        dataclasses.replace(whole, include_segments=[])
    # The lists not given stay not given (None: no filter), so replace() carries them over
    narrower = dataclasses.replace(SendTo(include_segments=["1"]), exclude_segments=["2"])
    assert narrower == SendTo(include_segments=["1"], exclude_segments=["2"])
    assert narrower.include_countries is None and narrower.to_dict() == {
        "include_segments": ["1"],
        "exclude_segments": ["2"],
    }
    new = NewDrip(
        campaign_name="x", notifications=[drip_notification()], send_to={"include_segments": ["1"]}
    )
    assert dataclasses.replace(new, campaign_name="y").send_to == new.send_to


def test_a_dict_of_fields_builds_the_model_as_it_was(results: dict[str, Any]) -> None:
    drip = results["drip"]
    assert Drip(**dataclasses.asdict(drip)) == drip
    meta = pushwire.Meta(total=3, page=1, per_page=10, last_page=1)
    assert pushwire.Meta.from_dict(dataclasses.asdict(meta)) == meta
    # A nested model's unlisted fields under its `extra` are read back as its own; one named
    # as a field of the model never sets the field.
    notification = dataclasses.asdict(drip.notifications[0])
    notification["extra"] = {"color": "red", "title": "not the title"}
    again = Drip(**{**dataclasses.asdict(drip), "notifications": [notification]})
    assert again.notifications[0].extra == {"color": "red"}
    assert again.notifications[0].title == drip.notifications[0].title
    with pytest.raises(pushwire.ValidationError, match="campaign_name is given twice"):
        Drip(**{**dataclasses.asdict(drip), "extra": {"campaign_name": "not the name"}})


def test_asdict_keeps_datetimes_and_to_dict_the_service_text(results: dict[str, Any]) -> None:
    drip = results["drip"]
    assert dataclasses.asdict(drip)["created_at_utc"] == drip.created_at_utc
    assert isinstance(drip.to_dict()["created_at_utc"], str)
    page = results["drips"]
    d = dataclasses.asdict(page)
    assert [x["drip_id"] for x in d["data"]] == [x.drip_id for x in page]
    assert (d["total"], d["page"], d["per_page"]) == (3, 1, 10)


# -- 4. hashing --------------------------------------------------------------------------------


def test_models_hash_as_frozen_dataclasses(results: dict[str, Any]) -> None:
    segments = results["segments"]
    again = [Segment.from_dict(s.to_dict()) for s in segments]
    assert all(hash(a) == hash(b) and a == b for a, b in zip(segments, again))
    assert len({*segments, *again}) == len(segments) == 3
    assert {s: s.segment_name for s in segments}[again[1]] == segments[1].segment_name
    # A model holding a list (a drip's audience, a campaign's notifications) is unhashable.
    for unhashable in (results["drip"], results["trigger"], results["drips"]):
        with pytest.raises(TypeError, match="unhashable"):
            hash(unhashable)
    # One whose fields hold no list hashes, however deep.
    rules = results["trigger"].rules
    assert hash(rules) == hash(pushwire.Rules(**dataclasses.asdict(rules)))


# -- 5. times ----------------------------------------------------------------------------------


def test_timestamps_are_aware_utc_datetimes_of_what_the_service_sent(site: Site) -> None:
    drip = site.client.drips.get(site.drip_ids[1])
    raw = site.raw(f"/apiv1/drips/{site.drip_ids[1]}")["data"]
    for name in ("created_at_utc", "updated_at_utc"):
        value = getattr(drip, name)
        assert isinstance(value, dt.datetime) and value.tzinfo is UTC
        sent = dt.datetime.fromisoformat(raw[name].replace("Z", "+00:00"))
        assert value == sent
        assert drip.to_dict()[name] == raw[name]
    trigger = site.client.triggers.get(site.trigger_id)
    assert trigger.created_at_utc is not None and trigger.created_at_utc.tzinfo is UTC
    assert abs(trigger.created_at_utc - site.emu.now) < dt.timedelta(minutes=5)


def test_a_timestamp_that_is_none_reads_as_none_and_keeps_its_text() -> None:
    import pandas as pd

    texts = ("0000-00-00 00:00:00", "yesterday", "0000-01-01 00:00:00", "9999-12-31T23:00:00-05:00")
    for text in texts:
        d = Drip.from_dict({"drip_id": 1, "created_at_utc": text, "updated_at_utc": None})
        assert d.created_at_utc is None and d.updated_at_utc is None
        assert d.to_dict()["created_at_utc"] == text
        assert json.loads(d.to_json())["created_at_utc"] == text
        assert Drip.from_dict(d.to_dict()) == d
        assert dataclasses.asdict(d)["created_at_utc"] is None
    # Missing, null or empty: no text, written null.
    for missing in ({}, {"created_at_utc": None}, {"created_at_utc": ""}):
        d = Drip.from_dict(missing)
        assert d.created_at_utc is None and d.to_dict()["created_at_utc"] is None
    # A page with such a value still loads whole.
    odd = Drip.from_dict({"drip_id": 2, "created_at_utc": "0000-01-01 00:00:00"})
    good = Drip.from_dict({"drip_id": 3, "created_at_utc": "2024-01-01T00:00:00Z"})
    df = pd.DataFrame([odd, good])
    assert df["created_at_utc"].isna().tolist() == [True, False]
    assert str(df["created_at_utc"].dt.tz) == "UTC"
    # Other spellings of an instant read as that instant, in UTC.
    d = Drip.from_dict({"created_at_utc": "2024-03-01 10:00:00", "updated_at_utc": "2024-03-01"})
    assert d.created_at_utc == dt.datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert d.updated_at_utc == dt.datetime(2024, 3, 1, tzinfo=UTC)
    offset = Drip(
        created_at_utc=dt.datetime(2024, 3, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    )
    assert offset.created_at_utc == dt.datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert offset.created_at_utc.tzinfo is UTC


# -- 6. JSON -----------------------------------------------------------------------------------


def test_to_json_is_the_service_json(site: Site, results: dict[str, Any]) -> None:
    raw = site.raw(f"/apiv1/drips/{site.drip_ids[0]}")["data"]
    assert json.loads(results["drip"].to_json()) == raw
    assert json.loads(results["drip"].to_json(indent=2)) == raw
    assert "\n  " in results["drip"].to_json(indent=2)
    listed = site.raw("/apiv1/drips", limit=10)
    assert json.loads(results["drips"].to_json()) == {k: listed[k] for k in ("data", "meta")}
    segments = site.raw("/apiv1/segments")["segments"]
    assert json.loads(results["segments"].to_json()) == segments
    today = site.emu.now.date()
    rows = site.client.analytics.summary(today - dt.timedelta(days=2), today)
    assert [r["date"] for r in json.loads(rows.to_json())] == [r["date"].isoformat() for r in rows]
    assert [json.loads(s.to_json()) for s in results["segments"]] == segments


def test_django_and_flask_take_results(results: dict[str, Any]) -> None:
    import flask
    from django.conf import settings

    if not settings.configured:
        settings.configure()
    from django.http import JsonResponse

    drip, page = results["drip"], results["drips"]
    assert json.loads(JsonResponse(drip.to_dict()).content) == drip.to_dict()
    assert json.loads(JsonResponse(page.to_dict()).content)["data"][0]["drip_id"] == page[0].drip_id
    segments = results["segments"]
    r = JsonResponse([s.to_dict() for s in segments], safe=False)
    assert json.loads(r.content) == [s.to_dict() for s in segments]

    app = flask.Flask(__name__)
    with app.app_context():
        assert flask.jsonify(drip.to_dict()).get_json() == json.loads(drip.to_json())
        # Directly: Flask reads dataclasses (its own date format for the times).
        direct = flask.jsonify(segments).get_json()
        assert direct == [dataclasses.asdict(s) for s in segments]


# -- 2. pandas and polars ----------------------------------------------------------------------


def test_pandas_takes_a_list_a_page_and_an_iterator(site: Site, results: dict[str, Any]) -> None:
    import pandas as pd

    page = results["drips"]
    fields = [f.name for f in dataclasses.fields(Drip)]
    for data in (list(page), page, iter(page), site.client.drips.iter()):
        df = pd.DataFrame(data)
        assert list(df.columns) == fields and len(df) == 3
        assert str(df["created_at_utc"].dtype).startswith("datetime64")
        assert str(df["created_at_utc"].dt.tz) == "UTC"
        assert df["created_at_utc"].iloc[0] == page[0].created_at_utc
        assert df["audience"].iloc[0] == dataclasses.asdict(page[0].audience)
        assert df["drip_id"].tolist() == [d.drip_id for d in page]
    seg = pd.DataFrame(results["segments"])
    assert list(seg.columns) == ["segment_id", "segment_name"]
    # An empty list has no first row to read fields from: the docs' one-liner names them.
    empty = pd.DataFrame([], columns=[f.name for f in dataclasses.fields(Drip)])
    assert list(empty.columns) == fields
    flat = pd.json_normalize([dataclasses.asdict(d) for d in page])
    assert "analytics.views" in flat.columns and "options.result_name" in flat.columns


def test_polars_takes_a_list_a_page_and_an_iterator(site: Site, results: dict[str, Any]) -> None:
    import polars as pl

    page = results["drips"]
    fields = [f.name for f in dataclasses.fields(Drip)]
    for data in (list(page), page, iter(page), site.client.drips.iter()):
        df = pl.DataFrame(data)
        assert df.columns == fields and df.height == 3
        assert df.schema["created_at_utc"] == pl.Datetime("us", "UTC")
        assert df["created_at_utc"][0] == page[0].created_at_utc
        assert isinstance(df.schema["analytics"], pl.Struct)
        assert df["analytics"][0]["views"] == page[0].analytics.views
        assert df["drip_id"].to_list() == [d.drip_id for d in page]
    triggers = pl.DataFrame(results["triggers"])
    assert triggers["trigger_id"].to_list() == [t.trigger_id for t in results["triggers"]]
    assert pl.DataFrame(results["segments"])["segment_name"].to_list() == [
        s.segment_name for s in results["segments"]
    ]


# -- 1. pydantic and FastAPI -------------------------------------------------------------------


def test_pydantic_type_adapters_validate_and_dump(results: dict[str, Any]) -> None:
    import pydantic

    segments = results["segments"]
    ta = pydantic.TypeAdapter(list[Segment])
    assert ta.validate_python(segments) == segments
    assert ta.validate_json(ta.dump_json(segments)) == segments
    assert ta.validate_python([s.to_dict() for s in segments]) == segments
    drip = results["drip"]
    one = pydantic.TypeAdapter(Drip)
    dumped = one.dump_python(drip)
    assert dumped["created_at_utc"] == drip.created_at_utc
    assert dumped["audience"] == dataclasses.asdict(drip.audience)
    assert one.validate_json(one.dump_json(drip)) == drip
    as_json = json.loads(one.dump_json(drip))
    assert (
        dt.datetime.fromisoformat(as_json["created_at_utc"].replace("Z", "+00:00"))
        == drip.created_at_utc
    )
    pages = pydantic.TypeAdapter(Page[Drip])
    page = results["drips"]
    assert pages.validate_json(pages.dump_json(page)) == page
    # The service's shapes too: a page's data and meta, a model's unlisted fields at the top.
    assert pages.validate_json(page.to_json()) == page
    odd = Segment.from_dict({"segment_id": "9", "segment_name": "x", "color": "red"})
    assert pydantic.TypeAdapter(Segment).validate_python(odd.to_dict()) == odd
    meta = pushwire.Meta(total=3, page=1, per_page=10, last_page=1)
    assert pydantic.TypeAdapter(pushwire.Meta).validate_python(meta.to_dict()) == meta
    with pytest.raises(pydantic.ValidationError, match="no field"):
        pydantic.TypeAdapter(pushwire.Product).validate_python(
            {"product_id": "p", "price": 1, "prise": 1}
        )
    with pytest.raises(pydantic.ValidationError, match="drip_id"):
        one.validate_python({"drip_id": "many"})
    for cls in MODELS:
        schema = pydantic.TypeAdapter(cls).json_schema(mode="serialization")
        props = (
            schema.get("properties") or next(iter(schema.get("$defs", {}).values()))["properties"]
        )
        assert list(props) == list(cls.__match_args__), cls


def test_fastapi_serves_results_and_takes_input_models(site: Site) -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    c = site.client
    app = FastAPI()

    @app.get("/segments", response_model=list[Segment])
    def segments() -> Any:
        return c.segments.list()

    @app.get("/segments/plain")
    def segments_plain():  # type: ignore[no-untyped-def]
        return c.segments.list()

    @app.get("/drips")
    def drips() -> Page[Drip]:
        return c.drips.list(limit=10)

    @app.get("/drips/plain")
    def drips_plain():  # type: ignore[no-untyped-def]
        return c.drips.list(limit=10)

    @app.get("/drips/{drip_id}")
    def drip(drip_id: int) -> Drip:
        return c.drips.get(drip_id)

    @app.get("/triggers/{trigger_id}", response_model=TriggeredCampaign)
    def trigger(trigger_id: int) -> Any:
        return c.triggers.get(trigger_id)

    @app.post("/products")
    def products(product: Product) -> Product:
        c.products.update([product])
        return product

    @app.post("/drips")
    def create(new: NewDrip) -> dict[str, int]:
        return {
            "drip_id": c.drips.create(new.campaign_name, new.notifications, send_to=new.send_to)
        }

    with TestClient(app) as http:
        listed = c.segments.list()
        for path in ("/segments", "/segments/plain"):
            got = http.get(path)
            assert got.status_code == 200, got.text
            assert [s["segment_id"] for s in got.json()] == [s.segment_id for s in listed]
        for path in ("/drips", "/drips/plain"):
            body = http.get(path).json()
            assert body["total"] == 3 and [d["drip_id"] for d in body["data"]] == [
                d.drip_id for d in c.drips.list(limit=10)
            ]
            first = body["data"][0]
            assert dt.datetime.fromisoformat(first["created_at_utc"].replace("Z", "+00:00")).tzinfo
        one = http.get(f"/drips/{site.drip_ids[2]}").json()
        read = c.drips.get(site.drip_ids[2])
        assert Drip(**{k: v for k, v in one.items()}) == read
        t = http.get(f"/triggers/{site.trigger_id}").json()
        assert t["trigger_id"] == site.trigger_id and t["rules"]["start_event_name"] == "cart_add"

        r = http.post("/products", json={"product_id": "sku-1", "price": 12.5})
        assert r.status_code == 200 and r.json()["price"] == 12.5
        assert any(p["product"]["product_id"] == "sku-1" for p in site.emu.products())
        bad = http.post("/products", json={"product_id": "sku-1", "price": "cheap"})
        assert bad.status_code == 422 and "price" in bad.text
        made = http.post(
            "/drips",
            json={
                "campaign_name": "From FastAPI",
                "notifications": [drip_notification()],
                "send_to": {"include_segments": [site.segment_id]},
            },
        )
        assert made.status_code == 200, made.text
        created = c.drips.get(made.json()["drip_id"])
        assert created.campaign_name == "From FastAPI"

        spec = http.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    props = schemas["Drip"]["properties"]
    assert list(props) == list(Drip.__match_args__)
    created = props["created_at_utc"].get("anyOf", [props["created_at_utc"]])
    assert {"type": "string", "format": "date-time"} in created
    assert props["drip_id"]["type"] == "integer"
    # An answer always holds every field.
    assert set(schemas["Drip"]["required"]) == set(props)
    assert props["audience"] == {"$ref": "#/components/schemas/Audience"}
    assert schemas["Segment"]["properties"]["segment_name"]["type"] == "string"
    # A request body's schema and an answer's apart: an answer has every field.
    product_fields = {f.name for f in dataclasses.fields(Product)}
    assert set(schemas["Product-Input"]["properties"]) == product_fields
    assert set(schemas["Product-Output"]["required"]) == product_fields


def test_pydantic_is_imported_only_when_the_user_does(site: Site) -> None:
    code = f"""
import dataclasses, sys
import pushwire
with pushwire.Client(api_key={site.emu.api_key!r}, base_url={site.emu.base_url!r},
                     events_url={site.emu.events_url!r}) as c:
    segments = c.segments.list()
    [dataclasses.asdict(s) for s in segments]
    [hash(s) for s in segments]
assert "pydantic" not in sys.modules, "pydantic imported"
assert "pandas" not in sys.modules and "polars" not in sys.modules
print(len(segments))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3"


# -- BulkResult --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bulk(site: Site) -> pushwire.BulkResult:
    """A bulk call of two chunks, the first refused (an injected 400)."""
    emu = site.emu
    segment = emu.create_segment("Bulk")
    hashes = [emu.add_subscriber(f"bulk{i:04}") for i in range(700)]
    emu.inject_fault("/apiv1/segments/addSegmentWithHash", status=400, times=1)
    return site.client.segments.add_subscribers_bulk(segment, hashes, concurrency=1)


def test_a_bulk_result_is_json_a_dataframe_and_a_pydantic_type(
    site: Site, bulk: pushwire.BulkResult
) -> None:
    import pandas as pd
    import pydantic
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    assert not bulk.ok and bulk.succeeded == 200
    d = json.loads(bulk.to_json())
    assert d["ok"] is False and d["succeeded"] == 200
    assert d["chunks"][0]["error"] == {
        "type": "BadRequestError",
        "message": str(bulk.chunks[0].error),
        "status_code": 400,
    }
    assert d["chunks"][1]["error"] is None and d["chunks"][1]["size"] == 200
    assert d["failed_items"] == bulk.failed_items and len(d["failed_items"]) == 500

    chunks = pd.DataFrame(bulk.chunks)
    assert list(chunks.columns) == ["index", "start", "size", "message", "error", "prior"]
    assert chunks["size"].tolist() == [500, 200]

    assert json.loads(pydantic.TypeAdapter(pushwire.BulkResult).dump_json(bulk)) == d
    app = FastAPI()

    @app.get("/import")
    def annotated() -> pushwire.BulkResult:
        return bulk

    @app.get("/import/plain")
    def plain():  # type: ignore[no-untyped-def]
        return bulk

    with TestClient(app) as http:
        assert http.get("/import").json() == d
        # Unannotated, FastAPI encodes the dataclass itself: each field, the error's too.
        got = http.get("/import/plain").json()
        assert [c["size"] for c in got["chunks"]] == [500, 200]
        assert got["chunks"][0]["error"]["status_code"] == 400
        schema = http.get("/openapi.json").json()["paths"]["/import"]["get"]["responses"]
    props = schema["200"]["content"]["application/json"]["schema"]["properties"]
    assert set(props) == {"ok", "succeeded", "chunks", "failed_items"}
