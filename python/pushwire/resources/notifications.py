"""Push broadcasts (spec 4.13): ``client.notifications``, blocking and awaited."""

from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union

import pushwire._core as _core
from pushwire._args import DateLike, DateTimeLike, IdLike, WholeLike, _is_list, _strs
from pushwire._core_models import Action, AttributeRule
from pushwire._response import RequestOptions
from pushwire.errors import ValidationError

from ._resource import _Async, _RawAsync, _RawSync, _Sync, awaitable, raw, raw_awaitable

if TYPE_CHECKING:
    from typing_extensions import Unpack


class Notifications(_Sync):
    """Push broadcasts (spec 4.13)."""

    def create(
        self,
        broadcast: Optional[NewBroadcast] = None,
        *,
        title: str = "",
        message: str = "",
        url: str = "",
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
        send_late: bool = False,
        check_segments: bool = True,
        idempotency_key: Optional[str] = None,
        **options: Unpack[RequestOptions],
    ) -> int:
        """Creates a broadcast; its ``notification_id``.

        ``type`` is ``now``, ``later`` or ``draft``; left out, it is ``later`` when
        ``valid_from_utc`` is given and ``now`` otherwise. ``expiry`` is in minutes. Never
        retried once it may have been received, so a broadcast is never sent twice.

        ``valid_from_utc`` is the site's local time. One that has passed in every time zone
        (more than 12 hours before UTC's now: the service would send the broadcast at once,
        to its whole audience) or is more than ten years ahead (a year typed wrong) is
        refused with a ``ValidationError`` naming it; ``send_late=True`` sends a passed one
        now on purpose.

        A segment id (``include_segments``, ``exclude_segments``) that the site does not
        have is refused with a ``ValidationError`` naming it: the service would accept it and
        send to nobody, or leave out nobody. The client reads the site's segments once
        (``segments.list``) and again a minute later, or at once for an id it has not seen,
        so a segment made a second ago is found; ``check_segments=False`` sends unchecked.
        The id is
        0 (with a warning) if the service accepted the broadcast but sent no usable id:
        raising would invite a retry that sends it twice.

        ``idempotency_key`` (with the client's ``idempotency_store``) sends it once per key,
        however often the code around the call runs: a later call with the key returns the
        first one's id (see the exactly-once page of the docs).

        ``broadcast``, a :class:`NewBroadcast` built (and checked) beforehand, is sent as it
        is, in place of the fields: a confirmation page shows one, then sends exactly it."""
        if broadcast is not None:
            given = {k: v for k, v in locals().items() if k in _FIELDS and v not in (None, "")}
            if given or send_late:
                raise TypeError(
                    "notifications.create takes a NewBroadcast or its fields, not both: "
                    f"{', '.join(sorted(given)) or 'send_late'} given with one"
                )
            fields, send_late = broadcast.spec_fields(), broadcast.send_late
        else:
            fields = _fields_of(locals())
        call = _core.notifications_create(
            fields,
            send_late=send_late,
            check_segments=check_segments,
            idempotency_key=idempotency_key,
        )
        out: int = self._call(call, **options)
        return out

    def validate(self, broadcast: NewBroadcast, **options: Unpack[RequestOptions]) -> None:
        """Checks ``broadcast`` against the site without sending it: each segment id it
        names must be one of the site's (read as ``create`` reads them), besides every check
        its construction made (its schedule again, by the time now). Raises a
        ``ValidationError`` naming the field; returns None when ``create(broadcast)`` would
        send it."""
        call = _core.notifications_validate(broadcast.spec_fields(), send_late=broadcast.send_late)
        out: None = self._call(call, **options)
        return out


def _fields_of(given: Mapping[str, Any]) -> dict[str, Any]:
    """The spec's fields of a broadcast given as ``create``'s (or ``NewBroadcast``'s) named
    arguments."""
    return _broadcast(
        given["title"],
        given["message"],
        given["url"],
        given.get("type"),
        given.get("valid_from_utc"),
        given.get("expiry"),
        {name: given.get(name) for name in _LISTS},
        {name: given.get(name) for name in _EXTRA},
    )


# The fields of a broadcast, as `create` and `NewBroadcast` name them: its targeting lists,
# and the rest after title, message, url, type, valid_from_utc and expiry.
_LISTS = (
    "profile_id include_segments exclude_segments include_countries exclude_countries "
    "include_states include_cities include_device_types include_browsers subscriber_hash"
).split()
_EXTRA = "image_url big_image_url require_interaction from_date to_date attributes actions".split()
_FIELDS = frozenset(
    ("title", "message", "url", "type", "valid_from_utc", "expiry", *_LISTS, *_EXTRA)
)


@dataclasses.dataclass(frozen=True)
class NewBroadcast:
    """A broadcast to create, checked as it is built and not sent: ``create``'s fields, by
    the same names. Every check ``notifications.create`` makes before sending is made here
    (a ``ValidationError`` naming the field), but the one that needs the site:
    ``client.notifications.validate(broadcast)`` checks its segment ids there, and
    ``client.notifications.create(broadcast)`` sends exactly it.

    Its ``type`` and ``valid_from_utc`` read as they will be sent (``"later"``, and the
    site-local ``"YYYY-MM-DD hh:mm:ss"``), its lists as tuples of text, its rules and buttons
    as dicts (its own copies), its days as ISO text: ``to_json()`` is its JSON (for a
    session) and ``NewBroadcast.from_dict`` makes the same broadcast of it, checked again."""

    title: str
    message: str
    url: str
    type: Optional[str] = None
    valid_from_utc: Optional[DateTimeLike] = None
    image_url: Optional[str] = None
    big_image_url: Optional[str] = None
    expiry: Optional[WholeLike] = None
    require_interaction: Optional[WholeLike] = None
    profile_id: Optional[Sequence[IdLike]] = None
    include_segments: Optional[Sequence[IdLike]] = None
    exclude_segments: Optional[Sequence[IdLike]] = None
    include_countries: Optional[Sequence[str]] = None
    exclude_countries: Optional[Sequence[str]] = None
    include_states: Optional[Sequence[str]] = None
    include_cities: Optional[Sequence[str]] = None
    include_device_types: Optional[Sequence[str]] = None
    include_browsers: Optional[Sequence[str]] = None
    from_date: Optional[Union[DateLike, _dt.datetime]] = None
    to_date: Optional[Union[DateLike, _dt.datetime]] = None
    subscriber_hash: Optional[Sequence[str]] = None
    attributes: Optional[Sequence[Sequence[Union[AttributeRule, Mapping[str, Any]]]]] = None
    actions: Optional[Sequence[Union[Action, Mapping[str, Any]]]] = None
    send_late: bool = False

    def __post_init__(self) -> None:
        fields = _fields_of(self._given())
        # Every check of the core that needs no site (shapes, limits, the schedule); the
        # call it prepares is dropped unrun.
        _core.notifications_validate(fields, send_late=self.send_late)
        # Its own copies, immutable where they can be: what was confirmed is what is sent.
        shown: dict[str, Any] = {"type": fields["notification_type"]}
        shown["valid_from_utc"] = fields.get("valid_from_utc")
        for name in _LISTS:
            shown[name] = _frozen(fields.get(name))
        for name in ("attributes", "actions"):
            shown[name] = _frozen(_plain(copy.deepcopy(fields.get(name))))
        for name in ("expiry", "require_interaction"):
            value = fields.get(name)
            shown[name] = None if value is None else int(value)
        for name in ("from_date", "to_date"):
            value = fields.get(name)
            if value is not None and not isinstance(value, (str, _dt.date)):
                value = value.item()  # numpy's datetime64, checked as a date by the core
            shown[name] = value.isoformat() if isinstance(value, _dt.date) else value
        for name, value in shown.items():
            object.__setattr__(self, name, value)

    def _given(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}

    def spec_fields(self) -> dict[str, Any]:
        """The parameters of spec 4.13 under their spec names, as ``create`` sends them."""
        return _fields_of(self._given())

    def to_dict(self) -> dict[str, Any]:
        """Its fields by name, JSON as they are; ``None`` for those not given."""
        return dataclasses.asdict(self)

    def to_json(self, *, indent: Optional[int] = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NewBroadcast:
        """The broadcast ``to_dict()`` gave (checked again as it is built)."""
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValidationError(f"NewBroadcast has no field {unknown[0]!r}", field=unknown[0])
        missing = [n for n in ("title", "message", "url") if n not in data]
        if missing:
            raise ValidationError(f"{missing[0]} is required", field=missing[0])
        return cls(**data)


def _frozen(value: Any) -> Any:
    """A list as a tuple, within lists: a field that cannot be changed once checked."""
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def _plain(value: Any) -> Any:
    """Models (a rule, a button) as their dicts, within lists."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


class AsyncNotifications(_Async, twin=Notifications):
    create = awaitable(Notifications.create)
    validate = awaitable(Notifications.validate)


# `validate` has no answer of its own to show raw.
_NOT_RAW = ("validate",)


class NotificationsWithRawResponse(_RawSync, twin=Notifications, skip=_NOT_RAW):
    create = raw(Notifications.create)


class AsyncNotificationsWithRawResponse(_RawAsync, twin=Notifications, skip=_NOT_RAW):
    create = raw_awaitable(Notifications.create)


# A site-local date and time in ISO 8601 other than the spec's own form: `T` between them, or
# no seconds (an HTML `datetime-local` field's value), or an offset (refused as aware).
_LOCAL_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?| \d{2}:\d{2})(Z|[+-]\d{2}:\d{2})?\Z"
)


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
    if isinstance(valid_from_utc, str) and _LOCAL_ISO.match(valid_from_utc.strip()):
        # ISO 8601 as a form's `datetime-local` gives it ("2026-12-24T09:00"): with `T` or a
        # space, with or without seconds, read as the datetime it names.
        text = valid_from_utc.strip()
        try:
            valid_from_utc = _dt.datetime.fromisoformat(
                text[:-1] + "+00:00" if text.endswith("Z") else text
            )
        except ValueError:
            raise ValidationError(
                f"valid_from_utc {text!r} is no date and time (YYYY-MM-DD hh:mm:ss, or ISO 8601 "
                "as YYYY-MM-DDThh:mm)",
                field="valid_from_utc",
            ) from None
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
        # Given empty, an include list is refused by the core (it would be no filter).
        as_strs = _strs(name, values)
        if as_strs is not None:
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
