"""pushwire: the Python SDK, with a Rust core, for the push notification service REST API.

The emulator of the service ships in the same package: see :mod:`pushwire.testing`.
"""

from pushwire._args import NOT_GIVEN, NotGiven
from pushwire._bulk import BulkResult, ChunkResult
from pushwire._client import AsyncClient, Client
from pushwire._core import Page, __version__, reset_log_cache
from pushwire._core_models import (
    Action,
    Analytics,
    AttributeRule,
    Audience,
    AudienceFilter,
    AudienceRule,
    CampaignOptions,
    Drip,
    DripNotification,
    DripOptions,
    GoalResult,
    Meta,
    NewDrip,
    NewDripNotification,
    PriceDropThreshold,
    Product,
    Rules,
    ScheduleOptions,
    Segment,
    SendTo,
    SummaryRow,
    TriggeredCampaign,
    TriggeredNotification,
    TriggerOptions,
    UtmParams,
)
from pushwire._dataclass import install as _install_protocols
from pushwire._headers import Headers
from pushwire._html import ResultList
from pushwire._idempotency import Idempotency
from pushwire._keystores import IdempotencyStore
from pushwire._response import APIResponse, RequestOptions
from pushwire.errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    IdempotencyError,
    NotFoundError,
    PermissionDeniedError,
    PushwireError,
    RateLimitError,
    ResponseTooLargeError,
    ServerError,
    UnprocessableEntityError,
    ValidationError,
)
from pushwire.resources.notifications import NewBroadcast

# Every model, and Page, as a dataclass to dataclasses, pandas, polars, pydantic and FastAPI.
_install_protocols()

__all__ = [
    "reset_log_cache",
    "NOT_GIVEN",
    "NotGiven",
    "Headers",
    "Idempotency",
    "IdempotencyStore",
    "APIResponse",
    "RequestOptions",
    "Action",
    "Analytics",
    "AsyncClient",
    "BulkResult",
    "ChunkResult",
    "AttributeRule",
    "Audience",
    "AudienceFilter",
    "AudienceRule",
    "CampaignOptions",
    "Client",
    "Drip",
    "DripNotification",
    "DripOptions",
    "GoalResult",
    "Meta",
    "NewBroadcast",
    "NewDrip",
    "NewDripNotification",
    "Page",
    "PriceDropThreshold",
    "Product",
    "ResultList",
    "Rules",
    "ScheduleOptions",
    "Segment",
    "SendTo",
    "SummaryRow",
    "TriggeredCampaign",
    "TriggeredNotification",
    "TriggerOptions",
    "UtmParams",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "IdempotencyError",
    "NotFoundError",
    "PermissionDeniedError",
    "PushwireError",
    "RateLimitError",
    "ResponseTooLargeError",
    "ServerError",
    "UnprocessableEntityError",
    "ValidationError",
    "__version__",
]
