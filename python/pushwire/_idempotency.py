"""Idempotency keys: a call with an effect sent once per key, however often the code around
it runs (a Celery task redelivered, a cron job restarted, a request retried, a double click).

The service keeps no key, so the client keeps them, in a store its processes share
(:class:`IdempotencyStore`: SQLite for one machine, Redis for a fleet, or any object with
the four methods, a Django cache among them). Each key holds one record, JSON text:

- ``pending``: a call claimed the key (an atomic ``add``) and is sending; it holds a lease,
  the longest its call can take. A second call waits for it, within its own timeout.
- ``done``: the call succeeded; its result is kept and returned to every later call with the
  same key and the same arguments, which sends nothing.
- ``unknown``: the call failed once the service may have acted (``outcome_unknown``), or its
  holder died (its lease ran out): later calls are refused, never resent, until
  ``client.idempotency.resolve(key, ...)`` settles it.

A failure known to have done nothing (a refusal, a refused connect, bad input) deletes the
record: the key is free again. A record names its operation and a SHA-256 fingerprint of the
call's arguments (never the arguments, never the API key); the same key with other arguments
is refused. Keys live ``ttl`` seconds (7 days by default), and are stored hashed under a hash
of the API key, so that two sites' keys never meet.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as _dt
import enum
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Iterator, Mapping
from typing import Any, Callable, Optional, TypeVar

from pushwire._args import _given
from pushwire._keystores import IdempotencyStore
from pushwire.errors import IdempotencyError, ValidationError

__all__ = ["Idempotency", "Keys"]

T = TypeVar("T")

_log = logging.getLogger("pushwire")

DEFAULT_TTL = 7 * 24 * 3600.0
# Beyond a call's own timeout, how long its claim is held before a waiting call takes its
# holder for dead: the time to record the outcome.
_LEASE_MARGIN = 5.0
# How often a call waiting for a key held elsewhere looks again: soon, then less often.
_FIRST_PAUSE, _LONGEST_PAUSE = 0.005, 0.1


class Outcome(enum.Enum):
    """What a keyed call did, as its span tells it (``pushwire.idempotency.outcome``)."""

    NEW = "new"
    REPLAYED = "replayed"
    UNKNOWN = "unknown"


@dataclasses.dataclass
class _Claim:
    """A key's state as a call found it: claimed by this call (``new``), or done (with the
    result to return), or held by a live call elsewhere (``waiting``)."""

    new: bool = False
    done: bool = False
    result: Any = None
    waiting: bool = False


def fingerprint(op: str, args: Any) -> str:
    """A SHA-256 of the call's arguments in a canonical JSON: every process gives the same
    arguments the same one (dict keys sorted as text, sets sorted, models as their dicts,
    times in ISO 8601, numpy's scalars as Python's)."""
    text = json.dumps([op, _canonical(args)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _canonical(to_dict())
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    item = getattr(value, "item", None)  # a numpy scalar
    if callable(item) and not hasattr(value, "__len__"):
        return _canonical(item())
    if hasattr(value, "__iter__"):
        return [_canonical(v) for v in value]
    return f"{type(value).__qualname__}:{value}"


def settled(value: Any) -> Any:
    """``value`` with every one-shot iterable in it (a generator, a ``map``) made a list, so
    that its fingerprint and the call read the same items: models, text, bytes, numbers and
    sets as they are, dicts and lists item by item."""
    simple = (str, bytes, bytearray, int, float, type(None), set, frozenset)
    if isinstance(value, simple) or hasattr(value, "to_dict"):
        return value
    if isinstance(value, Mapping):
        return {k: settled(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(settled(v) for v in value)
    if isinstance(value, list) or (hasattr(value, "__iter__") and not hasattr(value, "__len__")):
        return [settled(v) for v in value]
    return value


def event_fingerprint_args(event: Mapping[str, Any]) -> dict[str, Any]:
    """An event as ``events.track`` and ``track_many`` both fingerprint it: its fields but
    the key, those left out (``None``) dropped, so that one key serves either call."""
    return {k: v for k, v in event.items() if k != "idempotency_key" and v is not None}


class Keys:
    """A client's idempotency: its store, its keys' namespace (a hash of its API key) and
    their time to live. Shared by the clients ``with_options`` makes from it."""

    def __init__(self, store: IdempotencyStore, api_key: str, ttl: float) -> None:
        self.store = store
        self.ttl = ttl
        self._namespace = hashlib.sha256(api_key.encode()).hexdigest()[:16]

    def _stored(self, key: str) -> str:
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        return f"pushwire:idem:{self._namespace}:{digest}"

    # -- a call's claim ---------------------------------------------------------------------
    def claim(self, key: str, op: str, fp: str, lease: float) -> _Claim:
        """Claims ``key`` for a call (``new``), or says what holds it; refuses a key held for
        other arguments, or one whose outcome is unknown."""
        _check_key(key)
        record = {"v": 1, "state": "pending", "op": op, "fp": fp, "lease": time.time() + lease}
        stored = self._stored(key)
        # Held at least as long as the call may run, whatever the TTL: a claim that expired
        # mid-call would let a second call send.
        held = max(self.ttl, lease)
        for _ in range(3):
            if self.store.add(stored, json.dumps(record), held):
                return _Claim(new=True)
            found = self.store.get(stored)
            if found is not None:
                return self._found(key, stored, op, fp, json.loads(found))
            # Gone between the add and the get (expired, or released): claim again.
        raise IdempotencyError(
            f"idempotency key {key!r} could not be claimed: the store keeps dropping it",
            key=key,
        )

    def _found(self, key: str, stored: str, op: str, fp: str, record: dict[str, Any]) -> _Claim:
        if record.get("op") != op or record.get("fp") != fp:
            raise IdempotencyError(
                f"idempotency key {key!r} was used for another call ({record.get('op')} with "
                "other arguments): a key names one call; nothing was sent",
                key=key,
            )
        state = record.get("state")
        if state == "done":
            return _Claim(done=True, result=record.get("result"))
        if state == "pending" and float(record.get("lease", 0)) > time.time():
            return _Claim(waiting=True)
        if state == "pending":
            # Its holder died before recording an outcome: the call may have acted.
            self.store.set(stored, json.dumps({**record, "state": "unknown"}), self.ttl)
        raise _unknown(key, op, held=state == "pending")

    def wait(self, key: str, op: str, fp: str, lease: float, deadline: float) -> _Claim:
        """The claim once the call holding ``key`` elsewhere has an outcome: its result, or
        the key for this call if that one freed it."""
        pause = _FIRST_PAUSE
        while True:
            claim = self._poll(key, op, fp, lease, deadline, pause)
            if claim is not None:
                return claim
            time.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE)

    async def wait_async(self, key: str, op: str, fp: str, lease: float, deadline: float) -> _Claim:
        """:meth:`wait`, sleeping on the event loop."""
        pause = _FIRST_PAUSE
        while True:
            claim = self._poll(key, op, fp, lease, deadline, pause)
            if claim is not None:
                return claim
            await asyncio.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE)

    def _poll(
        self, key: str, op: str, fp: str, lease: float, deadline: float, pause: float
    ) -> Optional[_Claim]:
        """The key's claim once it no longer waits; None to look again after ``pause``."""
        claim = self.claim(key, op, fp, lease)
        if not claim.waiting:
            return claim
        if time.monotonic() + pause > deadline:
            raise _in_flight(key, op)
        return None

    # -- the outcome ------------------------------------------------------------------------
    def done(self, key: str, op: str, fp: str, result: Any) -> None:
        record = {"v": 1, "state": "done", "op": op, "fp": fp, "result": result}
        self.store.set(self._stored(key), json.dumps(record), self.ttl)

    def unknown(self, key: str, op: str, fp: str) -> None:
        record = {"v": 1, "state": "unknown", "op": op, "fp": fp}
        self.store.set(self._stored(key), json.dumps(record), self.ttl)

    def release(self, key: str) -> None:
        self.store.delete(self._stored(key))

    def settle(self, key: str, op: str, fp: str, error: Optional[BaseException]) -> None:
        """Records how the call holding ``key`` ended, but for a success (see :meth:`done`):
        an outcome that may have acted makes the key unknown; one that did nothing frees it."""
        if error is None or _may_have_acted(error):
            self.unknown(key, op, fp)
        else:
            self.release(key)

    # -- one keyed call ---------------------------------------------------------------------
    def run(
        self,
        key: str,
        op: str,
        args: Any,
        timeout: float,
        send: Callable[[], T],
        note: Callable[[Outcome], None],
    ) -> T:
        """``send()`` once for ``key``: its result, or the result recorded for it."""
        fp, lease = fingerprint(op, fingerprinted(op, args)), timeout + _LEASE_MARGIN
        claim = self._noted(note, lambda: self.claim(key, op, fp, lease))
        if claim.waiting:
            deadline = _deadline(timeout)
            claim = self._noted(note, lambda: self.wait(key, op, fp, lease, deadline))
        if claim.done:
            note(Outcome.REPLAYED)
            return claim.result  # type: ignore[no-any-return]
        note(Outcome.NEW)
        with self._settled_on_failure(key, op, fp):
            result = send()
        _recorded(key, lambda: self.done(key, op, fp, result))
        return result

    async def run_async(
        self,
        key: str,
        op: str,
        args: Any,
        timeout: float,
        send: Callable[[], Awaitable[T]],
        note: Callable[[Outcome], None],
    ) -> T:
        """:meth:`run` on the event loop."""
        fp, lease = fingerprint(op, fingerprinted(op, args)), timeout + _LEASE_MARGIN
        claim = self._noted(note, lambda: self.claim(key, op, fp, lease))
        if claim.waiting:
            try:
                claim = await self.wait_async(key, op, fp, lease, _deadline(timeout))
            except IdempotencyError as e:
                if e.outcome_unknown:
                    note(Outcome.UNKNOWN)
                raise
        if claim.done:
            note(Outcome.REPLAYED)
            return claim.result  # type: ignore[no-any-return]
        note(Outcome.NEW)
        with self._settled_on_failure(key, op, fp):
            result = await send()
        _recorded(key, lambda: self.done(key, op, fp, result))
        return result

    @contextlib.contextmanager
    def _settled_on_failure(self, key: str, op: str, fp: str) -> Iterator[None]:
        """The block's failure recorded as the key's outcome (:meth:`settle`), then raised."""
        try:
            yield
        except BaseException as e:
            error = e
            _recorded(key, lambda: self.settle(key, op, fp, error))
            raise

    @staticmethod
    def _noted(note: Callable[[Outcome], None], claim: Callable[[], _Claim]) -> _Claim:
        try:
            return claim()
        except IdempotencyError as e:
            if e.outcome_unknown:
                note(Outcome.UNKNOWN)
            raise


class Batch:
    """A batch whose items may carry their own key (``events.track_many``): each keyed item
    claimed before the batch is sent (one held elsewhere waited for first), sent only if
    new, and settled by its own result after. Replayed items get ``None``, as a recorded
    event does; a refused key gets its :class:`IdempotencyError` in the item's place."""

    def __init__(self, keys: Keys, op: str, items: list[Any], timeout: float) -> None:
        self.keys, self.op = keys, op
        self.lease = timeout + _LEASE_MARGIN
        self.deadline = _deadline(timeout)
        self.results: list[Any] = [None] * len(items)
        # What is sent, where each came from, and the key of each keyed one sent.
        self.to_send: list[Any] = []
        self._origin: list[int] = []
        self._keyed: dict[int, tuple[str, str]] = {}
        self._waiting: list[tuple[int, str, str, Any]] = []
        # Items whose key an earlier item of the batch has (for the same event): they get
        # that item's result.
        self._copies: list[tuple[int, int]] = []
        try:
            self._claim_all(items)
        except BaseException:
            self._release_unsent()
            raise

    def _claim_all(self, items: list[Any]) -> None:
        first: dict[str, tuple[int, str]] = {}
        for i, item in enumerate(items):
            if not (isinstance(item, Mapping) and "idempotency_key" in item):
                self._send(i, item)
                continue
            key = item["idempotency_key"]
            body = settled({k: v for k, v in item.items() if k != "idempotency_key"})
            fp = fingerprint(self.op, event_fingerprint_args(body))
            if isinstance(key, str) and key in first:
                j, fp_j = first[key]
                if fp_j == fp:
                    self._copies.append((i, j))
                else:
                    self.results[i] = IdempotencyError(
                        f"idempotency key {key!r} is given to two other events of this batch "
                        f"(events[{j}] and events[{i}]): a key names one event",
                        key=key,
                    )
                continue
            try:
                claim = self.keys.claim(key, self.op, fp, self.lease)
            except ValidationError as e:
                self.results[i] = e
                continue
            first[key] = (i, fp)
            if claim.waiting:
                self._waiting.append((i, key, fp, body))
            else:
                self._claimed(i, key, fp, body, claim)

    def _release_unsent(self) -> None:
        """Frees the keys claimed for items not sent yet: the batch stopped before sending."""
        for key, _ in self._keyed.values():
            self._release(key)

    def _release(self, key: str) -> None:
        _recorded(key, lambda: self.keys.release(key))

    def _send(self, i: int, item: Any, key: Optional[tuple[str, str]] = None) -> None:
        if key is not None:
            self._keyed[len(self.to_send)] = key
        self.to_send.append(item)
        self._origin.append(i)

    def _claimed(self, i: int, key: str, fp: str, body: Any, claim: _Claim) -> None:
        if claim.new:
            self._send(i, body, (key, fp))
        # Done: recorded, and a recorded event's result is None.

    def run(self, send: Callable[[list[Any]], list[Any]]) -> list[Any]:
        """Every item's result: the items held elsewhere waited for, those to send sent by
        ``send`` (one batch), and each keyed one's outcome recorded."""
        try:
            self.wait()
        except BaseException:
            self._release_unsent()
            raise
        try:
            sent = send(self.to_send) if self.to_send else []
        except BaseException as e:
            self.failed(e)
            raise
        return self.settle(sent)

    async def run_async(self, send: Callable[[list[Any]], Awaitable[list[Any]]]) -> list[Any]:
        """:meth:`run`, awaited."""
        try:
            await self.wait_async()
        except BaseException:
            self._release_unsent()
            raise
        try:
            sent = await send(self.to_send) if self.to_send else []
        except BaseException as e:
            self.failed(e)
            raise
        return self.settle(sent)

    def wait(self) -> None:
        """Waits for the items whose keys are held elsewhere."""
        for i, key, fp, body in self._waiting:
            try:
                self._claimed(
                    i, key, fp, body, self.keys.wait(key, self.op, fp, self.lease, self.deadline)
                )
            except ValidationError as e:
                self.results[i] = e

    async def wait_async(self) -> None:
        """:meth:`wait` on the event loop."""
        for i, key, fp, body in self._waiting:
            try:
                claim = await self.keys.wait_async(key, self.op, fp, self.lease, self.deadline)
                self._claimed(i, key, fp, body, claim)
            except ValidationError as e:
                self.results[i] = e

    def settle(self, sent: list[Any]) -> list[Any]:
        """Every item's result in input order, each keyed one's outcome recorded."""
        for j, result in enumerate(sent):
            self.results[self._origin[j]] = result
            if j in self._keyed:
                self._record(*self._keyed[j], result)
        for i, j in self._copies:
            self.results[i] = self.results[j]
        return self.results

    def _record(self, key: str, fp: str, error: Optional[BaseException]) -> None:
        if error is None:
            _recorded(key, lambda: self.keys.done(key, self.op, fp, None))
        else:
            _recorded(key, lambda: self.keys.settle(key, self.op, fp, error))

    def failed(self, error: BaseException) -> None:
        """The whole batch raised: each keyed item sent settled by that."""
        for key, fp in self._keyed.values():
            self._record(key, fp, error)


def fingerprinted(op: str, args: Mapping[str, Any]) -> Any:
    """What a call's fingerprint is taken of: its arguments by name, an event's as the dict
    ``track_many``'s events are (a dataframe's missing cell left out, as it is sent)."""
    if op == "events.track":
        return event_fingerprint_args({k: _given(v) for k, v in args.items()})
    return args


def _recorded(key: str, record: Callable[[], None]) -> None:
    """``record()``, the store's update after a call; a store that fails then (Redis gone)
    is logged, and the call's own outcome stands: the key stays claimed until its lease
    runs out, then reads as unknown, so that it is never sent again unchecked."""
    try:
        record()
    except Exception as e:
        _log.warning(
            "idempotency key %r: its outcome could not be recorded in the store (%s: %s); "
            "it reads as unknown once its claim runs out",
            key,
            type(e).__name__,
            e,
        )


def _deadline(timeout: float) -> float:
    return time.monotonic() + timeout


def _may_have_acted(error: BaseException) -> bool:
    """Whether a call that raised ``error`` may have acted: an outcome-unknown failure, or an
    interruption (Ctrl-C, a cancelled task) with the request possibly on its way."""
    if not isinstance(error, Exception):
        return True
    if isinstance(error, asyncio.CancelledError):
        return True
    return bool(getattr(error, "outcome_unknown", False))


def _unknown(key: str, op: str, held: bool) -> IdempotencyError:
    why = (
        "its holder stopped before recording an outcome (its lease ran out)"
        if held
        else "it failed once the service may have acted on it"
    )
    return IdempotencyError(
        f"idempotency key {key!r}: the outcome of its {op} is unknown ({why}), so it is not "
        f"sent again; check whether it acted, then call client.idempotency.resolve({key!r}, "
        "result) if it did, or resolve(key, None) to let the key send again",
        key=key,
        outcome_unknown=True,
    )


def _in_flight(key: str, op: str) -> IdempotencyError:
    return IdempotencyError(
        f"idempotency key {key!r}: its {op} is still in flight in another call, past this "
        "call's timeout; nothing was sent here (the other call may yet act)",
        key=key,
        outcome_unknown=True,
    )


def _check_key(key: Any) -> None:
    if not isinstance(key, str) or not key.strip():
        raise ValidationError(
            f"idempotency_key must be a non-empty str, not {key!r}", field="idempotency_key"
        )
    if len(key) > 255:
        raise ValidationError(
            "idempotency_key must be at most 255 characters", field="idempotency_key"
        )


class Idempotency:
    """``client.idempotency``: the keys of the client's store, read and settled by hand."""

    def __init__(self, keys: Optional[Keys]) -> None:
        self._keys = keys

    def _store(self) -> Keys:
        if self._keys is None:
            raise ValidationError(
                "this client has no idempotency store: pass idempotency_store= (or set "
                "PUSHWIRE_IDEMPOTENCY_STORE)",
                field="idempotency_store",
            )
        return self._keys

    def status(self, key: str) -> Optional[str]:
        """``"pending"``, ``"done"``, ``"unknown"``, or ``None`` for a key that holds
        nothing (never used, released, or expired)."""
        keys = self._store()
        _check_key(key)
        found = keys.store.get(keys._stored(key))
        return None if found is None else str(json.loads(found).get("state"))

    def resolve(self, key: str, result: Any) -> None:
        """Settles a key whose outcome is unknown, once you have checked what happened:
        ``result`` is what the call returned (a broadcast's id you found in the dashboard;
        ``True`` for a call that returns nothing), and later calls with the key return it
        without sending; ``None`` says it did not act, and frees the key for a call that
        sends. A key that holds nothing, or whose call is still in flight, is refused."""
        keys = self._store()
        _check_key(key)
        stored = keys._stored(key)
        found = keys.store.get(stored)
        if found is None:
            raise IdempotencyError(f"idempotency key {key!r} holds nothing to resolve", key=key)
        record = json.loads(found)
        if record.get("state") == "pending" and float(record.get("lease", 0)) > time.time():
            raise IdempotencyError(
                f"idempotency key {key!r} is held by a call still in flight: wait for it",
                key=key,
            )
        if record.get("state") == "done":
            raise IdempotencyError(
                f"idempotency key {key!r} is done (its call succeeded and its result is "
                "kept): there is nothing to resolve",
                key=key,
            )
        if result is None:
            keys.release(key)
        else:
            keys.done(
                key,
                str(record.get("op")),
                str(record.get("fp")),
                None if result is True else result,
            )

    def __repr__(self) -> str:
        return f"<Idempotency store={None if self._keys is None else self._keys.store!r}>"
