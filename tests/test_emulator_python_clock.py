"""The emulator following the Python process's clock (``follow_python_clock``, the
``pushwire_emulator_python_clock`` fixture): time-machine and freezegun move it with the code
under test, so a time app code computes from ``datetime.now()`` is the emulator's now; an
emulator in another process refuses, saying what to do instead."""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt

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
    """The system's clock, which time-machine does not move: a file's modification time as
    the kernel stamps it."""
    import os
    import tempfile

    with tempfile.NamedTemporaryFile() as f:
        return os.fstat(f.fileno()).st_mtime
