"""An emulator's faults, clock and reset (:class:`_Controls`), each an admin operation, for
:class:`~pushwire.testing.Emulator`, which runs them in-process."""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from typing import Any, Optional, Protocol, Union

from pushwire._testing._data import _parse_time


class _Admin(Protocol):
    def _call(self, op: str, **args: Any) -> Any: ...


class _Controls:
    """Faults, the clock, and the reset to a fresh state."""

    def inject_fault(
        self: _Admin,
        path: str,
        *,
        status: Optional[int] = None,
        times: int = 1,
        retry_after: Optional[int] = None,
        delay: Optional[float] = None,
        drop: Union[bool, str] = False,
        method: Optional[str] = None,
        body: Any = None,
        processed: bool = False,
        headers: Optional[Mapping[str, Union[str, int, Sequence[Union[str, int]]]]] = None,
    ) -> None:
        """Makes the next ``times`` requests to ``path`` (a prefix when it ends with ``*``) fail:
        answer ``status`` (with ``Retry-After: retry_after``), wait ``delay`` seconds first, or
        drop the connection without an answer, ``"before"`` (or ``True``) the request is
        processed or ``"after"``. Both close the connection after the client has written the
        request, so the client cannot tell them apart: a write that would repeat an effect (a
        broadcast) raises ``APIConnectionError`` with ``outcome_unknown=True`` and is not
        retried, while a read or an idempotent write is retried; only the emulator's state
        shows whether the request was acted on. No fault makes a request the client knows was
        never sent: the fault is keyed on the path, read from the request's bytes, and a
        connection closed at accept has already been written into. To test that path, point a
        client at a port nothing listens on: the connect is refused, ``outcome_unknown`` is
        False, and the call is retried. ``body`` replaces the error body of a ``status`` fault.

        ``headers`` are added to the answer: the ``status`` fault's, or without a status the
        route's own answer (a gateway's ``X-Request-Id``, a ``Set-Cookie``); a list sends the
        header once per value. Framing headers (``Content-Length``, ...) are refused.

        Without ``processed`` a ``status`` or ``delay`` fault comes before the request is
        processed: the service did nothing. With ``processed=True`` the request is processed
        first, then the delay waited and the status answered: a broadcast was sent though the
        client hears a 500 (or times out), the case ``outcome_unknown`` stands for. The
        request log's ``fault`` key names the fault each request met."""
        self._call(
            "inject_fault",
            path=path,
            status=status,
            times=times,
            retry_after=retry_after,
            delay=delay,
            drop=drop,
            method=method,
            body=body,
            processed=processed,
            headers=None
            if headers is None
            else {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in headers.items()},
        )

    def inject_random_faults(
        self: _Admin,
        rate: float,
        *,
        kinds: Optional[list[str]] = None,
        delay: float = 2.0,
        seed: Optional[int] = None,
        path: str = "/",
    ) -> int:
        """Makes a share ``rate`` (0 to 1) of the requests under ``path`` fail, each with one of
        ``kinds`` chosen at random: ``"500"``, ``"503"`` (with ``Retry-After: 0``), ``"429"``
        (the same), ``"delay"`` (``delay`` seconds), ``"drop_before"``, ``"drop_after"`` (all
        by default). Returns the seed, to replay a run. :meth:`clear_faults` stops it."""
        out = self._call(
            "inject_random_faults", rate=rate, kinds=kinds, delay=delay, seed=seed, path=path
        )
        return int(out["seed"])

    def fault_stats(self: _Admin) -> dict[str, int]:
        """How many random faults of each kind were injected since :meth:`inject_random_faults`."""
        out: dict[str, int] = self._call("fault_stats")
        return out

    def clear_faults(self: _Admin) -> None:
        self._call("clear_faults")

    @property
    def now(self: _Admin) -> _dt.datetime:
        """The emulator's clock (aware, UTC): wall time plus what :meth:`advance` added."""
        return _parse_time(self._call("now")["now"])

    def advance(self: _Admin, seconds: Union[float, _dt.timedelta]) -> _dt.datetime:
        """Moves the emulator's clock forward (seconds, or a ``timedelta``); returns the new
        time."""
        if isinstance(seconds, _dt.timedelta):
            seconds = seconds.total_seconds()
        if isinstance(seconds, float) and not math.isfinite(seconds):
            raise ValueError("seconds must be a finite number")
        return _parse_time(self._call("advance", seconds=seconds)["now"])

    def travel_to(self: _Admin, when: _dt.datetime) -> _dt.datetime:
        """Moves the emulator's clock forward to ``when`` (an aware datetime); returns the new
        time. A test of what happens at a time of day, in the site's zone, then runs the same
        whenever it runs. Once anything has happened, the clock never goes back (before that,
        ``when`` may be any moment: ``Emulator(start=...)``)."""
        if when.utcoffset() is None:
            raise ValueError(
                "when must be an aware datetime (a naive one has no instant: give its tzinfo)"
            )
        iso_time = when.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
        return _parse_time(self._call("travel_to", time=iso_time)["now"])

    def freeze_clock(self: _Admin, frozen: bool = True) -> _dt.datetime:
        """Stops the emulator's clock (``frozen=False`` lets it run on from where it stands);
        returns its time. Frozen, it moves only with :meth:`advance` and :meth:`travel_to`, so
        "not delivered yet, one second before it is due" holds however slowly a test runs.
        :meth:`reset` lets it run again."""
        return _parse_time(self._call("freeze_clock", frozen=frozen)["now"])

    def reset(self: _Admin) -> None:
        """Back to a fresh state: only the default site, no data, no faults, clock at wall time
        (running)."""
        self._call("reset")
