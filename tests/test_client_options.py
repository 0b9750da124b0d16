"""``with_options``: a client with its own timeout and retries on its parent's connections, as
openai-python's ``client.with_options(timeout=...)``: a web handler's tracking call bounded to
a second, a job's reads retried more, without a second pool per call."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from client_support import BROADCAST, Driver, api_requests, make_driver
from test_client_runtime import CONNECTIONS, run_script

import pushwire
from pushwire import APITimeoutError, PushwireError, ServerError, ValidationError


@pytest.fixture(params=["sync", "async"])
def drv(request, emu):
    d = make_driver(request.param, emu, timeout=10.0, max_retries=2)
    yield d
    d.close()


def test_a_shorter_timeout_bounds_the_call_and_the_parent_keeps_its_own(drv: Driver, emu):
    short = drv.client.with_options(timeout=0.3)
    assert (short.timeout, short.max_retries) == (0.3, 2)
    emu.inject_fault("/apiv1/segments", delay=1.5, times=1)
    t0 = time.monotonic()
    with pytest.raises(APITimeoutError):
        drv(short.segments.list)
    assert time.monotonic() - t0 < 1.2
    # The parent's 10 s are untouched: the same slow answer arrives.
    emu.inject_fault("/apiv1/segments", delay=0.6, times=1)
    assert drv(drv.client.segments.list) == []
    assert drv.client.timeout == 10.0


def test_no_retries_for_one_call(drv: Driver, emu):
    emu.inject_fault("/apiv1/segments", status=503, times=1)
    with pytest.raises(ServerError):
        drv(drv.client.with_options(max_retries=0).segments.list)
    assert [r["status"] for r in api_requests(emu, "/apiv1/segments")] == [503]
    # The parent still retries.
    emu.clear_requests()
    emu.inject_fault("/apiv1/segments", status=503, times=1)
    assert drv(drv.client.segments.list) == []
    assert [r["status"] for r in api_requests(emu, "/apiv1/segments")] == [503, 200]


def test_more_retries_than_the_parent(drv: Driver, emu):
    patient = drv.client.with_options(max_retries=4)
    emu.inject_fault("/apiv1/segments", status=503, times=4)
    assert drv(patient.segments.list) == []
    assert len(api_requests(emu, "/apiv1/segments")) == 5


def test_options_stack_and_none_is_no_timeout(drv: Driver):
    a = drv.client.with_options(timeout=2.0)
    b = a.with_options(max_retries=0)
    assert (b.timeout, b.max_retries) == (2.0, 0)
    assert a.with_options(timeout=None).timeout == 86_400.0
    assert type(b) is type(drv.client)
    assert repr(b).endswith("timeout=2.0, max_retries=0)")


def test_a_write_under_options_is_sent_once(drv: Driver, emu):
    # The derived client is a whole client: every namespace works through it.
    sid = emu.add_subscriber()
    nid = drv(drv.client.with_options(timeout=5.0).notifications.create, **BROADCAST)
    assert nid > 0
    assert [d["subscriber_hash"] for d in emu.deliveries()] == [sid]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": -1.0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"timeout": "5"}, "timeout"),
        ({"max_retries": 21}, "max_retries"),
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"max_retries": True}, "max_retries"),
    ],
)
def test_bad_options_name_their_setting(drv: Driver, emu, kwargs, field):
    with pytest.raises(ValidationError) as e:
        drv.client.with_options(**kwargs)
    assert e.value.field == field
    assert emu.requests() == []


def test_closing_the_derived_client_closes_the_shared_pool(drv: Driver):
    derived = drv.client.with_options(timeout=1.0)
    derived.close() if drv.kind == "sync" else drv(derived.aclose)
    with pytest.raises(PushwireError, match="closed"):
        drv(drv.client.segments.list)
    with pytest.raises(PushwireError, match="closed"):
        drv(derived.segments.list)


def test_a_spread_batch_runs_under_the_options_on_every_thread(emu):
    # 256 events at 32 in flight are shared with the I/O threads: their pools must run
    # under the derived client's timeout too (eight rounds of 0.3 s), not the parent's 30 s,
    # under which every event would wait out its 3 s delay and be recorded.
    client = emu.client(timeout=30.0, max_retries=0)
    emu.inject_fault("/api/v1/events", delay=3.0, times=10_000)
    events = [{"event_name": "e", "profile_id": f"p{i}"} for i in range(256)]
    t0 = time.monotonic()
    out = client.with_options(timeout=0.3).events.track_many(events, concurrency=32)
    assert time.monotonic() - t0 < 8
    assert len(out) == 256
    assert all(isinstance(e, APITimeoutError) for e in out), {type(e) for e in out}
    client.close()


def test_an_async_batch_runs_under_the_options(emu):
    async def main() -> list:
        async with emu.async_client(timeout=30.0, max_retries=0) as client:
            events = [{"event_name": "e", "profile_id": f"p{i}"} for i in range(64)]
            return await client.with_options(timeout=0.3).events.track_many(events)

    emu.inject_fault("/api/v1/events", delay=3.0, times=10_000)
    t0 = time.monotonic()
    out = asyncio.run(main())
    assert time.monotonic() - t0 < 2.5
    assert len(out) == 64
    assert all(isinstance(e, APITimeoutError) for e in out), {type(e) for e in out}


SHARED_SCRIPT = (
    CONNECTIONS
    + """
client = pushwire.Client(api_key=key, base_url=base)
client.segments.list()
for _ in range(50):
    client.with_options(timeout=5.0, max_retries=0).segments.list()
print(connections())
"""
)


@pytest.mark.skipif(not os.path.exists("/proc/self/net/tcp"), reason="needs /proc")
def test_a_derived_client_per_call_opens_no_connection_of_its_own(emu):
    # The per-request idiom must not cost a TCP connection (and a TLS handshake) per call.
    proc = run_script(SHARED_SCRIPT, emu.api_key, emu.base_url)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) == 1, proc.stdout
    assert len(api_requests(emu, "/apiv1/segments")) == 51


def test_with_options_is_documented_on_both_clients():
    for cls in (pushwire.Client, pushwire.AsyncClient):
        assert "with_options" in (cls.__doc__ or "")
        assert "they share one pool" in (cls.with_options.__doc__ or "")


def test_a_subclass_keeps_its_type_and_attributes(emu):
    class AppClient(pushwire.Client):
        def __init__(self, *args, tenant: str, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.tenant = tenant

    client = AppClient(api_key=emu.api_key, base_url=emu.base_url, tenant="acme")
    derived = client.with_options(max_retries=0)
    assert isinstance(derived, AppClient) and derived.tenant == "acme"
    # its namespaces call under its own options, not the parent's two retries
    emu.inject_fault("/apiv1/segments", status=503, times=1)
    with pytest.raises(ServerError):
        derived.segments.list()
    assert len(api_requests(emu, "/apiv1/segments")) == 1
    client.close()


def test_a_longer_timeout_lets_a_slow_connect_finish(emu):
    # The pool is the parent's, built with its settings: a view's own timeout must still
    # bound the connect, not the parent's shorter one.
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    url = f"http://127.0.0.1:{srv.getsockname()[1]}"
    fill = []
    for _ in range(8):  # a full accept backlog: further connects hang
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(srv.getsockname())
        except BlockingIOError:
            pass
        fill.append(s)
    time.sleep(0.2)
    client = pushwire.Client(api_key="test-key-123", base_url=url, timeout=0.3, max_retries=0)
    t0 = time.monotonic()
    with pytest.raises(APITimeoutError):
        client.with_options(timeout=1.5).segments.list()
    assert time.monotonic() - t0 >= 1.4
    t0 = time.monotonic()
    with pytest.raises(APITimeoutError):
        client.segments.list()
    assert time.monotonic() - t0 < 1.0
    client.close()
    for s in [*fill, srv]:
        s.close()
