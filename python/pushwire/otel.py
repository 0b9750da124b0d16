"""OpenTelemetry for pushwire: a span per SDK operation, a CLIENT span per HTTP request under
it (each resend its own), the trace context sent on with every request, the
``http.client.request.duration`` metric, and pushwire's log records in the call's trace.

::

    from pushwire.otel import PushwireInstrumentor

    PushwireInstrumentor().instrument()  # or: opentelemetry-instrument python app.py

``pip install "pushwire[otel]"``. The instrumentor is registered under the
``opentelemetry_instrumentor`` entry point as ``pushwire``, so zero-code instrumentation
finds it. It follows the conventions of opentelemetry-python-contrib: ``instrument(
tracer_provider=..., meter_provider=...)`` (the global ones by default), ``uninstrument()``,
and a second ``instrument()`` does nothing. Every client, made before or after, is traced;
nothing of this module runs, nor is OpenTelemetry imported, until it is imported.

What each span and metric carries, and what tracing costs: the docs' Observability page.
Tracing never fails or changes a call: whatever a tracer, propagator, span processor or
exporter raises is dropped (and told on the ``pushwire`` logger at debug level).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Collection, Coroutine, Iterator
from typing import Any, Optional

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)
from opentelemetry.trace import SpanKind, Status, StatusCode

from pushwire import __version__, _telemetry
from pushwire._bridge import submit
from pushwire._core import CoreClient, PreparedCall
from pushwire._idempotency import Outcome

__all__ = ["PushwireInstrumentor"]

_log = logging.getLogger("pushwire")

# The calls that send many requests: one span for the whole call, with its counts; the
# requests inside carry its trace context, and have no span each (the docs say why).
_BULK = frozenset(
    {
        "events.track_many",
        "segments.add_subscribers_bulk",
        "segments.add_profiles_bulk",
        "segments.remove_profiles_bulk",
    }
)

# The buckets the HTTP semantic conventions advise for `http.client.request.duration` (s).
_DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)


def _dropped(what: str, e: BaseException) -> None:
    _log.debug("tracing failed and was left out (%s): %s: %s", what, type(e).__name__, e)


class _Requests:
    """The observer of one call's requests, which the core calls from whichever thread sends
    them: ``start`` makes the request's CLIENT span under the call's own and returns the
    headers that carry its context; ``end`` closes it and records its duration; ``log``
    emits what the call logs in its context."""

    __slots__ = ("_ctx", "_tracing")
    follows_requests = True

    def __init__(self, tracing: _Tracing, ctx: otel_context.Context) -> None:
        self._tracing = tracing
        self._ctx = ctx

    def start(
        self, method: str, url: str, host: str, port: int, resend_count: int
    ) -> Optional[tuple[Any, list[tuple[str, str]]]]:
        t = self._tracing
        try:
            attributes: dict[str, Any] = {
                "http.request.method": method,
                "server.address": host,
                "server.port": port,
                "url.full": url,
            }
            if resend_count:
                attributes["http.request.resend_count"] = resend_count
                t.retries.add(1, {"http.request.method": method, "server.address": host})
            span = t.tracer.start_span(
                method, context=self._ctx, kind=SpanKind.CLIENT, attributes=attributes
            )
            carrier: dict[str, str] = {}
            propagate.inject(carrier, context=trace.set_span_in_context(span, self._ctx))
            metric = {
                "http.request.method": method,
                "server.address": host,
                "server.port": port,
                "url.scheme": url.split(":", 1)[0],
            }
            return (span, metric, time.perf_counter()), list(carrier.items())
        except Exception as e:
            _dropped("a request's span", e)
            return None

    def end(
        self,
        handle: tuple[Any, dict[str, Any], float],
        status: Optional[int],
        error_type: Optional[str],
        protocol: str,
    ) -> None:
        span, metric, started = handle
        elapsed = time.perf_counter() - started
        try:
            metric["network.protocol.version"] = protocol
            span.set_attribute("network.protocol.version", protocol)
            if status is not None:
                span.set_attribute("http.response.status_code", status)
                metric["http.response.status_code"] = status
            if error_type is not None:
                span.set_attribute("error.type", error_type)
                span.set_status(Status(StatusCode.ERROR))
                metric["error.type"] = error_type
            span.end()
        except Exception as e:
            _dropped("a request's span", e)
        try:
            self._tracing.duration.record(elapsed, metric)
        except Exception as e:
            _dropped("http.client.request.duration", e)

    def log(self, level: int, message: str) -> None:
        """A record the call logs from Rust, emitted in the call's context (its trace and
        span), whichever thread the core logs it from."""
        token = otel_context.attach(self._ctx)
        try:
            _log.log(level, message)
        finally:
            otel_context.detach(token)


class _BatchLogs(_Requests):
    """A bulk call's observer: only what it logs, in the call's context (its requests carry
    that context as headers, and get no span each)."""

    __slots__ = ()
    follows_requests = False


class _Tracing:
    """What ``instrument()`` plugs into the call primitives (``pushwire._telemetry``)."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        self.tracer = trace.get_tracer(
            "pushwire", __version__, tracer_provider, schema_url=_SCHEMA_URL
        )
        meter = metrics.get_meter("pushwire", __version__, meter_provider, schema_url=_SCHEMA_URL)
        self.duration = meter.create_histogram(
            "http.client.request.duration",
            unit="s",
            description="Duration of HTTP client requests.",
            explicit_bucket_boundaries_advisory=list(_DURATION_BUCKETS),
        )
        self.retries = meter.create_counter(
            "pushwire.client.retries",
            unit="{request}",
            description="Requests pushwire sent again after a failure (each resend counts).",
        )
        self.unknown = meter.create_counter(
            "pushwire.client.outcome_unknown",
            unit="{call}",
            description="Calls that failed once the service may have acted on them (a "
            "broadcast may have gone out): never retried, to be checked.",
        )

    # -- the operation's span --------------------------------------------------------------
    def _start(self, op: str) -> Optional[Any]:
        try:
            return self.tracer.start_span(
                op, kind=SpanKind.INTERNAL, attributes={"pushwire.operation": op}
            )
        except Exception as e:
            _dropped("the operation's span", e)
            return None

    def _prepare(self, op: str, span: Any, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The call's options with its observer (or, for a bulk call, its trace context as
        headers), and the context token to detach after."""
        ctx = trace.set_span_in_context(span)
        token = otel_context.attach(ctx)
        try:
            if op in _BULK:
                carrier: dict[str, str] = {}
                propagate.inject(carrier, context=ctx)
                headers = dict(options.get("extra_headers") or {})
                for name, value in carrier.items():
                    headers.setdefault(name, value)
                options = {**options, "extra_headers": headers, "_observer": _BatchLogs(self, ctx)}
            else:
                options = {**options, "_observer": _Requests(self, ctx)}
        except Exception as e:
            _dropped("the trace context", e)
        return token, options

    def _finish(self, op: str, span: Any, result: Any, error: Optional[BaseException]) -> None:
        try:
            if error is None:
                span.set_attribute("pushwire.outcome", "success")
                if op in _BULK:
                    _batch_counts(span, op, result)
            else:
                unknown = bool(getattr(error, "outcome_unknown", False))
                span.set_attribute("pushwire.outcome", "unknown" if unknown else "error")
                span.set_attribute("error.type", type(error).__qualname__)
                if isinstance(error, Exception):
                    span.record_exception(error)
                span.set_status(Status(StatusCode.ERROR, str(error)[:200]))
                if unknown:
                    self.unknown.add(1, {"pushwire.operation": op})
            span.end()
        except Exception as e:
            _dropped("the operation's span", e)

    # -- the two call paths ----------------------------------------------------------------
    @contextlib.contextmanager
    def _operation(self, op: str, options: dict[str, Any]) -> Iterator[_Call]:
        """The operation's span around a call: current while it runs, closed with its
        outcome (the result the caller puts in ``_Call.result``, or what it raised)."""
        call = _Call(options)
        span = self._start(op)
        if span is None:
            yield call
            return
        call.span = span
        token, call.options = self._prepare(op, span, options)
        try:
            yield call
        except BaseException as e:
            otel_context.detach(token)
            self._finish(op, span, None, e)
            raise
        otel_context.detach(token)
        self._finish(op, span, call.result, None)

    # A keyed call runs its claim and its send under the span (`_idempotency`).
    operation = _operation

    def call(self, core: CoreClient, call: PreparedCall, options: dict[str, Any]) -> Any:
        with self._operation(call.name, options) as traced:
            traced.result = core.call_with(call, traced.options)
        return traced.result

    async def _submit(self, core: CoreClient, call: PreparedCall, options: dict[str, Any]) -> Any:
        with self._operation(call.name, options) as traced:
            traced.result = await submit(core, call, options=traced.options)
        return traced.result

    def submit(
        self, core: CoreClient, call: PreparedCall, options: dict[str, Any]
    ) -> Coroutine[Any, Any, Any]:
        return self._submit(core, call, options)


class _Call:
    """One call under its operation's span: the options to run it with, and its result."""

    __slots__ = ("options", "result", "span")

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        self.result: Any = None
        self.span: Any = None

    def note(self, outcome: Outcome) -> None:
        """What a keyed call did with its key, on its span."""
        if self.span is not None:
            try:
                self.span.set_attribute("pushwire.idempotency.outcome", outcome.value)
            except Exception as e:
                _dropped("the operation's span", e)


def _batch_counts(span: Any, op: str, result: Any) -> None:
    """A bulk call's counts on its span: requests sent, items, and items that failed."""
    if op == "events.track_many":
        failed = [e for e in result if e is not None]
        unsent = sum(1 for e in failed if type(e).__name__ == "ValidationError")
        requests, items = len(result) - unsent, len(result)
        failed_items = len(failed)
    else:
        # Chunks as the core returns them: (index, start, size, message, error).
        requests = len(result)
        items = sum(row[2] for row in result)
        failed_items = sum(row[2] for row in result if row[4] is not None)
    span.set_attribute("pushwire.batch.requests", requests)
    span.set_attribute("pushwire.batch.items", items)
    span.set_attribute("pushwire.batch.failed", failed_items)


# The version of the semantic conventions the spans and metrics follow.
_SCHEMA_URL = "https://opentelemetry.io/schemas/1.26.0"


class PushwireInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Traces every pushwire call, sync and async, of every client (see the module)."""

    def instrumentation_dependencies(self) -> Collection[str]:
        return ("pushwire",)

    def _instrument(self, **kwargs: Any) -> None:
        _telemetry.tracer = _Tracing(kwargs.get("tracer_provider"), kwargs.get("meter_provider"))

    def _uninstrument(self, **kwargs: Any) -> None:
        _telemetry.tracer = None
