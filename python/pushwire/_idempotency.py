"""Idempotency keys: a call with an effect sent once per key, however often the code around
it runs (a Celery task redelivered, a cron job restarted, a request retried, a double click).

The service keeps no key, so the client keeps them, in a store its processes share
(:class:`IdempotencyStore`: SQLite for one machine, Redis for a fleet, or any object with
the four methods, a Django cache among them). Each key holds one record, JSON text:

- ``pending``: a call claimed the key (an atomic ``add``) and is sending; it holds a lease,
  the longest its call can take (a batch's leases are renewed while it runs:
  ``pushwire._keybatch``), and an ``owner``, a random id of the claim. A second call waits
  for it, within its own timeout.
- ``done``: the call succeeded; its result is kept and returned to every later call with the
  same key and the same arguments, which sends nothing.
- ``unknown``: the call failed once the service may have acted (``outcome_unknown``), or its
  holder died (its lease ran out): later calls are refused, never resent, until
  ``client.idempotency.resolve(key, ...)`` settles it.

A failure known to have done nothing (a refusal, a refused connect, bad input) deletes the
record: the key is free again. Every change after the claim is a compare-and-set on the
record as its writer read it (``compare_and_set`` of ``pushwire._keystores``): a holder
changes only its own claim's record (its owner's), a caller that found a lease over marks
unknown only the record it found, and ``resolve`` settles only the record it checked. A
record names its operation and a SHA-256 fingerprint of the call's arguments (never the
arguments, never the API key); the same key with other arguments is refused. Keys live
``ttl`` seconds (7 days by default), and are stored hashed under a hash of the API key, so
that two sites' keys never meet.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Iterator
from typing import Any, Callable, Optional, TypeVar

from pushwire._bridge import checkpoint_if_cancelled, sleep
from pushwire._fingerprint import fingerprint, fingerprinted
from pushwire._keystores import IdempotencyStore, compare_and_delete, compare_and_set
from pushwire.errors import IdempotencyError, PushwireError, ValidationError

__all__ = ["Idempotency", "Keys", "lease"]

T = TypeVar("T")

_log = logging.getLogger("pushwire")

DEFAULT_TTL = 7 * 24 * 3600.0
# Beyond a call's own timeout, how long its claim is held before a waiting call takes its
# holder for dead: the time to record the outcome.
_LEASE_MARGIN = 5.0
# A claim whose add took longer than this (a SQLite lock held by another process) renews its
# lease from the commit, so that the wait is not taken from its margin.
_LATE_CLAIM = 0.1
# A call's record is left to the store's writer only while its lease has this many
# seconds left: time for the writer's wait and its round trip, many times over.
_LATE = 1.0
# How many times a change is tried against a record that others keep changing.
_TRIES = 3
# How often a call waiting for a key held elsewhere looks again: soon, then less often.
_FIRST_PAUSE, _LONGEST_PAUSE = 0.005, 0.1


class Outcome(enum.Enum):
    """What a keyed call did, as its span tells it (``pushwire.idempotency.outcome``)."""

    NEW = "new"
    REPLAYED = "replayed"
    UNKNOWN = "unknown"


@dataclasses.dataclass
class _Held:
    """A claim a call holds: its key, as given and as stored, and its record as the call
    last wrote it (``text``), which each of its later changes compares against; ``owner``
    tells the claim's record from another call's."""

    key: str
    stored: str
    op: str
    fp: str
    owner: str
    text: str


@dataclasses.dataclass
class _Claim:
    """A key's state as a call found it: claimed by this call (``held``), or done (with the
    result to return), or held by a live call elsewhere (``waiting``)."""

    held: Optional[_Held] = None
    done: bool = False
    result: Any = None
    waiting: bool = False


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
        """Claims ``key`` for a call (``held``), or says what holds it; refuses a key held
        for other arguments, or one whose outcome is unknown."""
        _check_key(key)
        stored = self._stored(key)
        for _ in range(_TRIES):
            owner = secrets.token_hex(8)

            def pending(owner: str = owner) -> str:
                return _text({"v": 1, "state": "pending", "op": op, "fp": fp,
                              "lease": time.time() + lease, "owner": owner})  # fmt: skip

            # Held at least as long as the call may run, whatever the TTL: a claim that
            # expired mid-call would let a second call send.
            held_for = max(self.ttl, lease)
            add_made = getattr(self.store, "add_made", None)
            if add_made is not None:
                # The record made once the store holds its lock (SQLite's): its lease runs
                # from the moment it is stored, however long the lock took.
                added, text = add_made(stored, pending, held_for)
                started = time.time()
            else:
                started = time.time()
                text = pending()
                added = self.store.add(stored, text, held_for)
            # This process's own queued record of the key, read before the store: the writer
            # may write it and drop it from its queue between the get and a later look.
            before = None if added else self._queued(stored)
            found = text if added else self.store.get(stored)
            if found is None:
                continue  # gone between the add and the get (expired, or released)
            record = None if added else json.loads(found)
            if record is not None and record.get("owner") != owner:
                claim = self._found(key, stored, op, fp, found, record, before)
                if claim is None:
                    continue  # changed while it was read: look again
                return claim
            # This claim's record, written by its add, or by an add whose answer was lost
            # and that a client retrying after a connection error sent again (which then
            # found it, and said the key was held).
            held = _Held(key, stored, op, fp, owner, found)
            if time.time() - started <= _LATE_CLAIM or self.renew(held, lease):
                return _Claim(held=held)
            self.release(held)  # taken for dead while it waited for the store: unsent
        raise IdempotencyError(
            f"idempotency key {key!r} could not be claimed: the store keeps changing it",
            key=key,
        )

    def _queued(self, stored: str) -> Optional[tuple[str, str]]:
        """The record this process's store is yet to write at ``stored`` (Redis's writer), as
        (the record it is to write over, the record it writes)."""
        queued = getattr(self.store, "_queued", None)
        return None if queued is None else queued(stored)

    def _found(
        self,
        key: str,
        stored: str,
        op: str,
        fp: str,
        found: str,
        record: dict[str, Any],
        before: Optional[tuple[str, str]],
    ) -> Optional[_Claim]:
        """The claim of a key another call wrote ``found`` under (``before``: the write of
        it this process had queued just before reading it); None when it changed before
        this call could mark it."""
        if record.get("op") != op or record.get("fp") != fp:
            raise IdempotencyError(
                f"idempotency key {key!r} was used for another call ({record.get('op')} with "
                "other arguments): a key names one call; nothing was sent",
                key=key,
            )
        state = record.get("state")
        if state == "pending":
            # This process's own call, its result queued to be written over it: queued
            # before the read (and written since, perhaps), or after it.
            for write in (before, self._queued(stored)):
                if write is not None and write[0] == found:
                    record, state = json.loads(write[1]), "done"
                    break
        if state == "done":
            return _Claim(done=True, result=record.get("result"))
        if state == "pending" and float(record.get("lease", 0)) > time.time():
            return _Claim(waiting=True)
        if state == "pending":
            # Its holder stopped before recording an outcome: the call may have acted. The
            # record keeps its owner: a holder that was only slow records over it.
            unknown = _text({**record, "state": "unknown"})
            if not compare_and_set(self.store, stored, found, unknown, self.ttl):
                return None
        raise _unknown(key, op, held=state == "pending")

    def renew(self, held: _Held, lease: float) -> bool:
        """Extends ``held``'s lease to ``lease`` seconds from now, if its record is still as
        this call wrote it; False if not (another call found the lease over)."""
        text = _text({**json.loads(held.text), "lease": time.time() + lease})
        if compare_and_set(self.store, held.stored, held.text, text, max(self.ttl, lease)):
            held.text = text
            return True
        return False

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
            await sleep(pause)
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
    def done(self, held: _Held, result: Any) -> None:
        """Records the result of the call holding ``held``. A store that can write it later
        (Redis: ``_set_later``) is left to, so that the call returns without the
        round trip; this process reads the record as written meanwhile (:meth:`_found`),
        and other processes wait for it as for a call in flight."""
        record = {"v": 1, "state": "done", "op": held.op, "fp": held.fp, "result": result}
        text = _text(record)
        later = getattr(self.store, "_set_later", None)
        if later is None or float(json.loads(held.text).get("lease", 0)) < time.time() + _LATE:
            # A holder near or past its lease (others may take it for dead, a resolve may be
            # looking at it) records at once, as it would without a writer.
            self._outcome(held, text, "done")
            return

        def refused() -> None:
            _recorded(held.key, lambda: self._outcome(held, text, "done"))

        later(held.stored, held.text, text, self.ttl, refused)

    def flush(self) -> None:
        """Writes the records the store has queued (:meth:`done`), before returning."""
        flush = getattr(self.store, "_flush", None)
        if flush is not None:
            flush()

    def settle(self, held: _Held, error: Optional[BaseException]) -> None:
        """Records how the call holding ``held`` ended, but for a success (see :meth:`done`):
        an outcome that may have acted makes the key unknown; one that did nothing frees it."""
        if error is None or _may_have_acted(error):
            record = {"v": 1, "state": "unknown", "op": held.op, "fp": held.fp,
                      "owner": held.owner}  # fmt: skip
            self._outcome(held, _text(record), "unknown")
        else:
            self.release(held)

    def release(self, held: _Held) -> None:
        self._outcome(held, None, "freed")

    def _outcome(self, held: _Held, text: Optional[str], what: str) -> None:
        """Replaces ``held``'s record by ``text`` (None deletes it), compared with the record
        as this claim last wrote it, or as a call that found its lease over marked it
        (unknown, its owner kept: the holder knows better). A record gone since (its TTL, a
        resolve) takes the outcome anew; one that is another claim's now is left alone."""
        expected: Optional[str] = held.text
        for _ in range(_TRIES):
            if expected is None:
                changed = text is None or self.store.add(held.stored, text, self.ttl)
            elif text is None:
                changed = compare_and_delete(self.store, held.stored, expected)
            else:
                changed = compare_and_set(self.store, held.stored, expected, text, self.ttl)
            if changed:
                return
            expected = self.store.get(held.stored)
            if expected is not None and expected == text:
                return  # written already, by a write whose answer was lost and was retried
            if expected is not None and json.loads(expected).get("owner") != held.owner:
                break
        _log.warning(
            "idempotency key %r: this call's outcome (%s) is not recorded: its lease ran out "
            "first, and the key has been claimed again or resolved since",
            held.key,
            what,
        )

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
        fp, held_for = fingerprint(op, fingerprinted(op, args)), lease(timeout)
        claim = self._noted(note, lambda: self.claim(key, op, fp, held_for))
        if claim.waiting:
            deadline = _deadline(timeout)
            claim = self._noted(note, lambda: self.wait(key, op, fp, held_for, deadline))
        held = _noted_new(claim, note)
        if held is None:
            return claim.result  # type: ignore[no-any-return]
        with self._settled_on_failure(held):
            result = send()
        _recorded(key, lambda: self.done(held, result))
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
        fp, held_for = fingerprint(op, fingerprinted(op, args)), lease(timeout)
        claim = self._noted(note, lambda: self.claim(key, op, fp, held_for))
        if claim.waiting:
            try:
                claim = await self.wait_async(key, op, fp, held_for, _deadline(timeout))
            except IdempotencyError as e:
                if e.outcome_unknown:
                    note(Outcome.UNKNOWN)
                raise
        held = _noted_new(claim, note)
        if held is None:
            return claim.result  # type: ignore[no-any-return]
        try:
            # Cancelled before anything went out (trio): the key is freed, not unknown.
            await checkpoint_if_cancelled()
        except BaseException:
            _recorded(key, lambda: self.release(held))
            raise
        with self._settled_on_failure(held):
            result = await send()
        _recorded(key, lambda: self.done(held, result))
        return result

    @contextlib.contextmanager
    def _settled_on_failure(self, held: _Held) -> Iterator[None]:
        """The block's failure recorded as the key's outcome (:meth:`settle`), then raised."""
        try:
            yield
        except BaseException as e:
            error = e
            _recorded(held.key, lambda: self.settle(held, error))
            raise

    @staticmethod
    def _noted(note: Callable[[Outcome], None], claim: Callable[[], _Claim]) -> _Claim:
        try:
            return claim()
        except IdempotencyError as e:
            if e.outcome_unknown:
                note(Outcome.UNKNOWN)
            raise


def _text(record: dict[str, Any]) -> str:
    return json.dumps(record)


def _noted_new(claim: _Claim, note: Callable[[Outcome], None]) -> Optional[_Held]:
    """The claim's hold when the call is this one's to send (noted new), else ``None`` (the
    key is done: noted replayed)."""
    note(Outcome.REPLAYED if claim.held is None else Outcome.NEW)
    return claim.held


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


def lease(timeout: float) -> float:
    """How long a call of ``timeout`` seconds holds its claim: its timeout, and the time to
    record its outcome."""
    return timeout + _LEASE_MARGIN


def _deadline(timeout: float) -> float:
    return time.monotonic() + timeout


def _may_have_acted(error: BaseException) -> bool:
    """Whether a call that raised ``error`` may have acted: pushwire's own errors say
    (``outcome_unknown``: a 4xx, a refused connection, bad input did not act); anything else
    came from outside the call (Ctrl-C, a cancelled task, a signal handler's exception, a
    task's time limit) at a moment that may have been after the request went out."""
    if isinstance(error, PushwireError):
        return bool(getattr(error, "outcome_unknown", False))
    return True


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
        keys.flush()
        found = keys.store.get(keys._stored(key))
        return None if found is None else str(json.loads(found).get("state"))

    def resolve(self, key: str, result: Any) -> None:
        """Settles a key whose outcome is unknown, once you have checked what happened:
        ``result`` is what the call returned (a broadcast's id you found in the dashboard;
        ``True`` for a call that returns nothing), and later calls with the key return it
        without sending; ``None`` says it did not act, and frees the key for a call that
        sends. A key that holds nothing, or whose call is still in flight, is refused, and
        so is one whose record changed while it was checked (a late holder recorded its
        outcome): it is read again and judged as it is then."""
        keys = self._store()
        _check_key(key)
        keys.flush()
        stored = keys._stored(key)
        for _ in range(_TRIES):
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
                settled_now = compare_and_delete(keys.store, stored, found)
            else:
                done = {"v": 1, "state": "done", "op": record.get("op"), "fp": record.get("fp"),
                        "result": None if result is True else result}  # fmt: skip
                settled_now = compare_and_set(keys.store, stored, found, _text(done), keys.ttl)
            if settled_now:
                return
        raise IdempotencyError(
            f"idempotency key {key!r} could not be resolved: the store keeps changing it",
            key=key,
        )

    def __repr__(self) -> str:
        return f"<Idempotency store={None if self._keys is None else self._keys.store!r}>"
