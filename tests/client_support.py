"""Helpers of the client acceptance tests (tests/test_client_*.py): the same test body drives
``pushwire.Client`` and ``pushwire.AsyncClient`` over real HTTP against the emulator. The
request data here (a broadcast, a drip notification) serves the emulator's tests too."""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, Callable

import pytest

from pushwire import Action, AsyncClient, Client, ScheduleOptions
from pushwire.testing import Emulator

# `mypy --strict` as a user runs it over `paths`, with one cache for the whole test run: the
# package's and the third-party stubs' analysis (pandas, FastAPI, pydantic) is made once, not
# by every test. A file that is not what the cache holds (another test's bad.py) is checked
# afresh, and mypy caches no module with errors, so each test's errors are its own.
_MYPY_CACHE = tempfile.mkdtemp(prefix="pushwire-mypy-")
atexit.register(shutil.rmtree, _MYPY_CACHE, True)


def mypy_strict(*paths: str) -> list[str]:
    """The command line; skips the test where mypy is not installed (an interpreter given only
    the tests' runtime dependencies), rather than read its absence as no errors."""
    pytest.importorskip("mypy", reason="mypy (requirements-dev.txt) is not installed")
    return [sys.executable, "-m", "mypy", "--strict", "--cache-dir", _MYPY_CACHE, *paths]


def mypy_errors(where: Path) -> list[str]:
    """The errors of `mypy --strict` over bad.py and good.py in `where`, as a user runs it."""
    run = subprocess.run(
        mypy_strict("bad.py", "good.py"),
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return [line for line in run.stdout.splitlines() if ": error:" in line]


# Fast and bounded: no backoff waits, and nothing hangs a test for long.
FAST: dict[str, Any] = {"backoff_base": 0, "timeout": 5.0}

BROADCAST: dict[str, str] = {
    "title": "Sale",
    "message": "Everything half price",
    "url": "https://shop.example/sale",
}


def drip_notification(**overrides: Any) -> dict[str, Any]:
    """A valid drip notification (create shape of spec 2.8), as a plain dict."""
    n: dict[str, Any] = {
        "title": "Welcome aboard",
        "message": "Thanks for subscribing",
        "url": "https://shop.example/welcome",
        "image_url": "https://shop.example/icon.png",
        "big_image_url": "https://shop.example/banner.png",
        "require_interaction": 1,
        "expiry": 86400,
        "schedule_options": {"type": "rightaway"},
    }
    n.update(overrides)
    return n


def drip_series() -> list[dict[str, Any]]:
    """Three drip notifications to create, as a drip's first steps: two buttons (a model and
    a dict, the model's with its image), every field given, and a weekday schedule (a model)."""
    return [
        drip_notification(
            actions=[
                Action(label="Shop", url="https://shop.example/", image_url="https://i.example/a"),
                {"label": "Later", "url": "https://shop.example/later"},
            ]
        ),
        drip_notification(
            title="Still there?",
            message="Here is 10% off",
            url="https://shop.example/coupon",
            require_interaction=0,
            expiry=3600,
            schedule_options={"type": "after", "value": 2, "unit": "days", "at": "09:30:00"},
        ),
        drip_notification(
            title="Monday deals",
            schedule_options=ScheduleOptions(type="after", value=1, unit="dow", at="08:00:00"),
        ),
    ]


class Driver:
    """Calls a client method and returns its result, whichever client it is.

    ``drv(c.drips.get, 3)`` calls the sync method, or awaits the async one on this driver's
    own event loop (one loop per test, as an application would have)."""

    kind: str
    client: Any

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def collect(self, iterator: Any) -> list[Any]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class SyncDriver(Driver):
    kind = "sync"

    def __init__(self, emu: Emulator, **kwargs: Any) -> None:
        self.client = emu.client(**{**FAST, **kwargs})
        assert isinstance(self.client, Client)

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    def collect(self, iterator: Iterable[Any]) -> list[Any]:
        return list(iterator)

    def close(self) -> None:
        self.client.close()


class NoReaderLoop(asyncio.SelectorEventLoop):
    """An event loop that refuses ``add_reader`` as Windows' ``ProactorEventLoop`` does
    (``NotImplementedError``): the async bridge's portable path, exercised on Linux."""

    def add_reader(self, fd: Any, callback: Callable[..., Any], *args: Any) -> None:
        raise NotImplementedError

    def remove_reader(self, fd: Any) -> bool:
        raise NotImplementedError


class NoReaderPolicy(asyncio.DefaultEventLoopPolicy):
    """Every new loop (``asyncio.run``, ``new_event_loop``) a :class:`NoReaderLoop`."""

    _loop_factory = NoReaderLoop


class AsyncDriver(Driver):
    kind = "async"

    def __init__(self, emu: Emulator, **kwargs: Any) -> None:
        self.client = emu.async_client(**{**FAST, **kwargs})
        assert isinstance(self.client, AsyncClient)
        self.loop = asyncio.new_event_loop()

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        coro = fn(*args, **kwargs)
        assert asyncio.iscoroutine(coro), f"{fn!r} did not return a coroutine"
        return self.loop.run_until_complete(coro)

    def collect(self, iterator: AsyncIterator[Any]) -> list[Any]:
        async def drain() -> list[Any]:
            return [item async for item in iterator]

        return self.loop.run_until_complete(drain())

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()


def make_driver(kind: str, emu: Emulator, **kwargs: Any) -> Driver:
    return SyncDriver(emu, **kwargs) if kind == "sync" else AsyncDriver(emu, **kwargs)


def api_requests(emu: Emulator, path: str | None = None) -> list[dict[str, Any]]:
    """The API requests the emulator received (optionally only those to ``path``)."""
    return [r for r in emu.requests() if path is None or r["path"] == path]


def open_pipes() -> int:
    """This process's open pipes (Linux: /proc/self/fd): an async bridge holds one. Sockets
    are not counted (a client keeps idle connections)."""
    pipes = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            pipes += os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
        except FileNotFoundError:  # the listing's own descriptor, closed since
            pass
    return pipes
