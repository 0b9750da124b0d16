"""Where idempotency keys are kept (``idempotency_store=``): the protocol a store follows,
the Redis store of a fleet (the SQLite store of one machine is ``_sqlitestore``'s), and the
store a setting names. What the keys mean is ``pushwire._idempotency``'s."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import weakref
from typing import Any, Callable, Optional, Protocol, runtime_checkable

from pushwire._keywriter import FLUSH_WAIT, Later, Write
from pushwire._sqlitestore import SQLiteStore
from pushwire.errors import ValidationError

__all__ = [
    "IdempotencyStore",
    "RedisStore",
    "SQLiteStore",
    "compare_and_delete",
    "compare_and_set",
    "store_of",
]

_log = logging.getLogger("pushwire")


@runtime_checkable
class IdempotencyStore(Protocol):
    """Where keys are kept: four methods over text values, as a Django cache has them.

    ``add`` must be atomic across every process sharing the store: it stores ``value`` only
    if ``key`` holds nothing (or only an expired value), and says whether it did.

    A store may also have ``compare_and_set(key, expected, value, timeout) -> bool`` (stores
    ``value`` only if ``key`` holds ``expected``) and ``compare_and_delete(key, expected) ->
    bool`` (deletes ``key`` only if it holds ``expected``), each atomic as ``add`` is. Every
    change to a key after its claim goes through them, so that a call never overwrites or
    deletes a record that another call wrote since it read it. A store without them (a
    Django cache) gets a ``get`` then a ``set`` or ``delete``: another call's write between
    the two is lost."""

    def add(self, key: str, value: str, timeout: float) -> bool: ...

    def get(self, key: str) -> Optional[str]: ...

    def set(self, key: str, value: str, timeout: float) -> None: ...

    def delete(self, key: str) -> Any: ...


# The compare-and-set pair in Redis: each one script, run whole.
_COMPARE_AND_SET = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return 1
end
return 0
"""
# _COMPARE_AND_SET for each key: ARGV holds (expected, value, ms) for each in turn.
_COMPARE_AND_SET_EACH = """
local out = {}
for i = 1, #KEYS do
    local at = (i - 1) * 3
    if redis.call('GET', KEYS[i]) == ARGV[at + 1] then
        redis.call('SET', KEYS[i], ARGV[at + 2], 'PX', ARGV[at + 3])
        out[i] = 1
    else
        out[i] = 0
    end
end
return out
"""
_COMPARE_AND_DELETE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""
# What a Redis reports that it may lose, told once per process (a finding, its URL): the
# first to put a finding in tells it (one step, no lock a fork could copy taken).
_warned: dict[str, object] = {}


class RedisStore:
    """Keys in Redis, shared by a fleet of workers (redis-py; ``add`` is ``SET NX PX``, the
    compare-and-set pair a Lua script each). Its first ``add`` reads the server's settings
    and warns, once, where it may lose keys (an eviction policy, no append-only file)."""

    def __init__(self, url: str) -> None:
        try:
            import redis
        except ImportError:
            raise ValidationError(
                "a redis:// idempotency store needs the redis package: pip install redis",
                field="idempotency_store",
            ) from None
        self._redis = redis.Redis.from_url(url)
        self._pid = os.getpid()
        # Shown without its password.
        self._shown = _without_password(url)
        self._compare_and_set = self._redis.register_script(_COMPARE_AND_SET)
        self._compare_and_delete = self._redis.register_script(_COMPARE_AND_DELETE)
        self._set_each = self._redis.register_script(_COMPARE_AND_SET_EACH)
        self._no_script = redis.exceptions.NoScriptError
        self._connection_error = redis.exceptions.ConnectionError
        self._checked = False
        self._later = Later(self._write_batch)
        self._mine = threading.local()
        _redis_stores.add(self)

    def _client(self) -> Any:
        """This process's client. A forked child makes its own, on a pool of its own: redis-py's
        pool makes itself anew in a child, but under its locks, which a thread of the parent
        may have held at the fork (taking or giving back a connection), and which the child
        would then wait on for ever."""
        if self._pid != os.getpid():
            import redis

            pool = self._redis.connection_pool
            own = redis.ConnectionPool(
                connection_class=pool.connection_class,
                max_connections=pool.max_connections,
                **pool.connection_kwargs,
            )
            self._redis = redis.Redis(connection_pool=own)
            self._pid = os.getpid()
        return self._redis

    def add(self, key: str, value: str, timeout: float) -> bool:
        if not self._checked:
            self._checked = True
            self._warn_of_losses()
        return bool(self._command("SET", key, value, "NX", "PX", _ms(timeout)))

    def _command(self, *command: Any) -> Any:
        """``command``'s answer, on a connection of the calling thread's own, with redis-py's
        retries on a lost connection. The claim is on every keyed call's path, and a
        connection taken from the pool and given back for each costs a third of a loopback
        round trip more (its locks, its bookkeeping, its observability hooks). The
        connection is made outside the pool's count (a thread's own, never given back, would
        use up ``max_connections``); a forked child makes its own; one left with an answer
        unread (an exception between the command and its answer: a Ctrl-C, a signal
        handler's, a task's time limit) is closed, so that no later command reads it."""
        mine = self._mine
        connection: Any = getattr(mine, "connection", None)
        if connection is None or mine.pid != os.getpid():
            pool = self._client().connection_pool
            connection = mine.connection = pool.connection_class(**pool.connection_kwargs)
            mine.pid = os.getpid()

        def send() -> Any:
            try:
                connection.send_command(*command)
                return connection.read_response()
            except BaseException:
                connection.disconnect()
                raise

        try:
            return send()
        except self._connection_error:
            # Closed since its last use (a server's restart or timeout, a CLIENT KILL): made
            # again once, as the pool does for a connection it finds closed. A command whose
            # answer was lost is sent again: the claim knows its own record.
            pass
        return connection.retry.call_with_retry(send, lambda error: connection.disconnect())

    def get(self, key: str) -> Optional[str]:
        value = self._client().get(key)
        if value is None:
            return None
        return value if isinstance(value, str) else bytes(value).decode()

    def set(self, key: str, value: str, timeout: float) -> None:
        self._client().set(key, value, px=_ms(timeout))

    def delete(self, key: str) -> None:
        self._client().delete(key)

    def compare_and_set(self, key: str, expected: str, value: str, timeout: float) -> bool:
        return bool(self._run(self._compare_and_set, key, expected, value, _ms(timeout)))

    def compare_and_delete(self, key: str, expected: str) -> bool:
        return bool(self._run(self._compare_and_delete, key, expected))

    def _set_later(
        self,
        key: str,
        expected: str,
        value: str,
        timeout: float,
        refused: Callable[[], None],
    ) -> None:
        """``compare_and_set``, made by the store's writer thread with the others queued with
        it (one script call, one round trip for all); ``refused()`` runs on that thread for a
        write that did not take (the key changed, or the batch failed), to decide anew."""
        self._later.put(Write(key, expected, value, _ms(timeout), refused))

    def _queued(self, key: str) -> Optional[tuple[str, str]]:
        """The queued ``_set_later`` of ``key`` not yet written, as (the record it is to
        write over, the record it writes); else None."""
        return self._later.queued(key)

    def _flush(self) -> None:
        """Writes what ``_set_later`` queued, before returning (or, where the writer is held
        up, once ``FLUSH_WAIT`` seconds have passed: its keys read as pending meanwhile)."""
        self._later.flush(within=FLUSH_WAIT)

    def _write_batch(self, batch: list[Write]) -> None:
        """The batch's compare-and-sets in one script call: one command to build and send,
        however many records (a pipeline of one script call each costs the writer, and so
        the callers waiting for the interpreter, several times as much). A record whose key
        changed is decided anew (``refused``); a failure of the call itself is raised."""
        args: list[Any] = []
        for w in batch:
            args += (w.expected, w.value, w.ms)
        keys = [w.key for w in batch]
        client = self._client()
        try:
            answers = client.evalsha(self._set_each.sha, len(keys), *keys, *args)
        except self._no_script:
            answers = self._set_each(keys=keys, args=args, client=client)
        for w, answer in zip(batch, answers):
            if answer != 1:
                w.refused()

    def _run(self, script: Any, key: str, *args: Any) -> Any:
        """``script`` run on ``key`` by its digest (``EVALSHA``: redis-py's ``Script`` call
        costs a tenth of a round trip more), or through ``Script``, which sends it whole,
        where the server does not know it (``NOSCRIPT``: a restart, a ``SCRIPT FLUSH``)."""
        client = self._client()
        try:
            return client.evalsha(script.sha, 1, key, *args)
        except self._no_script:
            return script(keys=[key], args=args, client=client)

    def _warn_of_losses(self) -> None:
        """Warns, once per process for each finding, where this Redis may lose a key and so
        send its call again: a ``maxmemory-policy`` that evicts (every ``allkeys-*``, and
        ``volatile-*``, since each key has a TTL), or no append-only file (a restart loses
        what was written since the last snapshot, or everything without snapshots). A server
        that refuses ``CONFIG GET`` or ``INFO`` (a managed Redis) is not checked."""
        found = []
        policy = self._read(lambda: self._client().config_get("maxmemory-policy"))
        if isinstance(policy, dict):
            name = _text(policy.get("maxmemory-policy", policy.get(b"maxmemory-policy")))
            if name and name != "noeviction":
                found.append(
                    f"its maxmemory-policy is {name}, which evicts keys under memory pressure "
                    "(an evicted key sends its call again): set maxmemory-policy noeviction"
                )
        persistence = self._read(lambda: self._client().info("persistence"))
        if isinstance(persistence, dict) and str(persistence.get("aof_enabled", "1")) == "0":
            found.append(
                "it keeps no append-only file, so a restart loses the keys written since its "
                "last snapshot (all of them without snapshots) and sends their calls again: "
                "set appendonly yes"
            )
        if not found:
            return
        message = f"idempotency store {self._shown}: {'; '.join(found)}"
        me = object()
        if _warned.setdefault(message, me) is me:
            _log.warning("%s", message)

    @staticmethod
    def _read(read: Callable[[], Any]) -> Any:
        try:
            return read()
        except Exception as e:
            _log.debug("idempotency store: its settings could not be read (%s)", e)
            return None

    def __repr__(self) -> str:
        return f"RedisStore({self._shown!r})"


_redis_stores: weakref.WeakSet[RedisStore] = weakref.WeakSet()


def _parents_clients_close_no_pool() -> None:
    """In a forked child: the parent's clients, freed there with their stores (or when
    ``_client`` replaces them), close no pool: closing one takes its locks, which a thread
    of the parent may have held at the fork."""
    for store in list(_redis_stores):
        store._redis.auto_close_connection_pool = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_parents_clients_close_no_pool)


def _ms(timeout: float) -> int:
    return max(1, int(timeout * 1000))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def compare_and_set(
    store: IdempotencyStore, key: str, expected: str, value: str, timeout: float
) -> bool:
    """``store.compare_and_set``, or where the store has none, a ``get`` then a ``set``:
    another call's write between the two is lost (the protocol's documented limit)."""
    atomic = getattr(store, "compare_and_set", None)
    if atomic is not None:
        return bool(atomic(key, expected, value, timeout))
    if store.get(key) != expected:
        return False
    store.set(key, value, timeout)
    return True


def compare_and_delete(store: IdempotencyStore, key: str, expected: str) -> bool:
    """``store.compare_and_delete``, or a ``get`` then a ``delete``, as
    :func:`compare_and_set`."""
    atomic = getattr(store, "compare_and_delete", None)
    if atomic is not None:
        return bool(atomic(key, expected))
    if store.get(key) != expected:
        return False
    store.delete(key)
    return True


def _without_password(url: str) -> str:
    """``url`` as a repr or an error may show it: nothing before its last ``@`` but its
    scheme (credentials, however mistyped the scheme), no query (which may carry a
    ``password=``)."""
    url = url.split("?", 1)[0]
    at = url.rfind("@")
    if at < 0:
        return url
    scheme, sep, _ = url.partition("://")
    shown = f"{scheme}{sep}" if sep and len(scheme) < at else ""
    return f"{shown}[redacted]{url[at:]}"


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
