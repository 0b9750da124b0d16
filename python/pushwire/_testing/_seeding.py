"""Seeding an emulator's sites (:class:`_Seeding`): sites, subscribers (one, many, or a
generated population), segments, triggered campaigns and alerts, each an admin operation
(``src/emulator/admin/``), for :class:`~pushwire.testing.Emulator`, which runs them
in-process."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional, Union

from pushwire._testing._data import (
    DateLike,
    Distribution,
    _distribution,
    _frame_columns,
    _segment_ids,
    _with_times,
)


class _Seeding:
    """What a test puts in a site before it runs its code."""

    def _call(self, op: str, **args: Any) -> Any:
        raise NotImplementedError  # the Emulator's own

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
        segments: Optional[Iterable[Union[int, str]]] = None,
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
            segments=None if segments is None else _segment_ids("segments", segments),
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
        online: Optional[float] = None,
        segments: Optional[Mapping[Union[int, str], float]] = None,
        profile_id: Optional[str] = None,
        seed: Optional[int] = None,
        api_key: Optional[str] = None,
    ) -> int:
        """Adds ``count`` subscribers drawn from distributions, in the emulator (ten million
        in about three seconds on two cores, drawn on every core); returns how many were
        added.

        Each field is a list of values (each as likely) or a dict of value to weight
        (``country={"US": 0.6, "DE": 0.4}``); ``None`` as a value leaves the field empty.
        ``attributes`` maps a name to such a distribution (``{"plan": {"free": 8, "pro":
        2}, "age": range(18, 80)}``). ``subscribed_between=(start, end)`` spreads the
        join dates uniformly; ``online`` is the share of devices online; ``segments`` maps
        a segment id to the share of the population in it. ``profile_id`` is a pattern of
        their profile ids, ``{n}`` replaced by the subscriber's number on the site (its
        first subscriber is 1): ``"user-{n}"``, so that events can name them by profile.
        ``seed`` makes the population the same on every run.

        A field left out is drawn from the default mix (``docs/emulator.md`` lists it):
        twelve countries with their states and cities, desktop, mobile and tablet devices
        with their browsers and platforms, join dates over the past year and 90% of devices
        online. A field you give keeps the others coherent: ``country=["DE"]`` gets German
        states and cities, ``browser=["safari"]`` Apple devices; where no default agrees
        with what you gave, the field stays empty.
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
        if online is not None and (
            isinstance(online, bool) or not isinstance(online, (int, float)) or not 0 <= online <= 1
        ):
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
            segments=(
                {str(k): v for k, v in zip(_segment_ids("segments", segments), segments.values())}
                if segments
                else None
            ),
            profile_id=profile_id,
            seed=seed,
            api_key=api_key,
            **fields,
        )
        return int(out["added"])

    def create_segment(
        self, name: str, *, segment_type: str = "custom", api_key: Optional[str] = None
    ) -> str:
        """Creates a segment; returns its id, a ``str`` as ``segments.list()`` gives it (the
        service sends segment ids as strings), which ``include_segments``, ``segments.
        add_subscribers`` and :meth:`add_subscriber` take as it is. ``segment_type`` other
        than ``custom`` (``geo``, ``device``, ``browser``) makes one of the service's own,
        listed with ``segment_type=all``."""
        out = self._call("create_segment", name=name, segment_type=segment_type, api_key=api_key)
        return str(out["segment_id"])

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
        """The subscribers' product alerts, with their ``created_at``."""
        return _with_times(self._call("alerts", api_key=api_key))
