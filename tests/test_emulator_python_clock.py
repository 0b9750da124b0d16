"""The emulator following the Python process's clock (``follow_python_clock``, the
``pushwire_emulator_python_clock`` fixture): time-machine and freezegun move it with the code
under test, so a time app code computes from ``datetime.now()`` is the emulator's now; an
emulator in another process refuses, saying what to do instead."""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pushwire import Client
from pushwire.testing import Emulator, EmulatorProcess

time_machine = pytest.importorskip("time_machine", reason="time-machine (requirements-dev.txt)")
freezegun = pytest.importorskip("freezegun", reason="freezegun (requirements-dev.txt)")

UTC = dt.timezone.utc
MORNING = dt.datetime(2031, 3, 3, 9, 0, tzinfo=UTC)


def schedule_tomorrows_digest(client: Client) -> int:
    """App code as a Django or Flask app has it: the digest goes out at 08:00 tomorrow (the
    site's time, UTC here), by the app's own clock."""
    tomorrow = dt.datetime.now(UTC).date() + dt.timedelta(days=1)
    at = dt.datetime.combine(tomorrow, dt.time(8, 0))
    return client.notifications.create(
        title="Your digest",
        message="What happened today",
        url="https://shop.example/digest",
        valid_from_utc=at,
    )


def status_of(emu: Emulator, notification_id: int) -> str:
    [b] = [b for b in emu.broadcasts() if b["notification_id"] == notification_id]
    return str(b["status"])


def test_time_machine_moves_the_emulator_with_the_app_code(
    pushwire_emulator_python_clock: Emulator,
) -> None:
    emu = pushwire_emulator_python_clock
    emu.set_timezone("UTC")
    with time_machine.travel(MORNING, tick=False) as traveller, emu.client() as client:
        assert emu.now == MORNING
        digest = schedule_tomorrows_digest(client)
        [b] = emu.broadcasts()
        assert b["due_at"] == dt.datetime(2031, 3, 4, 8, 0, tzinfo=UTC)
        assert status_of(emu, digest) == "scheduled"
        traveller.shift(dt.timedelta(hours=22, minutes=59))
        assert status_of(emu, digest) == "scheduled"
        traveller.shift(dt.timedelta(minutes=2))
        assert emu.now == dt.datetime(2031, 3, 4, 8, 1, tzinfo=UTC)
        assert status_of(emu, digest) == "sent"


def test_freezegun_moves_the_emulator_too(pushwire_emulator_python_clock: Emulator) -> None:
    emu = pushwire_emulator_python_clock
    with freezegun.freeze_time("2030-01-01 12:00:00") as frozen:
        assert emu.now == dt.datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
        frozen.tick(3600)
        assert emu.now == dt.datetime(2030, 1, 1, 13, 0, tzinfo=UTC)
        # The emulator's own moves still add to the clock it follows.
        emu.advance(60)
        assert emu.now == dt.datetime(2030, 1, 1, 13, 1, tzinfo=UTC)


def test_many_calls_in_flight_from_threads_and_a_loop_while_following(
    pushwire_emulator_python_clock: Emulator,
) -> None:
    # The emulator takes the GIL to read the clock while callers wait on it, without it,
    # from a thread pool and an event loop at once.
    emu = pushwire_emulator_python_clock
    emu.create_segment("vip")

    async def on_the_loop() -> list[int]:
        async with emu.async_client() as client:
            pages = await asyncio.gather(*(client.segments.list() for _ in range(50)))
        return [len(p) for p in pages]

    with time_machine.travel(MORNING, tick=False), emu.client() as client:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            listed = list(pool.map(lambda _: len(client.segments.list()), range(50)))
            assert asyncio.run(on_the_loop()) == [1] * 50
        assert listed == [1] * 50
        assert {r["received_at"] for r in emu.requests()} == {MORNING}


def test_without_following_the_emulator_keeps_the_systems_clock(
    pushwire_emulator: Emulator,
) -> None:
    emu = pushwire_emulator
    with time_machine.travel(MORNING, tick=False):
        assert dt.datetime.now(UTC) == MORNING
        assert emu.now.year == dt.datetime.fromtimestamp(_system_time(), UTC).year != 2031


def test_following_ends_where_asked_and_at_reset_leaving_the_clock_running_on(
    pushwire_emulator: Emulator,
) -> None:
    emu = pushwire_emulator
    emu.follow_python_clock()
    with time_machine.travel(MORNING, tick=False):
        emu.follow_python_clock(False)
        stopped_at = emu.now
        assert MORNING <= stopped_at < MORNING + dt.timedelta(seconds=5)
    # Python's clock went back to today; the emulator's runs on from where it stood.
    assert MORNING <= emu.now < MORNING + dt.timedelta(seconds=5)
    emu.follow_python_clock()
    emu.reset()
    with time_machine.travel(MORNING, tick=False):
        assert emu.now.year != 2031


def test_an_emulator_in_another_process_refuses_with_what_to_do_instead() -> None:
    with EmulatorProcess() as process:
        with pytest.raises(RuntimeError, match="travel_to"):
            process.follow_python_clock()
        remote = Emulator.connect(process.base_url)
        with pytest.raises(RuntimeError, match="needs the emulator in this process"):
            remote.follow_python_clock()
        remote.close()


def _system_time() -> float:
    """The process's clock as the emulator reads it, which time-machine does not move (its
    escape hatch reads the clock it patched; libfaketime, which `make test-midnight` loads,
    moves both alike)."""
    return time_machine.escape_hatch.time.time()


def _run_child(script: str, tmp_path: Path) -> str:
    """``script`` in a Python process of its own (a deadlock there cannot hang the suite):
    its output; on a hang, faulthandler prints every thread's stack and the child exits."""
    prelude = (
        "import faulthandler, sys\n"
        "faulthandler.dump_traceback_later(60, exit=True)\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        # Signals as the child sets them, whatever the suite was started under.
        start_new_session=True,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_a_signal_handler_calling_the_emulator_while_it_reads_the_clock(tmp_path: Path) -> None:
    # The clock is Python code (as freezegun's and time-machine's are): a signal arriving
    # while the emulator reads it runs its handler there, and the handler (a SIGTERM
    # handler saving the state, one reading the time) enters the same emulator again.
    out = _run_child(
        """
        import signal, time
        from pushwire.testing import Emulator

        emu = Emulator(state="state.pw")
        emu.follow_python_clock()
        handled = []

        def on_alarm(signum, frame):
            handled.append((emu.save().stat().st_size > 0, emu.now.year))

        signal.signal(signal.SIGALRM, on_alarm)
        readings = 0
        real = time.time

        def clock():
            global readings
            readings += 1
            if readings % 3 == 0 and len(handled) < 50:
                signal.raise_signal(signal.SIGALRM)
            return 1930000000.0  # 2031-02-27

        time.time = clock
        for i in range(100):
            emu.create_segment(f"s{i}")
            assert emu.now.year == 2031
        time.time = real
        emu.close()
        assert handled == [(True, 2031)] * 50, handled
        print("handled", len(handled))
        """,
        tmp_path,
    )
    assert out.split() == ["handled", "50"]


def test_an_emulator_dropped_busy_without_close_saves_and_returns(tmp_path: Path) -> None:
    # Dropped while a thread's requests keep the server reading the followed clock: its
    # last save runs while those requests wait for the GIL.
    out = _run_child(
        """
        import gc, threading
        import time_machine, datetime as dt
        import pushwire
        from pushwire.testing import Emulator

        rounds = 8
        with time_machine.travel(dt.datetime(2031, 3, 3, 9, tzinfo=dt.timezone.utc)):
            for round in range(rounds):
                emu = Emulator(state=f"state{round}.pw")
                emu.follow_python_clock()
                emu.create_segment("vip")
                client = emu.client(max_retries=0, timeout=5)
                stop = threading.Event()
                busy = threading.Event()

                def hammer():
                    while not stop.is_set():
                        try:
                            client.segments.list()
                        except pushwire.PushwireError:
                            pass
                        busy.set()

                workers = [threading.Thread(target=hammer) for _ in range(3)]
                for w in workers:
                    w.start()
                busy.wait(10)
                del emu
                gc.collect()
                stop.set()
                for w in workers:
                    w.join(30)
                    assert not w.is_alive()
                client.close()
                # The dropped emulator's last save holds its segment.
                with Emulator.load(f"state{round}.pw") as back:
                    assert [s["segment_name"] for s in back.segments()] == ["vip"]
        print("rounds", rounds)
        """,
        tmp_path,
    )
    assert out.split() == ["rounds", "8"]


def test_a_keyboard_interrupt_inside_the_clock_reaches_the_caller(tmp_path: Path) -> None:
    # Ctrl-C arriving while the emulator reads a Python clock is the caller's, every time,
    # and no reading falls back to the system's clock (years from the one followed).
    out = _run_child(
        """
        import signal, time
        from pushwire.testing import Emulator

        signal.signal(signal.SIGINT, signal.default_int_handler)
        emu = Emulator()
        emu.follow_python_clock()
        readings = raised = reached = 0
        years = set()

        def clock():
            global readings, raised
            readings += 1
            if readings % 5 == 0:
                raised += 1
                signal.raise_signal(signal.SIGINT)
            return 1930000000.0  # 2031

        time.time = clock
        for _ in range(2000):
            try:
                years.add(emu.now.year)
            except KeyboardInterrupt:
                reached += 1
        emu.follow_python_clock(False)
        print(raised, reached, sorted(years))
        """,
        tmp_path,
    )
    raised, reached, years = out.split(maxsplit=2)
    assert int(raised) > 0
    assert reached == raised
    assert years.strip() == "[2031]"


def test_a_clock_failing_on_the_servers_threads_reads_its_last_time(
    pushwire_emulator_python_clock: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A request served while the followed clock raises is stamped with its last reading,
    # never the system's, and the clock's exception is reported, not lost.
    emu = pushwire_emulator_python_clock
    unraisable: list[BaseException] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(u.exc_value))
    main = threading.main_thread()
    with time_machine.travel(MORNING, tick=False), emu.client() as client:
        assert emu.now == MORNING
        real = time.time

        def failing_elsewhere() -> float:
            if threading.current_thread() is not main:
                raise RuntimeError("this clock reads on the main thread only")
            return real()

        monkeypatch.setattr(time, "time", failing_elsewhere)
        client.segments.list()
        monkeypatch.setattr(time, "time", real)
        [logged] = [r for r in emu.requests() if r["path"] == "/apiv1/segments"]
    assert logged["received_at"] == MORNING
    assert unraisable and isinstance(unraisable[0], RuntimeError)


def test_under_freezegun_requests_are_served_at_the_frozen_time(
    pushwire_emulator_python_clock: Emulator,
) -> None:
    # freezegun's clock looks through its caller's frames: the emulator's threads read it
    # through a Python function, so requests are stamped with the time the test moved to.
    emu = pushwire_emulator_python_clock
    with freezegun.freeze_time("2030-01-01 12:00:00") as frozen, emu.client() as client:
        client.segments.list()
        frozen.tick(7200)
        client.segments.list()
        stamps = [r["received_at"] for r in emu.requests() if r["path"] == "/apiv1/segments"]
    assert stamps == [
        dt.datetime(2030, 1, 1, 12, 0, tzinfo=UTC),
        dt.datetime(2030, 1, 1, 14, 0, tzinfo=UTC),
    ]


@pytest.mark.parametrize("year", [2024, 2040])
def test_a_schedule_app_code_computes_under_a_travelled_clock_is_sent(
    pushwire_emulator_python_clock: Emulator, year: int
) -> None:
    # The client judges a schedule by the Python clock the app code computed it from: a
    # past year or one over ten years from the system's today is tomorrow there.
    emu = pushwire_emulator_python_clock
    morning = dt.datetime(year, 3, 3, 9, 0, tzinfo=UTC)
    with time_machine.travel(morning, tick=False), emu.client() as client:
        digest = schedule_tomorrows_digest(client)
        assert status_of(emu, digest) == "scheduled"


def test_after_reset_the_python_clock_is_no_longer_read(
    pushwire_emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    emu = pushwire_emulator
    emu.follow_python_clock()
    emu.reset()

    def broken() -> float:
        raise RuntimeError("this clock is broken")

    monkeypatch.setattr(time, "time", broken)
    assert emu.now.year >= 2026  # the system's clock, read without Python's
    emu.create_segment("vip")
