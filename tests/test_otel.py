"""Tracing and metrics of every call (``pushwire.otel``), with the OpenTelemetry SDK's
in-memory span exporter and metric reader, over real HTTP against the emulator: a span per
operation, a CLIENT span per request under it, the trace context sent on (and seen in the
emulator's request log), the duration metric and the counters, the logs in the call's trace,
bulk calls, and the key found nowhere. The frameworks' instrumentations beside it are in
tests/test_otel_frameworks.py."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import subprocess
import sys
from typing import Any

import pytest

otel_sdk = pytest.importorskip(
    "opentelemetry.sdk.trace", reason="the otel extra (requirements-dev.txt)"
)

from opentelemetry import propagate  # noqa: E402
from opentelemetry.propagators.textmap import TextMapPropagator  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402
from otel_support import Telemetry, hex_trace, module_fixtures  # noqa: E402

import pushwire  # noqa: E402
from pushwire.otel import PushwireInstrumentor  # noqa: E402
from pushwire.testing import Emulator  # noqa: E402

KEY = "sk_live_otel_secret_0123456789abcdef"
BROADCAST = {"title": "Sale", "message": "Half price", "url": "https://shop.example/sale"}


telemetry, server = module_fixtures(KEY)


@pytest.fixture
def emu(server: Emulator, telemetry: Telemetry) -> Emulator:
    server.reset()
    telemetry.spans.clear()
    return server


# --- the spans of one call ----------------------------------------------------------------------


def test_a_call_is_an_operation_span_over_a_client_span_under_the_callers_span(
    emu: Emulator, telemetry: Telemetry
) -> None:
    client = emu.client()
    with telemetry.app.start_as_current_span("POST /promotions") as view:
        notification_id = client.notifications.create(**BROADCAST)
    assert notification_id > 0
    (op,) = telemetry.named("notifications.create")
    (view_span,) = telemetry.named("POST /promotions")
    assert op.parent is not None and op.parent.span_id == view.get_span_context().span_id
    assert op.kind == SpanKind.INTERNAL and op.attributes is not None
    assert op.attributes["pushwire.operation"] == "notifications.create"
    assert op.attributes["pushwire.outcome"] == "success"
    (request,) = telemetry.under(op)
    assert request.kind == SpanKind.CLIENT and request.name == "POST"
    attributes = dict(request.attributes or {})
    host, port = emu.base_url.removeprefix("http://").split(":")
    assert attributes == {
        "http.request.method": "POST",
        "server.address": host,
        "server.port": int(port),
        "url.full": f"{emu.base_url}/apiv1/notifications",
        "network.protocol.version": "1.1",
        "http.response.status_code": 200,
    }
    assert request.status.status_code == StatusCode.UNSET
    # The request carried its span's context: the emulator saw the same trace and parent.
    (logged,) = emu.requests(path="/apiv1/notifications")
    assert logged["trace_id"] == hex_trace(view_span) == hex_trace(request)
    traceparent = logged["headers"]["traceparent"]
    assert traceparent.split("-")[2] == f"{request.context.span_id:016x}"


def test_a_resend_after_a_503_is_a_span_of_its_own_with_its_resend_count(
    emu: Emulator, telemetry: Telemetry
) -> None:
    emu.inject_fault("/apiv1/segments", status=503, retry_after=0)
    before = sum(p.value for p in telemetry.points("pushwire.client.retries"))
    emu.client(backoff_base=0).segments.list()
    (op,) = telemetry.named("segments.list")
    first, second = sorted(telemetry.under(op), key=lambda s: s.start_time or 0)
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["http.response.status_code"] == 503
    assert first.attributes["error.type"] == "503"
    assert first.status.status_code == StatusCode.ERROR
    assert "http.request.resend_count" not in first.attributes
    assert second.attributes["http.request.resend_count"] == 1
    assert second.attributes["http.response.status_code"] == 200
    assert "error.type" not in second.attributes
    # Each request sent its own span's context.
    logged = emu.requests(path="/apiv1/segments")
    assert [r["headers"]["traceparent"].split("-")[2] for r in logged] == [
        f"{first.context.span_id:016x}",
        f"{second.context.span_id:016x}",
    ]
    assert sum(p.value for p in telemetry.points("pushwire.client.retries")) == before + 1


def test_a_401_sets_both_spans_to_error_with_their_error_type(
    emu: Emulator, telemetry: Telemetry
) -> None:
    with emu.client(api_key="sk_live_wrong_key_0000000000") as client:
        with pytest.raises(pushwire.AuthenticationError):
            client.segments.list()
    (op,) = telemetry.named("segments.list")
    assert op.status.status_code == StatusCode.ERROR and op.attributes is not None
    assert op.attributes["error.type"] == "AuthenticationError"
    assert op.attributes["pushwire.outcome"] == "error"
    (request,) = telemetry.under(op)
    assert request.attributes is not None and request.attributes["error.type"] == "401"
    assert request.status.status_code == StatusCode.ERROR


def test_an_outcome_unknown_is_told_on_the_span_and_counted(
    emu: Emulator, telemetry: Telemetry
) -> None:
    emu.inject_fault("/apiv1/notifications", drop="after")
    before = sum(p.value for p in telemetry.points("pushwire.client.outcome_unknown"))
    with pytest.raises(pushwire.APIConnectionError) as info:
        emu.client().notifications.create(**BROADCAST)
    assert info.value.outcome_unknown
    (op,) = telemetry.named("notifications.create")
    assert op.attributes is not None and op.attributes["pushwire.outcome"] == "unknown"
    (request,) = telemetry.under(op)
    assert request.attributes is not None
    assert request.attributes["error.type"] == "connection_error"
    assert "http.response.status_code" not in request.attributes
    after = sum(p.value for p in telemetry.points("pushwire.client.outcome_unknown"))
    assert after == before + 1


def test_a_request_for_an_endpoint_without_a_method_is_traced_as_the_typed_calls(
    emu: Emulator, telemetry: Telemetry
) -> None:
    emu.inject_fault("/apiv1/notifications", drop="after")
    form = {"notification_title": "Sale", "notification_message": "Half price"}
    with pytest.raises(pushwire.APIConnectionError) as info:
        emu.client().request("POST", "/apiv1/notifications", form=form)
    assert info.value.outcome_unknown
    (op,) = telemetry.named("request")
    assert op.attributes is not None and op.attributes["pushwire.outcome"] == "unknown"
    (request,) = telemetry.under(op)
    assert request.kind == SpanKind.CLIENT and request.name == "POST"


def test_a_keyed_call_tells_what_it_did_with_its_key_and_a_replay_sends_no_request(
    emu: Emulator, telemetry: Telemetry, tmp_path: Any
) -> None:
    client = emu.client(idempotency_store=f"sqlite:///{tmp_path / 'keys.db'}")
    first = client.notifications.create(**BROADCAST, idempotency_key="k")
    assert client.notifications.create(**BROADCAST, idempotency_key="k") == first
    emu.inject_fault("/apiv1/notifications", drop="after")
    with pytest.raises(pushwire.APIConnectionError):
        client.notifications.create(**BROADCAST, idempotency_key="lost")
    with pytest.raises(pushwire.IdempotencyError):
        client.notifications.create(**BROADCAST, idempotency_key="lost")
    spans = telemetry.named("notifications.create")
    outcomes = [(s.attributes or {}).get("pushwire.idempotency.outcome") for s in spans]
    assert outcomes == ["new", "replayed", "new", "unknown"]
    assert [len(telemetry.under(s)) for s in spans] == [1, 0, 1, 0]
    assert [(s.attributes or {})["pushwire.outcome"] for s in spans] == [
        "success",
        "success",
        "unknown",
        "unknown",  # refused, unsent: what the key's call did is still unknown
    ]


def test_bad_input_is_an_error_span_with_no_request(emu: Emulator, telemetry: Telemetry) -> None:
    with pytest.raises(pushwire.ValidationError):
        emu.client().notifications.create(**BROADCAST, include_segments=["vip"])
    (op,) = telemetry.named("notifications.create")
    assert op.attributes is not None and op.attributes["error.type"] == "ValidationError"
    assert telemetry.under(op) == [] and emu.requests() == []


# --- whose child: asyncio tasks, threads ------------------------------------------------------


def test_thirty_asyncio_tasks_in_flight_each_parent_their_own_call(
    emu: Emulator, telemetry: Telemetry
) -> None:
    async def one(client: pushwire.AsyncClient, i: int) -> None:
        with telemetry.app.start_as_current_span(f"task-{i}"):
            await asyncio.sleep(0)  # every task started before any call
            await client.events.track("viewed", profile_id=f"p{i}")

    async def main() -> None:
        async with emu.async_client() as client:
            await asyncio.gather(*(one(client, i) for i in range(30)))

    asyncio.run(main())
    tasks = {s.name: s for s in telemetry.finished() if s.name.startswith("task-")}
    ops = telemetry.named("events.track")
    assert len(tasks) == len(ops) == 30
    by_parent = {op.parent.span_id: op for op in ops if op.parent}
    for task in tasks.values():
        op = by_parent[task.context.span_id]
        (request,) = telemetry.under(op)
        assert hex_trace(request) == hex_trace(task)
    # Thirty traces in the emulator's log, one per task.
    assert {r["trace_id"] for r in emu.requests()} == {hex_trace(t) for t in tasks.values()}


def test_calls_in_a_thread_pool_are_children_of_each_workers_span(
    emu: Emulator, telemetry: Telemetry
) -> None:
    client = emu.client()

    def job(i: int) -> int:
        with telemetry.app.start_as_current_span(f"job-{i}") as span:
            client.segments.list()
            return span.get_span_context().span_id

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        parents = set(pool.map(job, range(8)))
    ops = telemetry.named("segments.list")
    assert {op.parent.span_id for op in ops if op.parent} == parents


# --- bulk calls ---------------------------------------------------------------------------------


def test_a_batch_is_one_span_with_its_counts_and_its_requests_carry_its_trace(
    emu: Emulator, telemetry: Telemetry
) -> None:
    events: list[Any] = [{"event_name": "viewed", "profile_id": f"p{i}"} for i in range(2000)]
    events[7] = {"event_name": "", "profile_id": "p"}  # refused before sending
    emu.inject_fault("/api/v1/events", status=400, times=3)
    results = emu.client(max_retries=0).events.track_many(events, concurrency=16)
    assert sum(r is not None for r in results) == 4
    (batch,) = telemetry.named("events.track_many")
    assert batch.attributes is not None
    assert batch.attributes["pushwire.batch.items"] == 2000
    assert batch.attributes["pushwire.batch.requests"] == 1999
    assert batch.attributes["pushwire.batch.failed"] == 4
    # No span per request: one trace of one span, however many events.
    assert [s.name for s in telemetry.finished()] == ["events.track_many"]
    logged = emu.requests(path="/api/v1/events", limit=3000)
    assert logged.total == 1999 and {r["trace_id"] for r in logged} == {hex_trace(batch)}


def test_a_bulk_membership_call_counts_its_chunks(emu: Emulator, telemetry: Telemetry) -> None:
    segment = emu.create_segment("vip")
    hashes = emu.add_subscribers([{} for _ in range(1200)])
    result = emu.client().segments.add_subscribers_bulk(segment, hashes)
    assert result.ok
    (bulk,) = telemetry.named("segments.add_subscribers_bulk")
    assert bulk.attributes is not None
    assert (
        bulk.attributes["pushwire.batch.requests"],
        bulk.attributes["pushwire.batch.items"],
    ) == (
        3,
        1200,
    )
    assert {r["trace_id"] for r in emu.requests(path="/apiv1/segments/*")} == {hex_trace(bulk)}


# --- metrics --------------------------------------------------------------------------------------


def test_every_request_is_in_the_duration_histogram_with_the_conventions_attributes(
    emu: Emulator, telemetry: Telemetry
) -> None:
    emu.client().segments.list()
    points = [
        p
        for p in telemetry.points("http.client.request.duration")
        if p.attributes.get("http.request.method") == "GET"
        and p.attributes.get("http.response.status_code") == 200
    ]
    (point,) = points
    host, port = emu.base_url.removeprefix("http://").split(":")
    assert dict(point.attributes) == {
        "http.request.method": "GET",
        "server.address": host,
        "server.port": int(port),
        "url.scheme": "http",
        "network.protocol.version": "1.1",
        "http.response.status_code": 200,
    }
    assert point.count >= 1 and 0 < point.sum < 5  # seconds


# --- logs ---------------------------------------------------------------------------------------


def test_the_cores_log_records_carry_the_calls_trace_also_from_an_async_call(
    emu: Emulator, telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    from opentelemetry.instrumentation.logging import LoggingInstrumentor

    LoggingInstrumentor().instrument(
        inject_trace_context=True, enable_log_auto_instrumentation=False
    )
    try:
        emu.inject_fault("/apiv1/segments", status=503, retry_after=0)

        async def main() -> None:
            async with emu.async_client(backoff_base=0) as client:
                with telemetry.app.start_as_current_span("async-view"):
                    await client.segments.list()

        with caplog.at_level(logging.INFO, logger="pushwire"):
            asyncio.run(main())
    finally:
        LoggingInstrumentor().uninstrument()
    (op,) = telemetry.named("segments.list")
    retried = [r for r in caplog.records if r.getMessage().startswith("retrying GET")]
    assert len(retried) == 1
    record: Any = retried[0]
    assert record.otelTraceID == hex_trace(op)
    assert record.otelSpanID == f"{op.context.span_id:016x}"


def test_a_bulk_calls_log_records_carry_its_trace_from_every_thread(
    emu: Emulator, telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    from opentelemetry.instrumentation.logging import LoggingInstrumentor

    events = [{"event_name": "viewed", "profile_id": f"p{i}"} for i in range(2000)]
    LoggingInstrumentor().instrument(
        inject_trace_context=True, enable_log_auto_instrumentation=False
    )
    try:
        with caplog.at_level(logging.INFO, logger="pushwire"):
            # Blocking, spread over the I/O threads, and awaited, on an I/O thread.
            emu.inject_fault("/api/v1/events", status=429, retry_after=0, times=20)
            emu.client(backoff_base=0).events.track_many(events, concurrency=32)

            async def main() -> None:
                async with emu.async_client(backoff_base=0) as client:
                    await client.events.track_many(events, concurrency=32)

            emu.inject_fault("/api/v1/events", status=429, retry_after=0, times=20)
            asyncio.run(main())
    finally:
        LoggingInstrumentor().uninstrument()
    batches = telemetry.named("events.track_many")
    assert len(batches) == 2
    retried: list[Any] = [r for r in caplog.records if r.getMessage().startswith("retrying")]
    assert len(retried) == 40
    assert {r.otelTraceID for r in retried} == {hex_trace(b) for b in batches}


def test_a_callers_own_trace_context_is_sent_once_and_wins(
    emu: Emulator, telemetry: Telemetry
) -> None:
    theirs = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    client = emu.client()
    client.segments.list(extra_headers={"traceparent": theirs})
    client.events.track_many(
        [{"event_name": "e", "profile_id": "p"}], extra_headers={"traceparent": theirs}
    )
    logged = emu.requests()
    assert [r["headers"]["traceparent"] for r in logged] == [theirs, theirs]
    assert {r["trace_id"] for r in logged} == {"0af7651916cd43dd8448eb211c80319c"}


# --- never the key, never a broken call ----------------------------------------------------------


def test_the_key_is_in_no_span_event_metric_or_log_record(
    emu: Emulator, telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    client = emu.client(backoff_base=0)
    emu.inject_fault("/apiv1/segments", status=503, retry_after=0, body={"echo": KEY})
    with caplog.at_level(logging.DEBUG, logger="pushwire"):
        client.segments.list(extra_query={"api_key": KEY})
        with pytest.raises(pushwire.PushwireError):
            emu.inject_fault("/apiv1/drips", status=400, body={"message": f"bad key {KEY}"})
            client.drips.list()
    recorded = json.dumps(
        [
            {
                "name": s.name,
                "attributes": dict(s.attributes or {}),
                "events": [(e.name, dict(e.attributes or {})) for e in s.events],
                "status": s.status.description,
            }
            for s in telemetry.finished()
        ]
        + [
            dict(p.attributes)
            for name in ("http.client.request.duration",)
            for p in telemetry.points(name)
        ]
        + [r.getMessage() for r in caplog.records],
        default=str,
    )
    assert "segments.list" in recorded and "drips.list" in recorded
    assert KEY not in recorded
    assert KEY.replace("_", "%5F") not in recorded


class Raising(SpanProcessor):
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        raise RuntimeError("a span processor that raises")

    def on_end(self, span: ReadableSpan) -> None:
        raise RuntimeError("an exporter that raises")


class RaisingPropagator(TextMapPropagator):
    def extract(self, carrier: Any, context: Any = None, getter: Any = None) -> Any:
        raise RuntimeError("a propagator that raises")

    def inject(self, carrier: Any, context: Any = None, setter: Any = None) -> None:
        raise RuntimeError("a propagator that raises")

    @property
    def fields(self) -> set[str]:
        return set()


def test_a_tracer_propagator_or_exporter_that_raises_never_breaks_or_changes_a_call(
    emu: Emulator, telemetry: Telemetry
) -> None:
    broken = TracerProvider()
    broken.add_span_processor(Raising())
    instrumentor = PushwireInstrumentor()
    instrumentor.uninstrument()
    instrumentor.instrument(tracer_provider=broken)
    saved = propagate.get_global_textmap()
    propagate.set_global_textmap(RaisingPropagator())
    try:
        client = emu.client(backoff_base=0)
        emu.inject_fault("/apiv1/segments", status=503, retry_after=0)
        vip = emu.create_segment("vip")
        assert [s.segment_id for s in client.segments.list()] == [vip]
        assert client.notifications.create(**BROADCAST) > 0
        assert asyncio.run(_async_create(emu)) > 0
        assert client.events.track_many([{"event_name": "e", "profile_id": "p"}] * 3) == [None] * 3
        with pytest.raises(pushwire.BadRequestError):
            client.drips.get(424242)
    finally:
        propagate.set_global_textmap(saved)
        instrumentor.uninstrument()
        instrumentor.instrument(
            tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider
        )
    # Every call was sent as it is without tracing.
    assert [r["path"] for r in emu.requests()] == [
        "/apiv1/segments",
        "/apiv1/segments",
        "/apiv1/notifications",
        "/apiv1/notifications",
        "/api/v1/events",
        "/api/v1/events",
        "/api/v1/events",
        "/apiv1/drips/424242",
    ]


async def _async_create(emu: Emulator) -> int:
    async with emu.async_client() as client:
        return await client.notifications.create(**BROADCAST)


# --- the instrumentor itself --------------------------------------------------------------------


def test_instrumenting_twice_is_harmless_and_uninstrument_stops_it(
    emu: Emulator, telemetry: Telemetry
) -> None:
    made_before = emu.client()
    PushwireInstrumentor().instrument(tracer_provider=TracerProvider())  # already: nothing
    made_before.segments.list()
    assert [s.name for s in telemetry.finished()] == ["GET", "segments.list"]
    PushwireInstrumentor().uninstrument()
    try:
        telemetry.spans.clear()
        made_before.segments.list()
        assert telemetry.finished() == []
        assert "traceparent" not in emu.requests()[-1]["headers"]
    finally:
        PushwireInstrumentor().instrument(
            tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider
        )
    made_after = emu.client()
    made_after.segments.list()
    assert [s.name for s in telemetry.finished()] == ["GET", "segments.list"]


def test_without_instrument_pushwire_imports_nothing_of_opentelemetry() -> None:
    code = (
        "import sys, pushwire\n"
        "from pushwire.testing import Emulator\n"
        "with Emulator() as emu, emu.client() as c:\n"
        "    c.segments.list()\n"
        "print([m for m in sys.modules if m.startswith('opentelemetry')])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_instrumentor_is_registered_for_zero_code_instrumentation() -> None:
    from importlib.metadata import entry_points

    found = entry_points()
    group = (
        found.select(group="opentelemetry_instrumentor")
        if hasattr(found, "select")
        else found.get("opentelemetry_instrumentor", [])  # Python 3.9
    )
    (ours,) = [ep for ep in group if ep.name == "pushwire"]
    assert ours.load() is PushwireInstrumentor
