"""The Redis store's writer: the records of successful keyed calls, queued by the calls and
written from a thread of its own in batches, so that a call waits for one round trip (its
claim), not two. ``pushwire._keystores``'s ``RedisStore`` owns one; what a key means is
``pushwire._idempotency``'s."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import queue
import threading
import time
import weakref
from typing import Callable, NamedTuple, Optional

_log = logging.getLogger("pushwire")


def _started(run: Callable[[], None], name: str) -> threading.Thread:
    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


class Write(NamedTuple):
    key: str
    expected: str
    value: str
    ms: int
    refused: Callable[[], None]


class Later:
    """Writes queued by a caller that need not wait for them, made from a thread of their
    own in batches: a call's record after its send costs it no round trip. Everything
    queued is written at :meth:`flush`, at the interpreter's exit (a ``multiprocessing``
    child's too), and by the thread as soon as it can; a forked child leaves its parent's
    queue to the parent. A process that dies in between (``kill -9``, ``os._exit``) loses
    what was queued: those keys stay claimed, then read as unknown, which sends nothing
    twice.

    A caller only puts into a ``SimpleQueue`` and a dict (each one step, in C): no lock
    of Python's is held on its side while Python code runs, so a signal handler that raises
    cannot leave one taken."""

    def __init__(self, write: Callable[[list[Write]], None]) -> None:
        self._write = write
        self._inbox: queue.SimpleQueue[Write] = queue.SimpleQueue()
        # Each key's write until it is written: what :meth:`queued` reads.
        self._pending: dict[str, Write] = {}
        self._thread: Optional[threading.Thread] = None
        self._starting = threading.Lock()
        _every_later.add(self)

    def put(self, write: Write) -> None:
        self._pending[write.key] = write
        self._inbox.put(write)
        if self._thread is None:
            with self._starting:
                if self._thread is None:
                    self._thread = _started(self._run, "pushwire-idempotency-writer")

    def queued(self, key: str) -> Optional[tuple[str, str]]:
        """``key``'s write until it is written: (what it is to write over, what it writes)."""
        write = self._pending.get(key)
        return None if write is None else (write.expected, write.value)

    def flush(self, within: Optional[float] = None) -> None:
        """Writes what is queued, and waits for the writer's batch under way (at most
        ``within`` seconds, then leaves the rest to the writer)."""
        deadline = None if within is None else time.monotonic() + within
        self._write_all(self._taken())
        while self._pending and (deadline is None or time.monotonic() < deadline):
            if self._thread is None:  # no writer left to write them: this thread does
                self._write_all(list(self._pending.values()))
                break
            time.sleep(0.001)

    def _taken(self) -> list[Write]:
        taken = []
        while True:
            try:
                taken.append(self._inbox.get_nowait())
            except queue.Empty:
                return taken

    def _write_all(self, writes: list[Write]) -> None:
        """Writes ``writes``, at most ``_MOST`` a script call (a script holds the server while
        it runs). A batch that fails as a whole (the server gone) is tried once more, then
        left: its keys stay claimed and read as unknown, and one warning says so."""
        for at in range(0, len(writes), _MOST):
            batch = writes[at : at + _MOST]
            for attempt in range(2):
                try:
                    self._write(batch)
                    break
                except Exception as e:
                    if attempt:
                        _log.warning(
                            "idempotency store: %d records of successful calls not written "
                            "(%s: %s); their keys read as unknown once their claims run out",
                            len(batch),
                            type(e).__name__,
                            e,
                        )
            for w in batch:
                # A flush and the writer may both end a key's write: whichever is second
                # finds it gone (two steps, not one, without the GIL).
                if self._pending.get(w.key) is w:
                    with contextlib.suppress(KeyError):
                        del self._pending[w.key]

    def _run(self) -> None:
        try:
            while self._next():
                pass
        except BaseException:
            with self._starting:
                self._thread = None  # the next put starts another
            raise

    def _next(self) -> bool:
        """Writes the next batch; False once idle, the thread given up."""
        try:
            first = self._inbox.get(timeout=_IDLE)
        except queue.Empty:
            with self._starting:
                # Idle: the thread ends (a fork made meanwhile copies one thread fewer).
                # Given up before the queue is looked at: a put that saw this thread still
                # there had queued its write already, and a put after starts another.
                me, self._thread = self._thread, None
                if self._inbox.empty():
                    return False
                self._thread = me
            return True
        time.sleep(_LINGER)
        self._write_all([first, *self._taken()])
        return True

    def _forget(self) -> None:
        """In a forked child: the parent writes what it queued; the child starts afresh."""
        self._inbox = queue.SimpleQueue()
        self._pending = {}
        self._starting = threading.Lock()
        self._thread = None


# How long the writer lets records gather before it writes them: the writer's own work
# takes the interpreter from the callers, and one script call for a batch costs little more
# than for one record. 10 ms makes a batch of tens of sequential calls; it is also the
# window in which a process killed after its call leaves the key pending, to read as
# unknown (never sent twice), rather than done.
_LINGER = 0.010
# Seconds a flush (a close, a status, the interpreter's exit) waits for the records the
# writer is writing: one whose thread is held up (its server frozen, or a lock another
# thread took and never gave back) must not hold the caller or the exit for ever.
FLUSH_WAIT = _EXIT_WAIT = 10.0
# Records a script call writes at most.
_MOST = 500
# Seconds the writer waits for work before its thread ends.
_IDLE = 1.0
_every_later: weakref.WeakSet[Later] = weakref.WeakSet()


def _flush_every_later() -> None:
    for later in list(_every_later):
        later.flush(within=_EXIT_WAIT)


def _forget_every_later() -> None:
    for later in list(_every_later):
        later._forget()


atexit.register(_flush_every_later)
# A multiprocessing child ends with os._exit, after threading's own exit handlers: those
# write its records too (the interpreter's exit, later, finds nothing left).
_register_threading_exit = getattr(threading, "_register_atexit", None)
if _register_threading_exit is not None:
    _register_threading_exit(_flush_every_later)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_every_later)
