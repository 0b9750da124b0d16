"""The emulator in this process (:class:`Emulator`): its seeding, inspection, faults and
clock, each an admin operation of the Rust core.

Each method names one admin operation (``/_emulator/{op}``) with its arguments.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import pathlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Optional, TypedDict, Union

from pushwire._core import EmulatorServer
from pushwire.resources.notifications import NewBroadcast

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack
from pushwire._testing._clients import _Clients
from pushwire._testing._controls import _Controls
from pushwire._testing._data import (
    _NOT_IN_THIS_PROCESS,
    DEFAULT_RETENTION,
    DateLike,
    Records,
    StrPath,
    _host_names,
    _jsonable,
    _retention,
    _with_times,
)
from pushwire._testing._http import RemoteServer, events_url_of
from pushwire._testing._inspector import _Inspection
from pushwire._testing._seeding import _Seeding


class _Settings(TypedDict, total=False):
    """The settings :meth:`Emulator.load` takes, as :class:`Emulator` takes them."""

    host: str
    port: int
    events_port: int
    record_requests: bool
    retention: int
    allowed_hosts: Iterable[str]
    admin_token: Optional[str]


class Emulator(_Seeding, _Controls, _Inspection, _Clients):
    """The whole API of the service, served from memory on 127.0.0.1 (free ports by default).

    Runs in-process on a background runtime; use it as a context manager or call
    :meth:`close`. Every method here is also an HTTP route ``/_emulator/{op}`` of
    :attr:`base_url`, so code in any language can drive the same emulator.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        events_port: int = 0,
        record_requests: bool = True,
        retention: int = DEFAULT_RETENTION,
        allowed_hosts: Iterable[str] = (),
        admin_token: Optional[str] = None,
        state: Optional[StrPath] = None,
        save_every: Optional[float] = None,
        start: Optional[_dt.datetime] = None,
    ) -> None:
        """``api_key``: the key of the default site; by default the one of the state read
        at start (``state``, :meth:`load`), else ``"test-key"``.

        ``retention``: how many requests the request log keeps, and events each site
        keeps, the oldest pruned first (0: all). The service's own state (subscribers,
        segments, campaigns, deliveries, analytics) is never pruned.

        ``allowed_hosts``: names besides IP addresses, ``localhost`` and this machine's name
        that requests may be addressed to (``Host``): a name, ``".example.com"`` for it and
        every name under it, or ``"*"`` for any. A request to any other name is refused
        (403), so that no web page can reach the emulator by rebinding its own name to
        127.0.0.1.

        ``admin_token``: when given, the admin routes and the inspector over HTTP ask for it
        (``Authorization: Bearer <token>``, or a sign-in in the browser); this object's own
        methods need none.

        ``state``: a file the whole state is kept in across restarts: read at start if it
        exists (a file that is not a sound state file of this version raises
        ``ValueError`` and is left as it is), else created at once; written on
        :meth:`close`, on :meth:`save` and every ``save_every`` seconds while anything
        changed.

        ``start``: the moment the emulator's clock starts at (an aware datetime, past or
        future), and goes back to at :meth:`reset`; it runs on from there. A notebook lays
        down weeks of history from a past day (:meth:`advance` between the days) and reads
        it back through ``analytics.summary``. Refused (``ValueError``) for a state read
        from a file that holds anything: its history has its own times."""
        if api_key == "":
            # None is "the saved one, or test-key"; an empty key is no key.
            raise ValueError("api_key must not be empty")
        retention = _retention(retention)
        self._server: Union[EmulatorServer, RemoteServer] = EmulatorServer(
            # Empty: the saved state's default key, or test-key.
            api_key if api_key is not None else "",
            host,
            port,
            events_port,
            _host_names(allowed_hosts),
            admin_token,
            state,
            save_every,
            self._load_from,
        )
        self.api_key = self._server.api_key
        # The settings it was made with, which the pytest fixture restores for each test.
        self.record_requests = record_requests
        self.retention = retention
        # The pytest fixture's, shared by the session: no test may stop it for the rest.
        self._shared = False
        if not record_requests:
            self.set_request_log(False)
        # A state read from a file holds what its emulator's retention kept.
        if retention != DEFAULT_RETENTION or state is not None or self._load_from is not None:
            self.set_retention(retention)
        self._start = start
        if start is not None:
            try:
                self.travel_to(start)
            except BaseException:
                self.close()
                raise

    # The clock's start (`start=`), for `reset` to go back to.
    _start: Optional[_dt.datetime] = None

    def reset(self) -> None:
        """Back to a fresh state: only the default site, no data, no faults, the clock at wall
        time (running, on the system's clock: no longer following Python's), or at ``start``
        for an emulator made with one."""
        super().reset()
        if self._start is not None:
            self.travel_to(self._start)

    def follow_python_clock(self, follow: bool = True) -> None:
        """Makes the emulator's clock this Python process's clock: it reads ``time.time()``
        each time it needs the time, so that time-machine and freezegun move the emulator
        with the code under test, and a time the code computes from ``datetime.now()`` is
        the emulator's now. ``follow=False`` goes back to the system's clock, running on from
        where it stands; :meth:`reset` does too. While following, :meth:`advance` and
        :meth:`travel_to` still move the emulator's clock from Python's, and a Python clock
        moved back moves the emulator back (what was delivered stays delivered).

        For an emulator in this process only: one in another process
        (:class:`EmulatorProcess`, :meth:`connect`) cannot read this process's clock, and
        refuses with ``RuntimeError``; move it with :meth:`travel_to` or :meth:`advance`.
        The pytest fixture ``pushwire_emulator_python_clock`` is the ``pushwire_emulator``
        following the clock for one test."""
        if not isinstance(self._server, EmulatorServer):
            raise RuntimeError(_NOT_IN_THIS_PROCESS)
        self._server.follow_python_clock(bool(follow))

    # The state file an emulator starts from without writing to it (set by `load`).
    _load_from: Optional[StrPath] = None

    @classmethod
    def load(
        cls, path: StrPath, api_key: Optional[str] = None, **settings: Unpack[_Settings]
    ) -> Self:
        """An emulator started from the state saved in ``path`` (by :meth:`save`, or by an
        emulator's ``state`` file), which it never writes to: a test can start from a
        seeded snapshot and change what it likes. ``api_key`` defaults to the saved
        emulator's; the other settings are :class:`Emulator`'s (``state`` and
        ``save_every`` aside). A file that is not a sound state file of this version raises
        ``ValueError``; a missing one ``FileNotFoundError``."""
        emu = cls.__new__(cls)
        emu._load_from = path
        cls.__init__(emu, api_key, **settings)
        return emu

    @classmethod
    def connect(
        cls,
        base_url: str,
        admin_token: Optional[str] = None,
        *,
        api_key: Optional[str] = None,
        events_url: Optional[str] = None,
    ) -> Self:
        """A handle on an emulator that is already running (``python -m pushwire.emulator``,
        a compose service, an :class:`EmulatorProcess`), with every method of an in-process
        one (seeding, records, faults, the clock, :meth:`save` to its own state file), each
        sent to its admin routes. :meth:`close` (or leaving ``with``) lets go of it and
        leaves it running.

        ``admin_token``: the emulator's ``--admin-token``, if it has one. ``api_key``: the
        key of the site :meth:`client` and the ``api_key`` arguments default to (default:
        ``PUSHWIRE_API_KEY``, else ``"test-key"``, the command's own default); refused with
        ``ValueError`` when no site of that emulator has it. ``events_url``: its
        event-tracking interface, by default read from the emulator (its port, at the host of
        ``base_url``)."""
        base = base_url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
        if api_key is None:
            api_key = os.environ.get("PUSHWIRE_API_KEY") or "test-key"
        if events_url is None:
            events_url = events_url_of(base, admin_token)
        emu = cls.__new__(cls)
        emu._server = RemoteServer(base, events_url.rstrip("/"), api_key, admin_token)
        emu.api_key = api_key
        try:
            settings = emu.retention_stats(api_key=api_key)
        except ValueError:
            raise ValueError(
                f"the emulator at {base} has no site with the api_key given "
                "(api_key=, else PUSHWIRE_API_KEY, else test-key): pass its key as api_key"
            ) from None
        emu.record_requests = True
        emu.retention = int(settings["retention"])
        emu._shared = False
        return emu

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Stops the emulator, then saves its state to its ``state`` file if it has one
        (``OSError`` or ``ValueError`` if that save fails; the state is still held then, and
        :meth:`save` with another path writes it). The ``pushwire_emulator`` fixture's
        emulator serves the whole session: closing it (or leaving ``with pushwire_emulator as
        emu:``) does nothing, so that one test cannot stop it for every test after it."""
        if not self._shared:
            self._server.stop()

    def __repr__(self) -> str:
        return f"Emulator(base_url={self.base_url!r}, events_url={self.events_url!r})"

    @property
    def state_file(self) -> Optional[pathlib.Path]:
        """The file the state is kept in (``state``); None without one, and once closed."""
        return self._server.state_file

    def save(self, path: Optional[StrPath] = None) -> pathlib.Path:
        """Writes the whole state (every site's subscribers, segments, campaigns, broadcasts,
        deliveries, schedule, products, events, the request log and the clock; not armed
        faults) to ``path``, by default the ``state`` file, and returns where it went. The
        write is atomic: ``path`` holds its old content or the whole new one, whatever
        happens meanwhile. :meth:`load` reads it back."""
        written, _, _ = self._server.save(path)
        return written

    @property
    def notice(self) -> Optional[str]:
        """What the emulator says at start when it listens beyond this machine (``host``
        ``0.0.0.0`` or a network interface's address); None on loopback."""
        return self._server.notice

    @property
    def base_url(self) -> str:
        """Root of the main interface (without ``/apiv1``)."""
        return self._server.base_url

    @property
    def events_url(self) -> str:
        """Root of the event-tracking interface (without ``/api/v1``)."""
        return self._server.events_url

    @property
    def site_id(self) -> int:
        """The id of the site of :attr:`api_key`."""
        return int(self._call("add_site", api_key=self.api_key)["site_id"])

    def _call(self, op: str, **args: Any) -> Any:
        return json.loads(self._server.admin(op, self._arguments(args)))

    def _arguments(self, args: dict[str, Any]) -> str:
        """An operation's arguments as JSON, those not given left out; an ``api_key`` not
        given is this handle's (a connected emulator's may name a site other than its
        default one)."""
        if "api_key" in args and args["api_key"] is None:
            args["api_key"] = self.api_key
        clean = {k: v for k, v in args.items() if v is not None}
        return json.dumps(clean, default=_jsonable)

    def _rows(self, op: str, **args: Any) -> list[dict[str, Any]]:
        """A page of ``subscribers`` or ``deliveries``, its dicts made by the core."""
        return self._server.rows(op, self._arguments(args))

    # -- what the service did ----------------------------------------------------------------
    def deliveries(
        self,
        subscriber_hash: Optional[str] = None,
        *,
        status: str = "delivered",
        notification_id: Optional[int] = None,
        source: Optional[str] = None,
        source_id: Optional[int] = None,
        since: Optional[DateLike] = None,
        until: Optional[DateLike] = None,
        limit: Optional[int] = None,
        offset: int = 0,
        after: Optional[int] = None,
        api_key: Optional[str] = None,
    ) -> list[dict[str, Any]]:
        """Notifications the service handed to subscribers' devices, in the order sent.
        Filtered and paged in the emulator, so that a test over a million deliveries reads
        only what it asks for: ``notification_id``, ``source`` and ``source_id``, sent (or
        queued) ``since`` (inclusive) and ``until`` (exclusive), then ``offset`` and
        ``limit``; the order is stable from page to page while nothing is sent meanwhile.
        ``after`` (a ``delivery_id``, the last of the page before) starts after that
        delivery: each page then costs its own rows, where an ``offset`` is counted from the
        start, so reading millions a page at a time goes by ``after``.

        Each has ``delivery_id``, ``subscriber_hash``, ``title``, ``message``, ``url``,
        ``sent_at`` (aware datetime, UTC), ``source`` (``"broadcast"``, ``"drip"`` or
        ``"trigger"``), ``source_id``, ``notification_id``, and ``status``. ``status``
        selects ``"delivered"`` (the default), ``"pending"`` (waiting for an offline
        device), ``"expired"``, ``"capped"`` (a triggered message held back by the campaign's
        daily or weekly cap: never sent) or ``"all"``. A ``subscriber_hash`` of no subscriber raises
        ``ValueError``, so that a misspelt one cannot read as "received nothing".
        """
        return self._rows(
            "deliveries",
            subscriber_hash=subscriber_hash,
            status=status,
            notification_id=notification_id,
            source=source,
            source_id=source_id,
            since=since,
            until=until,
            limit=limit,
            offset=offset or None,
            after=after,
            api_key=api_key,
        )

    def record_view(self, delivery_id: int, *, api_key: Optional[str] = None) -> None:
        """The subscriber saw the notification (counts as a view in analytics)."""
        self._call("record_view", delivery_id=delivery_id, api_key=api_key)

    def record_click(self, delivery_id: int, *, api_key: Optional[str] = None) -> None:
        """The subscriber clicked the notification (counts as a click in analytics)."""
        self._call("record_click", delivery_id=delivery_id, api_key=api_key)

    def record_views(
        self,
        delivery_ids: Optional[Iterable[int]] = None,
        *,
        rate: Optional[float] = None,
        notification_id: Optional[int] = None,
        source: Optional[str] = None,
        source_id: Optional[int] = None,
        seed: Optional[int] = None,
        api_key: Optional[str] = None,
    ) -> int:
        """Views recorded in bulk, at the emulator's now: on each of ``delivery_ids`` (all
        checked first: one that does not exist, or was not delivered, raises and records
        none), or on a ``rate`` share of the delivered notifications (those of
        ``notification_id``, or of ``source`` and ``source_id``, when given; ``seed`` makes
        the draw the same on every run). A delivery keeps its first view. How many were
        recorded: a history of a million deliveries a day in a call each."""
        return self._record_many("record_views", delivery_ids, rate, notification_id,
                                 source, source_id, seed, api_key)  # fmt: skip

    def record_clicks(
        self,
        delivery_ids: Optional[Iterable[int]] = None,
        *,
        rate: Optional[float] = None,
        notification_id: Optional[int] = None,
        source: Optional[str] = None,
        source_id: Optional[int] = None,
        seed: Optional[int] = None,
        api_key: Optional[str] = None,
    ) -> int:
        """Clicks recorded in bulk, as :meth:`record_views` records views."""
        return self._record_many("record_clicks", delivery_ids, rate, notification_id,
                                 source, source_id, seed, api_key)  # fmt: skip

    def _record_many(
        self,
        op: str,
        delivery_ids: Optional[Iterable[int]],
        rate: Optional[float],
        notification_id: Optional[int],
        source: Optional[str],
        source_id: Optional[int],
        seed: Optional[int],
        api_key: Optional[str],
    ) -> int:
        ids = None if delivery_ids is None else [int(i) for i in delivery_ids]
        answer = self._call(
            op,
            delivery_ids=ids,
            rate=rate,
            notification_id=notification_id,
            source=source,
            source_id=source_id,
            seed=seed,
            api_key=api_key,
        )
        return int(answer["recorded"])

    # -- what the service received and holds -------------------------------------------------
    def requests(
        self,
        path: Optional[str] = None,
        *,
        method: Optional[str] = None,
        status: Optional[int] = None,
        since: Optional[DateLike] = None,
        until: Optional[DateLike] = None,
        limit: Optional[int] = None,
        offset: int = 0,
    ) -> Records:
        """The API requests received, oldest first, with the key redacted: the most recent
        ``retention`` of them (``.pruned`` counts those dropped before). Each has
        ``request_id``, ``interface``, ``method``, ``path``, ``query``, ``headers``,
        ``body``, ``status`` and ``duration_ms`` (both ``None`` for a request whose client
        went away before the answer was written: a timeout, a dropped connection),
        ``received_at`` (aware, UTC), the ``fault`` it met (``None`` without one), and its
        ``trace_id`` (from its W3C ``traceparent``, as ``pushwire.otel`` sends it; ``None``
        without one), to join the request to the client's trace. Filtered and paged
        in the emulator: ``path`` (a prefix when it ends with ``*``), ``method``, ``status``,
        received ``since`` (inclusive) and ``until`` (exclusive), then ``offset`` and
        ``limit`` (``.total`` counts every match)."""
        answer = self._call(
            "requests",
            meta=True,
            path=path,
            method=method,
            status=status,
            since=since,
            until=until,
            limit=limit,
            offset=offset or None,
        )
        _with_times(answer["entries"])
        return Records(answer)

    def set_retention(self, retention: int) -> None:
        """Keeps the most recent ``retention`` requests and events per site from now on (0:
        all), pruning what is over it now; ``reset`` keeps the setting."""
        self._call("set_retention", retention=_retention(retention))

    def retention_stats(self, *, api_key: Optional[str] = None) -> dict[str, Any]:
        """``{"retention": n, "requests": {"kept", "pruned"}, "events": {"kept", "pruned"}}``
        (the events of ``api_key``'s site)."""
        out: dict[str, Any] = self._call("retention", api_key=api_key)
        return out

    def set_request_log(self, enabled: bool) -> None:
        """Turns the request log on or off (off for load tests; ``reset`` keeps the setting)."""
        self._call("set_request_log", enabled=enabled)

    def clear_requests(self) -> None:
        """Empties the request log (:meth:`requests`), of every site."""
        self._call("clear_requests")

    def subscribers(
        self,
        *,
        limit: Optional[int] = None,
        offset: int = 0,
        api_key: Optional[str] = None,
    ) -> list[dict[str, Any]]:
        """The subscribers of the site, in the order they were added, with their fields,
        ``segments`` (ids, as ``str``), ``subscribed_at`` and ``unsubscribed_at`` (aware
        datetimes, UTC): every one, or the page from ``offset`` of at most ``limit``, read
        where it lies (a page of a site of millions costs its own rows)."""
        return self._rows("subscribers", limit=limit, offset=offset or None, api_key=api_key)

    def segments(
        self, *, members: bool = True, api_key: Optional[str] = None
    ) -> list[dict[str, Any]]:
        """Every segment of the site: ``segment_id`` (a ``str``, as :meth:`create_segment`
        and ``segments.list()`` give it), ``segment_name``, ``segment_type``, ``created_at``,
        ``member_count`` and its ``members`` (subscriber hashes, in the order they
        subscribed); ``members=False`` leaves the lists out, for a site of millions."""
        rows = _with_times(self._call("segments", members=members, api_key=api_key))
        for row in rows:
            row["segment_id"] = str(row["segment_id"])
        return rows

    def notifications(self, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        """Every broadcast created, oldest first, with its ``status``, ``created_at`` and
        ``request``."""
        return _with_times(self._call("notifications", api_key=api_key))

    def audience(
        self, broadcast: Union[NewBroadcast, Mapping[str, Any]], *, api_key: Optional[str] = None
    ) -> int:
        """How many subscribers ``broadcast`` would be handed to if it went out now, by the
        rules a broadcast is sent by (its filters; who has subscribed; no one unsubscribed):
        nothing is sent and nothing changes. ``broadcast`` is a :class:`~pushwire.
        NewBroadcast`, or a broadcast's fields under the spec's names (a ``request`` of
        :meth:`notifications`)."""
        fields = broadcast.spec_fields() if isinstance(broadcast, NewBroadcast) else broadcast
        answer = self._call("audience", **fields, api_key=api_key)
        return int(answer["subscribers"])

    def events(self, *, api_key: Optional[str] = None) -> Records:
        """The events tracked, oldest first: the most recent ``retention`` of them
        (``.pruned`` counts those dropped before)."""
        answer = self._call("events", api_key=api_key, meta=True)
        _with_times(answer["entries"])
        return Records(answer)

    def products(self, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        """The latest state of every product updated, with its ``updated_at``."""
        return _with_times(self._call("products", api_key=api_key))
