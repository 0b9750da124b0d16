"""The client as a process sees it: fork, Ctrl-C, asyncio cancellation, pickling and model
construction, secrets kept out of reprs and logs, configuration from the environment, and the
``pushwire_emulator`` fixture as a user's test suite uses it."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from typing import Callable

import pytest
from client_support import BROADCAST, FAST, api_requests, drip_notification, open_pipes
from conftest import run_pytest, seed_trigger

import pushwire
from pushwire import (
    Action,
    AttributeRule,
    NewDripNotification,
    Page,
    Product,
    ScheduleOptions,
    Segment,
    SendTo,
    TriggeredCampaign,
    UtmParams,
    ValidationError,
)

SECRET = "pw-live-Zq81SECRETkey"


def run_script(code: str, *args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- fork ---------------------------------------------------------------------------------


def assert_passes_in_a_forked_child(check: Callable[[], bool]) -> None:
    """Runs `check` in a forked child (which never returns into pytest); it must be true."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(15)  # a hung child must not hang the suite
            if check():
                code = 0
        except BaseException:
            code = 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_can_use_the_parents_client(emu):
    client = emu.client(**FAST)
    aclient = emu.async_client(**FAST)
    client.drips.create("before fork", [drip_notification()])
    asyncio.run(aclient.drips.list())

    def in_child() -> bool:
        page = client.drips.list()
        drip_id = client.drips.create("in child", [drip_notification()])
        apage = asyncio.run(aclient.drips.list())
        return page.total == 1 and drip_id > 0 and apage.total == 2

    assert_passes_in_a_forked_child(in_child)
    # and the parent's client still works after the fork
    assert client.drips.list().total == 2
    assert asyncio.run(aclient.drips.list()).total == 2


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_has_every_connection_slot_free(emu):
    # The parent's calls in flight at the fork hold slots; in the child they do not exist,
    # so their slots must not stay taken (every call of the child would wait for them).
    import threading

    emu.inject_fault("/apiv1/segments", delay=2.0, times=2)
    client = emu.client(max_connections=2, timeout=5.0, max_retries=0)
    calls = [threading.Thread(target=client.segments.list) for _ in range(2)]
    for c in calls:
        c.start()
    deadline = time.monotonic() + 3
    while len(api_requests(emu, "/apiv1/segments")) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)

    def in_child() -> bool:
        started = time.monotonic()
        return client.drips.list().total == 0 and time.monotonic() - started < 1.5

    try:
        assert_passes_in_a_forked_child(in_child)
    finally:
        for c in calls:
            c.join()


def test_a_backoff_wait_holds_no_connection_slot(emu):
    # A call waiting to retry after a 429 has no request in flight: another call of a
    # one-connection client goes meanwhile, rather than waiting for the retry.
    import threading

    client = emu.client(max_connections=1, timeout=10.0)
    emu.inject_fault("/apiv1/segments", status=429, retry_after=2)
    waited: list[float] = []

    def retrying() -> None:
        started = time.monotonic()
        client.segments.list()
        waited.append(time.monotonic() - started)

    first = threading.Thread(target=retrying)
    first.start()
    deadline = time.monotonic() + 3
    while not api_requests(emu, "/apiv1/segments") and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    assert client.triggers.list().total == 0
    other = time.monotonic() - started
    first.join()
    assert waited[0] >= 1.9, waited  # it did wait out the Retry-After
    assert other < 1.0, other


def test_a_retry_starved_of_a_slot_is_a_timeout(emu):
    # Waiting to retry, a call lets go of its slot; if others keep every slot until its
    # deadline, it ran out of time: a timeout, not the 429 it had before its wait.
    import threading

    client = emu.client(max_connections=1, timeout=3.0)
    emu.inject_fault("/apiv1/segments", status=429, retry_after=1)
    emu.inject_fault("/apiv1/triggers", delay=1.0, times=4)
    errors: list[BaseException] = []

    def retrying() -> None:
        try:
            client.segments.list()
        except pushwire.PushwireError as e:
            errors.append(e)

    first = threading.Thread(target=retrying)
    first.start()
    deadline = time.monotonic() + 3
    while not api_requests(emu, "/apiv1/segments") and time.monotonic() < deadline:
        time.sleep(0.005)
    others = [threading.Thread(target=retrying_quietly, args=(client,)) for _ in range(4)]
    for t in others:
        t.start()
    first.join()
    for t in others:
        t.join()
    (err,) = errors
    assert type(err) is pushwire.APITimeoutError, repr(err)
    assert "stayed busy" in str(err) and err.outcome_unknown is False


def retrying_quietly(client: pushwire.Client) -> None:
    try:
        client.triggers.list()
    except pushwire.PushwireError:
        pass


FORK_STRESS_SCRIPT = """
import asyncio, os, signal, sys, threading, pushwire

key, base, events = sys.argv[1:4]
client = pushwire.Client(api_key=key, base_url=base, events_url=events, max_retries=0)
aclient = pushwire.AsyncClient(api_key=key, base_url=base, events_url=events, max_retries=0)
stop = threading.Event()

def busy():  # blocking calls: allocation on this thread's runtime, all the time
    while not stop.is_set():
        client.segments.list()

def churn():  # threads starting and ending, each with a runtime of its own
    while not stop.is_set():
        t = threading.Thread(target=client.segments.list)
        t.start(); t.join()

def loop():  # async calls in flight on the I/O threads
    async def go():
        while not stop.is_set():
            await asyncio.gather(*(aclient.events.track("e", profile_id="p") for _ in range(16)))
    asyncio.run(go())

workers = [threading.Thread(target=f) for f in (busy, busy, churn, loop)]
for w in workers:
    w.start()
hung = failed = 0
for _ in range(25):
    pid = os.fork()
    if pid == 0:
        signal.alarm(10)  # a deadlocked child dies of SIGALRM instead of hanging
        try:
            t = threading.Thread(target=client.segments.list)
            t.start(); t.join()
            client.events.track("child", profile_id="c")
            asyncio.run(aclient.segments.list())
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        hung += 1
    elif os.WEXITSTATUS(status) != 0:
        failed += 1
stop.set()
for w in workers:
    w.join()
print(hung, failed)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_children_forked_while_threads_call_and_start_and_end_all_work(emu):
    # Forks taken at random points of other threads' allocations, thread starts and exits
    # and in-flight async calls: an allocator or runtime lock inherited held would hang a
    # child (gunicorn --preload, Celery prefork).
    proc = run_script(FORK_STRESS_SCRIPT, emu.api_key, emu.base_url, emu.events_url, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "0"], (proc.stdout, proc.stderr[-2000:])
    assert len([e for e in emu.events() if e["event_name"] == "child"]) == 25


# Counts a script's own established TCP connections to the emulator, from /proc.
CONNECTIONS = """
import asyncio, gc, os, sys, time, pushwire

key, base = sys.argv[1:3]
port = int(base.rsplit(":", 1)[1])

def connections():  # this process's established TCP connections to the emulator
    mine = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            mine.add(target[8:-1])
    count = 0
    for line in open("/proc/self/net/tcp").read().splitlines()[1:]:
        f = line.split()
        if int(f[2].split(":")[1], 16) == port and f[3] == "01" and f[9] in mine:
            count += 1
    return count

async def connections_after(seconds):  # once none is left, or at the latest after `seconds`
    deadline = time.monotonic() + seconds
    while connections() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return connections()
"""

DROP_SCRIPT = (
    CONNECTIONS
    + """
async def main():
    client = pushwire.AsyncClient(api_key=key, base_url=base)
    await asyncio.gather(*(client.segments.list() for _ in range(20)))
    before = connections()
    del client
    gc.collect()
    print(before, await connections_after(3))

asyncio.run(main())
"""
)


@pytest.mark.skipif(not os.path.exists("/proc/self/net/tcp"), reason="needs /proc")
def test_dropping_an_async_client_closes_its_connections(emu):
    # A client made per request (a Django view) must not leave its pool open on the I/O
    # threads until their next call or the pool's idle timeout.
    proc = run_script(DROP_SCRIPT, emu.api_key, emu.base_url)
    assert proc.returncode == 0, proc.stderr
    before, after = map(int, proc.stdout.split())
    assert before >= 2 and after == 0, (before, after)


CLOSE_SCRIPT = (
    CONNECTIONS
    + """
from concurrent.futures import ThreadPoolExecutor

async def main():
    client = pushwire.AsyncClient(api_key=key, base_url=base)
    async with client:
        await asyncio.gather(*(client.segments.list() for _ in range(20)))
        before = connections()
    # still referenced: closing, not collecting, lets go of the connections
    print(before, await connections_after(3))

asyncio.run(main())
with pushwire.Client(api_key=key, base_url=base) as client:
    client.segments.list()
    before = connections()
print(before, connections())
"""
)


def test_closing_a_client_closes_its_connections(emu):
    # A client closed but kept (on an app's state object) must not hold its sockets.
    proc = run_script(CLOSE_SCRIPT, emu.api_key, emu.base_url)
    assert proc.returncode == 0, proc.stderr
    (async_before, async_after), (sync_before, sync_after) = (
        map(int, line.split()) for line in proc.stdout.splitlines()
    )
    assert async_before >= 2 and async_after == 0, (async_before, async_after)
    assert sync_before == 1 and sync_after == 0, (sync_before, sync_after)


BOUND_SCRIPT = (
    CONNECTIONS
    + """
async def main():
    client = pushwire.AsyncClient(api_key=key, base_url=base, max_connections=3)
    peak = 0

    async def watch():
        nonlocal peak
        while True:
            peak = max(peak, connections())
            await asyncio.sleep(0.01)

    watcher = asyncio.ensure_future(watch())
    started = time.monotonic()
    out = await asyncio.gather(*(client.segments.list() for _ in range(12)))
    elapsed = time.monotonic() - started
    watcher.cancel()
    print(len(out), peak, round(elapsed, 2))

asyncio.run(main())
"""
)


def test_max_connections_bounds_the_requests_in_flight(emu):
    # A gather of many calls queues them instead of opening a socket each (which runs out of
    # file descriptors against a slow service).
    emu.inject_fault("/apiv1/segments", delay=0.25, times=12)
    proc = run_script(BOUND_SCRIPT, emu.api_key, emu.base_url)
    assert proc.returncode == 0, proc.stderr
    done, peak, elapsed = proc.stdout.split()
    assert int(done) == 12
    assert 1 <= int(peak) <= 3, peak
    # 12 calls of 0.25 s at most 3 at a time take at least 4 rounds
    assert float(elapsed) >= 0.95, elapsed
    assert pushwire.Client(api_key="k", base_url=emu.base_url).max_connections == 100


CANCEL_SCRIPT = (
    CONNECTIONS
    + """
async def main():
    client = pushwire.AsyncClient(api_key=key, base_url=base, max_retries=0)
    calls = [asyncio.ensure_future(client.segments.list()) for _ in range(4)]
    # A coroutine closed at its await point (GeneratorExit) rather than cancelled.
    closed = client.segments.list()
    closed.send(None)
    await asyncio.sleep(0.5)
    during = connections()
    for call in calls:
        call.cancel()
    closed.close()
    await asyncio.gather(*calls, return_exceptions=True)
    print(during, await connections_after(1.0))

asyncio.run(main())
"""
)


@pytest.mark.skipif(not os.path.exists("/proc/self/net/tcp"), reason="needs /proc")
def test_cancelled_calls_abandon_their_requests(emu):
    # Each call waits 3 s on the emulator. Cancelling the awaiting tasks must drop the
    # requests themselves (their connections close at once), not leave them running.
    emu.inject_fault("/apiv1/segments", delay=3.0, times=5)
    proc = run_script(CANCEL_SCRIPT, emu.api_key, emu.base_url)
    assert proc.returncode == 0, proc.stderr
    during, after = map(int, proc.stdout.split())
    assert (during, after) == (5, 0)


IO_THREADS_SCRIPT = """
import asyncio, glob, sys, pushwire

async def main():
    client = pushwire.AsyncClient(api_key=sys.argv[1], base_url=sys.argv[2],
                                  events_url=sys.argv[3], max_retries=0)
    # The first call waits on an injected delay: the others, placed round robin on every
    # I/O thread including its own, must finish meanwhile.
    slow = asyncio.ensure_future(client.events.track("slow", profile_id="p-slow"))
    await asyncio.sleep(0.2)
    results = await asyncio.wait_for(
        asyncio.gather(*(client.events.track("fast", profile_id=f"p{i}") for i in range(90))),
        timeout=1.5,
    )
    fast_done_first = not slow.done()
    await slow
    names = sorted(open(f).read().strip() for f in glob.glob("/proc/self/task/*/comm"))
    print(len(results), fast_done_first, sum(n.startswith("pushwire-io") for n in names))

asyncio.run(main())
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs /proc")
@pytest.mark.parametrize("threads", ["1", "3"])
def test_async_calls_spread_over_the_io_threads_and_a_slow_one_stalls_none(emu, threads):
    emu.inject_fault("/api/v1/events", delay=1.0, times=1)
    proc = subprocess.run(
        [sys.executable, "-c", IO_THREADS_SCRIPT, emu.api_key, emu.base_url, emu.events_url],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PUSHWIRE_IO_THREADS": threads},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["90", "True", threads]
    events = api_requests(emu, "/api/v1/events")
    assert len(events) == 91


# -- the spin before parking ------------------------------------------------------------------

SPIN_SCRIPT = """
import sys, time, pushwire

client = pushwire.Client(api_key=sys.argv[1], base_url=sys.argv[2], max_retries=0)
client.segments.list()  # connected
started = time.thread_time()
for _ in range(50):
    assert client.segments.list() == []
print(time.thread_time() - started)
"""


def spin_cpu_seconds(emu, spin_us: str, delay: float) -> float:
    """The CPU seconds of SPIN_SCRIPT's 50 calls, each answered ``delay`` seconds late, in a
    process whose calls spin up to ``spin_us``."""
    emu.inject_fault("/apiv1/segments", delay=delay, times=51)
    proc = subprocess.run(
        [sys.executable, "-c", SPIN_SCRIPT, emu.api_key, emu.base_url],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PUSHWIRE_SPIN_US": spin_us},
    )
    assert proc.returncode == 0, proc.stderr
    return float(proc.stdout)


def test_blocking_calls_to_a_slow_service_stop_spinning(emu):
    # A call spins up to PUSHWIRE_SPIN_US before parking, in case the answer is that close.
    # Against a service answering in 20 ms every spin runs out: after two the thread stops
    # spinning (bar one probe in 64). Spinning 5 ms on each of 50 calls would burn 250 ms of
    # CPU more than not spinning at all; backing off keeps it near the no-spin figure.
    without = spin_cpu_seconds(emu, "0", delay=0.02)
    spinning = spin_cpu_seconds(emu, "5000", delay=0.02)
    assert spinning < without + 0.1, (spinning, without)


def test_threads_waiting_on_a_slow_service_stay_asleep(emu):
    # Only the main thread runs Python's signal handlers, so only its blocked calls wake to
    # check them: 20 worker threads waiting on a slow answer do not wake (and take the GIL)
    # 20 times a second each.
    import resource
    import threading

    client = emu.client(timeout=10)
    # Answered 3 s after each arrives, so that no answer falls in the half second watched.
    emu.inject_fault("/apiv1/drips", delay=3, times=20)
    threads = [threading.Thread(target=client.drips.list) for _ in range(20)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(api_requests(emu, "/apiv1/drips")) < 20:
        assert time.monotonic() < deadline, "the requests never arrived"
        time.sleep(0.01)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
    time.sleep(0.5)
    wakes = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - before
    for t in threads:
        t.join()
    assert wakes < 50, wakes  # 200 and more when each blocked call woke every 50 ms


# -- Ctrl-C -------------------------------------------------------------------------------

CTRL_C_SCRIPT = """
import sys, time, pushwire
client = pushwire.Client(api_key=sys.argv[1], base_url=sys.argv[2], timeout=60, max_retries=0)
print("ready", flush=True)
try:
    client.drips.list()
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
sys.exit(0)
"""


def test_ctrl_c_interrupts_a_blocking_call(emu):
    emu.inject_fault("/apiv1/drips", delay=30)
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_SCRIPT, emu.api_key, emu.base_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 10
        while not api_requests(emu, "/apiv1/drips"):  # the call is now blocked in Rust
            assert time.monotonic() < deadline, "the request never arrived"
            time.sleep(0.02)
        time.sleep(0.1)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=5)
        elapsed = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 3, (out, err)
    assert "interrupted" in out
    assert elapsed < 1.0, elapsed


class _Interrupted(Exception):
    pass


def _interrupt_after(seconds: float) -> None:
    """Raises in the main thread after `seconds`, as Ctrl-C's KeyboardInterrupt does (its own
    class, so a real Ctrl-C still stops the test run)."""

    def raise_it(*_: object) -> None:
        raise _Interrupted

    signal.signal(signal.SIGALRM, raise_it)
    signal.setitimer(signal.ITIMER_REAL, seconds)


@pytest.fixture
def alarm():
    previous = signal.getsignal(signal.SIGALRM)
    yield _interrupt_after
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_an_interrupted_blocking_write_does_not_happen_later(emu, alarm):
    # The user interrupts a slow broadcast and carries on (no further call on the thread):
    # the request is cancelled, so the service never sends it, and sending it again
    # afterwards makes one broadcast, not two.
    client = emu.client(**FAST)
    emu.inject_fault("/apiv1/notifications", delay=1.0, times=1)
    alarm(0.3)
    with pytest.raises(_Interrupted):
        client.notifications.create(**BROADCAST)
    time.sleep(1.5)
    assert emu.notifications() == []
    client.notifications.create(**BROADCAST)
    assert len(emu.notifications()) == 1


def test_an_interrupted_batch_sends_nothing_more(emu, alarm):
    # Every event is held up by the service; interrupted, none of them is stored later,
    # neither the calling thread's nor those the I/O threads were sending.
    client = emu.client(**FAST)
    events = [{"event_name": "view", "profile_id": f"p{i}"} for i in range(64)]
    emu.inject_fault("/api/v1/events", delay=1.0, times=len(events))
    alarm(0.3)
    with pytest.raises(_Interrupted):
        client.events.track_many(events, concurrency=8)
    time.sleep(1.5)
    assert emu.events() == []


class _Stop(BaseException):
    """What Ctrl-C raises where Python code runs: not an Exception."""


def test_ctrl_c_while_a_batch_is_converted_stops_it(emu):
    # A large batch of rows read through their own to_dict() (pandas' iterrows()): Ctrl-C
    # landing in that code stops the call at once, and the rows not yet sent never are.
    # Before, the interrupt was taken for a row that is not a dict, and all were sent.
    client = emu.client(**FAST)

    class Row:
        def __init__(self, i: int) -> None:
            self.i = i

        def to_dict(self) -> dict[str, object]:
            time.sleep(0.001)
            return {"event_name": "viewed", "profile_id": f"p{self.i}"}

    def interrupt(*_: object) -> None:
        raise _Stop

    rows = [Row(i) for i in range(2000)]
    # Earlier tests' garbage (their event loops, keys of weak dictionaries) collected now: a
    # collection during the batch would run their weakref callbacks, and an interrupt
    # landing in one is reported as unraisable instead of stopping the call.
    gc.collect()
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        started = time.monotonic()
        with pytest.raises(_Stop):
            client.events.track_many(rows, concurrency=8)
        elapsed = time.monotonic() - started
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert elapsed < 1.5, elapsed  # converting all 2,000 rows takes 2 s and more
    time.sleep(0.3)
    stored = len(emu.events())
    assert stored < 2000
    time.sleep(0.3)
    assert len(emu.events()) == stored  # and nothing more goes out afterwards
    # the next call is not stopped by what stopped this one
    assert client.events.track_many([{"event_name": "e", "profile_id": "p"}]) == [None]


def test_ctrl_c_in_a_rows_own_code_is_raised_and_nothing_is_sent(emu):
    # Deterministically: row 5's to_dict() raises what Ctrl-C raises. Blocking or awaited,
    # small batch or spread, the call raises it before sending anything, and it does not
    # linger to surface in a later, unrelated call on the same thread.
    class Row:
        def __init__(self, i: int) -> None:
            self.i = i

        def to_dict(self) -> dict[str, object]:
            if self.i == 5:
                raise _Stop
            return {"event_name": "viewed", "profile_id": f"p{self.i}"}

    client = emu.client(**FAST)
    for n in (20, 2000):  # in one go, and spread over the I/O threads
        with pytest.raises(_Stop):
            client.events.track_many([Row(i) for i in range(n)], concurrency=8)

    async def awaited() -> None:
        ac = emu.async_client(**FAST)
        with pytest.raises(_Stop):
            await ac.events.track_many([Row(i) for i in range(20)])
        # the loop thread's next calls and errors are their own
        with pytest.raises(ValidationError):
            NewDripNotification(title=5)
        assert await ac.segments.list() == []

    asyncio.run(awaited())
    time.sleep(0.2)
    assert emu.events() == []
    with pytest.raises(ValidationError):
        NewDripNotification(title=5)
    assert client.segments.list() == []


# -- asyncio cancellation -------------------------------------------------------------------


def test_cancelling_an_awaited_call_is_prompt_and_the_client_still_works(emu):
    from pushwire._bridge import _bridge_of

    async def main() -> None:
        client = emu.async_client(**FAST)
        emu.inject_fault("/apiv1/drips", delay=5, times=2)

        started = time.monotonic()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.drips.list(), 0.2)
        assert time.monotonic() - started < 0.6

        task = asyncio.ensure_future(client.drips.list())
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - started < 0.5
        assert task.cancelled()

        # the Rust tasks were aborted, and the client carries on
        bridge = _bridge_of(asyncio.get_running_loop())
        assert bridge is not None
        assert bridge.completions.pending == 0 and bridge.futures == {}
        emu.clear_faults()
        page = await client.drips.list()
        assert page.total == 0
        results = await asyncio.gather(*(client.segments.list() for _ in range(20)))
        assert results == [[]] * 20

    asyncio.run(asyncio.wait_for(main(), 15))


def test_a_loop_closed_with_calls_in_flight_is_freed(emu):
    # A worker that makes a loop per job and closes it with a call still in flight (a
    # background task, asyncio.wait with a timeout) must not keep the loop, its tasks and
    # its pipe for ever: they would pile up to EMFILE.
    import gc
    import weakref

    client = emu.async_client(**FAST)
    emu.inject_fault("/apiv1/segments", delay=0.3, times=10)
    gc.collect()
    pipes = open_pipes()
    loops = []
    for _ in range(10):
        loop = asyncio.new_event_loop()

        async def job() -> None:
            # still in flight when the job ends
            asyncio.get_running_loop().create_task(client.segments.list())
            await asyncio.sleep(0.02)

        loop.run_until_complete(job())
        loop.close()
        loops.append(weakref.ref(loop))
        del loop, job
    time.sleep(0.5)  # every request has finished
    gc.collect()
    assert [r for r in loops if r() is not None] == []
    assert open_pipes() <= pipes
    # and the client goes on, on a new loop
    assert asyncio.run(client.segments.list()) == []


def test_an_async_call_outside_asyncio_and_trio_says_what_it_needs(emu):
    # Neither asyncio's loop nor a trio run: the error says what AsyncClient runs on and what
    # to use instead.
    coro = emu.async_client().segments.list()
    with pytest.raises(RuntimeError, match="asyncio.*or trio.*blocking pushwire.Client"):
        coro.send(None)
    coro.close()
    assert api_requests(emu) == []


# -- models -------------------------------------------------------------------------------


def test_results_pickle_round_trip(emu):
    client = emu.client(**FAST)
    emu.create_segment("vip")
    tid = seed_trigger(emu)
    drip_id = client.drips.create(
        "W",
        [drip_notification(actions=[Action(label="Go", url="https://shop.example/go")])],
        send_to={"include_countries": ["US"]},
        utm_params={"utm_source": "s", "utm_medium": "m", "utm_campaign": "c"},
    )
    values = [
        client.triggers.get(tid),
        client.triggers.list(),
        client.drips.get(drip_id),
        client.drips.get(drip_id).notifications[0],
        client.drips.list(),
        client.segments.list()[0],
        Product(product_id="sku", price=2.5, availability="inStock", variant_id="v"),
        Action(label="Go", url="https://shop.example/go", image_url="https://i.example/i"),
        SendTo(include_segments=["1"], exclude_countries=["FR"]),
        UtmParams(utm_source="s", utm_medium="m", utm_campaign="c", utm_term="t"),
        AttributeRule(key="orders", op="gt", value=3),
    ]
    kinds = {type(v).__name__ for v in values}
    assert {"TriggeredCampaign", "Drip", "DripNotification", "Page", "Segment"} <= kinds
    for value in values:
        for protocol in (2, pickle.HIGHEST_PROTOCOL):
            back = pickle.loads(pickle.dumps(value, protocol=protocol))
            assert type(back) is type(value)
            assert back == value, type(value).__name__
    page = values[1]
    back = pickle.loads(pickle.dumps(page))
    assert [type(t) for t in back.data] == [TriggeredCampaign]
    assert back.data[0].trigger_id == tid


def test_models_from_keywords_and_dicts(emu):
    a = Action(label="Buy", url="https://shop.example/buy")
    assert (a.label, a.url, a.image_url) == ("Buy", "https://shop.example/buy", None)
    assert a == Action.from_dict({"label": "Buy", "url": "https://shop.example/buy"})
    assert a.to_dict() == {"label": "Buy", "url": "https://shop.example/buy"}
    assert Segment(segment_id="4", segment_name="vip").segment_name == "vip"
    s = ScheduleOptions(type="after", value=2, unit="days", at="10:00:00")
    assert s.type == "after" and s.value == 2
    n = NewDripNotification(**{**drip_notification(), "schedule_options": s, "actions": [a]})
    assert n.schedule_options == s and n.actions == [a]
    assert Page([a], 1, 1, 10, 1).data == [a]
    with pytest.raises(ValidationError):
        Product(product_id="x", price="cheap")
    with pytest.raises(ValidationError):
        Product(price=1)  # product_id is required

    # a model and the equivalent plain dict are accepted alike, nested too
    client = emu.client(**FAST)
    as_model = client.drips.create(
        "model",
        [NewDripNotification(**{**drip_notification(), "schedule_options": s, "actions": [a]})],
        send_to=SendTo(include_countries=["US"]),
        utm_params=UtmParams(utm_source="s", utm_medium="m", utm_campaign="c"),
    )
    as_dict = client.drips.create(
        "dict",
        [{**drip_notification(), "schedule_options": s.to_dict(), "actions": [a.to_dict()]}],
        send_to={"include_countries": ["US"]},
        utm_params={"utm_source": "s", "utm_medium": "m", "utm_campaign": "c"},
    )
    m, d = client.drips.get(as_model), client.drips.get(as_dict)
    assert {**m.notifications[0].to_dict(), "id": 0} == {**d.notifications[0].to_dict(), "id": 0}
    assert (m.audience, m.utm_params) == (d.audience, d.utm_params)
    # the first notification may be "after" as well as "rightaway" (spec 2.8)
    assert m.notifications[0].schedule_options == s
    client.notifications.create(
        **BROADCAST,
        actions=[a, {"label": "Later", "url": "https://shop.example/later"}],
        attributes=[
            [AttributeRule(key="k", op="eq", value="v"), {"key": "n", "op": "lt", "value": 2}]
        ],
    )
    client.products.update([Product(product_id="a", price=1), {"product_id": "b", "price": 2}])
    assert len(emu.products()) == 2


# -- secrets --------------------------------------------------------------------------------


def test_the_key_never_shows_in_reprs_or_errors(emu):
    emu.add_site(SECRET)
    client = emu.client(api_key=SECRET, **FAST)
    aclient = emu.async_client(api_key=SECRET, **FAST)
    seg = emu.create_segment("vip", api_key=SECRET)
    tid = seed_trigger(emu)  # another site's campaign: a 400 for this key
    texts = [repr(client), str(client), repr(aclient), repr(client._core), repr(vars(client))]
    drip_id = client.drips.create("W", [drip_notification()])
    texts += [repr(client.drips.get(drip_id)), repr(client.drips.list())]
    texts += [repr(client.segments.list()), repr(client.segments.delete(seg))]
    # a service that echoes the key in its error text (body, message, a key of the body)
    echo = {"success": False, "message": f"key {SECRET} is rate limited", SECRET: [SECRET]}
    emu.inject_fault("/apiv1/segments/delete", status=429, body=echo, times=10)
    with pytest.raises(pushwire.RateLimitError) as limited:
        pushwire.Client(api_key=SECRET, base_url=emu.base_url, max_retries=1).segments.delete(1)
    assert limited.value.message == "key [redacted] is rate limited"
    # an answer that is not JSON is quoted cut short: the cut must not leave half the key
    page = "x" * 490 + SECRET + "y" * 100
    emu.clear_faults()
    emu.inject_fault("/apiv1/segments/delete", status=502, body=page, times=10)
    with pytest.raises(pushwire.PushwireError) as cut:
        pushwire.Client(api_key=SECRET, base_url=emu.base_url, max_retries=0).segments.delete(1)
    assert isinstance(cut.value, pushwire.ServerError)
    assert SECRET[:6] not in str(cut.value) and "[redacted]" in repr(cut.value.body)
    texts += [repr(limited.value.body), repr(limited.value.args), repr(pickle.dumps(limited.value))]
    for make in (
        lambda: client.triggers.get(tid),
        lambda: pushwire.Client(api_key=SECRET, base_url="http://127.0.0.1:1", **FAST).drips.list(),
        lambda: client.notifications.create(title="", message="m", url="https://x.example"),
    ):
        with pytest.raises(pushwire.PushwireError) as info:
            make()
        texts += [repr(info.value), str(info.value), repr(vars(info.value))]
    for text in texts:
        assert SECRET not in text
    # and the emulator saw it only as a header, which its log redacts
    assert all(r["headers"].get("api-key") == "[redacted]" for r in emu.requests())


LOG_SCRIPT = """
import json, logging, sys
records = []

class Keep(logging.Handler):
    def emit(self, record):
        records.append({"name": record.name, "level": record.levelno, "msg": record.getMessage()})

# configured before the first call: pyo3-log caches each logger's level when first used
root = logging.getLogger()
root.addHandler(Keep())
root.setLevel(1)  # everything, down to Rust's trace, from every logger
logging.getLogger("pushwire").setLevel(logging.DEBUG)

from pushwire.testing import Emulator

secret = sys.argv[1]
with Emulator(api_key=secret) as emu:
    client = emu.client(backoff_base=0, timeout=5)
    emu.inject_fault("/apiv1/drips", status=503, times=1)
    client.drips.list()
    # a service echoing the key in an error it is retried after (the retry line quotes it)
    echo = {"success": False, "message": f"key {secret} is busy"}
    emu.inject_fault("/apiv1/segments", status=503, times=1, body=echo)
    client.segments.list()
    try:
        client.segments.delete(77)
    except Exception:
        pass
    emu.inject_fault("/apiv1/notifications", drop="after")
    try:
        client.notifications.create(title="t", message="m", url="https://x.example")
    except Exception:
        pass
print(json.dumps(records))
"""


def test_debug_logs_show_calls_and_retries_but_never_the_key():
    proc = run_script(LOG_SCRIPT, SECRET)
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout.strip().splitlines()[-1])
    pushwire_msgs = [r["msg"] for r in records if r["name"].startswith("pushwire")]
    assert any("GET" in m and "/drips" in m and "503" in m for m in pushwire_msgs), pushwire_msgs
    assert any("retrying" in m and "/drips" in m for m in pushwire_msgs), pushwire_msgs
    assert any("retrying" in m and "key [redacted] is busy" in m for m in pushwire_msgs)
    assert any("GET" in m and "/drips" in m and "200" in m for m in pushwire_msgs), pushwire_msgs
    assert any("POST" in m and "/segments/delete" in m and "400" in m for m in pushwire_msgs)
    assert any("POST" in m and "/notifications" in m for m in pushwire_msgs)
    for r in records:
        assert SECRET not in r["msg"], r
    assert SECRET not in proc.stderr


# -- configuration ----------------------------------------------------------------------------


def test_settings_come_from_the_environment(emu, monkeypatch):
    monkeypatch.setenv("PUSHWIRE_API_KEY", emu.api_key)
    monkeypatch.setenv("PUSHWIRE_BASE_URL", emu.base_url + "/apiv1/")
    monkeypatch.setenv("PUSHWIRE_EVENTS_URL", emu.events_url)
    with pushwire.Client(**FAST) as client:
        assert client.drips.list().total == 0
        client.events.track("e", profile_id="p")
    assert len(emu.events()) == 1
    monkeypatch.delenv("PUSHWIRE_API_KEY")
    with pytest.raises(pushwire.PushwireError, match="API key"):
        pushwire.Client()
    with pytest.raises(pushwire.PushwireError):
        pushwire.Client(api_key="k", base_url="http://example.com")  # plain http, not loopback
    with pytest.raises(ValidationError) as info:
        pushwire.Client(api_key="k", base_url=emu.base_url, timeout=0)
    assert info.value.field == "timeout"


# -- the pytest fixture -------------------------------------------------------------------------

USER_TESTS = """
import asyncio
import pushwire


def test_one(pushwire_emulator):
    emu = pushwire_emulator
    emu.create_segment("vip")
    client = emu.client()
    assert isinstance(client, pushwire.Client)
    assert [s.segment_name for s in client.segments.list()] == ["vip"]


def test_two_starts_fresh(pushwire_emulator):
    client = pushwire_emulator.async_client()
    assert asyncio.run(client.segments.list()) == []
    assert pushwire_emulator.requests()[-1]["path"] == "/apiv1/segments"
"""


def test_the_pytest_fixture_works_from_a_users_suite(tmp_path):
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    proc = run_pytest(tmp_path, timeout=60)
    assert "2 passed" in proc.stdout


def test_unknown_keys_of_a_model_dict_are_refused_before_sending(emu):
    """A typo in a dict (``send_to={"include_segment": ...}``) must not widen a campaign."""
    client = emu.client(**FAST)
    with pytest.raises(ValidationError) as e:
        client.drips.create("W", [{**drip_notification(), "colour": "red"}])
    assert e.value.field == "notifications[0].colour"
    with pytest.raises(ValidationError) as e:
        client.drips.create("W", [drip_notification()], send_to={"include_segment": ["5"]})
    assert e.value.field == "send_to.include_segment"
    with pytest.raises(ValidationError) as e:
        client.notifications.create(
            title="t", message="m", url="https://x.example", actions=[{"lable": "x"}]
        )
    assert "lable" in (e.value.field or "")
    assert api_requests(emu) == []


def test_page_can_be_subscripted_at_run_time() -> None:
    """``Page[Drip]`` in an annotation evaluated at run time (no ``from __future__``)."""
    alias = Page[pushwire.Drip]
    # `Annotated[Page, ...]`: the item type kept for pydantic (docs/design-notes.md).
    assert alias.__origin__ is Page
    assert [m.item for m in alias.__metadata__] == [pushwire.Drip]


@pytest.fixture
def closes_idle_connections(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """An emulator in its own process that closes keep-alive connections left idle for 1 s,
    as servers do (often sooner than the client's own 60 s pool timeout)."""
    from pushwire.testing import EmulatorProcess

    monkeypatch.setenv("PUSHWIRE_EMULATOR_READ_TIMEOUT", "1")
    server = EmulatorProcess("idle-key-12345678")
    yield server
    server.close()


def test_a_blocking_client_never_writes_into_a_connection_the_service_closed_while_idle(
    closes_idle_connections,
) -> None:
    # Nothing runs a blocking thread's connections between its calls: without looking
    # first, the next write went into the closed one and failed with its outcome unknown,
    # inviting a duplicate resend.
    server = closes_idle_connections
    client = server.client(max_retries=0)
    server.admin("add_subscriber", subscriber_hash="h1", profile_id="p1")
    for i in range(3):
        client.events.track("visit", profile_id="p1", data={"n": i})
        client.notifications.create(title=f"t{i}", message="m", url="https://shop.example")
        time.sleep(1.3)
    events = server.admin("events")
    assert [e["data"]["n"] for e in events] == [0, 1, 2]
    titles = [n["request"]["notification_title"] for n in server.admin("notifications")]
    assert titles == ["t0", "t1", "t2"]
    client.close()


def test_a_slow_progress_callback_does_not_leave_the_next_chunk_a_closed_connection(
    closes_idle_connections,
) -> None:
    # A blocking bulk call's progress callback runs on the calling thread, which holds up
    # its connections meanwhile: one the service closed during a slow callback was taken by
    # the next chunk, which failed.
    server = closes_idle_connections
    segment = int(server.admin("create_segment", name="bulk")["segment_id"])
    client = server.client(max_retries=0)
    hashes = [f"h{i}" for i in range(1000)]  # two chunks of 500
    reports = []

    def slow(done: int, total: int) -> None:
        reports.append(done)
        time.sleep(1.3)

    result = client.segments.add_subscribers_bulk(segment, hashes, concurrency=1, progress=slow)
    assert result.ok and result.succeeded == 1000, result
    assert reports == [500, 1000]
    client.close()


@pytest.mark.skipif(sys.version_info < (3, 13), reason="CPython reads Py_mod_gil from 3.13")
def test_the_extension_declares_that_it_runs_without_the_gil():
    # A free-threaded CPython keeps the GIL off when the module is imported: its Py_mod_gil
    # slot says Py_MOD_GIL_NOT_USED, what `make test-ft` checks the suite to hold.
    import ctypes

    from pushwire import _core

    class Slot(ctypes.Structure):
        _fields_ = [("slot", ctypes.c_int), ("value", ctypes.c_void_p)]

    class Definition(ctypes.Structure):
        # PyModuleDef: its base (the object's header, m_init, m_index, m_copy), then m_name,
        # m_doc, m_size, m_methods, m_slots.
        _fields_ = [
            ("header", ctypes.c_byte * object.__basicsize__),
            ("m_init", ctypes.c_void_p),
            ("m_index", ctypes.c_ssize_t),
            ("m_copy", ctypes.c_void_p),
            ("m_name", ctypes.c_char_p),
            ("m_doc", ctypes.c_char_p),
            ("m_size", ctypes.c_ssize_t),
            ("m_methods", ctypes.c_void_p),
            ("m_slots", ctypes.POINTER(Slot)),
        ]

    get_def = ctypes.pythonapi.PyModule_GetDef
    get_def.argtypes = [ctypes.py_object]
    get_def.restype = ctypes.POINTER(Definition)
    definition = get_def(_core).contents
    assert definition.m_name == b"_core"
    slots, i = {}, 0
    while definition.m_slots[i].slot != 0:
        slots[definition.m_slots[i].slot] = definition.m_slots[i].value
        i += 1
    py_mod_gil, py_mod_gil_not_used = 4, 1  # Py_MOD_GIL_NOT_USED is (void *)1
    assert py_mod_gil in slots
    assert slots[py_mod_gil] == py_mod_gil_not_used
