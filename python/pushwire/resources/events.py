"""Custom event tracking (spec 4.14), on the event-tracking interface: ``client.events``,
blocking and awaited."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Optional, SupportsIndex

import pushwire._core as _core
from pushwire._args import IdLike, _events
from pushwire._keybatch import carries_key
from pushwire._response import RequestOptions
from pushwire.errors import PushwireError

from ._resource import _Async, _batch, _RawAsync, _RawSync, _Sync, awaitable, raw, raw_awaitable

if TYPE_CHECKING:
    from typing_extensions import Unpack

_log = logging.getLogger("pushwire")


class Events(_Sync):
    """Custom event tracking (spec 4.14), on the event-tracking interface."""

    def track(
        self,
        event_name: str,
        *,
        profile_id: Optional[IdLike] = None,
        device_token_hash: Optional[str] = None,
        data: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Records an event for a subscriber (``profile_id`` wins over ``device_token_hash``).
        Retried only when the service refused it unprocessed (429, or 503 with
        ``Retry-After``), never once it may have been received: it may start a triggered
        campaign. ``idempotency_key``: recorded once per key, as for
        ``notifications.create``."""
        call = _core.events_track(
            event_name,
            profile_id=profile_id,
            device_token_hash=device_token_hash,
            data=data,
            idempotency_key=idempotency_key,
        )
        out: None = self._call(call, **options)
        return out

    def track_many(
        self,
        events: Iterable[Any],
        *,
        concurrency: SupportsIndex = 64,
        **options: Unpack[RequestOptions],
    ) -> list[Optional[PushwireError]]:
        """Tracks every event (dicts with ``event_name``, ``profile_id`` or
        ``device_token_hash``, ``data``), ``concurrency`` in flight, inside Rust. Returns one
        entry per event, in order: ``None`` when it was recorded, else its error (invalid
        events are not sent). One failure never stops the rest.

        An event may carry its own ``idempotency_key`` (with the client's
        ``idempotency_store``), a dataframe's row in a column of that name (an empty cell:
        no key): it is sent once per key, as ``track`` is, and an event recorded before
        under its key gets ``None`` without being sent."""
        self._client._check_events()
        listed = _events(events)
        if any(carries_key(e) for e in listed):
            return self._batch_once(
                _reported,
                _batch(self._client, "events.track", listed, options),
                lambda sent: _core.events_track_many(sent, concurrency=concurrency),
                **options,
            )
        call = _core.events_track_many(listed, concurrency=concurrency)
        return self._then(_reported, call, **options)


class AsyncEvents(_Async, twin=Events):
    track = awaitable(Events.track)
    track_many = awaitable(Events.track_many)


class EventsWithRawResponse(_RawSync, twin=Events, skip=("track_many",)):
    track = raw(Events.track)


class AsyncEventsWithRawResponse(_RawAsync, twin=Events, skip=("track_many",)):
    track = raw_awaitable(Events.track)


def _reported(results: list[Optional[PushwireError]]) -> list[Optional[PushwireError]]:
    """A batch's results, its failures summed up in one warning: a job that does not look
    at the list still leaves a trace of the events it lost or cannot vouch for."""
    failed = [(i, e) for i, e in enumerate(results) if e is not None]
    if failed:
        i, first = failed[0]
        # An event whose outcome is unknown may have been recorded: not "lost".
        unknown = sum(1 for _, e in failed if getattr(e, "outcome_unknown", False))
        if not unknown:
            what = "were not recorded"
        elif unknown == len(failed):
            what = "failed with an unknown outcome (the service may have recorded them)"
        else:
            what = (
                f"failed: {len(failed) - unknown} not recorded, {unknown} with an unknown "
                "outcome (the service may have recorded them)"
            )
        _log.warning(
            "track_many: %d of %d events %s; the first, events[%d]: %s: %s",
            len(failed),
            len(results),
            what,
            i,
            type(first).__name__,
            first,
        )
    return results
