"""Summary analytics and the subscriber distribution (spec 4.10, 4.11): ``client.analytics``,
blocking and awaited."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Optional

import pushwire._core as _core
from pushwire._args import DateLike
from pushwire._html import ResultList
from pushwire._response import RequestOptions

from ._resource import _Async, _RawAsync, _RawSync, _Sync, awaitable, raw, raw_awaitable

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Analytics(_Sync):
    """Summary analytics and the subscriber distribution (spec 4.10, 4.11)."""

    def summary(
        self,
        start: DateLike,
        end: DateLike,
        *,
        group_by: str = "day",
        **options: Unpack[RequestOptions],
    ) -> ResultList[dict[str, Any]]:
        """Rows of spec 2.12 as plain dicts, ready for ``pandas.DataFrame(rows)`` or
        ``polars.DataFrame(rows)`` as they are: ``date`` is the period's first day as a
        ``datetime.date`` (a UTC calendar day, not an instant), which polars reads as
        ``Date``, duckdb and Parquet as ``DATE``, and pandas as an ``object`` column
        (``.astype({"date": "datetime64[s]"})`` for its time-based windows). Every field is
        defined in the docs' analytics page.

        ``start`` and ``end`` (the spec's ``from`` and ``to``; dates or ``YYYY-MM-DD``
        strings, an aware datetime taken as its UTC day) span at most 3,660 days;
        ``group_by`` is ``day``, ``week`` or ``month``. A plain list, which Jupyter shows as
        a table; its ``to_json()`` and ``to_dict()`` give the rows as JSON (days as
        ``YYYY-MM-DD``)."""
        call = _core.analytics_summary(start, end, group_by=group_by)
        return self._then(ResultList, call, **options)

    def subscribers(
        self, *, types: Optional[Iterable[str]] = None, **options: Unpack[RequestOptions]
    ) -> dict[str, dict[str, int]]:
        """Active subscribers counted by dimension: ``{"country": {"US": 3, ...}, ...}``.

        ``types`` (the spec's ``type``) picks dimensions among ``country``, ``state``,
        ``city``, ``device``, ``device_type`` and ``platform``; without it, all but
        ``platform``, as spec 2.13 says."""
        call = _core.analytics_subscribers(types=types)
        out: dict[str, dict[str, int]] = self._call(call, **options)
        return out


class AsyncAnalytics(_Async, twin=Analytics):
    summary = awaitable(Analytics.summary)
    subscribers = awaitable(Analytics.subscribers)


class AnalyticsWithRawResponse(_RawSync, twin=Analytics):
    summary = raw(Analytics.summary)
    subscribers = raw(Analytics.subscribers)


class AsyncAnalyticsWithRawResponse(_RawAsync, twin=Analytics):
    summary = raw_awaitable(Analytics.summary)
    subscribers = raw_awaitable(Analytics.subscribers)
