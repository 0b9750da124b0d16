"""The exceptions pushwire raises. Defined in Python, raised from the Rust core."""

from __future__ import annotations

from typing import Any, Optional

from pushwire._headers import HeaderItems, Headers

# Where services and the gateways in front of them name a request, most usual first.
REQUEST_ID_HEADERS = (
    "x-request-id",
    "request-id",
    "x-amzn-requestid",
    "x-amz-request-id",
    "x-correlation-id",
    "cf-ray",
)


def _rebuild(cls: type[PushwireError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    err = cls.__new__(cls)
    err.args = args
    err.__dict__.update(state)
    return err


class PushwireError(Exception):
    """Base of every error pushwire raises.

    Every field of an error is also in its ``args``, in the order its constructor takes
    them, so that ``type(e)(*e.args)`` rebuilds it whole: that is how Celery's JSON result
    format (its default) brings an exception back to the caller, and ``outcome_unknown``
    must not come back False."""

    def __str__(self) -> str:
        message = getattr(self, "message", None)
        return message if isinstance(message, str) else super().__str__()

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle as `cls(*args)`, which the keyword-only arguments of the
        # subclasses (`status_code`, ...) would refuse: a Celery task failing with an
        # APIError must reach the caller whole. The state is restored as it was.
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


class ValidationError(PushwireError, ValueError):
    """Bad input, caught before anything was sent. ``field`` names the offending parameter;
    ``message`` says what is wrong with it, to show beside the field (a form's error under
    its input); ``str(e)`` puts the field before a message that does not name it."""

    def __init__(self, message: str, field: Optional[str] = None) -> None:
        super().__init__(message, field)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        if self.field and self.field not in self.message:
            return f"{self.field}: {self.message}"
        return self.message


class IdempotencyError(ValidationError):
    """An idempotency key that cannot send (nothing was sent): used before for another call
    (other arguments), or naming a call whose outcome is unknown (``outcome_unknown`` true:
    it may have acted; ``client.idempotency.resolve(key, ...)`` settles it), or held by a
    call still in flight elsewhere past this call's timeout (``outcome_unknown`` true too).
    ``key`` is the key."""

    def __init__(self, message: str, key: str = "", outcome_unknown: bool = False) -> None:
        super().__init__(message, "idempotency_key")
        self.args = (message, key, outcome_unknown)
        self.key = key
        self.outcome_unknown = outcome_unknown


class APIError(PushwireError):
    """The service answered with an error (or HTTP 200 with ``success: false``).

    ``outcome_unknown`` is true for a write answered with 500, 502 or 504: the service (or
    the one behind a gateway) may have acted on it before failing, so sending it again may
    do it twice. Any other error answer is a refusal: nothing was done.

    ``headers`` are the answer's (:class:`~pushwire.Headers`; empty where the error was not
    an answer's); ``request_id`` is the id the service or a gateway gave the request, from
    the usual headers (``X-Request-Id``, ``Request-Id``, ``X-Amzn-RequestId``, ...), for a
    support ticket, or None."""

    def __init__(
        self,
        message: str,
        status_code: int = 0,
        body: Any = None,
        code: Optional[int] = None,
        details: Optional[list[dict[str, Any]]] = None,
        outcome_unknown: bool = False,
        headers: Optional[HeaderItems] = None,
        *more: Any,
    ) -> None:
        self.headers = Headers(headers or ())
        super().__init__(
            message,
            status_code,
            body,
            code,
            details,
            outcome_unknown,
            self.headers.multi_items(),
            *more,
        )
        self.message = message
        self.status_code = status_code
        self.body = body
        self.code = code
        self.details = details or []
        self.outcome_unknown = outcome_unknown

    @property
    def request_id(self) -> Optional[str]:
        for name in REQUEST_ID_HEADERS:
            value = self.headers.get(name)
            if value:
                return value
        return None

    def __str__(self) -> str:
        if self.outcome_unknown:
            # Said where a log line or a traceback shows it, as connection errors say it.
            return (
                f"{self.status_code}: {self.message} (the service may have acted on this "
                "write before failing: its outcome is unknown, and it was not retried)"
            )
        return f"{self.status_code}: {self.message}"


class AuthenticationError(APIError):
    """401: the API key is missing or invalid."""


class BadRequestError(APIError):
    """400: the service refused the request; ``details`` lists fields on the events interface."""


class PermissionDeniedError(APIError):
    """403: the key is valid but may not do this (or a gateway in front refused it)."""


class NotFoundError(APIError):
    """404."""


class ConflictError(APIError):
    """409: the request conflicts with the resource's state."""


class UnprocessableEntityError(APIError):
    """422: the request was well formed but its content refused."""


class RateLimitError(APIError):
    """429. ``retry_after`` is the service's wait in seconds, when it gave one."""

    def __init__(
        self,
        message: str,
        status_code: int = 429,
        body: Any = None,
        code: Optional[int] = None,
        details: Optional[list[dict[str, Any]]] = None,
        outcome_unknown: bool = False,
        retry_after: Optional[float] = None,
        headers: Optional[HeaderItems] = None,
    ) -> None:
        super().__init__(message, status_code, body, code, details, outcome_unknown, headers)
        self.retry_after = retry_after
        # In the constructor's order, so that `type(e)(*e.args)` rebuilds it whole.
        self.args = (*self.args[:6], retry_after, self.headers.multi_items())


class ServerError(APIError):
    """5xx."""


class APIConnectionError(PushwireError):
    """The service could not be reached, or the connection failed mid-request.

    ``outcome_unknown`` is true when a write may have been processed before the failure.
    """

    def __init__(self, message: str, outcome_unknown: bool = False) -> None:
        super().__init__(message, outcome_unknown)
        self.message = message
        self.outcome_unknown = outcome_unknown


class APITimeoutError(APIConnectionError):
    """The call did not finish within its ``timeout``."""


class ResponseTooLargeError(APIConnectionError):
    """An answer's body was larger than the client's ``max_response_size`` (a broken proxy
    streaming without end, say): the connection was dropped, nothing past the bound read.
    ``outcome_unknown`` is true for a write, whose answer was not read."""

    def __init__(
        self, message: str, outcome_unknown: bool = False, max_response_size: int = 0
    ) -> None:
        PushwireError.__init__(self, message, outcome_unknown, max_response_size)
        self.message = message
        self.outcome_unknown = outcome_unknown
        self.max_response_size = max_response_size


# The class of an error answer, by its status; any other 5xx is a ServerError, any other
# status an APIError.
_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}

# The class of each other kind of failure the core reports.
_BY_KIND: dict[str, type[PushwireError]] = {
    "validation": ValidationError,
    "connection": APIConnectionError,
    "timeout": APITimeoutError,
    "too_large": ResponseTooLargeError,
}


def _from_core(kind: str, message: str, fields: dict[str, Any]) -> PushwireError:
    """The exception of a failure the Rust core reports as a plain payload: its ``kind``
    (``api``, ``validation``, ``connection``, ``timeout``, ``too_large``, and ``config``,
    ``cancelled`` or ``internal``, which are a plain :class:`PushwireError`), its message
    and its fields as the class's constructor names them. The class is chosen here, so
    that the hierarchy is written in one place."""
    if kind == "api":
        status = int(fields.get("status_code", 0))
        cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
        if cls is not RateLimitError:
            fields = {k: v for k, v in fields.items() if k != "retry_after"}
        return cls(message, **fields)
    other = _BY_KIND.get(kind)
    if other is None:
        return PushwireError(message)
    return other(message, **fields)
