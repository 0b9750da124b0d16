"""Idempotency keys in a batch (``events.track_many``), whose events may each carry a key:
each keyed event claimed before the batch is sent, and its claim held while the batch runs.
A batch sends its events ``concurrency`` at a time, each within its own timeout, after
waiting for the keys held elsewhere, which no lease fixed at the claim covers: the leases
are renewed instead, from a thread of their own, until each claim is settled. What a key
means is ``pushwire._idempotency``'s."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Awaitable, Iterator, Mapping
from typing import Any, Callable, Optional

from pushwire._args import _given
from pushwire._bridge import checkpoint_if_cancelled
from pushwire._fingerprint import event_fingerprint_args, fingerprint, settled
from pushwire._idempotency import (
    Keys,
    _Claim,
    _deadline,
    _Held,
    _recorded,
    lease,
)
from pushwire.errors import IdempotencyError, ValidationError

__all__ = ["Batch", "carries_key"]

_log = logging.getLogger("pushwire")

# A batch's leases are renewed this many times a lease.
_RENEWALS = 3


def event_of(item: Any) -> Any:
    """An event of ``track_many`` as a dict where it is one: a dataframe's row (a pandas
    ``Series``) as its ``to_dict()``, as the core reads it; anything else as it is."""
    if isinstance(item, Mapping):
        return item
    to_dict = getattr(item, "to_dict", None)
    if not callable(to_dict):
        return item
    try:
        as_dict = to_dict()
    except Exception:
        return item  # the core reads it, and says what is wrong with it
    return as_dict if isinstance(as_dict, Mapping) else item


def carries_key(event: Any) -> bool:
    """Whether an event of ``track_many`` names an idempotency key: a dict's entry, or a
    dataframe row's column (a pandas ``Series`` answers ``in`` by its labels), found
    without reading the row whole, which the core does while it sends."""
    if isinstance(event, Mapping):
        return "idempotency_key" in event
    if not callable(getattr(event, "to_dict", None)):
        return False
    try:
        return "idempotency_key" in event
    except Exception:
        return False  # a row-like object that is no container: read by the core as it is


def event_key(event: Any) -> Optional[Any]:
    """The idempotency key an event of ``track_many`` carries; None for none (no entry, or
    a missing cell of a dataframe's key column)."""
    if not isinstance(event, Mapping):
        return None
    return _given(event.get("idempotency_key"))


class _Leases:
    """A batch's claims, their leases renewed every third of a lease from a thread of their
    own (the batch's own thread is in the core, or its event loop is the caller's) until
    :meth:`stop`. A claim another call has taken since is no longer renewed."""

    def __init__(self, keys: Keys, lease: float) -> None:
        self._keys, self._lease = keys, lease
        self._held: list[_Held] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._failed = False

    def hold(self, held: _Held) -> None:
        with self._lock:
            self._held.append(held)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._renew, name="pushwire-idempotency-leases", daemon=True
                )
                self._thread.start()

    def _renew(self) -> None:
        while not self._stopped.wait(self._lease / _RENEWALS):
            with self._lock:
                held = list(self._held)
            for h in held:
                if self._stopped.is_set():
                    return
                try:
                    kept = self._keys.renew(h, self._lease)
                except Exception as e:
                    self._warn(h, e)
                    continue
                if not kept:
                    with self._lock:
                        self._held.remove(h)

    def _warn(self, held: _Held, error: Exception) -> None:
        if not self._failed:
            self._failed = True
            _log.warning(
                "idempotency key %r: its lease could not be renewed (%s: %s); a lease not "
                "renewed runs out and its key reads as unknown",
                held.key,
                type(error).__name__,
                error,
            )

    def stop(self) -> None:
        """Stops renewing, once a renewal under way is done: the claims are settled next."""
        self._stopped.set()
        if self._thread is not None:
            # Bounded: a store call that hangs must not hold the batch's result. A renewal
            # finishing after the claims are settled changes nothing: it compares the
            # pending record, which the settlement replaced.
            self._thread.join(_STOP_WAIT)


# How long stopping the renewals waits for one under way (a store call taking its time).
_STOP_WAIT = 5.0


class Batch:
    """A batch whose items may carry their own key (``events.track_many``): each keyed item
    claimed before the batch is sent (one held elsewhere waited for first), sent only if
    new, and settled by its own result after; the claims' leases renewed until then.
    Replayed items get ``None``, as a recorded event does; a refused key gets its
    :class:`IdempotencyError` in the item's place."""

    def __init__(self, keys: Keys, op: str, items: list[Any], timeout: float) -> None:
        self.keys, self.op, self.items, self.timeout = keys, op, items, timeout
        self.lease = lease(timeout)
        self.results: list[Any] = [None] * len(items)
        # What is sent, where each came from, and the claim of each keyed one sent.
        self.to_send: list[Any] = []
        self._origin: list[int] = []
        self._keyed: dict[int, _Held] = {}
        self._waiting: list[tuple[int, str, str, Any]] = []
        # Items whose key an earlier item of the batch has (for the same event): they get
        # that item's result.
        self._copies: list[tuple[int, int]] = []
        self._leases = _Leases(keys, self.lease)
        self._sending = False

    def _claim_all(self) -> None:
        self.deadline = _deadline(self.timeout)
        first: dict[str, tuple[int, str]] = {}
        for i, row in enumerate(self.items):
            item = event_of(row)
            key = event_key(item)
            if key is None:
                self._send(i, _unkeyed(item))
                continue
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
                self._claimed(i, body, claim)

    def _send(self, i: int, item: Any, held: Optional[_Held] = None) -> None:
        if held is not None:
            self._keyed[len(self.to_send)] = held
        self.to_send.append(item)
        self._origin.append(i)

    def _claimed(self, i: int, body: Any, claim: _Claim) -> None:
        if claim.held is not None:
            self._leases.hold(claim.held)
            self._send(i, body, claim.held)
        # Done: recorded, and a recorded event's result is None.

    @contextlib.contextmanager
    def _holding(self) -> Iterator[None]:
        """The block, the claims' leases renewed while it runs; if it fails, the claims
        settled: freed before the send, recorded as its error once sending."""
        try:
            yield
        except BaseException as e:
            self._leases.stop()
            if self._sending:
                self.failed(e)
            else:
                self._release_unsent()
            raise
        self._leases.stop()

    def _release_unsent(self) -> None:
        """Frees the keys claimed for items not sent: the batch stopped before sending."""
        for held in self._keyed.values():
            self._release(held)

    def _release(self, held: _Held) -> None:
        _recorded(held.key, lambda: self.keys.release(held))

    def run(self, send: Callable[[list[Any]], list[Any]]) -> list[Any]:
        """Every item's result: the keyed ones claimed, those held elsewhere waited for,
        those to send sent by ``send`` (one batch), and each keyed one's outcome recorded."""
        with self._holding():
            self._claim_all()
            self.wait()
            self._sending = True
            sent = send(self.to_send) if self.to_send else []
        return self.settle(sent)

    async def run_async(self, send: Callable[[list[Any]], Awaitable[list[Any]]]) -> list[Any]:
        """:meth:`run`, awaited."""
        with self._holding():
            self._claim_all()
            await self.wait_async()
            # Cancelled before anything went out (trio): the keys are freed, not unknown.
            await checkpoint_if_cancelled()
            self._sending = True
            sent = await send(self.to_send) if self.to_send else []
        return self.settle(sent)

    def wait(self) -> None:
        """Waits for the items whose keys are held elsewhere."""
        for i, key, fp, body in self._waiting:
            try:
                self._claimed(i, body, self.keys.wait(key, self.op, fp, self.lease, self.deadline))
            except ValidationError as e:
                self.results[i] = e

    async def wait_async(self) -> None:
        """:meth:`wait` on the event loop."""
        for i, key, fp, body in self._waiting:
            try:
                claim = await self.keys.wait_async(key, self.op, fp, self.lease, self.deadline)
                self._claimed(i, body, claim)
            except ValidationError as e:
                self.results[i] = e

    def settle(self, sent: list[Any]) -> list[Any]:
        """Every item's result in input order, each keyed one's outcome recorded."""
        for j, result in enumerate(sent):
            self.results[self._origin[j]] = result
            if j in self._keyed:
                self._record(self._keyed[j], result)
        for i, j in self._copies:
            self.results[i] = self.results[j]
        return self.results

    def _record(self, held: _Held, error: Optional[BaseException]) -> None:
        if error is None:
            _recorded(held.key, lambda: self.keys.done(held, None))
        else:
            _recorded(held.key, lambda: self.keys.settle(held, error))

    def failed(self, error: BaseException) -> None:
        """The whole batch raised: each keyed item sent settled by that."""
        for held in self._keyed.values():
            self._record(held, error)


def _unkeyed(item: Any) -> Any:
    """An item without a key as it is sent: an empty key cell (a dataframe's) left out."""
    if isinstance(item, Mapping) and "idempotency_key" in item:
        return {k: v for k, v in item.items() if k != "idempotency_key"}
    return item
