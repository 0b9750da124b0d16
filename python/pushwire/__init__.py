"""pushwire: the Python SDK, with a Rust core, for the push notification service REST API.

The emulator of the service ships in the same package: see :mod:`pushwire.testing`.
"""

from pushwire._core import __version__
from pushwire.errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    PushwireError,
    RateLimitError,
    ServerError,
    ValidationError,
)

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "NotFoundError",
    "PushwireError",
    "RateLimitError",
    "ServerError",
    "ValidationError",
    "__version__",
]
