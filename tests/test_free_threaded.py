"""Many threads calling at once with the GIL off: one blocking Client shared by sixteen
threads, an asyncio loop and an AsyncClient per thread, trio runs in threads, and keyed
calls racing for one key. `make test-ft` runs them (with the async, forking and idempotency
tests) under a free-threaded CPython with PYTHON_GIL=0 (tools/py313t.py); anywhere else they
skip, saying so."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pushwire.testing import Emulator

pytestmark = pytest.mark.skipif(
    getattr(sys, "_is_gil_enabled", lambda: True)(),
    reason="runs where the GIL is off: a free-threaded CPython with PYTHON_GIL=0 (make test-ft)",
)

THREADS = 16


def in_threads(n: int, work: Callable[[int], Any]) -> list[Any]:
    """``work(i)`` on ``n`` threads started together; their results, or the first error."""
    start = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = work(i)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    assert not sys._is_gil_enabled()  # type: ignore[attr-defined]
    return results


def test_importing_the_package_leaves_the_gil_off() -> None:
    """Without PYTHON_GIL, as a user runs it: the extension's declaration keeps the GIL off,
    and the import warns of nothing."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHON_GIL"}
    script = "import sys, pushwire, pushwire.testing; print(sys._is_gil_enabled())"
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", script], env=env, capture_output=True, text=True
    )
    assert (out.returncode, out.stdout.strip(), out.stderr) == (0, "False", "")


def test_sixteen_threads_share_one_blocking_client(emu: Emulator) -> None:
    emu.create_segment("vip")
    client = emu.client()

    def work(t: int) -> int:
        seen = 0
        for i in range(100):
            client.events.track("viewed", profile_id=f"p{t}", data={"i": i})
            seen += len(client.segments.list())
        return seen

    assert in_threads(THREADS, work) == [100] * THREADS
    events = emu.events()
    assert len(events) == THREADS * 100
    for t in range(THREADS):
        mine = [e["data"]["i"] for e in events if e["profile_id"] == f"p{t}"]
        assert mine == list(range(100))  # each thread's events in its order


def test_a_loop_and_an_async_client_per_thread(emu: Emulator) -> None:
    def work(t: int) -> int:
        async def main() -> int:
            async with emu.async_client() as client:
                done = await asyncio.gather(
                    *(client.events.track("viewed", profile_id=f"a{t}-{i}") for i in range(100))
                )
                return len(done)

        return asyncio.run(main())

    assert in_threads(8, work) == [100] * 8
    assert len(emu.events()) == 800


def test_trio_runs_in_threads(emu: Emulator) -> None:
    trio = pytest.importorskip("trio", reason="trio (requirements-dev.txt)")
    client = emu.async_client()

    def work(t: int) -> int:
        async def main() -> int:
            count = 0
            async with trio.open_nursery() as nursery:

                async def one(i: int) -> None:
                    nonlocal count
                    await client.events.track("viewed", profile_id=f"t{t}-{i}")
                    count += 1

                for i in range(50):
                    nursery.start_soon(one, i)
            return count

        return int(trio.run(main))

    assert in_threads(4, work) == [50] * 4
    assert len(emu.events()) == 200


def test_threads_racing_for_one_key_send_once(emu: Emulator, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'keys.sqlite'}"
    emu.inject_fault("/apiv1/notifications", delay=0.2, times=1)
    client = emu.client(idempotency_store=store)

    def work(t: int) -> int:
        return client.notifications.create(
            title="Sale", message="Half price", url="https://shop.example/sale",
            idempotency_key="sale-1",
        )  # fmt: skip

    ids = in_threads(THREADS, work)
    assert len(set(ids)) == 1
    assert len(emu.notifications()) == 1
