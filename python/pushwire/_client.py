"""``pushwire.Client`` and ``pushwire.AsyncClient``: the resource namespaces over the Rust core.

Each method names its arguments as the spec does and hands them to the core, which checks
them (raising :class:`~pushwire.ValidationError` before anything is sent), sends the request
with the GIL released, and returns typed results.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import decimal
import enum
import logging
import math
import numbers
import operator
import os
from collections.abc import AsyncIterator, Coroutine, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Callable, Optional, SupportsFloat, SupportsIndex, TypeVar, Union

from pushwire._bridge import submit
from pushwire._bulk import BulkResult, Progress, build_result, reporting
from pushwire._core import (
    Action,
    AttributeRule,
    Audience,
    CoreClient,
    Drip,
    DripNotification,
    NewDripNotification,
    Page,
    Product,
    Segment,
    SendTo,
    TriggeredCampaign,
    UtmParams,
)
from pushwire._html import ResultList
from pushwire.errors import PushwireError, ValidationError

_log = logging.getLogger("pushwire")

# 64 MiB: the core's default (see `DEFAULT_MAX_RESPONSE_SIZE` in src/client/transport.rs).
DEFAULT_MAX_RESPONSE_SIZE = 64 << 20

DateLike = Union[_dt.date, str]
DateTimeLike = Union[_dt.datetime, str]
# What the core takes where the service wants a whole number or an id: ints, numpy's
# included (anything with ``__index__``), ids also as strings of digits, and whole numbers
# also as ``Decimal`` (a Django ``DecimalField``).
IdLike = Union[str, SupportsIndex]
WholeLike = Union[SupportsIndex, decimal.Decimal]
# A number of seconds as the settings take it: any real number (numpy's included) or a
# Decimal. A few other things pass the type (a bool, a numpy array or timedelta) and are
# refused at run time with a ValidationError naming the setting.
Seconds = SupportsFloat
T = TypeVar("T")
SelfT = TypeVar("SelfT")

__all__ = ["AsyncClient", "Client"]


def _strs(name: str, values: Optional[Iterable[Any]]) -> Optional[list[str]]:
    if values is None:
        return None
    if isinstance(values, (str, bytes, bytearray, Mapping)):
        raise ValidationError(f"{name} must be a list of strings, not a single value", field=name)
    out: list[str] = []
    for v in values:
        if isinstance(v, str):
            out.append(v)
        elif not isinstance(v, bool) and hasattr(v, "__index__"):  # ints, numpy ints
            out.append(str(v.__index__()))
        else:
            raise ValidationError(f"{name} entries must be strings or integers", field=name)
    return out


def _broadcast(
    title: str,
    message: str,
    url: str,
    type: Optional[str],
    valid_from_utc: Optional[DateTimeLike],
    expiry: Optional[WholeLike],
    lists: Mapping[str, Optional[Iterable[Any]]],
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    """The parameters of spec 4.13 under their spec names."""
    if isinstance(valid_from_utc, str) and not valid_from_utc.strip():
        if type is None:
            # A blank schedule field must not become an immediate broadcast.
            raise ValidationError(
                "valid_from_utc is blank: pass None for an immediate broadcast, "
                "or a time to schedule it",
                field="valid_from_utc",
            )
        valid_from_utc = None  # with the type given, a blank field is no time
    if type is not None and type not in ("now", "later", "draft"):
        raise ValidationError(f"type must be 'now', 'later' or 'draft', not {type!r}", field="type")
    if type is None:
        # A time means a scheduled broadcast: `valid_from_utc=` alone must not go out now.
        type = "now" if valid_from_utc is None else "later"
    elif type == "now" and valid_from_utc is not None:
        # The service ignores the time of a `now` broadcast and sends it at once.
        raise ValidationError(
            "valid_from_utc schedules a broadcast, but type='now' sends it at once: "
            "pass type='later' (or leave type out)",
            field="valid_from_utc",
        )
    fields: dict[str, Any] = {
        "notification_title": title,
        "notification_message": message,
        "notification_url": url,
        "notification_type": type,
    }
    if isinstance(valid_from_utc, _dt.date) and not isinstance(valid_from_utc, _dt.datetime):
        raise ValidationError(
            "valid_from_utc is a time, not a day: pass a datetime (site-local, naive) or a "
            "'YYYY-MM-DD hh:mm:ss' string",
            field="valid_from_utc",
        )
    if isinstance(valid_from_utc, _dt.datetime):
        if valid_from_utc.utcoffset() is not None:
            # The service reads valid_from_utc in the site's time zone (spec 4.13), which the
            # client does not know: an aware datetime would be silently shifted.
            raise ValidationError(
                "valid_from_utc is read in the site's time zone: pass a naive datetime "
                "(site-local) or a 'YYYY-MM-DD hh:mm:ss' string",
                field="valid_from_utc",
            )
        valid_from_utc = valid_from_utc.strftime("%Y-%m-%d %H:%M:%S")
    if valid_from_utc is not None:
        fields["valid_from_utc"] = valid_from_utc
    if expiry is not None:
        fields["notification_expiry"] = expiry
    for name in ("from_date", "to_date"):
        value = extra.get(name)
        if isinstance(value, str) and not value.strip():
            # Sent blank, the filter would be lifted: everyone.
            raise ValidationError(
                f"{name} is blank, which would send to everyone: pass None for no filter",
                field=name,
            )
    for name, values in lists.items():
        as_strs = _strs(name, values)
        if as_strs is not None:
            if not as_strs:
                if name.startswith("exclude_"):
                    continue  # excluding no one: nothing to send
                # An empty filter would mean no filter: everyone.
                raise ValidationError(
                    f"{name} is empty, which would send to everyone: pass None for no filter",
                    field=name,
                )
            fields[name] = as_strs
    actions = extra.get("actions")
    if actions is not None and (isinstance(actions, (str, Mapping)) or not _is_list(actions)):
        raise ValidationError(
            f"actions must be a list of buttons, not {actions.__class__.__name__}: "
            "pass actions=[Action(...)], even for one",
            field="actions",
        )
    for name, value in extra.items():
        if value is not None:
            fields[name] = value
    return fields


def _is_list(value: object) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))


def _settings(
    api_key: Optional[str], base_url: Optional[str], events_url: Optional[str]
) -> tuple[str, str, str]:
    for name, value in (("api_key", api_key), ("base_url", base_url), ("events_url", events_url)):
        if value is not None and not isinstance(value, str):
            raise ValidationError(
                f"{name} must be a string, not {type(value).__name__}", field=name
            )
    api_key = api_key if api_key is not None else os.environ.get("PUSHWIRE_API_KEY")
    base_url = base_url if base_url is not None else os.environ.get("PUSHWIRE_BASE_URL")
    if events_url is None:
        events_url = os.environ.get("PUSHWIRE_EVENTS_URL", "")
    if not api_key:
        raise ValidationError("no API key: pass api_key= or set PUSHWIRE_API_KEY", field="api_key")
    if not base_url:
        raise ValidationError(
            "no base URL: pass base_url= or set PUSHWIRE_BASE_URL", field="base_url"
        )
    return api_key, base_url, events_url


def _headers(headers: Optional[Mapping[str, str]]) -> Optional[dict[str, str]]:
    if not headers:
        return None
    if not isinstance(headers, Mapping):
        raise ValidationError(
            f"default_headers must be a dict, not {type(headers).__name__}",
            field="default_headers",
        )
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ValidationError(
                f"default_headers must map strings to strings: {name!r}: {value!r}",
                field="default_headers",
            )
    return dict(headers)


# What `timeout=None` stands for: the longest timeout the core takes (a day), as near to "no
# timeout" as a call that may hang on a dead connection should get.
_LONGEST_TIMEOUT = 86_400.0


def _seconds(name: str, value: object) -> float:
    """A number of seconds, numpy's and Decimal included (the core checks the range)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, decimal.Decimal)):
        raise ValidationError(
            f"{name} must be a number of seconds, not {type(value).__name__}", field=name
        )
    try:
        return float(value)
    except (OverflowError, ValueError):  # a huge int; Decimal("sNaN")
        raise ValidationError(f"{name} is out of range", field=name) from None
    except TypeError:  # a Real that float() refuses (numpy's timedelta64)
        raise ValidationError(
            f"{name} must be a number of seconds, not {type(value).__name__}", field=name
        ) from None


def _count(name: str, value: object) -> int:
    """A whole number (anything with ``__index__``, never a bool or a float)."""
    if isinstance(value, bool):
        raise ValidationError(f"{name} must be an integer, not bool", field=name)
    try:
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValidationError(
            f"{name} must be an integer, not {type(value).__name__}", field=name
        ) from None
    if not -(2**63) <= n < 2**63:
        raise ValidationError(f"{name} is out of range", field=name)
    return n


class _Keep(enum.Enum):
    """``with_options``'s default: the setting is kept (``None`` is a value there)."""

    KEEP = 0


_KEEP = _Keep.KEEP

_C = TypeVar("_C", bound="_Base")


class _Base:
    _core: CoreClient

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        events_url: Optional[str] = None,
        timeout: Optional[Seconds] = 30.0,
        max_retries: SupportsIndex = 2,
        default_headers: Optional[Mapping[str, str]] = None,
        *,
        allow_insecure: bool = False,
        backoff_base: Seconds = 0.5,
        ca_bundle: Optional[Union[str, os.PathLike[str]]] = None,
        proxy: Optional[str] = None,
        max_connections: Optional[SupportsIndex] = 100,
        max_response_size: SupportsIndex = DEFAULT_MAX_RESPONSE_SIZE,
    ) -> None:
        key, base, events = _settings(api_key, base_url, events_url)
        seconds = _LONGEST_TIMEOUT if timeout is None else _seconds("timeout", timeout)
        backoff = _seconds("backoff_base", backoff_base)
        retries = _count("max_retries", max_retries)
        self._core = CoreClient(
            key,
            base,
            events,
            seconds,
            retries,
            _headers(default_headers),
            allow_insecure,
            backoff,
            ca_bundle,
            proxy,
            None if max_connections is None else _count("max_connections", max_connections),
            _count("max_response_size", max_response_size),
        )

    @property
    def base_url(self) -> str:
        """The main interface's root (without ``/apiv1``)."""
        return self._core.base_url

    @property
    def events_url(self) -> str:
        """The events interface's root (without ``/api/v1``); empty when not set."""
        return self._core.events_url

    @property
    def timeout(self) -> float:
        """Seconds a whole call may take, retries and waits included."""
        return self._core.timeout

    @property
    def max_retries(self) -> int:
        """Retries of a failed call where a retry cannot act twice."""
        return self._core.max_retries

    @property
    def max_connections(self) -> Optional[int]:
        """The bound on the client's requests in flight at once (each one connection)."""
        return self._core.max_connections

    @property
    def max_response_size(self) -> int:
        """The most bytes an answer's body may have (``ResponseTooLargeError`` past it)."""
        return self._core.max_response_size

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self.base_url!r}, events_url={self.events_url!r}, "
            f"timeout={self.timeout}, max_retries={self.max_retries})"
        )

    def _check_open(self) -> None:
        if self._core.closed:
            raise PushwireError("this client is closed")

    def with_options(
        self: _C,
        *,
        timeout: Union[Seconds, None, _Keep] = _KEEP,
        max_retries: Union[SupportsIndex, _Keep] = _KEEP,
        max_response_size: Union[SupportsIndex, _Keep] = _KEEP,
    ) -> _C:
        """A client whose calls run under their own ``timeout``, ``max_retries`` and
        ``max_response_size``, on this client's connections (no new pool, so it is cheap
        enough to make per call)::

            client.with_options(timeout=2.0, max_retries=0).events.track("signup", ...)

        A setting not given keeps this client's; ``timeout=None`` is no timeout, as in the
        constructor. Closing either client closes both: they share one pool. A subclass's
        attributes are copied as they are: a helper object it built around this client still
        calls through this client, with its limits."""
        seconds: Optional[float] = None
        if timeout is None:
            seconds = _LONGEST_TIMEOUT
        elif not isinstance(timeout, _Keep):
            seconds = _seconds("timeout", timeout)
        retries = None if isinstance(max_retries, _Keep) else _count("max_retries", max_retries)
        size = (
            None
            if isinstance(max_response_size, _Keep)
            else _count("max_response_size", max_response_size)
        )
        core = self._core.with_options(seconds, retries, size)
        derived = object.__new__(type(self))
        # A subclass's own attributes come along as they are (an object of its own that holds
        # this client keeps calling through this client); the namespaces are the derived one's.
        derived.__dict__.update(self.__dict__)
        derived._core = core
        derived._namespaces()
        return derived

    def _namespaces(self) -> None:
        raise NotImplementedError

    def _check_events(self) -> None:
        # Once for a whole batch, not as each event's outcome.
        if not self._core.events_url:
            raise ValidationError(
                "no events_url: pass events_url= or set PUSHWIRE_EVENTS_URL to track events",
                field="events_url",
            )


# -- blocking --------------------------------------------------------------------------------


class _Sync:
    __slots__ = ("_client",)

    def __init__(self, client: Client) -> None:
        self._client = client

    def _call(self, op: str, *args: Any) -> Any:
        self._client._check_open()
        return self._client._core.call(op, *args)


class Triggers(_Sync):
    """Triggered campaigns (spec 4.1, 4.2)."""

    def get(
        self,
        trigger_id: IdLike,
        *,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> TriggeredCampaign:
        """One campaign with its notifications, and their analytics over the given dates
        (the service's default range without them). ``BadRequestError`` if it does not
        exist (the service answers 400)."""
        out: TriggeredCampaign = self._call(
            "triggers.get", trigger_id, analytics_start_at, analytics_end_at
        )
        return out

    def list(
        self,
        *,
        page: SupportsIndex = 1,
        limit: SupportsIndex = 10,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> Page[TriggeredCampaign]:
        """One page of campaigns, newest first (``limit`` 1 to 500), with ``total`` and
        ``last_page``; :meth:`iter` walks them all."""
        out: Page[TriggeredCampaign] = self._call(
            "triggers.list", page, limit, analytics_start_at, analytics_end_at
        )
        return out

    def iter(
        self,
        *,
        limit: SupportsIndex = 500,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> Iterator[TriggeredCampaign]:
        """Every campaign, newest first, fetching pages lazily."""
        return _walk(
            lambda p: self.list(
                page=p,
                limit=limit,
                analytics_start_at=analytics_start_at,
                analytics_end_at=analytics_end_at,
            )
        )


class Drips(_Sync):
    """Drip autoresponders (spec 4.3-4.5)."""

    def create(
        self,
        campaign_name: str,
        notifications: Sequence[Union[NewDripNotification, DripNotification, Mapping[str, Any]]],
        *,
        send_to: Union[SendTo, Audience, Mapping[str, Any], None] = None,
        utm_params: Union[UtmParams, Mapping[str, Any], None] = None,
    ) -> int:
        """Creates a drip; its ``drip_id``. A drip read back can be copied as it is:
        ``create(name, drip.notifications, send_to=drip.audience, utm_params=drip.utm_params)``
        (the notifications' ids, order and analytics are left out; an audience becomes the
        ``send_to`` that selects the same subscribers). Retried only when the service refused it
        unprocessed (429, or 503 with ``Retry-After``), never once it may have been received
        (it would make two). The id is 0 (with a warning) if the service accepted the drip but
        sent no usable id."""
        out: int = self._call("drips.create", campaign_name, notifications, send_to, utm_params)
        return out

    def get(
        self,
        drip_id: IdLike,
        *,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> Drip:
        """One drip with its notifications and their analytics. ``BadRequestError`` if it
        does not exist (the service answers 400)."""
        out: Drip = self._call("drips.get", drip_id, analytics_start_at, analytics_end_at)
        return out

    def list(
        self,
        *,
        page: SupportsIndex = 1,
        limit: SupportsIndex = 10,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> Page[Drip]:
        """One page of drips, newest first (``limit`` 1 to 500); :meth:`iter` walks them
        all."""
        out: Page[Drip] = self._call(
            "drips.list", page, limit, analytics_start_at, analytics_end_at
        )
        return out

    def iter(
        self,
        *,
        limit: SupportsIndex = 500,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> Iterator[Drip]:
        """Every drip, newest first, fetching pages lazily."""
        return _walk(
            lambda p: self.list(
                page=p,
                limit=limit,
                analytics_start_at=analytics_start_at,
                analytics_end_at=analytics_end_at,
            )
        )


class Segments(_Sync):
    """Segments and their members (spec 4.6-4.9)."""

    def list(
        self,
        *,
        segment_id: Optional[IdLike] = None,
        limit: Optional[SupportsIndex] = None,
        offset: Optional[SupportsIndex] = None,
        segment_type: Optional[str] = None,
    ) -> list[Segment]:
        """The site's segments (one with ``segment_id``), ``offset``/``limit`` to page;
        ``segment_type="all"`` includes those built on geography, device and browser. A
        plain list, which Jupyter shows as a table."""
        out: list[Segment] = self._call("segments.list", segment_id, limit, offset, segment_type)
        return ResultList(out)

    def delete(self, segment_id: IdLike) -> str:
        """Deletes a segment; the service's message."""
        out: str = self._call("segments.delete", segment_id)
        return out

    def add_subscribers(self, segment_id: IdLike, subscriber_hashes: Iterable[str]) -> str:
        """Adds up to 500 subscribers by hash; the service's message."""
        out: str = self._call("segments.add_subscribers", segment_id, subscriber_hashes)
        return out

    def add_profiles(self, segment_name: str, profile_ids: Iterable[IdLike]) -> None:
        """Adds the subscribers with these profile ids to the segment named; idempotent."""
        self._call("segments.add_profiles", segment_name, profile_ids)

    def remove_profiles(self, segment_name: str, profile_ids: Iterable[IdLike]) -> None:
        """Removes the subscribers with these profile ids from the segment named."""
        self._call("segments.remove_profiles", segment_name, profile_ids)

    def add_subscribers_bulk(
        self,
        segment_id: IdLike,
        hashes: Iterable[str],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
    ) -> BulkResult:
        """Adds any number of subscribers: chunks of 500 (the spec's limit), ``concurrency``
        in flight, each retried on its own. ``progress`` is a ``callable(done, total)`` or
        ``True`` for a progress bar: tqdm's when it is installed (a widget in Jupyter), else a
        line on stderr. Every chunk's outcome is in the result."""
        hashes = _items("hashes", hashes)
        with reporting(progress, "add_subscribers") as callback:
            raw = self._call(
                "segments.add_subscribers_bulk", segment_id, hashes, concurrency, callback
            )
        return build_result(raw, hashes)

    def add_profiles_bulk(
        self,
        segment_name: str,
        profile_ids: Iterable[IdLike],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
    ) -> BulkResult:
        """:meth:`add_profiles` for any number of profile ids, in chunks of 500."""
        ids = _items("profile_ids", profile_ids)
        with reporting(progress, "add_profiles") as callback:
            raw = self._call("segments.add_profiles_bulk", segment_name, ids, concurrency, callback)
        return build_result(raw, ids)

    def remove_profiles_bulk(
        self,
        segment_name: str,
        profile_ids: Iterable[IdLike],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
    ) -> BulkResult:
        """:meth:`remove_profiles` for any number of profile ids, in chunks of 500."""
        ids = _items("profile_ids", profile_ids)
        with reporting(progress, "remove_profiles") as callback:
            raw = self._call(
                "segments.remove_profiles_bulk", segment_name, ids, concurrency, callback
            )
        return build_result(raw, ids)


class Analytics(_Sync):
    """Summary analytics and the subscriber distribution (spec 4.10, 4.11)."""

    def summary(
        self, start: DateLike, end: DateLike, *, group_by: str = "day"
    ) -> list[dict[str, Any]]:
        """Rows of spec 2.12 as plain dicts (``date`` a ``datetime.date``), ready for
        ``pandas.DataFrame(rows)`` or ``polars.DataFrame(rows)`` (pandas keeps dates as
        objects: ``df["date"] = pandas.to_datetime(df["date"])`` for ``.dt`` and resampling).

        ``start`` and ``end`` (the spec's ``from`` and ``to``; dates or ``YYYY-MM-DD``
        strings, an aware datetime taken as its UTC day) span at most 3,660 days;
        ``group_by`` is ``day``, ``week`` or ``month``. A plain list, which Jupyter shows as
        a table."""
        out: list[dict[str, Any]] = self._call("analytics.summary", start, end, group_by)
        return ResultList(out)

    def subscribers(self, *, types: Optional[Iterable[str]] = None) -> dict[str, dict[str, int]]:
        """Active subscribers counted by dimension: ``{"country": {"US": 3, ...}, ...}``.

        ``types`` (the spec's ``type``) picks dimensions among ``country``, ``state``,
        ``city``, ``device``, ``device_type`` and ``platform``; without it, all but
        ``platform``, as spec 2.13 says."""
        out: dict[str, dict[str, int]] = self._call("analytics.subscribers", types)
        return out


class Products(_Sync):
    """Product updates (spec 4.12)."""

    def update(self, products: Sequence[Union[Product, Mapping[str, Any]]]) -> None:
        """Sends the latest price and availability: ``Product``s, their dicts, or the
        emulator's ``products()`` entries. Retried only when the service refused
        it unprocessed (429, or 503 with ``Retry-After``), never once it may have been
        received."""
        self._call("products.update", products)


class Notifications(_Sync):
    """Push broadcasts (spec 4.13)."""

    def create(
        self,
        *,
        title: str,
        message: str,
        url: str,
        type: Optional[str] = None,
        valid_from_utc: Optional[DateTimeLike] = None,
        image_url: Optional[str] = None,
        big_image_url: Optional[str] = None,
        expiry: Optional[WholeLike] = None,
        require_interaction: Optional[WholeLike] = None,
        profile_id: Optional[Iterable[IdLike]] = None,
        include_segments: Optional[Iterable[IdLike]] = None,
        exclude_segments: Optional[Iterable[IdLike]] = None,
        include_countries: Optional[Iterable[str]] = None,
        exclude_countries: Optional[Iterable[str]] = None,
        include_states: Optional[Iterable[str]] = None,
        include_cities: Optional[Iterable[str]] = None,
        include_device_types: Optional[Iterable[str]] = None,
        include_browsers: Optional[Iterable[str]] = None,
        from_date: Optional[Union[DateLike, _dt.datetime]] = None,
        to_date: Optional[Union[DateLike, _dt.datetime]] = None,
        subscriber_hash: Optional[Iterable[str]] = None,
        attributes: Optional[Sequence[Sequence[Union[AttributeRule, Mapping[str, Any]]]]] = None,
        actions: Optional[Sequence[Union[Action, Mapping[str, Any]]]] = None,
    ) -> int:
        """Creates a broadcast; its ``notification_id``.

        ``type`` is ``now``, ``later`` or ``draft``; left out, it is ``later`` when
        ``valid_from_utc`` is given and ``now`` otherwise. ``expiry`` is in minutes. Never
        retried once it may have been received, so a broadcast is never sent twice. The id is
        0 (with a warning) if the service accepted the broadcast but sent no usable id:
        raising would invite a retry that sends it twice."""
        fields = _broadcast(
            title,
            message,
            url,
            type,
            valid_from_utc,
            expiry,
            {
                "profile_id": profile_id,
                "include_segments": include_segments,
                "exclude_segments": exclude_segments,
                "include_countries": include_countries,
                "exclude_countries": exclude_countries,
                "include_states": include_states,
                "include_cities": include_cities,
                "include_device_types": include_device_types,
                "include_browsers": include_browsers,
                "subscriber_hash": subscriber_hash,
            },
            {
                "image_url": image_url,
                "big_image_url": big_image_url,
                "require_interaction": require_interaction,
                "from_date": from_date,
                "to_date": to_date,
                "attributes": attributes,
                "actions": actions,
            },
        )
        out: int = self._call("notifications.create", fields)
        return out


class Events(_Sync):
    """Custom event tracking (spec 4.14), on the event-tracking interface."""

    def track(
        self,
        event_name: str,
        *,
        profile_id: Optional[IdLike] = None,
        device_token_hash: Optional[str] = None,
        data: Optional[Mapping[str, Any]] = None,
    ) -> None:
        """Records an event for a subscriber (``profile_id`` wins over ``device_token_hash``).
        Retried only when the service refused it unprocessed (429, or 503 with
        ``Retry-After``), never once it may have been received: it may start a triggered
        campaign."""
        self._call("events.track", event_name, _given(profile_id), _given(device_token_hash), data)

    def track_many(
        self, events: Iterable[Any], *, concurrency: SupportsIndex = 64
    ) -> list[Optional[PushwireError]]:
        """Tracks every event (dicts with ``event_name``, ``profile_id`` or
        ``device_token_hash``, ``data``), ``concurrency`` in flight, inside Rust. Returns one
        entry per event, in order: ``None`` when it was recorded, else its error (invalid
        events are not sent). One failure never stops the rest."""
        self._client._check_events()
        out: list[Optional[PushwireError]] = self._call(
            "events.track_many", _events(events), concurrency
        )
        return _reported(out)


def _items(name: str, values: Iterable[Any]) -> list[Any]:
    if hasattr(values, "columns"):
        # A DataFrame iterates over its column names.
        raise ValidationError(
            f"{name} must be a list of strings, not a DataFrame: pass one column, df['column']",
            field=name,
        )
    if isinstance(values, (str, bytes, bytearray, Mapping)):
        # A dict would send its keys, as a str its characters.
        kind = "a dict" if isinstance(values, Mapping) else "a single string"
        raise ValidationError(f"{name} must be a list of strings, not {kind}", field=name)
    return list(values)


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


def _given(value: Any) -> Any:
    """None for a dataframe's missing cell (NaN, ``pd.NA``, ``pd.NaT``), as ``track_many``
    reads one."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return None if type(value).__name__ in ("NAType", "NaTType") else value


def _events(events: Iterable[Any]) -> list[Any]:
    if hasattr(events, "columns"):
        # A DataFrame iterates over its column names.
        raise ValidationError(
            "events must be a list of dicts, not a DataFrame: pass df.to_dict('records') "
            "(pandas) or df.to_dicts() (polars)",
            field="events",
        )
    if isinstance(events, (str, bytes, Mapping)) or not isinstance(events, Iterable):
        raise ValidationError(
            f"events must be a list of dicts, not {type(events).__name__}", field="events"
        )
    return list(events)


def _on_loop(
    callback: Optional[Callable[[int, int], Any]],
) -> Optional[Callable[[int, int], Any]]:
    """An async bulk call reports progress from a Rust worker thread: hand each report to the
    event loop, so the callback runs on the loop's thread like the rest of the user's code."""
    if callback is None:
        return None
    loop = asyncio.get_running_loop()

    def guarded(done: int, total: int) -> None:
        # As with the blocking client: a failing callback is logged and the call goes on
        # (left to the loop, it would be reported as an unhandled callback error).
        try:
            callback(done, total)
        except Exception as e:
            _log.warning("progress callback failed: %s: %s", type(e).__name__, e)

    def report(done: int, total: int) -> None:
        loop.call_soon_threadsafe(guarded, done, total)

    return report


def _walk(fetch: Callable[[int], Page[T]]) -> Iterator[T]:
    page = 1
    while True:
        current = fetch(page)
        yield from current.data
        if not current.data or current.page >= current.last_page:
            return
        page += 1


_CLIENT_DOC = """

    The API is grouped as the spec groups it: ``triggers`` (triggered campaigns), ``drips``,
    ``segments``, ``analytics``, ``products``, ``notifications`` (broadcasts) and ``events``.

    ``api_key``, ``base_url`` (root, without ``/apiv1``) and ``events_url`` (root, without
    ``/api/v1``; needed only to track events) default to ``PUSHWIRE_API_KEY``,
    ``PUSHWIRE_BASE_URL`` and ``PUSHWIRE_EVENTS_URL``.

    - ``timeout``: seconds for a whole call, retries and waits for a free connection
      included (``None``: a day).
    - ``max_retries`` (0 to 20): retries of a failed call, only where a retry cannot act
      twice (a write is not retried once it may have been received), after
      ``backoff_base * 2**n`` seconds with jitter, or the service's ``Retry-After``.
    - ``default_headers``: sent with every request (never the key: that is ``api_key``).
    - ``allow_insecure``: allow plain http to a host that is not loopback.
    - ``ca_bundle``: a PEM file of certificates to trust besides the platform's (a
      corporate CA); certificates are always verified.
    - ``proxy``: a proxy URL for every request (without it, ``HTTPS_PROXY``,
      ``HTTP_PROXY`` and ``NO_PROXY`` apply as for curl, except when every host is
      loopback).
    - ``max_connections``: requests in flight at once (``None``: no bound).
    - ``max_response_size``: the most bytes an answer's body may have, 64 MiB by default
      (the largest answers of the API are about 1 MiB): an endless or huge answer (a broken
      proxy) fails the call with ``ResponseTooLargeError`` instead of filling the memory.

    ``with_options(timeout=..., max_retries=...)`` gives a client with its own limits on the
    same connections, for one call or one part of an application.

    Bad settings raise at once. A closed client refuses new calls with ``PushwireError``.
    """


class Client(_Base):
    __doc__ = (
        "The blocking client. Thread-safe; share one per process (it pools connections)."
        + _CLIENT_DOC
    )

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        events_url: Optional[str] = None,
        timeout: Optional[Seconds] = 30.0,
        max_retries: SupportsIndex = 2,
        default_headers: Optional[Mapping[str, str]] = None,
        *,
        allow_insecure: bool = False,
        backoff_base: Seconds = 0.5,
        ca_bundle: Optional[Union[str, os.PathLike[str]]] = None,
        proxy: Optional[str] = None,
        max_connections: Optional[SupportsIndex] = 100,
        max_response_size: SupportsIndex = DEFAULT_MAX_RESPONSE_SIZE,
    ) -> None:
        super().__init__(
            api_key,
            base_url,
            events_url,
            timeout,
            max_retries,
            default_headers,
            allow_insecure=allow_insecure,
            backoff_base=backoff_base,
            ca_bundle=ca_bundle,
            proxy=proxy,
            max_connections=max_connections,
            max_response_size=max_response_size,
        )
        self._namespaces()

    def _namespaces(self) -> None:
        self.triggers = Triggers(self)
        self.drips = Drips(self)
        self.segments = Segments(self)
        self.analytics = Analytics(self)
        self.products = Products(self)
        self.notifications = Notifications(self)
        self.events = Events(self)

    def close(self) -> None:
        """Closes the client's idle connections; calls still running finish on theirs."""
        self._core.close()

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


# -- async -----------------------------------------------------------------------------------


class _Async:
    __slots__ = ("_client",)

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    def _call(self, op: str, *args: Any) -> Coroutine[Any, Any, Any]:
        # A plain function handing back submit's coroutine: one coroutine frame less per call.
        self._client._check_open()
        return submit(self._client._core, op, *args)


class AsyncTriggers(_Async):
    """Triggered campaigns (spec 4.1, 4.2)."""

    async def get(
        self,
        trigger_id: IdLike,
        *,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> TriggeredCampaign:
        out: TriggeredCampaign = await self._call(
            "triggers.get", trigger_id, analytics_start_at, analytics_end_at
        )
        return out

    async def list(
        self,
        *,
        page: SupportsIndex = 1,
        limit: SupportsIndex = 10,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> Page[TriggeredCampaign]:
        out: Page[TriggeredCampaign] = await self._call(
            "triggers.list", page, limit, analytics_start_at, analytics_end_at
        )
        return out

    def iter(
        self,
        *,
        limit: SupportsIndex = 500,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> AsyncIterator[TriggeredCampaign]:
        """Every campaign, newest first, fetching pages lazily (``async for``)."""
        return _awalk(
            lambda p: self.list(
                page=p,
                limit=limit,
                analytics_start_at=analytics_start_at,
                analytics_end_at=analytics_end_at,
            )
        )


class AsyncDrips(_Async):
    """Drip autoresponders (spec 4.3-4.5)."""

    async def create(
        self,
        campaign_name: str,
        notifications: Sequence[Union[NewDripNotification, DripNotification, Mapping[str, Any]]],
        *,
        send_to: Union[SendTo, Audience, Mapping[str, Any], None] = None,
        utm_params: Union[UtmParams, Mapping[str, Any], None] = None,
    ) -> int:
        out: int = await self._call(
            "drips.create", campaign_name, notifications, send_to, utm_params
        )
        return out

    async def get(
        self,
        drip_id: IdLike,
        *,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> Drip:
        out: Drip = await self._call("drips.get", drip_id, analytics_start_at, analytics_end_at)
        return out

    async def list(
        self,
        *,
        page: SupportsIndex = 1,
        limit: SupportsIndex = 10,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> Page[Drip]:
        out: Page[Drip] = await self._call(
            "drips.list", page, limit, analytics_start_at, analytics_end_at
        )
        return out

    def iter(
        self,
        *,
        limit: SupportsIndex = 500,
        analytics_start_at: Optional[DateLike] = None,
        analytics_end_at: Optional[DateLike] = None,
    ) -> AsyncIterator[Drip]:
        return _awalk(
            lambda p: self.list(
                page=p,
                limit=limit,
                analytics_start_at=analytics_start_at,
                analytics_end_at=analytics_end_at,
            )
        )


class AsyncSegments(_Async):
    """Segments and their members (spec 4.6-4.9)."""

    async def list(
        self,
        *,
        segment_id: Optional[IdLike] = None,
        limit: Optional[SupportsIndex] = None,
        offset: Optional[SupportsIndex] = None,
        segment_type: Optional[str] = None,
    ) -> list[Segment]:
        out: list[Segment] = await self._call(
            "segments.list", segment_id, limit, offset, segment_type
        )
        return ResultList(out)

    async def delete(self, segment_id: IdLike) -> str:
        out: str = await self._call("segments.delete", segment_id)
        return out

    async def add_subscribers(self, segment_id: IdLike, subscriber_hashes: Iterable[str]) -> str:
        out: str = await self._call("segments.add_subscribers", segment_id, subscriber_hashes)
        return out

    async def add_profiles(self, segment_name: str, profile_ids: Iterable[IdLike]) -> None:
        await self._call("segments.add_profiles", segment_name, profile_ids)

    async def remove_profiles(self, segment_name: str, profile_ids: Iterable[IdLike]) -> None:
        await self._call("segments.remove_profiles", segment_name, profile_ids)

    async def add_subscribers_bulk(
        self,
        segment_id: IdLike,
        hashes: Iterable[str],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
    ) -> BulkResult:
        hashes = _items("hashes", hashes)
        with reporting(progress, "add_subscribers") as callback:
            raw = await self._call(
                "segments.add_subscribers_bulk", segment_id, hashes, concurrency, _on_loop(callback)
            )
        return build_result(raw, hashes)

    async def add_profiles_bulk(
        self,
        segment_name: str,
        profile_ids: Iterable[IdLike],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
    ) -> BulkResult:
        ids = _items("profile_ids", profile_ids)
        with reporting(progress, "add_profiles") as callback:
            raw = await self._call(
                "segments.add_profiles_bulk", segment_name, ids, concurrency, _on_loop(callback)
            )
        return build_result(raw, ids)

    async def remove_profiles_bulk(
        self,
        segment_name: str,
        profile_ids: Iterable[IdLike],
        *,
        concurrency: SupportsIndex = 8,
        progress: Progress = None,
    ) -> BulkResult:
        ids = _items("profile_ids", profile_ids)
        with reporting(progress, "remove_profiles") as callback:
            raw = await self._call(
                "segments.remove_profiles_bulk", segment_name, ids, concurrency, _on_loop(callback)
            )
        return build_result(raw, ids)


class AsyncAnalytics(_Async):
    """Summary analytics and the subscriber distribution (spec 4.10, 4.11)."""

    async def summary(
        self, start: DateLike, end: DateLike, *, group_by: str = "day"
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = await self._call("analytics.summary", start, end, group_by)
        return ResultList(out)

    async def subscribers(
        self, *, types: Optional[Iterable[str]] = None
    ) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = await self._call("analytics.subscribers", types)
        return out


class AsyncProducts(_Async):
    """Product updates (spec 4.12)."""

    async def update(self, products: Sequence[Union[Product, Mapping[str, Any]]]) -> None:
        await self._call("products.update", products)


class AsyncNotifications(_Async):
    """Push broadcasts (spec 4.13)."""

    async def create(
        self,
        *,
        title: str,
        message: str,
        url: str,
        type: Optional[str] = None,
        valid_from_utc: Optional[DateTimeLike] = None,
        image_url: Optional[str] = None,
        big_image_url: Optional[str] = None,
        expiry: Optional[WholeLike] = None,
        require_interaction: Optional[WholeLike] = None,
        profile_id: Optional[Iterable[IdLike]] = None,
        include_segments: Optional[Iterable[IdLike]] = None,
        exclude_segments: Optional[Iterable[IdLike]] = None,
        include_countries: Optional[Iterable[str]] = None,
        exclude_countries: Optional[Iterable[str]] = None,
        include_states: Optional[Iterable[str]] = None,
        include_cities: Optional[Iterable[str]] = None,
        include_device_types: Optional[Iterable[str]] = None,
        include_browsers: Optional[Iterable[str]] = None,
        from_date: Optional[Union[DateLike, _dt.datetime]] = None,
        to_date: Optional[Union[DateLike, _dt.datetime]] = None,
        subscriber_hash: Optional[Iterable[str]] = None,
        attributes: Optional[Sequence[Sequence[Union[AttributeRule, Mapping[str, Any]]]]] = None,
        actions: Optional[Sequence[Union[Action, Mapping[str, Any]]]] = None,
    ) -> int:
        fields = _broadcast(
            title,
            message,
            url,
            type,
            valid_from_utc,
            expiry,
            {
                "profile_id": profile_id,
                "include_segments": include_segments,
                "exclude_segments": exclude_segments,
                "include_countries": include_countries,
                "exclude_countries": exclude_countries,
                "include_states": include_states,
                "include_cities": include_cities,
                "include_device_types": include_device_types,
                "include_browsers": include_browsers,
                "subscriber_hash": subscriber_hash,
            },
            {
                "image_url": image_url,
                "big_image_url": big_image_url,
                "require_interaction": require_interaction,
                "from_date": from_date,
                "to_date": to_date,
                "attributes": attributes,
                "actions": actions,
            },
        )
        out: int = await self._call("notifications.create", fields)
        return out


class AsyncEvents(_Async):
    """Custom event tracking (spec 4.14)."""

    async def track(
        self,
        event_name: str,
        *,
        profile_id: Optional[IdLike] = None,
        device_token_hash: Optional[str] = None,
        data: Optional[Mapping[str, Any]] = None,
    ) -> None:
        await self._call(
            "events.track", event_name, _given(profile_id), _given(device_token_hash), data
        )

    async def track_many(
        self, events: Iterable[Any], *, concurrency: SupportsIndex = 64
    ) -> list[Optional[PushwireError]]:
        self._client._check_events()
        out: list[Optional[PushwireError]] = await self._call(
            "events.track_many", _events(events), concurrency
        )
        return _reported(out)


async def _awalk(fetch: Callable[[int], Any]) -> AsyncIterator[Any]:
    page = 1
    while True:
        current = await fetch(page)
        for item in current.data:
            yield item
        if not current.data or current.page >= current.last_page:
            return
        page += 1


class AsyncClient(_Base):
    __doc__ = (
        "The asyncio client: the same surface as :class:`Client`, every call awaited. It runs "
        "on asyncio (uvloop and anyio's asyncio backend included), on any number of loops."
        + _CLIENT_DOC
    )

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        events_url: Optional[str] = None,
        timeout: Optional[Seconds] = 30.0,
        max_retries: SupportsIndex = 2,
        default_headers: Optional[Mapping[str, str]] = None,
        *,
        allow_insecure: bool = False,
        backoff_base: Seconds = 0.5,
        ca_bundle: Optional[Union[str, os.PathLike[str]]] = None,
        proxy: Optional[str] = None,
        max_connections: Optional[SupportsIndex] = 100,
        max_response_size: SupportsIndex = DEFAULT_MAX_RESPONSE_SIZE,
    ) -> None:
        super().__init__(
            api_key,
            base_url,
            events_url,
            timeout,
            max_retries,
            default_headers,
            allow_insecure=allow_insecure,
            backoff_base=backoff_base,
            ca_bundle=ca_bundle,
            proxy=proxy,
            max_connections=max_connections,
            max_response_size=max_response_size,
        )
        self._namespaces()

    def _namespaces(self) -> None:
        self.triggers = AsyncTriggers(self)
        self.drips = AsyncDrips(self)
        self.segments = AsyncSegments(self)
        self.analytics = AsyncAnalytics(self)
        self.products = AsyncProducts(self)
        self.notifications = AsyncNotifications(self)
        self.events = AsyncEvents(self)

    async def aclose(self) -> None:
        """Closes the client's idle connections; calls still running finish on theirs."""
        self._core.close()

    async def __aenter__(self: _C) -> _C:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.aclose()


def _share_docs() -> None:
    """An async method without a docstring has its blocking twin's: they do the same."""
    pairs = [
        (Triggers, AsyncTriggers),
        (Drips, AsyncDrips),
        (Segments, AsyncSegments),
        (Analytics, AsyncAnalytics),
        (Products, AsyncProducts),
        (Notifications, AsyncNotifications),
        (Events, AsyncEvents),
    ]
    for blocking, awaited in pairs:
        for name, method in vars(awaited).items():
            twin = getattr(blocking, name, None)
            if callable(method) and not method.__doc__ and twin is not None:
                method.__doc__ = twin.__doc__


_share_docs()
