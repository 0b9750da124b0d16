"""What the inspector page shows, as :class:`~pushwire.testing.Emulator` methods
(:class:`_Inspection`): each is the admin operation of the same name that the page reads
(``src/emulator/admin/``), so a test, a notebook or a script sees what the page shows."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Optional, Protocol, Union

from pushwire._testing._data import _with_times


class _Admin(Protocol):
    def _call(self, op: str, **args: Any) -> Any: ...


def _day(value: Union[_dt.date, str, None], name: str) -> Optional[str]:
    """A day as the admin operations take it (``YYYY-MM-DD``); an aware datetime is its UTC
    day."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc)
        return value.date().isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    raise TypeError(f"{name} must be a date or YYYY-MM-DD, not {type(value).__name__}")


class _Inspection:
    """The sites, broadcasts, campaigns and summary the inspector shows."""

    def operations(self: _Admin) -> list[str]:
        """The names of every admin operation, in the order the admin API lists them (each
        is also a method here)."""
        out: list[str] = self._call("operations")
        return out

    def sites(self: _Admin) -> list[dict[str, Any]]:
        """Every site: ``site_id``, ``key_hint`` (the key's last four characters, never the
        key), its ``subscribers``, ``broadcasts`` and ``campaigns`` counted, and whether it
        is the ``default`` one (the emulator's own key's)."""
        out: list[dict[str, Any]] = self._call("sites")
        return out

    @property
    def timezone(self: _Admin) -> _dt.timezone:
        """The default site's time zone, as :meth:`set_timezone` set it (UTC until then), as
        a ``datetime.timezone``: app code reads the site's day with
        ``datetime.now(emu.timezone)`` and keeps no copy of its own."""
        sites: list[dict[str, Any]] = self._call("sites")
        offset = next(s for s in sites if s["default"])["timezone"]
        sign = -1 if offset.startswith("-") else 1
        hours, minutes = (int(part) for part in offset.lstrip("+-").split(":")[:2])
        return _dt.timezone(sign * _dt.timedelta(hours=hours, minutes=minutes))

    def broadcasts(
        self: _Admin,
        *,
        offset: int = 0,
        limit: Optional[int] = None,
        api_key: Optional[str] = None,
    ) -> list[dict[str, Any]]:
        """The site's broadcasts, newest first, ``offset`` and ``limit`` to page, as the
        inspector shows them: ``notification_id``, ``status`` (``sent``, ``scheduled``,
        ``draft``, or ``expired`` once its expiry has passed), ``created_at`` and ``due_at``
        (aware datetimes, UTC; ``due_at`` None for a draft), the content (``title``,
        ``message``, ``url``, ``image_url``, ``big_image_url``, ``actions``,
        ``expiry_minutes``), the ``audience`` it was given (the spec's filter names), and its
        counts: ``deliveries`` made, of them ``delivered``, ``pending`` and ``expired``, and
        the ``views`` and ``clicks`` recorded. The counts are kept as deliveries are made and
        change, so a page of them costs the same at ten million subscribers."""
        rows: list[dict[str, Any]] = self._call(
            "broadcasts", offset=offset or None, limit=limit, api_key=api_key
        )
        return _with_times(rows)

    def triggers(self: _Admin, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        """The site's triggered campaigns as the inspector lists them, with what each has
        sent."""
        rows: list[dict[str, Any]] = self._call("triggers", api_key=api_key)
        return _with_times(rows)

    def drips(self: _Admin, *, api_key: Optional[str] = None) -> list[dict[str, Any]]:
        """The site's drips as the inspector lists them, with what each has sent."""
        rows: list[dict[str, Any]] = self._call("drips", api_key=api_key)
        return _with_times(rows)

    def summary(
        self: _Admin,
        start: Union[_dt.date, str, None] = None,
        end: Union[_dt.date, str, None] = None,
        *,
        group_by: str = "day",
        api_key: Optional[str] = None,
    ) -> list[dict[str, Any]]:
        """The analytics summary the inspector charts (spec 2.12's rows, as
        ``analytics.summary`` reads them through the API), from ``start`` to ``end``
        (the emulator's today, and the 30 days to it, by default), by ``day``, ``week`` or
        ``month``; ``date`` as the ``YYYY-MM-DD`` text."""
        out: list[dict[str, Any]] = self._call(
            "summary",
            **{"from": _day(start, "start"), "to": _day(end, "end")},
            group_by=group_by,
            api_key=api_key,
        )
        return out
