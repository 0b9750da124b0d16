"""A faithful local emulator of the push notification service, for tests and demos.

>>> from pushwire.testing import Emulator
>>> with Emulator(api_key="test-key") as emu:
...     vip = emu.create_segment("vip")
...     # point your code at emu.base_url / emu.events_url with emu.api_key
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import weakref
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Optional, Protocol, SupportsIndex, TypedDict, Union

from pushwire._args import Seconds
from pushwire._client import AsyncClient, Client
from pushwire._core import EmulatorServer

if TYPE_CHECKING:
    # Only the type checker reads it (typeshed ships it): no runtime dependency.
    from typing_extensions import Unpack


class _ClientOptions(TypedDict, total=False):
    """The keywords of ``Client``/``AsyncClient`` besides the URLs, which the emulator sets:
    a misspelt one is caught by the type checker, as it is in the constructors."""

    api_key: Optional[str]
    timeout: Optional[Seconds]
    max_retries: SupportsIndex
    default_headers: Optional[Mapping[str, str]]
    allow_insecure: bool
    backoff_base: Seconds
    ca_bundle: Optional[Union[str, os.PathLike[str]]]
    proxy: Optional[str]
    max_connections: Optional[SupportsIndex]
    max_response_size: SupportsIndex


DateLike = Union[_dt.date, _dt.datetime, str]

__all__ = ["DEFAULT_RETENTION", "Emulator", "EmulatorProcess", "Records"]

# How many requests the request log keeps, and events each site keeps, by default.
DEFAULT_RETENTION = 10_000


class Records(list[dict[str, Any]]):
    """The records the emulator kept, oldest first (a plain list of dicts), with
    :attr:`pruned`, how many older ones the retention dropped, :attr:`retention`, how many
    it keeps (0: all), and :attr:`total`, how many matched the filters before the page was
    cut (``limit``/``offset``)."""

    pruned: int
    retention: int
    total: int

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer["entries"])
        self.pruned = int(answer["pruned"])
        self.retention = int(answer["retention"])
        self.total = int(answer.get("total", len(self)))


def _retention(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"retention must be a whole number of entries, 0 to keep all, not {value!r}"
        )
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return value.isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# A distribution of a generated population's field: values each as likely, or a mapping of
# value to weight.
Distribution = Union[Sequence[Any], Mapping[Any, float], range]


def _distribution(field: str, dist: Distribution) -> dict[str, list[Any]]:
    """``dist`` in the form the emulator reads (``{"values": [...], "weights": [...]}``),
    checked here so that a mistake names its field before anything is sent."""
    if isinstance(dist, Mapping):
        values, weights = list(dist.keys()), list(dist.values())
    elif isinstance(dist, (str, bytes)) or not isinstance(dist, (Sequence, range)):
        raise ValueError(
            f"{field} must be a list of values (each as likely) or a dict of value to "
            f"weight, not {type(dist).__name__}"
        )
    else:
        values, weights = list(dist), [1.0] * len(dist)
    if not values:
        raise ValueError(f"{field} has no values")
    for w in weights:
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not w >= 0 or w == math.inf:
            raise ValueError(f"{field}: a weight must be a number from 0 up, not {w!r}")
    if not sum(weights) > 0:
        raise ValueError(f"{field}: the weights add up to 0")
    return {"values": values, "weights": weights}


def _column(values: list[Any]) -> list[Any]:
    """A frame's column as the emulator reads it: a missing cell (``NaN``, ``NaT``,
    ``None``) is no value."""
    return [None if v is None or (v != v) is True else v for v in values]


def _frame_columns(frame: Any) -> Optional[dict[str, list[Any]]]:
    """A pandas or polars data frame as lists by column; ``None`` for anything else."""
    module = type(frame).__module__
    if module.startswith("pandas") and hasattr(frame, "columns"):
        return {str(c): _column(frame[c].tolist()) for c in frame.columns}
    if module.startswith("polars") and hasattr(frame, "to_dict"):
        return {str(k): _column(v) for k, v in frame.to_dict(as_series=False).items()}
    return None


def _parse_time(s: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


class _Urls(Protocol):
    @property
    def api_key(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def events_url(self) -> str: ...


class _Clients:
    """Clients pointed at an emulator, in this process or its own."""

    def client(self: _Urls, **kwargs: Unpack[_ClientOptions]) -> Client:
        """A :class:`pushwire.Client` pointed at this emulator (keywords as for ``Client``)."""
        kwargs.setdefault("api_key", self.api_key)
        return Client(base_url=self.base_url, events_url=self.events_url, **kwargs)

    def async_client(self: _Urls, **kwargs: Unpack[_ClientOptions]) -> AsyncClient:
        """A :class:`pushwire.AsyncClient` pointed at this emulator (keywords as for
        ``AsyncClient``)."""
        kwargs.setdefault("api_key", self.api_key)
        return AsyncClient(base_url=self.base_url, events_url=self.events_url, **kwargs)


class Emulator(_Clients):
    """The whole API of the service, served from memory on 127.0.0.1 (free ports by default).

    Runs in-process on a background runtime; use it as a context manager or call
    :meth:`close`. Every method here is also an HTTP route ``/_emulator/{op}`` of
    :attr:`base_url`, so code in any language can drive the same emulator.
    """

    def __init__(
        self,
        api_key: str = "test-key",
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        events_port: int = 0,
        record_requests: bool = True,
        retention: int = DEFAULT_RETENTION,
    ) -> None:
        """``retention``: how many requests the request log keeps, and events each site
        keeps, the oldest pruned first (0: all). The service's own state (subscribers,
        segments, campaigns, deliveries, analytics) is never pruned."""
        retention = _retention(retention)
        self._server = EmulatorServer(api_key, host, port, events_port)
        self.api_key = api_key
        # The settings it was made with, which the pytest fixture restores for each test.
        self.record_requests = record_requests
        self.retention = retention
        # The pytest fixture's, shared by the session: no test may stop it for the rest.
        self._shared = False
        if not record_requests:
            self.set_request_log(False)
        if retention != DEFAULT_RETENTION:
            self.set_retention(retention)

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Stops the emulator. The ``pushwire_emulator`` fixture's emulator serves the whole
        session: closing it (or leaving ``with pushwire_emulator as emu:``) does nothing, so
        that one test cannot stop it for every test after it."""
        if not self._shared:
            self._server.stop()

    def __enter__(self) -> Emulator:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Emulator(base_url={self.base_url!r}, events_url={self.events_url!r})"

    @property
    def base_url(self) -> str:
        """Root of the main interface (without ``/apiv1``)."""
        return self._server.base_url

    @property
    def events_url(self) -> str:
        """Root of the event-tracking interface (without ``/api/v1``)."""
        return self._server.events_url

    @property
    def ui_url(self) -> str:
        """The inspector page: what the emulator saw, live, in a browser."""
        return f"{self.base_url}/_emulator/ui"

    @property
    def site_id(self) -> int:
        """The id of the site of :attr:`api_key`."""
        return int(self._call("add_site", api_key=self.api_key)["site_id"])

    def _call(self, op: str, **args: Any) -> Any:
        clean = {k: v for k, v in args.items() if v is not None}
        return json.loads(self._server.admin(op, json.dumps(clean, default=_jsonable)))

    # -- seeding -----------------------------------------------------------------------------
    def add_site(self, api_key: str, *, timezone: Optional[str] = None) -> int:
        """Adds a site with its own key and data; returns its site id. ``timezone`` is a UTC
        offset (``"+05:30"``); scheduled broadcasts and drip times are read in it."""
        return int(self._call("add_site", api_key=api_key, timezone=timezone)["site_id"])

    def set_timezone(self, timezone: str, *, api_key: Optional[str] = None) -> None:
        """Sets the site's time zone as a UTC offset (``"+05:30"``, ``"-08:00"``, ``"UTC"``)."""
        self._call("set_timezone", timezone=timezone, api_key=api_key)

    def add_subscriber(
        self,
        subscriber_hash: Optional[str] = None,
        profile_id: Optional[str] = None,
        country: Optional[str] = None,
        state: Optional[str] = None,
        city: Optional[str] = None,
        device: Optional[str] = None,
        device_type: Optional[str] = None,
        browser: Optional[str] = None,
        platform: Optional[str] = None,
        attributes: Optional[dict[str, Any]] = None,
        subscribed_at: Optional[DateLike] = None,
        *,
        segments: Optional[list[int]] = None,
        online: bool = True,
        api_key: Optional[str] = None,
    ) -> str:
        """Adds a subscriber (to the default site, or the site of ``api_key``); returns its hash."""
        out = self._call(
            "add_subscriber",
            subscriber_hash=subscriber_hash,
            profile_id=profile_id,
            country=country,
            state=state,
            city=city,
            device=device,
            device_type=device_type,
            browser=browser,
            platform=platform,
            attributes=attributes,
            subscribed_at=subscribed_at,
            segments=segments,
            online=online,
            api_key=api_key,
        )
        return str(out["subscriber_hash"])

    def add_subscribers(
        self, subscribers: Union[Iterable[Mapping[str, Any]], Any], *, api_key: Optional[str] = None
    ) -> list[str]:
        """Adds many subscribers in one call; returns their hashes, in order.

        ``subscribers`` is a list (or any iterable) of dicts with the keywords of
        :meth:`add_subscriber`, or a pandas or polars data frame whose columns are those
        fields; a column named ``attributes.<name>`` is that attribute, and a missing cell
        (``None``, ``NaN``, ``NaT``) is no value. A row without ``subscriber_hash`` gets a
        random one. Everything is checked first: one bad row (named by its position) adds
        none of them.
        """
        columns = _frame_columns(subscribers)
        if columns is not None:
            out = self._call("add_subscribers", columns=columns, hashes=True, api_key=api_key)
        else:
            if isinstance(subscribers, (str, bytes, Mapping)) or not isinstance(
                subscribers, Iterable
            ):
                raise ValueError(
                    "subscribers must be a list of dicts (one a subscriber) or a data frame, "
                    f"not {type(subscribers).__name__}"
                )
            rows = list(subscribers)
            for i, row in enumerate(rows):
                if not isinstance(row, Mapping):
                    raise ValueError(
                        f"row {i}: a subscriber must be a dict of its fields, "
                        f"not {type(row).__name__}"
                    )
            out = self._call("add_subscribers", rows=rows, hashes=True, api_key=api_key)
        return list(out["subscriber_hashes"])

    def generate_subscribers(
        self,
        count: int,
        *,
        country: Optional[Distribution] = None,
        state: Optional[Distribution] = None,
        city: Optional[Distribution] = None,
        device: Optional[Distribution] = None,
        device_type: Optional[Distribution] = None,
        browser: Optional[Distribution] = None,
        platform: Optional[Distribution] = None,
        attributes: Optional[Mapping[str, Distribution]] = None,
        subscribed_between: Optional[tuple[DateLike, DateLike]] = None,
        online: float = 1.0,
        segments: Optional[Mapping[int, float]] = None,
        seed: Optional[int] = None,
        api_key: Optional[str] = None,
    ) -> int:
        """Adds ``count`` subscribers drawn from distributions, in the emulator (a million
        in about a second); returns how many were added.

        Each field is a list of values (each as likely) or a dict of value to weight
        (``country={"US": 0.6, "DE": 0.4}``); ``None`` as a value leaves the field empty.
        ``attributes`` maps a name to such a distribution (``{"plan": {"free": 8, "pro":
        2}, "age": range(18, 80)}``). ``subscribed_between=(start, end)`` spreads the
        join dates uniformly (else all join now); ``online`` is the share of devices
        online; ``segments`` maps a segment id to the share of the population in it.
        ``seed`` makes the population the same on every run.
        """
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be a whole number from 0 up, not {count!r}")
        fields: dict[str, Any] = {}
        drawn = {
            "country": country,
            "state": state,
            "city": city,
            "device": device,
            "device_type": device_type,
            "browser": browser,
            "platform": platform,
        }
        for name, dist in drawn.items():
            if dist is not None:
                fields[name] = _distribution(name, dist)
        if attributes is not None:
            fields["attributes"] = {
                str(k): _distribution(f"attributes.{k}", d) for k, d in attributes.items()
            }
        if subscribed_between is not None:
            if not isinstance(subscribed_between, (tuple, list)) or len(subscribed_between) != 2:
                raise ValueError("subscribed_between must be (start, end)")
            fields["subscribed_between"] = list(subscribed_between)
        if isinstance(online, bool) or not isinstance(online, (int, float)) or not 0 <= online <= 1:
            raise ValueError(f"online must be a share from 0 to 1, not {online!r}")
        for seg, share in (segments or {}).items():
            if (
                isinstance(share, bool)
                or not isinstance(share, (int, float))
                or not 0 <= share <= 1
            ):
                raise ValueError(f"segments[{seg!r}] must be a share from 0 to 1, not {share!r}")
        out = self._call(
            "generate_subscribers",
            count=count,
            online=online,
            segments={str(k): v for k, v in segments.items()} if segments else None,
            seed=seed,
            api_key=api_key,
            **fields,
        )
        return int(out["added"])

    def create_segment(
        self, name: str, *, segment_type: str = "custom", api_key: Optional[str] = None
    ) -> int:
        """Creates a segment; returns its id. ``segment_type`` other than ``custom`` (``geo``,
        ``device``, ``browser``) makes one of the service's own, listed with
        ``segment_type=all``."""
        out = self._call("create_segment", name=name, segment_type=segment_type, api_key=api_key)
        return int(out["segment_id"])

    def create_trigger(self, **fields: Any) -> int:
        """Creates a triggered campaign from the fields of spec 2.1; returns its
        ``trigger_id``. ``rules`` and ``campaign_name`` are required. A campaign read from
        the service is taken as it is (``create_trigger(**campaign.to_dict())``): its ids,
        dates and analytics are left out."""
        return int(self._call("create_trigger", **fields)["trigger_id"])

    def set_online(
        self, subscriber_hash: str, online: bool, *, api_key: Optional[str] = None
    ) -> None:
        """Takes a subscriber's device offline (notifications wait for it, until they expire)
        or back online (what waits and has not expired is delivered now)."""
        self._call("set_online", subscriber_hash=subscriber_hash, online=online, api_key=api_key)

    def unsubscribe(self, subscriber_hash: str, *, api_key: Optional[str] = None) -> None:
        """The subscriber unsubscribes now: nothing more reaches them, and analytics count it."""
        self._call("unsubscribe", subscriber_hash=subscriber_hash, api_key=api_key)

    def add_alert(
        self,
        subscriber_hash: str,
        product_id: str,
        variant_id: Optional[str] = None,
        *,
        api_key: Optional[str] = None,
    ) -> None:
        """The subscriber asks to hear of the product's price drop or return to stock."""
        self._call(
            "add_alert",
            subscriber_hash=subscriber_hash,
            product_id=product_id,
            variant_id=variant_id,
            api_key=api_key,
        )

    def alerts(self, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self._call("alerts", api_key=api_key)
        return out

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
        api_key: Optional[str] = None,
    ) -> list[dict[str, Any]]:
        """Notifications the service handed to subscribers' devices, in the order sent.
        Filtered and paged in the emulator, so that a test over a million deliveries reads
        only what it asks for: ``notification_id``, ``source`` and ``source_id``, sent (or
        queued) ``since`` (inclusive) and ``until`` (exclusive), then ``offset`` and
        ``limit``; the order is stable from page to page while nothing is sent meanwhile.

        Each has ``delivery_id``, ``subscriber_hash``, ``title``, ``message``, ``url``,
        ``sent_at`` (aware datetime, UTC), ``source`` (``"broadcast"``, ``"drip"`` or
        ``"trigger"``), ``source_id``, ``notification_id``, and ``status``. ``status``
        selects ``"delivered"`` (the default), ``"pending"`` (waiting for an offline
        device), ``"expired"``, ``"capped"`` (a triggered message held back by the campaign's
        daily or weekly cap: never sent) or ``"all"``. A ``subscriber_hash`` of no subscriber raises
        ``ValueError``, so that a misspelt one cannot read as "received nothing".
        """
        rows: list[dict[str, Any]] = self._call(
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
            api_key=api_key,
        )
        for row in rows:
            for key in ("sent_at", "queued_at", "expires_at", "viewed_at", "clicked_at"):
                if row.get(key):
                    row[key] = _parse_time(row[key])
        return rows

    def record_view(self, delivery_id: int, *, api_key: Optional[str] = None) -> None:
        """The subscriber saw the notification (counts as a view in analytics)."""
        self._call("record_view", delivery_id=delivery_id, api_key=api_key)

    def record_click(self, delivery_id: int, *, api_key: Optional[str] = None) -> None:
        """The subscriber clicked the notification (counts as a click in analytics)."""
        self._call("record_click", delivery_id=delivery_id, api_key=api_key)

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
        ``retention`` of them (``.pruned`` counts those dropped before). Filtered and paged
        in the emulator: ``path`` (a prefix when it ends with ``*``), ``method``, ``status``,
        received ``since`` (inclusive) and ``until`` (exclusive), then ``offset`` and
        ``limit`` (``.total`` counts every match)."""
        return Records(
            self._call(
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
        )

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
        self._call("clear_requests")

    def subscribers(self, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self._call("subscribers", api_key=api_key)
        return out

    def segments(self, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        """Every segment of the site with its ``members`` (subscriber hashes)."""
        out: list[dict[str, Any]] = self._call("segments", api_key=api_key)
        return out

    def notifications(self, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        """Every broadcast created, oldest first, with its ``status`` and ``request``."""
        out: list[dict[str, Any]] = self._call("notifications", api_key=api_key)
        return out

    def events(self, *, api_key: Optional[str] = None) -> Records:
        """The events tracked, oldest first: the most recent ``retention`` of them
        (``.pruned`` counts those dropped before)."""
        return Records(self._call("events", api_key=api_key, meta=True))

    def products(self, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        """The latest state of every product updated."""
        out: list[dict[str, Any]] = self._call("products", api_key=api_key)
        return out

    # -- faults and the clock ----------------------------------------------------------------
    def inject_fault(
        self,
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
    ) -> None:
        """Makes the next ``times`` requests to ``path`` (a prefix when it ends with ``*``) fail:
        answer ``status`` (with ``Retry-After: retry_after``), wait ``delay`` seconds first, or
        drop the connection without an answer, ``"before"`` (or ``True``) the request is
        processed or ``"after"``. ``body`` replaces the error body of a ``status`` fault.

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
        )

    def inject_random_faults(
        self,
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

    def fault_stats(self) -> dict[str, int]:
        """How many random faults of each kind were injected since :meth:`inject_random_faults`."""
        out: dict[str, int] = self._call("fault_stats")
        return out

    def clear_faults(self) -> None:
        self._call("clear_faults")

    @property
    def now(self) -> _dt.datetime:
        """The emulator's clock (aware, UTC): wall time plus what :meth:`advance` added."""
        return _parse_time(self._call("now")["now"])

    def advance(self, seconds: Union[float, _dt.timedelta]) -> _dt.datetime:
        """Moves the emulator's clock forward (seconds, or a ``timedelta``); returns the new
        time."""
        if isinstance(seconds, _dt.timedelta):
            seconds = seconds.total_seconds()
        if isinstance(seconds, float) and not math.isfinite(seconds):
            raise ValueError("seconds must be a finite number")
        return _parse_time(self._call("advance", seconds=seconds)["now"])

    def travel_to(self, when: _dt.datetime) -> _dt.datetime:
        """Moves the emulator's clock forward to ``when`` (an aware datetime); returns the new
        time. A test of what happens at a time of day, in the site's zone, then runs the same
        whenever it runs. The clock never goes back."""
        if when.utcoffset() is None:
            raise ValueError(
                "when must be an aware datetime (a naive one has no instant: give its tzinfo)"
            )
        iso_time = when.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
        return _parse_time(self._call("travel_to", time=iso_time)["now"])

    def freeze_clock(self, frozen: bool = True) -> _dt.datetime:
        """Stops the emulator's clock (``frozen=False`` lets it run on from where it stands);
        returns its time. Frozen, it moves only with :meth:`advance` and :meth:`travel_to`, so
        "not delivered yet, one second before it is due" holds however slowly a test runs.
        :meth:`reset` lets it run again."""
        return _parse_time(self._call("freeze_clock", frozen=frozen)["now"])

    def reset(self) -> None:
        """Back to a fresh state: only the default site, no data, no faults, clock at wall time
        (running)."""
        self._call("reset")


# The EmulatorProcesses this process started, so that a forked child can let go of them.
_started: weakref.WeakSet[EmulatorProcess] = weakref.WeakSet()


def _let_go_in_child() -> None:
    """In a forked child: the emulators belong to the parent. The child closes its copy of
    each stdin pipe, so an emulator still stops when the parent ends, however long the child
    lives; and it never stops one itself (its ``close()`` and finalizers do nothing)."""
    for emu in list(_started):
        emu._stop.detach()
        stdin = emu.process.stdin
        if stdin is not None:
            # Nothing is ever written to the pipe, so closing the file flushes nothing.
            stdin.close()
    _started.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_let_go_in_child)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: the emulator never sends one, and a redirect's target is not it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# The admin client talks only to the emulator it started, on loopback: no redirect is followed
# and no proxy of the environment (HTTP_PROXY) is used, which would send it elsewhere.
_admin_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def _stop_process(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()


class EmulatorProcess(_Clients):
    """The emulator in a process of its own (``python -m pushwire.emulator``), for load tests
    and benchmarks where client and emulator must not share an interpreter. It is driven
    through the ``/_emulator/{op}`` admin routes: ``admin("add_subscriber", country="US")``
    does what ``Emulator.add_subscriber(country="US")`` does."""

    def __init__(
        self,
        api_key: str = "test-key",
        *,
        record_requests: bool = True,
        retention: int = DEFAULT_RETENTION,
        startup_timeout: float = 20.0,
    ) -> None:
        self.api_key = api_key
        cmd = [sys.executable, "-m", "pushwire.emulator", "--port", "0", "--api-key", api_key]
        cmd += ["--exit-with-parent", "--retention", str(_retention(retention))]
        if not record_requests:
            cmd.append("--no-request-log")
        # The child stops when its stdin pipe closes: it cannot outlive this process, even
        # one killed before `close()`. The finalizer stops it when this object is collected
        # or the interpreter exits without `close()`.
        self.process = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self._stop = weakref.finalize(self, _stop_process, self.process)
        _started.add(self)
        urls: dict[str, str] = {}
        stdout = self.process.stdout
        assert stdout is not None
        read = threading.Event()

        def read_urls() -> None:
            # In a thread: a pipe's readline cannot be given a deadline.
            try:
                while len(urls) < 2:
                    line = stdout.readline()
                    if not line:
                        return
                    name, _, value = line.strip().partition("=")
                    if name in ("PUSHWIRE_BASE_URL", "PUSHWIRE_EVENTS_URL", "PUSHWIRE_REFUSED"):
                        urls[name] = value
            finally:
                read.set()

        threading.Thread(target=read_urls, name="pushwire-emulator-start", daemon=True).start()
        if not read.wait(startup_timeout):
            self._stop()
            raise RuntimeError(
                f"the emulator did not start within startup_timeout={startup_timeout} s"
            )
        if "PUSHWIRE_REFUSED" in urls:
            # The in-process emulator's refusal of the same setting, as it would raise it.
            self.process.wait(startup_timeout)
            raise ValueError(urls["PUSHWIRE_REFUSED"])
        if len(urls) < 2:
            self.process.wait(startup_timeout)
            raise RuntimeError(f"the emulator exited with {self.process.returncode}")
        self.base_url = urls["PUSHWIRE_BASE_URL"]
        self.events_url = urls["PUSHWIRE_EVENTS_URL"]

    @property
    def ui_url(self) -> str:
        """The inspector page: what the emulator saw, live, in a browser."""
        return f"{self.base_url}/_emulator/ui"

    @property
    def pid(self) -> int:
        return self.process.pid

    def admin(self, op: str, **args: Any) -> Any:
        """Runs an admin operation over HTTP; its JSON answer."""
        req = urllib.request.Request(
            f"{self.base_url}/_emulator/{op}",
            data=json.dumps(
                {k: v for k, v in args.items() if v is not None}, default=_jsonable
            ).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with _admin_opener.open(req, timeout=60) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            # The emulator says what was wrong in `{"error": ...}`; HTTPError alone says 400.
            with e:
                body = e.read()
            if 300 <= e.code < 400:
                raise RuntimeError(
                    f"{self.base_url}/_emulator/{op} answered {e.code} with a redirect to "
                    f"{e.headers.get('Location')!r}, which was not followed: is this the "
                    "emulator?"
                ) from None
            try:
                message = json.loads(body)["error"]
            except (ValueError, KeyError, TypeError):
                message = body.decode(errors="replace") or str(e)
            # The same error as the in-process Emulator's for the same mistake.
            raise ValueError(message) from None

    def close(self) -> None:
        self._stop()

    def __enter__(self) -> EmulatorProcess:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmulatorProcess(base_url={self.base_url!r}, pid={self.pid})"
