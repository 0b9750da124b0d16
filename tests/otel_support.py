"""What the tracing tests share (tests/test_otel.py, tests/test_otel_frameworks.py): the
OpenTelemetry SDK's providers exporting to memory, pushwire instrumented on them for a
module, the module's emulator, and the ids of a span as the W3C header and the emulator's
request log spell them."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Callable

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pushwire.otel import PushwireInstrumentor
from pushwire.testing import Emulator

WAIT = 60.0  # the longest any one wait for spans may take


def hex_trace(span: ReadableSpan) -> str:
    return f"{span.context.trace_id:032x}"


def hex_span(span: ReadableSpan) -> str:
    return f"{span.context.span_id:016x}"


class _Arrivals(SpanProcessor):
    """Wakes whoever waits for spans, each time one ends (after the exporter has it)."""

    def __init__(self, cond: threading.Condition) -> None:
        self._cond = cond

    def on_end(self, span: ReadableSpan) -> None:
        with self._cond:
            self._cond.notify_all()


class Telemetry:
    """The SDK's tracer and meter providers with an in-memory exporter and reader, and a
    tracer of the application's own (`app`)."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self._cond = threading.Condition()
        self.tracer_provider.add_span_processor(_Arrivals(self._cond))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.app = self.tracer_provider.get_tracer("the-app")

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name == name]

    def under(self, parent: ReadableSpan) -> list[ReadableSpan]:
        """The spans whose parent is `parent`."""
        return [
            s
            for s in self.finished()
            if s.parent is not None and s.parent.span_id == parent.context.span_id
        ]

    def wait_for(self, done: Callable[[list[ReadableSpan]], bool], what: str) -> None:
        """Until ``done(finished spans)``: a server's span may end after its answer left."""
        with self._cond:
            if not self._cond.wait_for(lambda: done(self.finished()), WAIT):
                pytest.fail(f"no {what} within {WAIT} s: {[s.name for s in self.finished()]}")

    def points(self, metric: str) -> list[Any]:
        """The data points of `metric` read now."""
        data = self.reader.get_metrics_data()
        out = []
        for rm in data.resource_metrics if data else []:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == metric:
                        out += list(m.data.data_points)
        return out


def module_fixtures(key: str) -> tuple[Any, Any]:
    """The two module-scoped fixtures of a tracing test module, for it to bind to their names
    (``telemetry, server = module_fixtures(KEY)``): ``telemetry``, pushwire traced on
    in-memory providers for the module, and ``server``, an emulator that takes ``key``."""

    @pytest.fixture(scope="module")
    def telemetry() -> Iterator[Telemetry]:
        with instrumented(Telemetry()) as t:
            yield t

    @pytest.fixture(scope="module")
    def server() -> Iterator[Emulator]:
        with Emulator(api_key=key) as emu:
            yield emu

    return telemetry, server


@contextlib.contextmanager
def instrumented(t: Telemetry) -> Iterator[Telemetry]:
    """pushwire traced on `t`'s providers for the block (a module's fixture)."""
    instrumentor = PushwireInstrumentor()
    instrumentor.instrument(tracer_provider=t.tracer_provider, meter_provider=t.meter_provider)
    try:
        yield t
    finally:
        instrumentor.uninstrument()
