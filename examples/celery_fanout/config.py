"""The Celery app of the example, configured from the environment.

Both sides make their app here: the workers (``tasks.py``) and whatever enqueues the work
(``driver.py``, a Django view, a Flask route). The enqueuing side needs no pushwire client:
it sends tasks by name.

    CELERY_BROKER_URL          redis://127.0.0.1:6379/0 by default
    CELERY_RESULT_BACKEND      the broker's URL by default
    CELERY_RESULT_SERIALIZER   json (the default) or pickle; both sides must agree
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Optional, TypedDict

from celery import Celery  # type: ignore[import-untyped]

# The tasks' names: the caller sends by name, so it does not import the workers' code.
TRACK_CHUNK = "celery_fanout.track_chunk"
ADD_HASHES = "celery_fanout.add_hashes"
SEND_BROADCAST = "celery_fanout.send_broadcast"
PING = "celery_fanout.ping"

RESULT_SERIALIZERS = ("json", "pickle")


def settings(environ: Optional[Mapping[str, str]] = None) -> dict[str, Any]:
    """The Celery settings the environment gives."""
    env = os.environ if environ is None else environ
    broker = env.get("CELERY_BROKER_URL") or "redis://127.0.0.1:6379/0"
    result_serializer = env.get("CELERY_RESULT_SERIALIZER") or "json"
    if result_serializer not in RESULT_SERIALIZERS:
        raise ValueError(
            f"CELERY_RESULT_SERIALIZER must be one of {RESULT_SERIALIZERS}, "
            f"not {result_serializer!r}"
        )
    return {
        "broker_url": broker,
        "result_backend": env.get("CELERY_RESULT_BACKEND") or broker,
        # Task messages are always JSON: a worker never unpickles what a broker hands it.
        "task_serializer": "json",
        "accept_content": ["json"],
        # Results as configured. pushwire's errors come back whole either way (their
        # attributes are in their args, which Celery's JSON form keeps), provided the
        # caller has imported pushwire: Celery finds an error's class among the modules
        # already imported, and never imports one named by a result.
        "result_serializer": result_serializer,
        "result_accept_content": [result_serializer],
        # A chunk takes a while: each worker process takes one task at a time, so that
        # the chunks spread over the processes rather than queue behind a busy one.
        "worker_prefetch_multiplier": 1,
        # Acknowledged when a task starts (the default), so a worker that dies mid-chunk
        # never has the chunk redelivered and its events sent twice; the idempotent task
        # (segment membership) acknowledges late instead (see tasks.py).
        "task_acks_late": False,
        "broker_connection_retry_on_startup": True,
    }


def make_app(environ: Optional[Mapping[str, str]] = None) -> Any:
    """A Celery app with :func:`settings`."""
    app = Celery("celery_fanout")
    app.conf.update(settings(environ))
    return app


# -- what the tasks report: plain data, which either result format carries -------------------


class Outcome(TypedDict):
    """One item that was not recorded for sure: where it was in the job, and its error."""

    position: int
    error: str  # the error's class, ServerError, APIConnectionError, ...
    status_code: Optional[int]
    outcome_unknown: bool
    message: str


class ChunkReport(TypedDict):
    """What became of one chunk of events (after the task's own retries, if any)."""

    first: int  # the position in the job of the chunk's first event
    size: int
    recorded: int
    refused: list[Outcome]  # not recorded: sending them again cannot make a duplicate
    unknown: list[Outcome]  # perhaps recorded: never sent again
    celery_retries: int
    pids: list[int]  # the worker processes that ran it


class HashesReport(TypedDict):
    added: int
    celery_retries: int
    pids: list[int]


class BroadcastReport(TypedDict):
    notification_id: int
    celery_retries: int
    pid: int


class PingReport(TypedDict):
    pid: int
    client_made_in: int  # the process that made the tasks module's client
