"""Where idempotency keys are kept (``idempotency_store=``): the protocol a store follows,
the SQLite store of one machine and the Redis store of a fleet, and the store a setting
names. What the keys mean is ``pushwire._idempotency``'s."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import Any, Optional, Protocol, Union, runtime_checkable

from pushwire.errors import ValidationError

__all__ = ["IdempotencyStore", "RedisStore", "SQLiteStore", "store_of"]


@runtime_checkable
class IdempotencyStore(Protocol):
    """Where keys are kept: four methods over text values, as a Django cache has them.

    ``add`` must be atomic across every process sharing the store: it stores ``value`` only
    if ``key`` holds nothing (or only an expired value), and says whether it did."""

    def add(self, key: str, value: str, timeout: float) -> bool: ...

    def get(self, key: str) -> Optional[str]: ...

    def set(self, key: str, value: str, timeout: float) -> None: ...

    def delete(self, key: str) -> Any: ...


class SQLiteStore:
    """Keys in a SQLite file, shared by every process of one machine (WAL mode; ``add`` one
    write transaction, an insert that only an expired row gives way to). One connection per
    thread and process."""

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None:
        self.path = os.fspath(path)
        self._local = threading.local()
        self._adds = 0
        self._connection()  # a path that cannot be used fails here, not at the first call

    def _connection(self) -> sqlite3.Connection:
        conn: Optional[sqlite3.Connection] = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            conn = _set_up(self.path)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def add(self, key: str, value: str, timeout: float) -> bool:
        now = time.time()
        conn = self._connection()
        # One write transaction, taken at once (IMMEDIATE): no other process's add comes
        # between the expired row's removal and the insert. (An UPSERT would be one
        # statement, but needs SQLite 3.24, newer than some systems' Python links.)
        conn.execute("BEGIN IMMEDIATE")
        try:
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
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return inserted == 1

    def get(self, key: str) -> Optional[str]:
        row = (
            self._connection()
            .execute(
                "SELECT value FROM pushwire_idempotency WHERE key = ? AND expires > ?",
                (key, time.time()),
            )
            .fetchone()
        )
        return None if row is None else str(row[0])

    def set(self, key: str, value: str, timeout: float) -> None:
        self._connection().execute(
            "INSERT OR REPLACE INTO pushwire_idempotency VALUES (?, ?, ?)",
            (key, value, time.time() + timeout),
        )

    def delete(self, key: str) -> None:
        self._connection().execute("DELETE FROM pushwire_idempotency WHERE key = ?", (key,))

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"


# How long a connection waits for another's lock on the file.
_BUSY_TIMEOUT = 30.0


def _set_up(path: str) -> sqlite3.Connection:
    """A connection to the store's file, the file in WAL mode and its table made.

    Processes that open a new file at once each read it and then write its first pages
    (the switch to WAL, the table). Two readers that both ask to write cannot both wait for
    the other, so SQLite answers one of them "database is locked" at once rather than after
    its busy timeout; that one sets up again, by then against the other's file, until the
    same timeout."""
    deadline = time.monotonic() + _BUSY_TIMEOUT
    while True:
        conn = sqlite3.connect(path, timeout=_BUSY_TIMEOUT, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # Committed to the WAL without waiting for the disk: a crash of the machine may
            # lose the last records, a crash of the process none.
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


class RedisStore:
    """Keys in Redis, shared by a fleet of workers (redis-py; ``add`` is ``SET NX PX``)."""

    def __init__(self, url: str) -> None:
        try:
            import redis
        except ImportError:
            raise ValidationError(
                "a redis:// idempotency store needs the redis package: pip install redis",
                field="idempotency_store",
            ) from None
        self._redis = redis.Redis.from_url(url)
        # Shown without its password.
        self._shown = _without_password(url)

    def add(self, key: str, value: str, timeout: float) -> bool:
        return bool(self._redis.set(key, value, nx=True, px=max(1, int(timeout * 1000))))

    def get(self, key: str) -> Optional[str]:
        value = self._redis.get(key)
        if value is None:
            return None
        return value if isinstance(value, str) else bytes(value).decode()

    def set(self, key: str, value: str, timeout: float) -> None:
        self._redis.set(key, value, px=max(1, int(timeout * 1000)))

    def delete(self, key: str) -> None:
        self._redis.delete(key)

    def __repr__(self) -> str:
        return f"RedisStore({self._shown!r})"


def _without_password(url: str) -> str:
    """``url`` as a repr or an error may show it: no credentials, no query (which may carry
    a ``password=``)."""
    url = url.split("?", 1)[0]
    scheme, sep, rest = url.partition("://")
    at = rest.rfind("@")
    return f"{scheme}{sep}[redacted]{rest[at:]}" if at >= 0 else url


def store_of(spec: Any) -> IdempotencyStore:
    """The store ``idempotency_store=`` (or ``PUSHWIRE_IDEMPOTENCY_STORE``) names:
    ``sqlite:///path`` (``sqlite:////abs/path``), ``redis://...``, or an object with
    ``add``, ``get``, ``set`` and ``delete``."""
    if isinstance(spec, str):
        if spec.startswith("sqlite:///"):
            path = spec[len("sqlite:///") :]
            if path == ":memory:" or "mode=memory" in path:
                raise ValidationError(
                    "idempotency_store must be shared by the calls it guards, and an in-memory "
                    "SQLite database is one connection's own: give a file's path",
                    field="idempotency_store",
                )
            if not path:
                raise ValidationError(
                    "idempotency_store sqlite:/// needs a file's path", field="idempotency_store"
                )
            try:
                return SQLiteStore(path)
            except sqlite3.Error as e:
                raise ValidationError(
                    f"idempotency_store {spec!r} cannot be used: {e}", field="idempotency_store"
                ) from None
        if spec.startswith(("redis://", "rediss://", "unix://")):
            return RedisStore(spec)
        raise ValidationError(
            "idempotency_store must be sqlite:///path, redis://host:port/db or an object with "
            f"add, get, set and delete, not {_without_password(spec)!r}",
            field="idempotency_store",
        )
    if isinstance(spec, IdempotencyStore):
        return spec
    raise ValidationError(
        f"idempotency_store must be a URL or an object with add, get, set and delete, not "
        f"{type(spec).__name__}",
        field="idempotency_store",
    )
