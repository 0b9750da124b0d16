"""The SQLite idempotency store: the keys of one machine's processes in one file, safe
across a fork. What the keys mean is ``pushwire._idempotency``'s; the protocol a store
follows and the store a setting names, ``pushwire._keystores``'s."""

from __future__ import annotations

import contextlib
import gc
import os
import sqlite3
import sys
import threading
import time
import weakref
from typing import Any, Callable, Optional, Union

__all__ = ["SQLiteStore"]


class _Forks:
    """Holds a fork back while another thread of this process is inside a SQLite statement
    or transaction on a store's file; in the child, closes the copies of the connections
    that were idle at the fork, and keeps the others unused and unclosed.

    SQLite keeps the locks its connections hold on a file in the process's memory, which a
    child copies (SQLite's documentation: no connection may cross a fork). A child forked
    while another thread was between ``BEGIN IMMEDIATE`` and ``COMMIT`` (a claim) finds the
    file's write lock taken by a connection nobody in it will ever close, and each claim of
    its own answers "database is locked"; one forked while a connection was being opened or
    closed finds SQLite's own mutexes taken; a connection the child opens beside a copy
    shares the copy's record of the locks, so takes none of its own from the system, and
    another process's checkpoint may delete the write-ahead log under it, its claims lost.
    Closing a copy that was in use is no better: its rollback rewrites the log's index,
    which every process shares, from what the parent knew at the fork.

    So a fork waits (polling each millisecond, up to the busy timeout, the longest a
    statement of the store's waits on another's lock) until no other live thread is inside.
    A fork made from inside a statement on its own thread (a signal handler's), or that gave
    up waiting, leaves copies in use: the child keeps them, never closed, and its stores of
    those files refuse to work rather than risk a key claimed twice.

    A child forked from inside a statement goes on with it when the handler returns, past
    any check the statement made in Python: with a connection it was opening and had not
    recorded yet, or between a claim's last check and its ``COMMIT``. SQLite itself stops it
    there: the child finds every connection its thread opened (``_Connection``, by the
    collector, recorded or not) and gives each an authorizer that denies every statement,
    ``COMMIT`` included (setting one expires the statements already prepared), and each
    connection opened in it later gets the same at once. The other threads' copies are left
    alone: one may hold a mutex of SQLite's, which setting an authorizer would wait on forever.

    Neither side takes a lock of Python's (a signal handler that raises inside a lock's
    ``with`` can leave it taken, and every later statement and fork waiting on it): each
    thread's outermost statement puts a weak reference to its mark, a memoryview, in a dict
    (``_statement``). The ``with`` statement's own exit releases the mark: memoryview's
    ``__exit__`` is C, so no line of Python runs between the block's end and the release for
    a signal handler to raise in (a Python ``__exit__`` interrupted at its first line kept
    its ``self``, the mark, alive in the traceback's frame for as long as the caller kept the
    exception). A mark released or dead is no statement's: one that an exception kept from
    its ``with`` lives only on that frame's stack, which the exception empties."""

    def __init__(self) -> None:
        self._inside: dict[int, weakref.ref[memoryview]] = {}
        # The threads forking, once per fork under way: a signal handler's fork made inside
        # another's `before` ends first, and must leave the other in.
        self._forking: list[int] = []
        # At this process's last fork: its pid, and the threads then inside a statement;
        # None from the start of each fork until its first look (so a fork whose look an
        # exception cut short leaves its child taking every copy for one in use).
        self._at_fork: tuple[int, Optional[frozenset[int]]] = (os.getpid(), None)

    def inside(self, thread: int) -> bool:
        return _live(self._inside.get(thread))

    def _others_inside(self, me: int) -> set[int]:
        # A copy: taken under the dict's own lock on a free-threaded build (see _statement).
        inside = {t for t, held in self._inside.copy().items() if _live(held)}
        return (inside - {me}) & sys._current_frames().keys()

    def _forget_ended(self) -> None:
        """The marks of statements that ended dropped (a thread's last mark stays in the dict
        until then). Only once this fork is in ``_forking``: a thread that puts a mark in
        meanwhile under an ended one's thread id steps out at once, so no mark of a statement
        under way is dropped."""
        for thread, held in self._inside.copy().items():
            if not _live(held):
                self._inside.pop(thread, None)

    def before(self) -> None:
        # os.fork forks even when this raises (a signal handler's exception in the wait):
        # what the child reads of it is each look's as it is made, never an older fork's.
        self._at_fork = (os.getpid(), None)
        me = threading.get_ident()
        self._forking.append(me)
        self._forget_ended()
        others = self._others_inside(me)
        if self.inside(me):  # a fork from inside a statement cannot wait for it to end
            others.add(me)
        self._at_fork = (os.getpid(), frozenset(others))
        if me not in others:
            deadline = time.monotonic() + _BUSY_TIMEOUT
            while others and time.monotonic() < deadline:
                time.sleep(_LOOK_AGAIN)
                others = self._others_inside(me)
                self._at_fork = (os.getpid(), frozenset(others))

    def after_in_parent(self) -> None:
        with contextlib.suppress(ValueError):  # `before` cut short before it was in
            self._forking.remove(threading.get_ident())

    def after_in_child(self) -> None:
        forked_from, threads = self._at_fork
        me = threading.get_ident()
        self._inside, self._forking = {}, []
        if threads is None or me in threads:
            # First, so that the refusal holds even if what follows is cut short: every
            # store refuses, and every statement on a connection of one (`_Connection`).
            _unusable.update(store.path for store in list(_sqlite_stores))
            for obj in gc.get_objects():
                # One still being made by another thread reads the class's (0, 0); this
                # thread's, if it was the one being made, is refused by its `__init__`.
                if isinstance(obj, _Connection) and obj.opener == (forked_from, me):
                    obj.refuse()
        for store in list(_sqlite_stores):
            opened = store._local.__dict__.pop("opened", None)
            if opened is not None:
                opened.close()

    def in_use_at_fork(self, pid: int, thread: int) -> bool:
        """Whether a connection of ``thread`` in process ``pid`` was in use when this process
        was forked from it."""
        forked_from, threads = self._at_fork
        in_use = threads is None or thread in threads
        return pid != os.getpid() and pid == forked_from and in_use


def _statement() -> memoryview:
    """``with _statement():`` around each use of a store's connection: the statement's mark,
    which the ``with`` releases as it ends (see ``_Forks``)."""
    mark = memoryview(b"")
    me = threading.get_ident()
    if _forks.inside(me):  # nested: the outermost statement of the thread holds the mark
        return mark
    try:
        _forks._inside[me] = weakref.ref(mark)
        # Marked before looking: a fork begun meanwhile sees this thread and waits for it,
        # or this thread sees the fork and steps out until it is made. The dict's own lock
        # orders the two on a free-threaded build too (it orders this store and the fork's
        # `_others_inside` copy of it; whichever comes second sees the other side's earlier
        # write), so no store and load here can pass each other.
        while _forks._forking and me not in _forks._forking:
            _forks._inside.pop(me, None)
            time.sleep(_LOOK_AGAIN)
            _forks._inside[me] = weakref.ref(mark)
        return mark  # inside the try: an exception as it returns drops the mark
    except BaseException:
        _forks._inside.pop(me, None)
        raise


def _live(held: Optional[weakref.ref[memoryview]]) -> bool:
    """Whether ``held`` is the mark of a statement under way: alive and not released."""
    mark = None if held is None else held()
    if mark is None:
        return False
    try:
        mark.ndim  # noqa: B018  (raises once the mark is released)
    except ValueError:
        return False
    return True


_LOOK_AGAIN = 0.001
_forks = _Forks()
_sqlite_stores: weakref.WeakSet[SQLiteStore] = weakref.WeakSet()
# Copies in use at a fork, kept open in the child and never used: closing one rolls it back.
_kept: list[sqlite3.Connection] = []
# The files whose copies were kept. Once there is one, every store refuses to work in this
# process: a file has other names (a link, another spelling of its path), and a connection
# opened to it under any of them shares the kept copy's record of the locks.
_unusable: set[str] = set()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_forks.before,
        after_in_parent=_forks.after_in_parent,
        after_in_child=_forks.after_in_child,
    )


def _deny(*_: object) -> int:
    return sqlite3.SQLITE_DENY


class _Connection(sqlite3.Connection):
    """A store's connection, tagged with the process and thread that open it before SQLite
    opens the file (in ``__new__``): a child forked from inside a statement finds its own
    thread's by the tag (see ``_Forks``)."""

    # What a connection reads until `__new__` has set its own (a fork can come between).
    opener: tuple[int, int] = (0, 0)
    path: str = ""
    refused: bool = False

    def __new__(cls, database: str, *args: Any, **kwargs: Any) -> _Connection:
        self = super().__new__(cls)
        self.opener = (os.getpid(), threading.get_ident())
        self.path = database
        self.refused = False
        return self

    def __init__(self, database: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(database, *args, **kwargs)
        if _unusable:  # opened in a child that refuses: by a statement it went on with
            self.refuse()

    def refuse(self) -> None:
        """Every statement denied from now on, and never closed (see ``_Forks``)."""
        self.refused = True
        _kept.append(self)
        _unusable.add(self.path)
        # Not yet opened (the fork came before SQLite opened the file): `__init__` will.
        with contextlib.suppress(sqlite3.ProgrammingError):
            self.set_authorizer(_deny)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        # Says why; SQLite's authorizer is what stops a statement already past this check.
        if self.refused or _unusable:
            raise _refused(self.path)
        return super().execute(sql, parameters)

    def close(self) -> None:
        if not self.refused:
            super().close()


class _Opened:
    """A thread's connection to a store's file, closed inside the fork guard, whether by the
    thread's end (its thread-local cleared), the store's, or a fork's child (which keeps it,
    unclosed, if it was in use at the fork)."""

    __slots__ = ("conn", "path", "pid", "thread")

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self.conn: Optional[sqlite3.Connection] = conn
        self.path = path
        self.pid = os.getpid()
        self.thread = threading.get_ident()

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        if _forks.in_use_at_fork(self.pid, self.thread):
            _kept.append(conn)
            _unusable.add(self.path)
            return
        with _statement():
            conn.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # the interpreter's exit: its globals gone
            self.close()


def _refused(path: str) -> sqlite3.OperationalError:
    kept = ", ".join(sorted(_unusable))
    return sqlite3.OperationalError(
        f"idempotency store {path}: this process was forked while a statement on {kept} was "
        "under way (a fork from a signal handler inside one, or one that gave up waiting "
        f"{_BUSY_TIMEOUT:g} s for it); the connection it copied cannot be used or closed "
        "safely, so no SQLite store works in this process: fork outside the store's calls"
    )


class SQLiteStore:
    """Keys in a SQLite file, shared by every process of one machine (WAL mode; ``add`` one
    write transaction, an insert that only an expired row gives way to). One connection per
    thread and process; a fork waits for the statements under way (``_Forks``)."""

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None:
        # Absolute: a thread or child opening it after a chdir (a daemon's) opens this file.
        self.path = os.path.abspath(os.fspath(path))
        self._local = threading.local()
        self._adds = 0
        _sqlite_stores.add(self)
        with _statement():
            self._connection()  # a path that cannot be used fails here, not at the first call

    def _connection(self) -> sqlite3.Connection:
        opened: Optional[_Opened] = getattr(self._local, "opened", None)
        if _unusable:
            raise _refused(self.path)
        if opened is None or opened.conn is None or opened.pid != os.getpid():
            opened = self._local.opened = _Opened(_set_up(self.path), self.path)
        conn = opened.conn
        if conn is None:  # taken from it by a fork (a signal handler's) since the look above
            raise _refused(self.path)
        return conn

    def add(self, key: str, value: str, timeout: float) -> bool:
        return SQLiteStore.add_made(self, key, lambda: value, timeout)[0]

    def add_made(self, key: str, make: Callable[[], str], timeout: float) -> tuple[bool, str]:
        """``add`` of the value ``make()`` gives once this call holds the file's write lock
        (which another process may hold for up to the busy timeout): a value naming a time
        from now (a claim's lease) names it from the moment it is stored. Whether it was
        stored, and the value."""
        with _statement():
            return self._add_made(key, make, timeout)

    def _add_made(self, key: str, make: Callable[[], str], timeout: float) -> tuple[bool, str]:
        conn = self._connection()
        pid = os.getpid()
        # One write transaction, taken at once (IMMEDIATE): no other process's add comes
        # between the expired row's removal and the insert. (An UPSERT would be one
        # statement, but needs SQLite 3.24, newer than some systems' Python links.)
        if conn.in_transaction:  # left by a call a second exception cut short in its rollback
            conn.execute("ROLLBACK")
        try:
            # Inside the try: an exception raised as it returns (a signal's) rolls it back.
            conn.execute("BEGIN IMMEDIATE")
            # Read once the lock is held: the wait for it is not taken from the value's time.
            now = time.time()
            value = make()
            conn.execute(
                "DELETE FROM pushwire_idempotency WHERE key = ? AND expires <= ?", (key, now)
            )
            inserted = conn.execute(
                "INSERT OR IGNORE INTO pushwire_idempotency VALUES (?, ?, ?)",
                (key, value, now + timeout),
            ).rowcount
            self._adds += 1
            if self._adds % 1000 == 0:
                conn.execute("DELETE FROM pushwire_idempotency WHERE expires <= ?", (now,))
            if os.getpid() != pid:  # forked from inside this claim: the copy is the parent's
                raise _refused(self.path)
            conn.execute("COMMIT")
        except BaseException:
            if os.getpid() == pid and conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return inserted == 1, value

    def _run(self, sql: str, *args: Any) -> sqlite3.Cursor:
        """``sql`` run on this thread's connection, its cursor read before a fork is let by
        (a statement left unfinished holds its read lock)."""
        return self._connection().execute(sql, args)

    def get(self, key: str) -> Optional[str]:
        with _statement():
            row = self._run(
                "SELECT value FROM pushwire_idempotency WHERE key = ? AND expires > ?",
                key,
                time.time(),
            ).fetchone()
        return None if row is None else str(row[0])

    def set(self, key: str, value: str, timeout: float) -> None:
        with _statement():
            self._run(
                "INSERT OR REPLACE INTO pushwire_idempotency VALUES (?, ?, ?)",
                key,
                value,
                time.time() + timeout,
            )

    def delete(self, key: str) -> None:
        with _statement():
            self._run("DELETE FROM pushwire_idempotency WHERE key = ?", key)

    def compare_and_set(self, key: str, expected: str, value: str, timeout: float) -> bool:
        now = time.time()
        with _statement():
            changed = self._run(
                "UPDATE pushwire_idempotency SET value = ?, expires = ? "
                "WHERE key = ? AND value = ? AND expires > ?",
                value,
                now + timeout,
                key,
                expected,
                now,
            ).rowcount
        return bool(changed == 1)

    def compare_and_delete(self, key: str, expected: str) -> bool:
        with _statement():
            deleted = self._run(
                "DELETE FROM pushwire_idempotency WHERE key = ? AND value = ? AND expires > ?",
                key,
                expected,
                time.time(),
            ).rowcount
        return bool(deleted == 1)

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"


# How long a connection waits for another's lock on the file.
_BUSY_TIMEOUT = 30.0


# The rest of each connection's settings: autocommit (the store begins its own
# transactions), usable from the thread that closes it, and tagged (``_Connection``).
_CONNECT: dict[str, Any] = {
    "isolation_level": None,
    "check_same_thread": False,
    "factory": _Connection,
}


def _set_up(path: str) -> sqlite3.Connection:
    """A connection to the store's file, the file in WAL mode and its table made.

    Processes that open a new file at once each read it and then write its first pages
    (the switch to WAL, the table). Two readers that both ask to write cannot both wait for
    the other, so SQLite answers one of them "database is locked" at once rather than after
    its busy timeout; that one sets up again, by then against the other's file, until the
    same timeout."""
    deadline = time.monotonic() + _BUSY_TIMEOUT
    while True:
        # Closed by whichever thread drops it (``_Opened``); only its own thread uses it.
        conn: sqlite3.Connection = sqlite3.connect(path, timeout=_BUSY_TIMEOUT, **_CONNECT)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # Committed to the WAL without waiting for the disk (an fsync a claim, about 1 ms,
            # the whole of a key's budget): a crash of the process loses nothing; a power
            # loss or a crash of the system may roll back the writes since the WAL's last
            # checkpoint, claims included (docs/exactly-once.md says so).
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS pushwire_idempotency "
                "(key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL NOT NULL)"
            )
            return conn
        except sqlite3.OperationalError as e:
            conn.close()
            if "locked" not in str(e) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
