"""Stubs of the models of the Rust extension ``pushwire._core``, which ``_core.pyi``
re-exports; ``pushwire._core_models`` holds the same classes at run time, so that
``mypy.stubtest`` checks them under this name.

What the models share is written once, in ``_Model``. The classes' read-only attributes are
written as such (``Final``), one line each. A model's constructor lists its fields again
because it takes more than it gives back (any ``SupportsIndex`` for an ``int``, a dict for a
model)."""

import dataclasses
import datetime
import decimal
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, Optional, SupportsFloat, SupportsIndex, Union, final

from typing_extensions import Self

# A whole number as the input models take it: ints, numpy's, and whole ``Decimal``s.
_WholeLike = Union[SupportsIndex, decimal.Decimal]

class _Model:
    """What every model of the core has (a stub-only base: at run time each model has its
    own): ``from_dict``/``to_dict``/``to_json``, ``==`` and a hash as a frozen dataclass
    has them (``TypeError`` for a model holding a list), pickling, and the dataclass
    protocol (``pushwire._dataclass``)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    __dataclass_params__: ClassVar[Any]
    __match_args__: ClassVar[tuple[str, ...]]
    def __hash__(self) -> int: ...
    def __replace__(self, /, **changes: Any) -> Self: ...
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any, /) -> Any: ...
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self, *, indent: Optional[int] = None) -> str: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

@final
class Analytics(_Model):
    def __new__(
        cls,
        *,
        views: SupportsIndex = ...,
        clicks: SupportsIndex = ...,
        sentcount: SupportsIndex = ...,
        unsubscribed: SupportsIndex = ...,
        ctr: float = ...,
        result: Sequence[Union[GoalResult, Mapping[str, Any]]] = ...,
    ) -> Self: ...
    views: Final[int]
    clicks: Final[int]
    sentcount: Final[int]
    unsubscribed: Final[int]
    ctr: Final[float]
    result: Final[list[GoalResult]]

@final
class GoalResult(_Model):
    def __new__(
        cls, *, name: str = ..., count: SupportsIndex = ..., value: float = ...
    ) -> Self: ...
    name: Final[str]
    count: Final[int]
    value: Final[float]

@final
class UtmParams(_Model):
    def __new__(
        cls,
        *,
        utm_source: str = ...,
        utm_medium: str = ...,
        utm_campaign: str = ...,
        utm_term: Optional[str] = ...,
        utm_content: Optional[str] = ...,
    ) -> Self: ...
    utm_source: Final[str]
    utm_medium: Final[str]
    utm_campaign: Final[str]
    utm_term: Final[Optional[str]]
    utm_content: Final[Optional[str]]

@final
class Action(_Model):
    """A notification button (spec 2.6); at most two per notification."""

    def __new__(cls, *, label: str, url: str, image_url: Optional[str] = ...) -> Self: ...
    label: Final[str]
    url: Final[str]
    image_url: Final[Optional[str]]

@final
class ScheduleOptions(_Model):
    def __new__(
        cls,
        *,
        type: str = ...,
        value: Optional[_WholeLike] = ...,
        unit: Optional[str] = ...,
        at: Optional[str] = ...,
    ) -> Self: ...
    type: Final[str]
    value: Final[Optional[int]]
    unit: Final[Optional[str]]
    at: Final[Optional[str]]

@final
class Meta(_Model):
    def __new__(
        cls,
        *,
        total: SupportsIndex = ...,
        page: SupportsIndex = ...,
        per_page: SupportsIndex = ...,
        last_page: SupportsIndex = ...,
    ) -> Self: ...
    total: Final[int]
    page: Final[int]
    per_page: Final[int]
    last_page: Final[int]

@final
class TriggeredCampaign(_Model):
    """A triggered campaign (spec 2.1); ``notifications`` only in single reads."""

    def __new__(
        cls,
        *,
        trigger_id: SupportsIndex = ...,
        campaign_name: str = ...,
        campaign_type: str = ...,
        status: str = ...,
        site_id: SupportsIndex = ...,
        created_at_utc: Union[datetime.datetime, str, None] = ...,
        updated_at_utc: Union[datetime.datetime, str, None] = ...,
        daily_trigger_limit: SupportsIndex = ...,
        weekly_trigger_limit: SupportsIndex = ...,
        rules: Union[Rules, Mapping[str, Any]] = ...,
        analytics: Union[Analytics, Mapping[str, Any]] = ...,
        notifications: Optional[Sequence[Union[TriggeredNotification, Mapping[str, Any]]]] = ...,
        options: Optional[Union[TriggerOptions, Mapping[str, Any]]] = ...,
        utm_params: Optional[Union[UtmParams, Mapping[str, Any]]] = ...,
        extra: Mapping[str, Any] = ...,
    ) -> Self: ...
    trigger_id: Final[int]
    campaign_name: Final[str]
    campaign_type: Final[str]
    status: Final[str]
    site_id: Final[int]
    created_at_utc: Final[Optional[datetime.datetime]]
    updated_at_utc: Final[Optional[datetime.datetime]]
    daily_trigger_limit: Final[int]
    weekly_trigger_limit: Final[int]
    rules: Final[Rules]
    analytics: Final[Analytics]
    notifications: Final[Optional[list[TriggeredNotification]]]
    options: Final[Optional[TriggerOptions]]
    utm_params: Final[Optional[UtmParams]]
    extra: Final[dict[str, Any]]

@final
class Rules(_Model):
    def __new__(cls, *, start_event_name: str = ..., stop_event_name: str = ...) -> Self: ...
    start_event_name: Final[str]
    stop_event_name: Final[str]

@final
class TriggeredNotification(_Model):
    def __new__(
        cls,
        *,
        id: SupportsIndex = ...,
        order: SupportsIndex = ...,
        title: str = ...,
        message: str = ...,
        url: str = ...,
        image_url: Optional[str] = ...,
        big_image_url: Optional[str] = ...,
        expiry: _WholeLike = ...,
        require_interaction: _WholeLike = ...,
        actions: Sequence[Union[Action, Mapping[str, Any]]] = ...,
        schedule_options: Union[ScheduleOptions, Mapping[str, Any]] = ...,
        analytics: Union[Analytics, Mapping[str, Any]] = ...,
        extra: Mapping[str, Any] = ...,
    ) -> Self: ...
    id: Final[int]
    order: Final[int]
    title: Final[str]
    message: Final[str]
    url: Final[str]
    image_url: Final[Optional[str]]
    big_image_url: Final[Optional[str]]
    expiry: Final[int]
    require_interaction: Final[int]
    actions: Final[list[Action]]
    schedule_options: Final[ScheduleOptions]
    analytics: Final[Analytics]
    extra: Final[dict[str, Any]]

@final
class TriggerOptions(_Model):
    def __new__(
        cls,
        *,
        result_name: Optional[str] = ...,
        campaign: Optional[Union[CampaignOptions, Mapping[str, Any]]] = ...,
    ) -> Self: ...
    result_name: Final[Optional[str]]
    campaign: Final[Optional[CampaignOptions]]

@final
class CampaignOptions(_Model):
    def __new__(
        cls,
        *,
        expiry: Optional[str] = ...,
        price_drop_threshold: Optional[Union[PriceDropThreshold, Mapping[str, Any]]] = ...,
    ) -> Self: ...
    expiry: Final[Optional[str]]
    price_drop_threshold: Final[Optional[PriceDropThreshold]]

@final
class PriceDropThreshold(_Model):
    def __new__(cls, *, type: str = ..., value: float = ...) -> Self: ...
    type: Final[str]
    value: Final[float]

@final
class Drip(_Model):
    """A drip autoresponder (spec 2.7); ``notifications`` only in single reads."""

    def __new__(
        cls,
        *,
        drip_id: SupportsIndex = ...,
        campaign_name: str = ...,
        drip_type: str = ...,
        status: str = ...,
        site_id: SupportsIndex = ...,
        created_at_utc: Union[datetime.datetime, str, None] = ...,
        updated_at_utc: Union[datetime.datetime, str, None] = ...,
        audience: Union[Audience, Mapping[str, Any]] = ...,
        options: Union[DripOptions, Mapping[str, Any]] = ...,
        analytics: Union[Analytics, Mapping[str, Any]] = ...,
        notifications: Optional[Sequence[Union[DripNotification, Mapping[str, Any]]]] = ...,
        utm_params: Optional[Union[UtmParams, Mapping[str, Any]]] = ...,
        extra: Mapping[str, Any] = ...,
    ) -> Self: ...
    drip_id: Final[int]
    campaign_name: Final[str]
    drip_type: Final[str]
    status: Final[str]
    site_id: Final[int]
    created_at_utc: Final[Optional[datetime.datetime]]
    updated_at_utc: Final[Optional[datetime.datetime]]
    audience: Final[Audience]
    options: Final[DripOptions]
    analytics: Final[Analytics]
    notifications: Final[Optional[list[DripNotification]]]
    utm_params: Final[Optional[UtmParams]]
    extra: Final[dict[str, Any]]

@final
class DripOptions(_Model):
    def __new__(cls, *, result_name: str = ...) -> Self: ...
    result_name: Final[str]

@final
class Audience(_Model):
    def __new__(cls, *, filter: Union[AudienceFilter, Mapping[str, Any]] = ...) -> Self: ...
    filter: Final[AudienceFilter]

@final
class AudienceFilter(_Model):
    def __new__(
        cls, *, value: Sequence[Sequence[Union[AudienceRule, Mapping[str, Any]]]] = ...
    ) -> Self: ...
    value: Final[list[list[AudienceRule]]]

@final
class AudienceRule(_Model):
    def __new__(cls, *, field: str = ..., op: str = ..., value: Any = ...) -> Self: ...
    field: Final[str]
    op: Final[str]
    value: Final[Any]

@final
class DripNotification(_Model):
    """A drip notification as read (spec 2.8)."""

    def __new__(
        cls,
        *,
        id: SupportsIndex = ...,
        order: SupportsIndex = ...,
        title: str = ...,
        message: str = ...,
        url: str = ...,
        image_url: str = ...,
        big_image_url: str = ...,
        require_interaction: _WholeLike = ...,
        expiry: _WholeLike = ...,
        schedule_options: Union[ScheduleOptions, Mapping[str, Any]] = ...,
        actions: Sequence[Union[Action, Mapping[str, Any]]] = ...,
        analytics: Union[Analytics, Mapping[str, Any]] = ...,
        extra: Mapping[str, Any] = ...,
    ) -> Self: ...
    id: Final[int]
    order: Final[int]
    title: Final[str]
    message: Final[str]
    url: Final[str]
    image_url: Final[str]
    big_image_url: Final[str]
    require_interaction: Final[int]
    expiry: Final[int]
    schedule_options: Final[ScheduleOptions]
    actions: Final[list[Action]]
    analytics: Final[Analytics]
    extra: Final[dict[str, Any]]

@final
class NewDripNotification(_Model):
    """A drip notification to create (spec 2.8, create shape)."""

    def __new__(
        cls,
        *,
        title: str = ...,
        message: str = ...,
        url: str = ...,
        image_url: str = ...,
        big_image_url: str = ...,
        require_interaction: _WholeLike = ...,
        expiry: _WholeLike = ...,
        schedule_options: Union[ScheduleOptions, Mapping[str, Any]] = ...,
        actions: Sequence[Union[Action, Mapping[str, Any]]] = ...,
    ) -> Self: ...
    title: Final[str]
    message: Final[str]
    url: Final[str]
    image_url: Final[str]
    big_image_url: Final[str]
    require_interaction: Final[Optional[int]]
    expiry: Final[Optional[int]]
    schedule_options: Final[ScheduleOptions]
    actions: Final[list[Action]]

@final
class SendTo(_Model):
    def __new__(
        cls,
        *,
        include_segments: Optional[Sequence[Union[str, SupportsIndex]]] = ...,
        exclude_segments: Sequence[Union[str, SupportsIndex]] = ...,
        include_countries: Optional[Sequence[str]] = ...,
        exclude_countries: Sequence[str] = ...,
        include_states: Optional[Sequence[str]] = ...,
        exclude_states: Sequence[str] = ...,
        include_cities: Optional[Sequence[str]] = ...,
        exclude_cities: Sequence[str] = ...,
    ) -> Self: ...
    include_segments: Final[Optional[list[str]]]
    exclude_segments: Final[list[str]]
    include_countries: Final[Optional[list[str]]]
    exclude_countries: Final[list[str]]
    include_states: Final[Optional[list[str]]]
    exclude_states: Final[list[str]]
    include_cities: Final[Optional[list[str]]]
    exclude_cities: Final[list[str]]

@final
class NewDrip(_Model):
    def __new__(
        cls,
        *,
        campaign_name: str = ...,
        notifications: Sequence[Union[NewDripNotification, Mapping[str, Any]]] = ...,
        send_to: Optional[Union[SendTo, Mapping[str, Any]]] = ...,
        utm_params: Optional[Union[UtmParams, Mapping[str, Any]]] = ...,
    ) -> Self: ...
    campaign_name: Final[str]
    notifications: Final[list[NewDripNotification]]
    send_to: Final[Optional[SendTo]]
    utm_params: Final[Optional[UtmParams]]

@final
class Segment(_Model):
    """A segment (spec 2.10); the service sends ``segment_id`` as a string."""

    def __new__(
        cls, *, segment_id: str = ..., segment_name: str = ..., extra: Mapping[str, Any] = ...
    ) -> Self: ...
    segment_id: Final[str]
    segment_name: Final[str]
    extra: Final[dict[str, Any]]

@final
class Product(_Model):
    """A product update (spec 2.11); ``availability`` is inStock (default) or outOfStock."""

    def __new__(
        cls,
        *,
        product_id: str,
        price: SupportsFloat,
        availability: Optional[str] = ...,
        variant_id: Optional[str] = ...,
    ) -> Self: ...
    product_id: Final[str]
    price: Final[float]
    availability: Final[Optional[str]]
    variant_id: Final[Optional[str]]

@final
class SummaryRow(_Model):
    """One row of spec 2.12 as a model: the shape of the rows ``analytics.summary()``
    returns. The call returns plain dicts, which pandas and polars take as they are
    (``date`` a ``datetime.date``, a date column); this class types a row where code wants
    a model (``SummaryRow.from_dict(row)``, its ``date`` then the ISO text), and is what the
    OpenAPI document names the rows."""

    def __new__(
        cls,
        *,
        date: str = ...,
        subscriber_count: SupportsIndex = ...,
        desktop_subscriber_count: SupportsIndex = ...,
        mobile_subscriber_count: SupportsIndex = ...,
        unsubscribed_count: SupportsIndex = ...,
        desktop_unsubscribed_count: SupportsIndex = ...,
        mobile_unsubscribed_count: SupportsIndex = ...,
        notification_sent: SupportsIndex = ...,
        net_subscriber_sent: SupportsIndex = ...,
        view_count: SupportsIndex = ...,
        click_count: SupportsIndex = ...,
        ctr: float = ...,
    ) -> Self: ...
    date: Final[str]
    subscriber_count: Final[int]
    desktop_subscriber_count: Final[int]
    mobile_subscriber_count: Final[int]
    unsubscribed_count: Final[int]
    desktop_unsubscribed_count: Final[int]
    mobile_unsubscribed_count: Final[int]
    notification_sent: Final[int]
    net_subscriber_sent: Final[int]
    view_count: Final[int]
    click_count: Final[int]
    ctr: Final[float]

@final
class AttributeRule(_Model):
    def __new__(cls, *, key: str, op: str, value: Any = ...) -> Self: ...
    key: Final[str]
    op: Final[str]
    value: Final[Any]
