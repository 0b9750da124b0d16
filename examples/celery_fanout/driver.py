"""The caller side: splits a big job of events into chunks, enqueues them for the workers of
``tasks.py``, and reports what was recorded, refused and of unknown outcome.

    cd examples
    python -m celery_fanout.driver                    # 200,000 generated events, from a frame
    python -m celery_fanout.driver --csv events.csv   # columns event_name, profile_id, ...

It needs the broker (``CELERY_BROKER_URL``) and running workers, not pushwire's settings: it
sends the tasks by name. It imports pushwire all the same, so that the errors the workers
raise come back as pushwire's (see ``config.py``).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

# Imported before any result is read: the workers' errors are rebuilt as its classes.
import pushwire  # noqa: F401

from .config import (
    ADD_HASHES,
    SEND_BROADCAST,
    TRACK_CHUNK,
    BroadcastReport,
    ChunkReport,
    Outcome,
    make_app,
)

if TYPE_CHECKING:
    import pandas as pd

# 2,000 events a task: 100 tasks for 200,000 events. Big enough that a task's overhead (the
# broker's round trips, a result) is small beside its requests, small enough that the
# chunks spread over every worker process and a retry resends little.
CHUNK_SIZE = 2_000
# Segment membership goes 500 hashes a request; 10 requests a task.
HASH_CHUNK_SIZE = 5_000
FIELDS = ("event_name", "profile_id", "device_token_hash")


# -- the job's events ---------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    """An empty cell: None, NaN, pandas' NA and NaT (the service refuses null fields)."""
    if isinstance(value, float):
        return math.isnan(value)
    return value is None or type(value).__name__ in ("NAType", "NaTType")


def _event(row: dict[str, Any]) -> dict[str, Any]:
    """An event from a row: its fields, and every other non-empty column in ``data``."""
    event = {k: row[k] for k in FIELDS if k in row and not _missing(row[k])}
    data = {k: v for k, v in row.items() if k not in FIELDS and not _missing(v)}
    if data:
        event["data"] = data
    return event


def events_from_csv(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a CSV file with a header (``event_name``, ``profile_id`` or
    ``device_token_hash``, any other columns as data), read as they are needed."""
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            yield _event({k: v for k, v in row.items() if v != ""})


def events_from_frame(frame: pd.DataFrame) -> Iterator[dict[str, Any]]:
    """The rows of a pandas DataFrame, as plain dicts (the task messages are JSON)."""
    for row in frame.to_dict("records"):
        yield _event({str(k): v for k, v in row.items()})


def sample_frame(n: int) -> pd.DataFrame:
    """``n`` page views by 10,000 visitors, each numbered (``seq``) to find it again."""
    import pandas as pd

    return pd.DataFrame(
        {
            "event_name": "page_view",
            "profile_id": [f"visitor-{i % 10_000}" for i in range(n)],
            "page": [f"/products/{i % 500}" for i in range(n)],
            "seq": range(n),
        }
    )


def chunked(items: Iterable[Any], size: int) -> Iterator[tuple[int, list[Any]]]:
    """``(position of the first, items)`` for consecutive chunks of ``size``."""
    chunk: list[Any] = []
    first = 0
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield first, chunk
            first += size
            chunk = []
    if chunk:
        yield first, chunk


# -- the job --------------------------------------------------------------------------------------


@dataclass
class JobReport:
    """What became of every event of a job."""

    events: int = 0
    chunks: int = 0
    recorded: int = 0
    refused: list[Outcome] = field(default_factory=list)
    unknown: list[Outcome] = field(default_factory=list)
    # Chunks whose task failed as a whole, by the position of their first event and their
    # size: a worker lost mid-task, the job's timeout, a bug. Their events' outcome is
    # unknown.
    failed_chunks: list[tuple[int, int, BaseException]] = field(default_factory=list)
    celery_retries: int = 0
    pids: set[int] = field(default_factory=set)
    seconds: float = 0.0

    def add(self, chunk: ChunkReport) -> None:
        self.recorded += chunk["recorded"]
        self.refused += chunk["refused"]
        self.unknown += chunk["unknown"]
        self.celery_retries += chunk["celery_retries"]
        self.pids.update(chunk["pids"])

    def summary(self, shown: int = 5) -> str:
        rate = self.events / self.seconds if self.seconds else 0.0
        lines = [
            f"{self.events:,} events in {self.chunks:,} chunks through "
            f"{len(self.pids)} worker processes in {self.seconds:.1f} s ({rate:,.0f} events/s)",
            f"recorded:        {self.recorded:,}",
            f"refused:         {len(self.refused):,} (not recorded: safe to send again)",
            f"unknown outcome: {len(self.unknown):,} (may have been recorded: never resent)",
        ]
        if self.celery_retries:
            lines.append(f"celery retries:  {self.celery_retries}")
        for label, outcomes in (("refused", self.refused), ("unknown", self.unknown)):
            for o in sorted(outcomes, key=lambda o: o["position"])[:shown]:
                lines.append(f"  {label} events[{o['position']}]: {o['error']}: {o['message']}")
        for first, size, error in self.failed_chunks:
            lines.append(
                f"  chunk events[{first}:{first + size}] failed whole: "
                f"{type(error).__name__}: {error}"
            )
        return "\n".join(lines)


def track_events(
    app: Any,
    events: Iterable[dict[str, Any]],
    *,
    chunk_size: int = CHUNK_SIZE,
    window: int = 100,
    timeout: float = 600.0,
) -> JobReport:
    """Enqueues the events in chunks, at most ``window`` chunks waiting at once (the events
    are read as they are needed: a job of millions does not sit whole in Redis), and adds
    up every chunk's report. ``timeout`` bounds the whole job: a chunk not done by then is
    reported failed, its events of unknown outcome."""
    started = time.monotonic()
    deadline = started + timeout
    report = JobReport()
    pending: deque[tuple[int, int, Any]] = deque()

    def collect() -> None:
        first, size, result = pending.popleft()
        try:
            report.add(result.get(timeout=max(deadline - time.monotonic(), 0.1)))
        except Exception as e:  # the task failed whole (or not in time): its events unknown
            report.failed_chunks.append((first, size, e))

    for first, chunk in chunked(events, chunk_size):
        if len(pending) >= window:
            collect()
        result = app.send_task(TRACK_CHUNK, kwargs={"events": chunk, "first": first})
        pending.append((first, len(chunk), result))
        report.events += len(chunk)
        report.chunks += 1
    while pending:
        collect()
    report.seconds = time.monotonic() - started
    return report


def add_to_segment(
    app: Any,
    segment_id: int,
    hashes: list[str],
    *,
    chunk_size: int = HASH_CHUNK_SIZE,
    timeout: float = 600.0,
) -> int:
    """Adds the subscribers to the segment, in tasks of ``chunk_size``; how many were
    added. A chunk that still fails after the task's retries raises its pushwire error."""
    deadline = time.monotonic() + timeout
    results = [
        app.send_task(ADD_HASHES, kwargs={"segment_id": segment_id, "hashes": chunk})
        for _, chunk in chunked(hashes, chunk_size)
    ]
    return sum(int(r.get(timeout=max(deadline - time.monotonic(), 0.1))["added"]) for r in results)


def broadcast(
    app: Any,
    title: str,
    message: str,
    url: str,
    segment_ids: Optional[list[int]] = None,
    *,
    timeout: float = 120.0,
) -> BroadcastReport:
    """Sends a broadcast from a worker; the task's report (``notification_id``). An error
    whose outcome is unknown is raised here as the worker met it (``outcome_unknown``
    true): the broadcast may have gone out, so do not send it again without looking."""
    result = app.send_task(
        SEND_BROADCAST,
        kwargs={"title": title, "message": message, "url": url, "segment_ids": segment_ids},
    )
    report: BroadcastReport = result.get(timeout=timeout)
    return report


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000, help="generated events")
    parser.add_argument("--csv", type=Path, help="read the events from this CSV file instead")
    parser.add_argument("--chunk-size", type=int, default=CHUNK_SIZE)
    parser.add_argument("--timeout", type=float, default=600.0, help="for the whole job, s")
    args = parser.parse_args(argv)

    app = make_app()
    try:
        if args.csv:
            events: Iterable[dict[str, Any]] = events_from_csv(args.csv)
        else:
            events = events_from_frame(sample_frame(args.events))
        report = track_events(app, events, chunk_size=args.chunk_size, timeout=args.timeout)
        print(report.summary())
    finally:
        app.close()
    return 0 if not (report.refused or report.unknown or report.failed_chunks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
