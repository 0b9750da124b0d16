"""Hands the Rust core's async results to asyncio: one pipe and one queue per event loop.

Each finished request pushes its result into the loop's queue in Rust and writes a byte to
the pipe; the loop drains the whole queue at once, under one GIL hold. How the loop learns
of the byte depends on what it supports:

- a selector loop (the default on Linux and macOS, uvloop) watches the pipe itself
  (``add_reader``): no thread, no extra wake-up;
- a loop without ``add_reader`` (Windows' default ``ProactorEventLoop`` raises
  ``NotImplementedError``) gets a daemon thread per loop that blocks reading the pipe and
  schedules the drain with ``call_soon_threadsafe``.

Under trio (and anyio's trio backend) the same pipe and queue serve each ``trio.run``: a
system task of the run waits for the pipe (``trio.lowlevel.wait_readable``; on Windows, where
trio waits on sockets only, a thread reads it and hands the drain to the run's token), and
each awaiting task sleeps in ``wait_task_rescheduled``, rescheduled with its outcome. A
cancelled task's abort function abandons its request as asyncio's ``CancelledError`` does.
The other async primitives the client needs (a sleep, a thread for blocking work, a report
handed to the loop from another thread) are here too, for either library.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import weakref
from types import ModuleType
from typing import Any, Callable, Optional, TypeVar

from pushwire._core import Completions, CoreClient, PreparedCall

_WINDOWS = sys.platform == "win32"
_log = logging.getLogger("pushwire")


def _completions_of_pipe(write_fd: int, read_fd: int) -> Completions:
    """The core's copy of the pipe's write end (on Windows of its OS handle: a MinGW build
    does not share Python's C runtime, so a descriptor would mean nothing to it); the write
    descriptor is then closed here, and the read one too should the core refuse it."""
    try:
        if sys.platform == "win32":
            import msvcrt

            return Completions(msvcrt.get_osfhandle(write_fd))
        return Completions(write_fd)
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)


def _finished(read_fd: int, completions: Completions) -> list[tuple[int, bool, Any]]:
    """The calls finished since the last drain, the wake-up bytes read off the pipe first
    (when this side reads it: ``read_fd`` is -1 where a thread does)."""
    if read_fd >= 0:
        try:
            os.read(read_fd, 65536)
        except BlockingIOError:
            pass
    return completions.drain()


class _LoopBridge:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        read_fd, write_fd = os.pipe()
        self.futures: dict[int, asyncio.Future[Any]] = {}
        # Weak: the bridge must not keep its loop alive (the loop holds the bridge's reader).
        self._loop = weakref.ref(loop)
        self._read_fd = -1
        self.watcher: Optional[threading.Thread] = None
        if _WINDOWS:
            # Windows' selector loop watches sockets only and its Proactor loop nothing: a
            # pipe is always left to the thread there (and its ends stay blocking: the
            # thread reads every byte as it comes, so the writer never waits).
            self.completions = _completions_of_pipe(write_fd, read_fd)
            self._watch_in_a_thread(loop, read_fd)
            return
        os.set_blocking(write_fd, False)
        self.completions = _completions_of_pipe(write_fd, read_fd)
        try:
            os.set_blocking(read_fd, False)
            loop.add_reader(read_fd, self._drain)
            self._read_fd = read_fd
        except NotImplementedError:
            os.set_blocking(read_fd, True)
            self._watch_in_a_thread(loop, read_fd)

    def _watch_in_a_thread(self, loop: asyncio.AbstractEventLoop, read_fd: int) -> None:
        """The portable path: a thread owns the read end from here on (see `_watch`)."""
        self.watcher = threading.Thread(
            target=_watch,
            args=(read_fd, weakref.ref(self), self._loop),
            name="pushwire-async-bridge",
            daemon=True,
        )
        self.watcher.start()
        loop.call_later(_KEEP_SECONDS, _keep, self)

    def _drain(self) -> None:
        for call_id, ok, value in _finished(self._read_fd, self.completions):
            fut = self.futures.pop(call_id, None)
            if fut is None or fut.done():
                continue
            if ok:
                fut.set_result(value)
            else:
                fut.set_exception(value)

    def close(self) -> None:
        # On the portable path the watcher closes the read end itself, once the write end
        # closes (this bridge's Completions dropped and its last call finished).
        if self._read_fd >= 0:
            try:
                loop = self._loop()
                if loop is not None and not loop.is_closed():
                    loop.remove_reader(self._read_fd)
            finally:
                os.close(self._read_fd)
                self._read_fd = -1

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


# A day: how far off the timer that holds a thread-path bridge is set (see `_keep`).
_KEEP_SECONDS = 86400.0


def _keep(bridge: _LoopBridge) -> None:
    """Holds a thread-path bridge from a far-off timer of its running loop, set again each
    time it fires: the loop keeps its bridge alive as a selector loop does through its
    reader, and drops it when it closes (closing clears a loop's timers), which closes the
    pipe's write end and so ends the watcher thread, whether or not the loop is still
    referenced."""
    asyncio.get_running_loop().call_later(_KEEP_SECONDS, _keep, bridge)


def _watch(
    read_fd: int,
    bridge: weakref.ref[_LoopBridge],
    loop: weakref.ref[asyncio.AbstractEventLoop],
) -> None:
    """The portable path's thread: each wake-up byte schedules a drain on the loop. Holds
    the bridge and the loop weakly, so that neither is kept alive by it; ends when the pipe's
    write end closes, the bridge or the loop is gone, or the loop is closed."""
    try:
        while os.read(read_fd, 65536):
            alive, running = bridge(), loop()
            if alive is None or running is None or running.is_closed():
                return
            try:
                running.call_soon_threadsafe(alive._drain)
            except RuntimeError:  # closed between the check and the call
                return
            del alive, running
    except OSError:
        return
    finally:
        os.close(read_fd)


# Each loop's bridge, weakly on both sides: the loop itself keeps its bridge alive (through
# the reader it watches), and the bridge's pending futures keep the loop alive. Held strongly
# here, a bridge would keep a loop closed with calls in flight, its tasks and its pipe alive
# for ever; held weakly, they are one cycle the garbage collector frees.
#
# A plain dict by the loop's id, under a lock, rather than a WeakKeyDictionary: threads may
# start their loops' first calls at once, and without the GIL (a free-threaded CPython) a
# WeakKeyDictionary changed by two of them, or by its removal callbacks run by the garbage
# collector on any thread, is not safe. Entries whose loop is gone are dropped whenever one
# is added (an id may be reused: the loop's weak reference tells).
_bridges: dict[int, tuple[weakref.ref[asyncio.AbstractEventLoop], weakref.ref[_LoopBridge]]] = {}
_bridges_lock = threading.Lock()


def _after_fork_in_child() -> None:
    # The lock anew: a thread the child does not have may have held it at the fork.
    global _bridges_lock
    _bridges_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _none() -> None:
    return None


# The last loop seen and its bridge (both weakly): one loop is the common case. A tuple
# replaced whole, so a thread reads either the old pair or the new one.
_last: tuple[
    Callable[[], Optional[asyncio.AbstractEventLoop]], Callable[[], Optional[_LoopBridge]]
] = (_none, _none)


def _bridge_of(loop: asyncio.AbstractEventLoop) -> Optional[_LoopBridge]:
    """The loop's bridge, if it has one."""
    with _bridges_lock:
        known = _bridges.get(id(loop))
    if known is None or known[0]() is not loop:
        return None
    return known[1]()


def _bridge_for(loop: asyncio.AbstractEventLoop) -> _LoopBridge:
    global _last
    last_loop, last_bridge = _last
    if last_loop() is loop:
        bridge = last_bridge()
        if bridge is not None:
            return bridge
    with _bridges_lock:
        known = _bridges.get(id(loop))
        bridge = known[1]() if known is not None and known[0]() is loop else None
        if bridge is None:
            for key in [k for k, (held, _) in _bridges.items() if held() is None]:
                del _bridges[key]
            bridge = _LoopBridge(loop)
            _bridges[id(loop)] = (weakref.ref(loop), weakref.ref(bridge))
    _last = (weakref.ref(loop), weakref.ref(bridge))
    return bridge


_WRONG_ENVIRONMENT = (
    "pushwire.AsyncClient runs under asyncio (uvloop included) or trio (anyio on either "
    "backend), and neither is running here: await it from a coroutine that asyncio.run() or "
    "trio.run() runs, or use the blocking pushwire.Client"
)


def _trio() -> Optional[ModuleType]:
    """trio, if the running code is a trio task (it cannot be if trio was never imported).
    Asked before asyncio: a trio run may be a guest on an asyncio loop
    (``trio.lowlevel.start_guest_run``), or be started from code an asyncio loop runs (a
    notebook's cell), and its tasks must wait as trio's."""
    # ``in`` first, asked on every async call: a free-threaded CPython 3.13 reads a dict
    # that way without its lock, which ``get`` takes, and a child forked while another
    # thread held that lock could wait on it for ever.
    if "trio" not in sys.modules:
        return None
    trio = sys.modules["trio"]
    in_task = getattr(trio.lowlevel, "in_trio_task", None)
    if in_task is not None:
        return trio if in_task() else None
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return None
    return trio


def check_environment() -> None:
    """Raises, naming what to do, unless asyncio or trio runs this thread's coroutine."""
    if _trio() is None and _no_asyncio():
        raise RuntimeError(_WRONG_ENVIRONMENT)


async def submit(
    core: CoreClient, call: PreparedCall, options: Optional[dict[str, Any]] = None
) -> Any:
    """Runs ``call`` on the Rust runtime and awaits its result; cancelling aborts the
    request. ``options`` are the call's own (see ``pushwire._response.per_call``)."""
    trio = _trio()
    if trio is not None:
        return await _submit_trio(trio, core, call, options)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(_WRONG_ENVIRONMENT) from None
    bridge = _bridge_for(loop)
    if options is None:
        call_id = core.submit(call, bridge.completions)
    else:
        call_id = core.submit_with(call, options, bridge.completions)
    fut: asyncio.Future[Any] = loop.create_future()
    bridge.futures[call_id] = fut
    try:
        return await fut
    except BaseException:
        # Cancelled, or the coroutine closed (GeneratorExit): abandon the request too.
        bridge.futures.pop(call_id, None)
        bridge.completions.cancel(call_id)
        raise


# -- trio ----------------------------------------------------------------------------------


class _TrioBridge:
    """One ``trio.run``'s pipe and queue, and its tasks waiting for their calls."""

    def __init__(self, trio: ModuleType) -> None:
        import outcome  # trio's own dependency

        self._trio = trio
        self._value, self._error = outcome.Value, outcome.Error
        self.waiting: dict[int, Any] = {}
        self._read_fd = -1
        read_fd, write_fd = os.pipe()
        if _WINDOWS:
            self.completions = _completions_of_pipe(write_fd, read_fd)
            token = trio.lowlevel.current_trio_token()
            threading.Thread(
                target=_watch_for_trio,
                args=(read_fd, weakref.ref(self), token),
                name="pushwire-trio-bridge",
                daemon=True,
            ).start()
            return
        os.set_blocking(write_fd, False)
        self.completions = _completions_of_pipe(write_fd, read_fd)
        os.set_blocking(read_fd, False)
        self._read_fd = read_fd
        trio.lowlevel.spawn_system_task(self._watch, name="pushwire-bridge")

    async def _watch(self) -> None:
        """The run's system task: drains the queue each time the pipe has a byte; cancelled,
        with the pipe closed, when the run ends."""
        try:
            while True:
                await self._trio.lowlevel.wait_readable(self._read_fd)
                self._drain()
        finally:
            os.close(self._read_fd)
            self._read_fd = -1

    def _drain(self) -> None:
        # Never raises: an exception here would end the trio run (a system task's crash).
        for call_id, ok, value in _finished(self._read_fd, self.completions):
            task = self.waiting.pop(call_id, None)
            if task is not None:
                done = self._value(value) if ok else self._error(value)
                self._trio.lowlevel.reschedule(task, done)


def _watch_for_trio(read_fd: int, bridge: weakref.ref[_TrioBridge], token: Any) -> None:
    """Windows' trio path: each wake-up byte hands a drain to the run; ends when the pipe's
    write end closes (the bridge's Completions dropped), the bridge is gone or the run has
    finished."""
    try:
        while os.read(read_fd, 65536):
            alive = bridge()
            if alive is None:
                return
            try:
                token.run_sync_soon(alive._drain)
            except RuntimeError:  # trio.RunFinishedError
                return
            del alive
    except OSError:
        return
    finally:
        os.close(read_fd)


# Each trio run's bridge, kept by the run (a RunVar, made at the first call under trio).
_trio_bridges: Any = None


def _trio_bridge(trio: ModuleType) -> _TrioBridge:
    global _trio_bridges
    if _trio_bridges is None:
        with _bridges_lock:
            if _trio_bridges is None:
                _trio_bridges = trio.lowlevel.RunVar("pushwire_bridge")
    try:
        bridge: _TrioBridge = _trio_bridges.get()
    except LookupError:
        bridge = _TrioBridge(trio)
        _trio_bridges.set(bridge)
    return bridge


async def _submit_trio(
    trio: ModuleType, core: CoreClient, call: PreparedCall, options: Optional[dict[str, Any]]
) -> Any:
    # A call made in a scope already cancelled sends nothing (trio's rule: a cancelled
    # checkpoint acts not at all).
    await trio.lowlevel.checkpoint_if_cancelled()
    return await _protected(trio)(trio, core, call, options)


async def _submit_and_wait(
    trio: ModuleType, core: CoreClient, call: PreparedCall, options: Optional[dict[str, Any]]
) -> Any:
    """The call submitted and its task parked until its answer, protected from Ctrl-C
    (``_protected``): trio raises KeyboardInterrupt into unprotected code at any bytecode, and
    one landing between the call's submission and the park would leave the call running with
    a task registered that no longer waits for it. Here it is delivered through ``abort``,
    at the park, as a cancellation is."""
    bridge = _trio_bridge(trio)
    if options is None:
        call_id = core.submit(call, bridge.completions)
    else:
        call_id = core.submit_with(call, options, bridge.completions)
    bridge.waiting[call_id] = trio.lowlevel.current_task()

    def abort(_raise_cancel: Any) -> Any:
        # Cancelled (a cancel scope, move_on_after, KeyboardInterrupt): the request is
        # abandoned, its connection closed, as under asyncio.
        bridge.waiting.pop(call_id, None)
        bridge.completions.cancel(call_id)
        return trio.lowlevel.Abort.SUCCEEDED

    try:
        return await trio.lowlevel.wait_task_rescheduled(abort)
    except BaseException:
        # Left other than through `abort` or an answer (an exception raised before the task
        # parked): the call is abandoned all the same, and no answer wakes this task later.
        if bridge.waiting.pop(call_id, None) is not None:
            bridge.completions.cancel(call_id)
        raise


_protected_submit: Any = None


def _protected(trio: ModuleType) -> Any:
    """``_submit_and_wait`` under trio's KeyboardInterrupt protection (made once, trio being
    imported only by those who use it)."""
    global _protected_submit
    if _protected_submit is None:
        _protected_submit = trio.lowlevel.enable_ki_protection(_submit_and_wait)
    return _protected_submit


# -- what else the client awaits, on either library ----------------------------------------

T = TypeVar("T")


async def sleep(seconds: float) -> None:
    """Sleeps on the running loop, asyncio's or trio's."""
    trio = _trio()
    if trio is not None:
        await trio.sleep(seconds)
    else:
        await asyncio.sleep(seconds)


async def checkpoint_if_cancelled() -> None:
    """Under trio, raises if the task's scope is already cancelled (asyncio has no such
    check: a cancelled task is told at its next await). A keyed call asks before it sends,
    so that a call cancelled before anything went out frees its key."""
    trio = _trio()
    if trio is not None:
        await trio.lowlevel.checkpoint_if_cancelled()


async def to_thread(fn: Callable[[], T]) -> T:
    """Runs blocking ``fn`` in a worker thread, off the loop, asyncio's or trio's, to its
    end: under trio in a shielded scope (a cancelled one would not even start it; asyncio's
    thread runs on when its awaiting task is cancelled)."""
    trio = _trio()
    if trio is not None:
        with trio.CancelScope(shield=True):
            return await trio.to_thread.run_sync(fn)  # type: ignore[no-any-return]
    return await asyncio.to_thread(fn)


def from_other_threads(fn: Callable[..., Any]) -> Callable[..., None]:
    """``fn`` as a function any thread may call, each call run on this loop's thread (the
    running asyncio loop's, or this trio run's); calls after the loop is gone are dropped.
    Under trio, an exception ``fn`` lets out (a BaseException: ``fn`` is expected to handle
    the rest) is logged and dropped: raised from the run's callback, it would end the run."""
    trio = _trio()
    if trio is not None:
        token = trio.lowlevel.current_trio_token()

        def guarded(*args: Any) -> None:
            try:
                fn(*args)
            except BaseException as e:
                _log.warning("%s raised %s under trio: dropped", fn, type(e).__name__)

        def on_trio(*args: Any) -> None:
            try:
                token.run_sync_soon(guarded, *args)
            except trio.RunFinishedError:
                pass

        return on_trio
    loop = asyncio.get_running_loop()

    def on_asyncio(*args: Any) -> None:
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed
            pass

    return on_asyncio


def _no_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False
