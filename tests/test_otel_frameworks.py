"""pushwire's tracing (``pushwire.otel``) beside the frameworks' own instrumentations, each part
real and over real HTTP against the emulator:

- a Django view (opentelemetry-instrumentation-django) served by a threaded ``wsgiref``
  server: its broadcasts are spans under the view's SERVER span;
- a FastAPI app (opentelemetry-instrumentation-fastapi) served by uvicorn, ten requests in
  flight at once, each awaiting a ``pushwire.AsyncClient`` call: each call under its own
  request's SERVER span;
- the scale-out example's prefork Celery worker (``examples/celery_fanout``) over a real
  ``redis-server``, traced at ``worker_process_init`` (opentelemetry-instrumentation-celery)
  and exporting over OTLP/HTTP: the task's span parents the calls it makes;
- zero-code: ``opentelemetry-instrument`` running a script that knows nothing of tracing,
  exporting over OTLP/HTTP.

The worker and the zero-code run export to an OTLP/HTTP receiver this module runs (it decodes
what it receives with ``opentelemetry.proto``). Each case checks that the trace the spans
tell is the one the emulator saw (the ``trace_id`` of its request log), and the two that
export check that the key is nowhere in what left the process. Every wait is bounded and
every process started here is stopped. The core tests of the instrumentor are in
tests/test_otel.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gzip
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import types
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Optional
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

import pytest
from conftest import QuietHandler

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra (requirements-dev.txt)")

import redis_support  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402
from otel_support import WAIT, Telemetry, hex_span, hex_trace, module_fixtures  # noqa: E402

from pushwire.testing import Emulator  # noqa: E402

KEY = "sk_live_otel_frameworks_secret_0123456789"
MESSAGE = {"message": "Half price", "url": "https://shop.example/sale"}
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def current_ids() -> dict[str, str]:
    """The current span's ids, as a view returns them to say which request span it ran in."""
    ctx = trace.get_current_span().get_span_context()
    return {"trace_id": f"{ctx.trace_id:032x}", "span_id": f"{ctx.span_id:016x}"}


def traces_by_title(emu: Emulator) -> dict[str, Optional[str]]:
    """The trace id the emulator read from each broadcast it received, by the broadcast's
    title."""
    return {
        urllib.parse.parse_qs(r["body"])["notification_title"][0]: r["trace_id"]
        for r in emu.requests(path="/apiv1/notifications")
    }


# -- in this process: the SDK with an in-memory exporter -----------------------------------------


telemetry, server = module_fixtures(KEY)


@pytest.fixture
def emu(server: Emulator) -> Emulator:
    server.reset()
    return server


def check_request_spans(
    telemetry: Telemetry, answers: list[dict[str, Any]], emu: Emulator
) -> list[ReadableSpan]:
    """Each answer names the request span its view ran in (``span_id``) and the title it
    broadcast: that SERVER span is the root of its own trace, and parents the broadcast's
    operation span, which parents one CLIENT span; the emulator saw the same trace. The
    server spans, in the order of the answers."""
    by_id = {hex_span(s): s for s in telemetry.finished()}
    seen = traces_by_title(emu)
    servers = []
    for answer in answers:
        request = by_id[answer["span_id"]]
        assert request.kind == SpanKind.SERVER and request.parent is None, request.name
        assert hex_trace(request) == answer["trace_id"]
        (op,) = [s for s in telemetry.under(request) if s.name == "notifications.create"]
        assert op.kind == SpanKind.INTERNAL and op.attributes is not None
        assert op.attributes["pushwire.outcome"] == "success"
        (call,) = telemetry.under(op)
        assert (call.kind, call.name) == (SpanKind.CLIENT, "POST")
        assert call.attributes is not None and call.attributes["http.response.status_code"] == 200
        assert seen[answer["title"]] == hex_trace(request)
        servers.append(request)
    assert len({hex_trace(s) for s in servers}) == len(answers)  # a trace per request
    return servers


# -- Django ---------------------------------------------------------------------------------------

DJANGO_URLS = "otel_frameworks_django_urls"


@contextlib.contextmanager
def django_served(client: Any, telemetry: Telemetry) -> Iterator[str]:
    """A Django project of one view, ``POST /promotions/`` (broadcasts the form's ``title``),
    instrumented and served by a threaded wsgiref server on a free port; its URL."""
    pytest.importorskip("django", reason="django is not installed (requirements-dev.txt)")
    otel_django = pytest.importorskip(
        "opentelemetry.instrumentation.django",
        reason="opentelemetry-instrumentation-django is not installed (requirements-dev.txt)",
    )
    import django
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler
    from django.http import HttpRequest, JsonResponse
    from django.test.utils import override_settings
    from django.urls import path

    def promotions(request: HttpRequest) -> JsonResponse:
        title = request.POST["title"]
        notification_id = client.notifications.create(title=title, **MESSAGE)
        return JsonResponse({"notification_id": notification_id, "title": title, **current_ids()})

    urls = types.ModuleType(DJANGO_URLS)
    urls.urlpatterns = [path("promotions/", promotions)]  # type: ignore[attr-defined]
    if not settings.configured:
        settings.configure(SECRET_KEY="otel-frameworks-test", DEBUG=False, INSTALLED_APPS=[])
        django.setup()

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    class ThreadingWSGIServer(ThreadingHTTPServer, WSGIServer):
        pass

    sys.modules[DJANGO_URLS] = urls
    try:
        with override_settings(
            ROOT_URLCONF=DJANGO_URLS, ALLOWED_HOSTS=["127.0.0.1"], MIDDLEWARE=[]
        ):
            instrumentor = otel_django.DjangoInstrumentor()
            instrumentor.instrument(tracer_provider=telemetry.tracer_provider)
            try:
                httpd = ThreadingWSGIServer(("127.0.0.1", 0), Quiet)
                # The handler reads MIDDLEWARE, where the instrumentation put its own.
                httpd.set_app(WSGIHandler())
                serving = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
                serving.start()
                try:
                    yield f"http://127.0.0.1:{httpd.server_port}"
                finally:
                    httpd.shutdown()
                    httpd.server_close()
                    serving.join(WAIT)
            finally:
                instrumentor.uninstrument()
    finally:
        del sys.modules[DJANGO_URLS]


def test_a_django_views_broadcasts_are_spans_under_its_server_span_and_in_the_emulators_log(
    emu: Emulator, telemetry: Telemetry
) -> None:
    telemetry.spans.clear()

    def post(url: str, title: str) -> dict[str, Any]:
        data = urllib.parse.urlencode({"title": title}).encode()
        with urllib.request.urlopen(f"{url}/promotions/", data=data, timeout=WAIT) as answer:
            body: dict[str, Any] = json.loads(answer.read())
        return body

    with emu.client() as client, django_served(client, telemetry) as url:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda i: post(url, f"Sale {i}"), range(4)))
        telemetry.wait_for(
            lambda spans: sum(s.kind == SpanKind.SERVER for s in spans) == 4, "Django server spans"
        )
    servers = check_request_spans(telemetry, answers, emu)
    assert all(s.name == "POST promotions/" for s in servers), [s.name for s in servers]
    assert len({a["notification_id"] for a in answers}) == 4


# -- FastAPI --------------------------------------------------------------------------------------

CONCURRENT = 10


@contextlib.contextmanager
def fastapi_served(emu: Emulator, telemetry: Telemetry) -> Iterator[str]:
    """A FastAPI app, instrumented, served by uvicorn on a thread; its URL. Its endpoint
    ``POST /promotions/{i}`` waits until all ``CONCURRENT`` requests are in, then
    broadcasts "Sale {i}" with the app's ``pushwire.AsyncClient``: every call is in flight
    at once, on one event loop."""
    fastapi = pytest.importorskip("fastapi", reason="fastapi is not installed")
    uvicorn = pytest.importorskip("uvicorn", reason="uvicorn is not installed")
    otel_fastapi = pytest.importorskip(
        "opentelemetry.instrumentation.fastapi",
        reason="opentelemetry-instrumentation-fastapi is not installed (requirements-dev.txt)",
    )
    started = threading.Event()
    state = types.SimpleNamespace()  # the app's, made on its loop

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with emu.async_client() as client:
            state.client = client
            state.arrived = 0
            state.all_in = asyncio.Event()
            started.set()
            yield

    app = fastapi.FastAPI(lifespan=lifespan)

    @app.post("/promotions/{i}")
    async def promote(i: int) -> dict[str, Any]:
        state.arrived += 1
        if state.arrived == CONCURRENT:
            state.all_in.set()
        await asyncio.wait_for(state.all_in.wait(), WAIT)
        title = f"Sale {i}"
        notification_id = await state.client.notifications.create(title=title, **MESSAGE)
        return {"notification_id": notification_id, "title": title, **current_ids()}

    otel_fastapi.FastAPIInstrumentor.instrument_app(app, tracer_provider=telemetry.tracer_provider)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()  # connections wait in the backlog until uvicorn accepts them
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", loop="asyncio")
    )
    serving = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    serving.start()
    try:
        if not started.wait(WAIT):
            pytest.fail("uvicorn did not start the app")
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        serving.join(WAIT)
        sock.close()
        otel_fastapi.FastAPIInstrumentor.uninstrument_app(app)
    assert not serving.is_alive()


def test_concurrent_fastapi_requests_each_parent_their_own_async_call(
    emu: Emulator, telemetry: Telemetry
) -> None:
    httpx = pytest.importorskip("httpx", reason="httpx is not installed")
    telemetry.spans.clear()

    async def fire(url: str) -> list[dict[str, Any]]:
        async with httpx.AsyncClient(base_url=url, timeout=WAIT, trust_env=False) as http:
            answers = await asyncio.gather(
                *(http.post(f"/promotions/{i}") for i in range(CONCURRENT))
            )
        for answer in answers:
            answer.raise_for_status()
        return [a.json() for a in answers]

    with fastapi_served(emu, telemetry) as url:
        answers = asyncio.run(fire(url))
        telemetry.wait_for(
            lambda spans: sum(s.kind == SpanKind.SERVER for s in spans) == CONCURRENT,
            "FastAPI server spans",
        )
    servers = check_request_spans(telemetry, answers, emu)
    assert {s.name for s in servers} == {"POST /promotions/{i}"}
    assert len(emu.requests(path="/apiv1/notifications")) == CONCURRENT


# -- an OTLP/HTTP receiver, for other processes' spans --------------------------------------------


@dataclass(frozen=True)
class Exported:
    """A span as an OTLP/HTTP exporter sent it."""

    name: str
    kind: SpanKind
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root
    attributes: dict[str, Any]
    scope: str
    resource: dict[str, Any]
    start: int  # ns since the epoch
    events: tuple[str, ...]


def _values(pairs: Any) -> dict[str, Any]:
    out = {}
    for kv in pairs:
        which = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, which) if which else None
    return out


class Receiver:
    """An OTLP/HTTP receiver on a free loopback port: every body POSTed to ``/v1/traces``,
    ``/v1/metrics`` or ``/v1/logs``, decoded with ``opentelemetry.proto`` (a body it cannot
    decode is answered 400 and kept nowhere)."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        self.kinds: dict[str, tuple[Any, Any]] = {
            "/v1/traces": (
                trace_service_pb2.ExportTraceServiceRequest,
                trace_service_pb2.ExportTraceServiceResponse,
            ),
            "/v1/metrics": (
                metrics_service_pb2.ExportMetricsServiceRequest,
                metrics_service_pb2.ExportMetricsServiceResponse,
            ),
            "/v1/logs": (
                logs_service_pb2.ExportLogsServiceRequest,
                logs_service_pb2.ExportLogsServiceResponse,
            ),
        }
        self.received: list[tuple[str, bytes, Any]] = []  # (path, raw body, decoded)
        self._cond = threading.Condition()
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                kind = receiver.kinds.get(self.path)
                try:
                    if kind is None:
                        raise ValueError(f"no such OTLP path: {self.path}")
                    decoded = kind[0].FromString(body)
                except Exception:
                    self.reply(400 if kind else 404)
                    return
                with receiver._cond:
                    receiver.received.append((self.path, body, decoded))
                    receiver._cond.notify_all()
                self.reply(200, kind[1]().SerializeToString(), "application/x-protobuf")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(WAIT)

    def clear(self) -> None:
        with self._cond:
            self.received.clear()

    def raw(self) -> list[bytes]:
        with self._cond:
            return [body for _, body, _ in self.received]

    def _spans(self) -> list[Exported]:
        spans = []
        for path, _, request in self.received:
            if path != "/v1/traces":
                continue
            for rs in request.resource_spans:
                resource = _values(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        spans.append(
                            Exported(
                                name=s.name,
                                kind=SpanKind(s.kind - 1),  # OTLP's counts from UNSPECIFIED
                                trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(),
                                parent_id=s.parent_span_id.hex(),
                                attributes=_values(s.attributes),
                                scope=ss.scope.name,
                                resource=resource,
                                start=s.start_time_unix_nano,
                                events=tuple(e.name for e in s.events),
                            )
                        )
        return spans

    def metric_names(self) -> set[str]:
        with self._cond:
            return {
                m.name
                for path, _, request in self.received
                if path == "/v1/metrics"
                for rm in request.resource_metrics
                for sm in rm.scope_metrics
                for m in sm.metrics
            }

    def spans_when(self, done: Callable[[list[Exported]], bool], what: str) -> list[Exported]:
        """The spans received, once ``done(spans)`` (exports arrive when they will)."""
        with self._cond:
            if not self._cond.wait_for(lambda: done(self._spans()), WAIT):
                names = [s.name for s in self._spans()]
                pytest.fail(f"the receiver got no {what} within {WAIT} s; it got {names}")
            return self._spans()


@pytest.fixture(scope="module")
def otlp() -> Iterator[Receiver]:
    pytest.importorskip(
        "opentelemetry.proto.collector.trace.v1.trace_service_pb2",
        reason="opentelemetry-proto is not installed (opentelemetry-exporter-otlp-proto-http)",
    )
    receiver = Receiver()
    try:
        yield receiver
    finally:
        receiver.close()


@pytest.fixture
def receiver(otlp: Receiver) -> Receiver:
    otlp.clear()
    return otlp


def children(spans: list[Exported], parent: Exported) -> list[Exported]:
    return [s for s in spans if s.parent_id == parent.span_id and s.trace_id == parent.trace_id]


def assert_key_absent(receiver: Receiver) -> None:
    bodies = receiver.raw()
    assert bodies
    for body in bodies:
        for spelling in (KEY, urllib.parse.quote(KEY, safe=""), KEY.replace("_", "%5F")):
            assert spelling.encode() not in body


def _otel_free_environ() -> dict[str, str]:
    """This process's environment without any OTEL_ setting of the machine's."""
    return {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}


# -- Celery: the scale-out example's prefork worker over Redis ------------------------------------

WORKER_PROCESSES = 2

# The worker's module: the example's app and tasks unchanged, and tracing set up in each
# pool process as it starts (OpenTelemetry's advice for prefork: after the fork, never in
# the parent). SimpleSpanProcessor exports each span as it ends, so nothing waits in a
# pool process for a flush.
WORKER_MODULE = """
import os

from celery.signals import worker_process_init

from celery_fanout.tasks import app  # noqa: F401  (the example's worker, unchanged)


@worker_process_init.connect(weak=False)
def trace_this_process(**_):
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from pushwire.otel import PushwireInstrumentor

    resource = Resource.create({"service.name": "fanout-worker", "process.pid": os.getpid()})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    CeleryInstrumentor().instrument()
    PushwireInstrumentor().instrument()
"""


@pytest.fixture(scope="module")
def fanout() -> types.ModuleType:
    """tests/test_celery_fanout.py, for its helpers and the example's ``config``: importing
    it skips, with its reason, where Celery, redis or ``redis-server`` is missing."""
    return importlib.import_module("test_celery_fanout")


@pytest.fixture(scope="module")
def redis_url(fanout: types.ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of this module's own (tests/redis_support.py)."""
    with redis_support.redis_server(tmp_path_factory.mktemp("redis"), WAIT) as url:
        yield url


@dataclass
class Worker:
    app: Any
    process: subprocess.Popen[bytes]
    pool: list[int]
    log: Path


@pytest.fixture
def worker(
    fanout: types.ModuleType,
    redis_url: str,
    server: Emulator,
    receiver: Receiver,
    tmp_path: Path,
) -> Iterator[Worker]:
    """The example's worker (prefork, 2 processes) against this module's emulator, each pool
    process exporting its spans to the receiver; the caller's Celery app beside it."""
    (tmp_path / "otel_fanout_worker.py").write_text(WORKER_MODULE)
    log = tmp_path / "worker.log"
    env = {
        **_otel_free_environ(),
        "PUSHWIRE_API_KEY": server.api_key,
        "PUSHWIRE_BASE_URL": server.base_url,
        "PUSHWIRE_EVENTS_URL": server.events_url,
        "CELERY_BROKER_URL": f"{redis_url}/0",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{receiver.url}/v1/traces",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(EXAMPLES)]),
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "otel_fanout_worker", "worker",
             "--pool", "prefork", "--concurrency", str(WORKER_PROCESSES),
             "--loglevel", "WARNING", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "--hostname", "otel-fanout@%h"],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the pool's children with it
        )  # fmt: skip
    app = fanout.config.make_app(env)
    pool: list[int] = []
    try:
        app.send_task(fanout.config.PING).get(timeout=WAIT)
        pool = fanout.children_of(process.pid)
        assert len(pool) == WORKER_PROCESSES, fanout.tail(log)
        yield Worker(app, process, pool, log)
    finally:
        app.close()
        fanout.stop(process)  # a warm shutdown: the pool's processes end with it
        if fanout.gone(fanout.members_of_group(process.pid)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    assert fanout.gone([process.pid, *pool]) == [], fanout.tail(log)


def test_a_prefork_celery_workers_task_span_parents_the_calls_it_makes(
    fanout: types.ModuleType, emu: Emulator, worker: Worker, receiver: Receiver
) -> None:
    results = {
        f"Sale {i}": worker.app.send_task(
            fanout.config.SEND_BROADCAST, kwargs={"title": f"Sale {i}", **MESSAGE}
        )
        for i in range(WORKER_PROCESSES)
    }
    reports = {title: r.get(timeout=WAIT) for title, r in results.items()}
    run = f"run/{fanout.config.SEND_BROADCAST}"
    spans = receiver.spans_when(
        lambda spans: (
            sum(s.name == run for s in spans) == len(results)
            and sum(s.name == "notifications.create" for s in spans) == len(results)
            and sum(s.name == "POST" for s in spans) == len(results)
        ),
        f"{run} spans with their calls'",
    )
    seen = traces_by_title(emu)
    for title, result in results.items():
        (task,) = [
            s for s in spans if s.name == run and s.attributes["messaging.message.id"] == result.id
        ]
        assert task.kind == SpanKind.CONSUMER
        assert task.resource["service.name"] == "fanout-worker"
        # Exported by the pool process that ran the task, traced since its start.
        assert task.resource["process.pid"] == reports[title]["pid"] in worker.pool
        (op,) = children(spans, task)
        assert (op.name, op.kind, op.scope) == (
            "notifications.create",
            SpanKind.INTERNAL,
            "pushwire",
        )
        assert op.attributes["pushwire.outcome"] == "success"
        (call,) = children(spans, op)
        assert (call.name, call.kind) == ("POST", SpanKind.CLIENT)
        assert call.attributes["url.full"] == f"{emu.base_url}/apiv1/notifications"
        assert seen[title] == task.trace_id
    assert len({s.trace_id for s in spans if s.name == run}) == len(results)
    assert_key_absent(receiver)


# -- zero-code: opentelemetry-instrument ----------------------------------------------------------

# Knows nothing of tracing: its client is configured by PUSHWIRE_* alone.
APP_SCRIPT = """
import pushwire

with pushwire.Client(backoff_base=0) as client:
    client.notifications.create(title="Zero-code", message="Half price", url="https://shop.example/")
    client.segments.list()
    try:
        client.drips.get(424242)
    except pushwire.BadRequestError:
        pass
print("done")
"""


def test_opentelemetry_instrument_traces_an_unchanged_script_over_otlp_without_the_key(
    emu: Emulator, receiver: Receiver, tmp_path: Path
) -> None:
    pytest.importorskip(
        "opentelemetry.exporter.otlp.proto.http",
        reason="opentelemetry-exporter-otlp-proto-http is not installed (requirements-dev.txt)",
    )
    instrument = Path(sys.executable).parent / "opentelemetry-instrument"
    if not instrument.exists():
        pytest.skip(f"no {instrument}: pip install opentelemetry-instrumentation")
    script = tmp_path / "app.py"
    script.write_text(APP_SCRIPT)
    # Answers that quote the key: a 503 (retried) and a 400 (raised, its message on the span).
    emu.inject_fault("/apiv1/segments", status=503, retry_after=0, body={"echo": KEY})
    emu.inject_fault("/apiv1/drips/424242", status=400, body={"message": f"bad key {KEY}"})
    env = {
        **_otel_free_environ(),
        "PUSHWIRE_API_KEY": emu.api_key,
        "PUSHWIRE_BASE_URL": emu.base_url,
        "PUSHWIRE_EVENTS_URL": emu.events_url,
        "OTEL_SERVICE_NAME": "zero-code-app",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
    }
    done = subprocess.run(
        [str(instrument), sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0 and done.stdout == "done\n", done.stdout + done.stderr
    # Each operation, and the status of each of its requests in the order sent.
    expected = {
        "notifications.create": ("/apiv1/notifications", [200]),
        "segments.list": ("/apiv1/segments", [503, 200]),
        "drips.get": ("/apiv1/drips/424242", [400]),
    }
    spans = receiver.spans_when(
        lambda spans: (
            sum(s.scope == "pushwire" for s in spans)
            == sum(1 + len(statuses) for _, statuses in expected.values())
        ),
        "pushwire spans",
    )
    for name, (path, statuses) in expected.items():
        (op,) = [s for s in spans if s.name == name]
        assert (op.kind, op.scope, op.parent_id) == (SpanKind.INTERNAL, "pushwire", "")  # a root
        assert op.resource["service.name"] == "zero-code-app"
        calls = sorted(children(spans, op), key=lambda s: s.start)
        assert {c.kind for c in calls} == {SpanKind.CLIENT}
        assert [c.attributes["http.response.status_code"] for c in calls] == statuses
        # Each request carried its own span's context, in the op's trace.
        logged = emu.requests(path=path)
        assert {r["trace_id"] for r in logged} == {op.trace_id}
        assert [r["headers"]["traceparent"].split("-")[2] for r in logged] == [
            c.span_id for c in calls
        ]
    (failed,) = [s for s in spans if s.name == "drips.get"]
    assert failed.attributes["error.type"] == "BadRequestError"
    assert failed.events == ("exception",)
    # The key the 400 quoted reached the span redacted (so the check below is not idle).
    assert b"bad key [redacted]" in b"".join(receiver.raw())
    assert "http.client.request.duration" in receiver.metric_names()
    assert_key_absent(receiver)
