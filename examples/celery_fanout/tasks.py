"""The worker side: Celery tasks that send pushwire calls, one client per process.

    cd examples
    celery -A celery_fanout.tasks worker --pool prefork --concurrency 3

The client is made here, at import, from ``PUSHWIRE_API_KEY``, ``PUSHWIRE_BASE_URL`` and
``PUSHWIRE_EVENTS_URL``: the worker's main process imports this module before its prefork
pool forks, and each pool process uses the inherited client with threads and connections of
its own. The broker and the result format come from the environment too (``config.py``).

What each task does when the service says no:

- refused unprocessed (429, a 5xx the client could tell was not acted on, a failed
  connect), after the client's own retries: a Celery retry with the service's
  ``Retry-After`` as countdown, resending only what was refused;
- ``outcome_unknown`` (500, 502, 504, a connection lost after the request left): reported to
  the caller, never sent again. A chunk's unknown events are listed in its report; a
  broadcast's error is raised, so that ``AsyncResult.get()`` raises it with its
  ``status_code`` and ``outcome_unknown``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Callable, Optional

import pushwire

from .config import (
    ADD_HASHES,
    PING,
    SEND_BROADCAST,
    TRACK_CHUNK,
    BroadcastReport,
    ChunkReport,
    HashesReport,
    Outcome,
    PingReport,
    make_app,
)

app = make_app()

# The process's one client, made before the pool forks (see the module's docstring).
client = pushwire.Client()
CLIENT_MADE_IN = os.getpid()

# Requests in flight per worker process: the service sees processes x this at most.
EVENTS_IN_FLIGHT = 32
CHUNKS_IN_FLIGHT = 4
# The wait before a Celery retry when the service gave no Retry-After: 1, 2, 4 ... 60 s.
LONGEST_WAIT = 60.0


def _task(name: str, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``app.task`` with the task bound (its first argument is the Celery task)."""
    decorator: Callable[[Callable[..., Any]], Any] = app.task(name=name, bind=True, **options)
    return decorator


def resendable(error: BaseException) -> bool:
    """Whether the service surely did nothing, for a reason that may pass: sending again
    cannot do it twice. A refusal of the request itself (400, 401, bad input) will not pass."""
    if getattr(error, "outcome_unknown", False):
        return False
    if isinstance(error, pushwire.APIError):
        return error.status_code in (408, 429) or error.status_code >= 500
    # The connection failed before the request left.
    return isinstance(error, pushwire.APIConnectionError)


def countdown(errors: Sequence[BaseException], retries: int) -> float:
    """The service's longest ``Retry-After`` among the errors, else 1, 2, 4 ... seconds."""
    waits = [
        e.retry_after
        for e in errors
        if isinstance(e, pushwire.RateLimitError) and e.retry_after is not None
    ]
    return max(waits) if waits else min(2.0**retries, LONGEST_WAIT)


def outcome(position: int, error: BaseException) -> Outcome:
    return {
        "position": position,
        "error": type(error).__name__,
        "status_code": getattr(error, "status_code", None),
        "outcome_unknown": bool(getattr(error, "outcome_unknown", False)),
        "message": str(error),
    }


@_task(TRACK_CHUNK, max_retries=5)
def track_chunk(
    self: Any,
    events: list[dict[str, Any]],
    first: int = 0,
    positions: Optional[list[int]] = None,
    carried: Optional[ChunkReport] = None,
) -> ChunkReport:
    """Tracks a chunk of events with ``track_many``; ``first`` is the position of the first
    in the job. A retry resends only the refused events (``positions`` are theirs), with
    the report so far (``carried``)."""
    if positions is None:
        positions = list(range(first, first + len(events)))
    report: ChunkReport = carried or {
        "first": first,
        "size": len(events),
        "recorded": 0,
        "refused": [],
        "unknown": [],
        "celery_retries": 0,
        "pids": [],
    }
    report["celery_retries"] = self.request.retries
    if os.getpid() not in report["pids"]:
        report["pids"].append(os.getpid())

    results = client.events.track_many(events, concurrency=EVENTS_IN_FLIGHT)
    again: list[tuple[int, dict[str, Any], BaseException]] = []
    for position, event, error in zip(positions, events, results):
        if error is None:
            report["recorded"] += 1
        elif getattr(error, "outcome_unknown", False):
            report["unknown"].append(outcome(position, error))  # never sent again
        elif resendable(error):
            again.append((position, event, error))
        else:
            report["refused"].append(outcome(position, error))

    if again and self.request.retries < self.max_retries:
        raise self.retry(
            args=(),
            kwargs={
                "events": [event for _, event, _ in again],
                "first": first,
                "positions": [position for position, _, _ in again],
                "carried": report,
            },
            countdown=countdown([error for _, _, error in again], self.request.retries),
        )
    report["refused"].extend(outcome(position, error) for position, _, error in again)
    return report


@_task(ADD_HASHES, max_retries=5, acks_late=True)
def add_hashes(self: Any, segment_id: int, hashes: list[str], added: int = 0) -> HashesReport:
    """Adds subscribers to a segment with ``add_subscribers_bulk`` (chunks of 500).

    Membership is idempotent: adding a hash twice leaves one member. So every failed chunk
    is sent again, even one of unknown outcome, and the task acknowledges its message only
    once done (``acks_late``): a worker lost mid-task has it redelivered, harmlessly. When
    the retries run out, the first chunk's error is raised to the caller."""
    result = client.segments.add_subscribers_bulk(segment_id, hashes, concurrency=CHUNKS_IN_FLIGHT)
    added += result.succeeded
    if not result.ok:
        errors = [c.error for c in result.failed if c.error is not None]
        worth_it = all(resendable(e) or getattr(e, "outcome_unknown", False) for e in errors)
        if worth_it and self.request.retries < self.max_retries:
            raise self.retry(
                args=(),
                kwargs={"segment_id": segment_id, "hashes": result.failed_items, "added": added},
                countdown=countdown(errors, self.request.retries),
            )
        result.raise_for_errors()
    return {"added": added, "celery_retries": self.request.retries, "pids": [os.getpid()]}


@_task(SEND_BROADCAST, max_retries=3)
def send_broadcast(
    self: Any,
    title: str,
    message: str,
    url: str,
    segment_ids: Optional[list[int]] = None,
) -> BroadcastReport:
    """Sends a broadcast, at most once.

    A refusal that may pass (429 past the client's retries) is a Celery retry after the
    service's ``Retry-After``. Any other error reaches the caller as it is: with
    ``outcome_unknown`` the broadcast may have gone out, and sending it again could send it
    twice."""
    try:
        notification_id = client.notifications.create(
            title=title, message=message, url=url, include_segments=segment_ids
        )
    except pushwire.PushwireError as e:
        if resendable(e):
            raise self.retry(exc=e, countdown=countdown([e], self.request.retries)) from e
        raise
    return {
        "notification_id": notification_id,
        "celery_retries": self.request.retries,
        "pid": os.getpid(),
    }


@_task(PING)
def ping(self: Any) -> PingReport:
    """Which process answers, and which made the client it would use."""
    return {"pid": os.getpid(), "client_made_in": CLIENT_MADE_IN}
