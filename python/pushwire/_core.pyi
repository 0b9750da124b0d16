"""Stubs of the Rust extension ``pushwire._core`` (kept honest by ``mypy.stubtest``): its
functions, the client's core, the emulator's server and ``Page``; its models are written in
``_core_models.pyi`` and re-exported here. The classes' read-only attributes are written as
such (``Final``), one line each (``Page.data`` stays a property: a ``Final`` cannot depend on
a type variable)."""

import dataclasses
import datetime
import os
import pathlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import (
    Any,
    ClassVar,
    Final,
    Generic,
    Optional,
    SupportsIndex,
    TypeVar,
    Union,
    final,
    overload,
)

from typing_extensions import Self

# The models, re-exported: every public name of `_core_models.pyi` (__all__ names them, so
# ruff cannot see where they come from).
from pushwire._core_models import *  # noqa: F403

__version__: str
# The operations (by name, ``drips.create``) that take an idempotency key, as the core
# declares them.
_KEYED_OPERATIONS: frozenset[str]

def reset_log_cache() -> None:
    """Makes the Rust core read the ``pushwire`` logger's level now. Every client call and
    emulator operation does this itself, so logging configured at any time takes effect at
    the next call; nobody needs to call it."""

def _model_fields() -> list[tuple[str, list[tuple[str, str]]]]:
    """Each model's fields in order with their Python annotations, by model name."""

def openapi_document(base_url: str, events_url: str, admin: bool = False) -> str:
    """The service's OpenAPI 3.1 document as JSON text, its servers at ``base_url`` and
    ``events_url``; with ``admin``, the emulator's admin API's, served at ``base_url``."""

# In the order they are defined here.
__all__ = [  # noqa: F405
    "__version__",
    "_KEYED_OPERATIONS",
    "reset_log_cache",
    "_model_fields",
    "openapi_document",
    "Analytics",
    "GoalResult",
    "UtmParams",
    "Action",
    "ScheduleOptions",
    "Meta",
    "TriggeredCampaign",
    "Rules",
    "TriggeredNotification",
    "TriggerOptions",
    "CampaignOptions",
    "PriceDropThreshold",
    "Drip",
    "DripOptions",
    "Audience",
    "AudienceFilter",
    "AudienceRule",
    "DripNotification",
    "NewDripNotification",
    "SendTo",
    "NewDrip",
    "Segment",
    "Product",
    "SummaryRow",
    "AttributeRule",
    "Page",
    "CoreClient",
    "Completions",
    "EmulatorServer",
    "PreparedCall",
    "analytics_subscribers",
    "analytics_summary",
    "drips_create",
    "drips_get",
    "drips_list",
    "events_track",
    "events_track_many",
    "notifications_create",
    "notifications_validate",
    "products_update",
    "request",
    "segments_add_profiles",
    "segments_add_profiles_bulk",
    "segments_add_subscribers",
    "segments_add_subscribers_bulk",
    "segments_delete",
    "segments_list",
    "segments_remove_profiles",
    "segments_remove_profiles_bulk",
    "triggers_get",
    "triggers_list",
]

_T = TypeVar("_T")

@final
class Page(Generic[_T]):
    """One page of a list: ``data`` plus the spec's ``meta`` fields. A sequence of its
    items (registered as ``collections.abc.Sequence``) and a dataclass of those five
    fields to the dataclasses module."""

    __hash__: ClassVar[None]  # type: ignore[assignment]
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    __dataclass_params__: ClassVar[Any]
    __match_args__: ClassVar[tuple[str, ...]]
    def __replace__(self, /, **changes: Any) -> Self: ...
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any, /) -> Any: ...
    def __new__(
        cls, data: list[_T], total: int, page: int, per_page: int, last_page: int
    ) -> Self: ...
    @property
    def data(self) -> list[_T]: ...
    total: Final[int]
    page: Final[int]
    per_page: Final[int]
    last_page: Final[int]
    has_next: Final[bool]
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[_T]: ...
    @overload
    def __getitem__(self, key: int, /) -> _T: ...
    @overload
    def __getitem__(self, key: slice, /) -> list[_T]: ...
    @classmethod
    def __class_getitem__(cls, item: Any) -> Any: ...
    def __eq__(self, value: object, /) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self, *, indent: Optional[int] = None) -> str:
        """The page as the service's JSON: ``data`` and ``meta``."""
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Page[Any]:
        """A page from ``to_dict()``'s shape or the service's (``data`` and ``meta``)."""
    def index(self, value: Any, start: int = 0, stop: int = ..., /) -> int: ...
    def count(self, value: Any, /) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

@final
class CoreClient:
    def __new__(
        cls,
        api_key: str,
        base_url: str,
        events_url: str,
        timeout: float = 30.0,
        max_retries: int = 2,
        default_headers: Optional[dict[str, str]] = None,
        allow_insecure: bool = False,
        backoff_base: float = 0.5,
        ca_bundle: Optional[str | os.PathLike[str]] = None,
        proxy: Optional[str] = None,
        max_connections: Optional[int] = ...,
        max_response_size: int = ...,
    ) -> Self: ...
    base_url: Final[str]
    events_url: Final[str]
    timeout: Final[float]
    max_retries: Final[int]
    max_connections: Final[Optional[int]]
    max_response_size: Final[int]
    closed: Final[bool]
    def with_options(
        self,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        max_response_size: Optional[int] = None,
    ) -> CoreClient: ...
    def close(self) -> None: ...
    def call(self, call: PreparedCall) -> Any: ...
    def call_with(self, call: PreparedCall, options: dict[str, Any]) -> Any: ...
    def submit(self, call: PreparedCall, completions: Completions) -> int: ...
    def submit_with(
        self, call: PreparedCall, options: dict[str, Any], completions: Completions
    ) -> int: ...

@final
class Completions:
    def __new__(cls, write_fd: int) -> Self: ...
    def drain(self) -> list[tuple[int, bool, Any]]: ...
    def cancel(self, id: int) -> None: ...
    pending: Final[int]

@final
class EmulatorServer:
    def __new__(
        cls,
        api_key: str,
        host: str = "127.0.0.1",
        port: int = 0,
        events_port: int = 0,
        allowed_hosts: Sequence[str] = ...,
        admin_token: Optional[str] = None,
        state: Optional[Union[str, os.PathLike[str]]] = None,
        save_every: Optional[float] = None,
        load_from: Optional[Union[str, os.PathLike[str]]] = None,
    ) -> Self: ...
    api_key: Final[str]
    base_url: Final[str]
    events_url: Final[str]
    notice: Final[Optional[str]]
    running: Final[bool]
    state_file: Final[Optional[pathlib.Path]]
    def admin(self, op: str, args_json: str) -> str: ...
    def rows(self, op: str, args_json: str) -> list[dict[str, Any]]: ...
    def follow_python_clock(self, follow: bool) -> None: ...
    def save(
        self, path: Optional[Union[str, os.PathLike[str]]] = None
    ) -> tuple[pathlib.Path, int, float]: ...
    def stop(self) -> None: ...

# The operations: each reads and checks its method's arguments into a call a client runs.

@final
class PreparedCall:
    name: Final[str]
    idempotency_key: Final[Optional[str]]
    arguments: Final[Optional[dict[str, Any]]]

_Id = Union[str, SupportsIndex]
_Date = Union[datetime.date, str, None]
_Progress = Optional[Callable[[int, int], Any]]
_Path = Union[str, os.PathLike[str], None]

def triggers_get(
    trigger_id: _Id, *, analytics_start_at: _Date, analytics_end_at: _Date
) -> PreparedCall: ...
def triggers_list(
    *, page: SupportsIndex, limit: SupportsIndex, analytics_start_at: _Date, analytics_end_at: _Date
) -> PreparedCall: ...
def drips_create(
    campaign_name: str,
    notifications: Sequence[Any],
    *,
    send_to: Any,
    utm_params: Any,
    check_segments: bool,
    idempotency_key: Optional[str],
) -> PreparedCall: ...
def drips_get(
    drip_id: _Id, *, analytics_start_at: _Date, analytics_end_at: _Date
) -> PreparedCall: ...

# A page of drips is asked for as one of triggered campaigns is.
drips_list = triggers_list

def segments_list(
    *,
    segment_id: Optional[_Id],
    limit: Optional[SupportsIndex],
    offset: Optional[SupportsIndex],
    segment_type: Optional[str],
) -> PreparedCall: ...
def segments_delete(segment_id: _Id) -> PreparedCall: ...
def segments_add_subscribers(segment_id: _Id, subscriber_hashes: Iterable[str]) -> PreparedCall: ...
def segments_add_profiles(segment_name: str, profile_ids: Iterable[_Id]) -> PreparedCall: ...
def segments_remove_profiles(segment_name: str, profile_ids: Iterable[_Id]) -> PreparedCall: ...
def segments_add_subscribers_bulk(
    segment_id: _Id,
    hashes: Sequence[str],
    *,
    concurrency: SupportsIndex,
    checkpoint: _Path,
    progress: _Progress,
) -> PreparedCall: ...
def segments_add_profiles_bulk(
    segment_name: str,
    profile_ids: Sequence[_Id],
    *,
    concurrency: SupportsIndex,
    checkpoint: _Path,
    progress: _Progress,
) -> PreparedCall: ...

# Profiles are taken out of a segment as they are put in.
segments_remove_profiles_bulk = segments_add_profiles_bulk

def analytics_summary(
    start: Union[datetime.date, str], end: Union[datetime.date, str], *, group_by: str
) -> PreparedCall: ...
def analytics_subscribers(*, types: Optional[Iterable[str]]) -> PreparedCall: ...
def products_update(products: Sequence[Any], *, idempotency_key: Optional[str]) -> PreparedCall: ...
def notifications_create(
    notification: Mapping[str, Any],
    *,
    send_late: bool,
    check_segments: bool,
    idempotency_key: Optional[str],
) -> PreparedCall: ...
def notifications_validate(notification: Mapping[str, Any], *, send_late: bool) -> PreparedCall: ...
def events_track(
    event_name: str,
    *,
    profile_id: Optional[_Id],
    device_token_hash: Optional[str],
    data: Optional[Mapping[str, Any]],
    idempotency_key: Optional[str],
) -> PreparedCall: ...
def events_track_many(events: list[Any], *, concurrency: SupportsIndex) -> PreparedCall: ...
def request(
    method: str,
    path: str,
    *,
    query: Optional[Mapping[str, Any]],
    body: Any,
    form: Optional[Mapping[str, Any]],
    headers: Optional[Mapping[str, str]],
    idempotent: Optional[bool],
    interface: str,
) -> PreparedCall: ...
