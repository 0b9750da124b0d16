"""The async bridge on a loop without ``add_reader`` (Windows' default ``ProactorEventLoop``
refuses it): the portable path, a watcher thread per loop, carries every kind of call and
its errors, and ends with its loop. `make test` also runs the whole async suite, cancellation
included, on such loops (``PUSHWIRE_TEST_LOOP=no-add-reader``)."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import weakref
from collections.abc import Coroutine
from typing import Any

import pytest
from client_support import FAST, NoReaderLoop, drip_notification

import pushwire
from pushwire import _bridge
from pushwire.testing import Emulator


def test_every_kind_of_call_completes_on_a_loop_without_add_reader(emu: Emulator) -> None:
    vip = emu.create_segment("vip")
    hashes = [emu.add_subscriber(profile_id=f"p{i}", segments=[vip]) for i in range(3)]

    async def main() -> None:
        loop = asyncio.get_running_loop()
        with pytest.raises(NotImplementedError):
            loop.add_reader(0, print)
        async with emu.async_client(**FAST) as client:
            assert [s.segment_name for s in await client.segments.list()] == ["vip"]
            bridge = _bridge._bridge_for(loop)
            assert bridge.watcher is not None and bridge.watcher.is_alive()

            sent = await client.notifications.create(
                title="Sale", message="Half price", url="https://shop.example/sale"
            )
            assert {d["subscriber_hash"] for d in emu.deliveries()} == set(hashes)
            assert sent > 0

            # 64 in flight at once, each answered to its own awaiting task
            names = [f"e{i}" for i in range(64)]
            await asyncio.gather(*(client.events.track(n, profile_id="p0") for n in names))
            assert sorted(e["event_name"] for e in emu.events()) == sorted(names)

            ids = [await client.drips.create(f"d{i}", [drip_notification()]) for i in range(3)]
            walked = [d.drip_id async for d in client.drips.iter(limit=2)]
            assert sorted(walked) == sorted(ids)

            with pytest.raises(pushwire.BadRequestError, match="999999 does not exist"):
                await client.triggers.get(999_999)
            with pytest.raises(pushwire.ValidationError, match="title"):
                await client.notifications.create(title="", message="m", url="https://a.example")

    _run(main())


def _run(main: Coroutine[Any, Any, None]) -> None:
    """Runs ``main`` on a new loop without ``add_reader``, within 30 s."""
    loop = NoReaderLoop()
    try:
        loop.run_until_complete(asyncio.wait_for(main, 30))
    finally:
        loop.close()


def test_the_watcher_thread_ends_when_its_loop_closes(emu: Emulator) -> None:
    # Closed loops kept referenced (by a driver, a framework) still free their threads and
    # pipes; once dropped, the loops themselves are freed.
    closed, freed = [], []
    for _ in range(5):
        loop = NoReaderLoop()
        client = emu.async_client(**FAST)
        assert loop.run_until_complete(client.segments.list()) == []
        watcher = _bridge._bridge_for(loop).watcher
        assert watcher is not None and watcher.is_alive()
        loop.run_until_complete(client.aclose())
        loop.close()
        closed.append(loop)
        freed.append(weakref.ref(loop))
        del loop, client
        gc.collect()
        watcher.join(5)
        assert not watcher.is_alive(), "the watcher outlived its closed loop"
    del closed
    gc.collect()
    assert [r for r in freed if r() is not None] == []


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pipe's descriptors")
def test_the_core_copies_the_pipe_it_is_given_and_never_closes_the_callers() -> None:
    read_fd, write_fd = os.pipe()
    try:
        completions = pushwire._core.Completions(write_fd)
        del completions
        gc.collect()
        # The caller's descriptor is still open and still the pipe's write end.
        os.write(write_fd, b"x")
        assert os.read(read_fd, 1) == b"x"
    finally:
        os.close(read_fd)
        os.close(write_fd)
    # A number that is no open descriptor is refused, never taken.
    with pytest.raises(ValueError, match="write end of a pipe"):
        pushwire._core.Completions(write_fd)
