"""What both clients are: their settings, the properties that show them, ``with_options``,
and their resource namespaces (``client.triggers``, ...).

A namespace is declared once for both clients and their ``with_raw_response`` views, in
``_Namespaces``: ``triggers = _Namespace(r.Triggers, r.AsyncTriggers,
r.TriggersWithRawResponse, r.AsyncTriggersWithRawResponse)``, ``r`` being
``pushwire.resources``. :class:`~pushwire.Client` gets the blocking class,
:class:`~pushwire.AsyncClient` (``_awaited = True``) the async one, and the views
(``_raw = True``) the raw ones of each.
"""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Generic,
    Literal,
    Optional,
    SupportsIndex,
    TypeVar,
    Union,
    cast,
    overload,
)

from pushwire import _env
from pushwire import resources as r
from pushwire._args import NOT_GIVEN, NotGiven, Seconds, _count, _headers, _seconds
from pushwire._core import CoreClient
from pushwire._idempotency import DEFAULT_TTL, Idempotency, Keys
from pushwire._keystores import store_of
from pushwire.errors import PushwireError, ValidationError
from pushwire.resources.request import AsyncRequests, Requests

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from typing_extensions import Concatenate, ParamSpec, Protocol

    _P = ParamSpec("_P")
    _T_co = TypeVar("_T_co", covariant=True)

    class _AsyncClient(Protocol):
        _awaited: Literal[True]

    class _RawView(Protocol):
        _raw: Literal[True]

    class _AsyncRawView(Protocol):
        _raw: Literal[True]
        _awaited: Literal[True]

    class _OnClient(Protocol[_P, _T_co]):
        """A method of both clients and their raw views: ``(*P) -> T``, awaited on the
        async ones."""

        @overload
        def __get__(self, obj: None, owner: Any) -> Callable[Concatenate[Any, _P], _T_co]: ...
        @overload
        def __get__(
            self, obj: _AsyncClient, owner: Any
        ) -> Callable[_P, Coroutine[Any, Any, _T_co]]: ...
        @overload
        def __get__(self, obj: object, owner: Any) -> Callable[_P, _T_co]: ...


# 64 MiB: the core's default (see `DEFAULT_MAX_RESPONSE_SIZE` in src/client/transport/config.rs).
DEFAULT_MAX_RESPONSE_SIZE = 64 << 20


_LONGEST_TIMEOUT = _env.LONGEST_TIMEOUT
# The settings' defaults when neither the call nor the environment gives them.
_DEFAULT_TIMEOUT = 30.0
_DEFAULT_MAX_RETRIES = 2


class _Keep(enum.Enum):
    """``with_options``'s default: the setting is kept (``None`` is a value there)."""

    KEEP = 0


_KEEP = _Keep.KEEP

_C = TypeVar("_C", bound="_Base")
_S = TypeVar("_S")
_A = TypeVar("_A")
_SR = TypeVar("_SR")
_AR = TypeVar("_AR")


class _Namespace(Generic[_S, _A, _SR, _AR]):
    """A resource namespace of both clients and of their ``with_raw_response`` views: made by
    ``_namespaces`` as ``blocking(client)``, ``awaited(client)`` on the async client, and the
    raw kinds of each on a view."""

    __slots__ = ("kinds",)

    def __init__(
        self,
        blocking: Callable[[Any], _S],
        awaited: Callable[[Any], _A],
        raw: Callable[[Any], _SR],
        raw_awaited: Callable[[Any], _AR],
    ) -> None:
        self.kinds = (blocking, awaited, raw, raw_awaited)

    @overload
    def __get__(self, obj: None, owner: Any) -> _Namespace[_S, _A, _SR, _AR]: ...
    @overload
    def __get__(self, obj: _AsyncRawView, owner: Any) -> _AR: ...
    @overload
    def __get__(self, obj: _RawView, owner: Any) -> _SR: ...
    @overload
    def __get__(self, obj: _AsyncClient, owner: Any) -> _A: ...
    @overload
    def __get__(self, obj: object, owner: Any) -> _S: ...
    def __get__(self, obj: object, owner: Any) -> object:
        if obj is None:
            return self
        # The client's own attribute, made by `_namespaces`, is found before this.
        raise AttributeError("the client's namespaces are made in its __init__")


class _ClientMethod:
    """A method the clients and their raw views take from a namespace of no resource
    (``client.request`` from ``Requests``), made in ``_namespaces`` with the others."""

    __slots__ = ("kinds", "name")

    def __init__(self, name: str, blocking: type[Any], awaited: type[Any]) -> None:
        self.name = name
        self.kinds = (blocking, awaited)

    def __get__(self, obj: object, owner: Any) -> Any:
        if obj is None:
            # `help(Client.request)` and the docs show the method itself.
            return getattr(self.kinds[0], self.name)
        raise AttributeError("the client's methods are made in its __init__")


def _on_client(
    name: str,
    blocking: Callable[Concatenate[Any, _P], _T_co],
    namespaces: tuple[type[Any], type[Any]],
) -> _OnClient[_P, _T_co]:
    """``blocking`` (a method of ``namespaces[0]``) as a method of the clients and their raw
    views, awaited on the async ones (``namespaces[1]``'s)."""
    del blocking  # its type is the method's; the namespaces are made per client
    return cast("_OnClient[_P, _T_co]", _ClientMethod(name, *namespaces))


class _Namespaces:
    """The resource namespaces, declared once for the clients and their raw views."""

    # Whether the namespaces are the async ones, and the raw ones.
    _awaited: bool = False
    _raw: bool = False

    triggers = _Namespace(
        r.Triggers, r.AsyncTriggers, r.TriggersWithRawResponse, r.AsyncTriggersWithRawResponse
    )
    """Triggered campaigns (spec 4.1, 4.2)."""
    drips = _Namespace(r.Drips, r.AsyncDrips, r.DripsWithRawResponse, r.AsyncDripsWithRawResponse)
    """Drip autoresponders (spec 4.3-4.5)."""
    segments = _Namespace(
        r.Segments, r.AsyncSegments, r.SegmentsWithRawResponse, r.AsyncSegmentsWithRawResponse
    )
    """Segments and their members (spec 4.6-4.9)."""
    analytics = _Namespace(
        r.Analytics, r.AsyncAnalytics, r.AnalyticsWithRawResponse, r.AsyncAnalyticsWithRawResponse
    )
    """Summary analytics and the subscriber distribution (spec 4.10, 4.11)."""
    products = _Namespace(
        r.Products, r.AsyncProducts, r.ProductsWithRawResponse, r.AsyncProductsWithRawResponse
    )
    """Product updates (spec 4.12)."""
    notifications = _Namespace(
        r.Notifications,
        r.AsyncNotifications,
        r.NotificationsWithRawResponse,
        r.AsyncNotificationsWithRawResponse,
    )
    """Push broadcasts (spec 4.13)."""
    events = _Namespace(
        r.Events, r.AsyncEvents, r.EventsWithRawResponse, r.AsyncEventsWithRawResponse
    )
    """Custom event tracking (spec 4.14), on the event-tracking interface."""
    request = _on_client("request", Requests.request, (Requests, AsyncRequests))

    def _namespaces(self, client: Any = None) -> None:
        """Makes the resource namespaces (``self.triggers``, ...), calling through ``client``
        (this object when it is the client)."""
        kind = 2 * self._raw + self._awaited
        owner = self if client is None else client
        for name, value in vars(_Namespaces).items():
            if isinstance(value, _Namespace):
                self.__dict__[name] = value.kinds[kind](owner)
            elif isinstance(value, _ClientMethod):
                namespace = value.kinds[self._awaited](owner)
                self.__dict__[name] = getattr(namespace, value.name)


class RawResponses(_Namespaces):
    """``client.with_raw_response``: the client's namespaces, each call returning the
    answer it got (:class:`~pushwire.APIResponse`; ``parse()`` gives what the plain call
    returns). Calls that send many requests (``iter``, the bulk calls, ``track_many``) are
    not here: they have no one answer."""

    _raw: Literal[True] = True

    def __init__(self, client: _Base) -> None:
        self._namespaces(client)


class AsyncRawResponses(_Namespaces):
    """``client.with_raw_response`` of :class:`~pushwire.AsyncClient`: each call awaited
    gives the answer it got (:class:`~pushwire.APIResponse`)."""

    _awaited: Literal[True] = True
    _raw: Literal[True] = True

    def __init__(self, client: _Base) -> None:
        self._namespaces(client)


class _RawResponsesOf:
    """``client.with_raw_response``, made on first use and kept by the client."""

    @overload
    def __get__(self, obj: None, owner: Any) -> _RawResponsesOf: ...
    @overload
    def __get__(self, obj: _AsyncClient, owner: Any) -> AsyncRawResponses: ...
    @overload
    def __get__(self, obj: object, owner: Any) -> RawResponses: ...
    def __get__(self, obj: Any, owner: Any) -> object:
        if obj is None:
            return self
        view = (AsyncRawResponses if obj._awaited else RawResponses)(obj)
        obj.__dict__["with_raw_response"] = view
        return view


class _Base(_Namespaces):
    _core: CoreClient

    with_raw_response = _RawResponsesOf()
    """The client's namespaces, each call returning the answer it got
    (:class:`~pushwire.APIResponse`: status, headers, body; ``parse()`` the result)."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        events_url: Optional[str] = None,
        timeout: Union[Seconds, None, NotGiven] = NOT_GIVEN,
        max_retries: Union[SupportsIndex, NotGiven] = NOT_GIVEN,
        default_headers: Optional[Mapping[str, str]] = None,
        *,
        allow_insecure: Union[bool, NotGiven] = NOT_GIVEN,
        backoff_base: Seconds = 0.5,
        ca_bundle: Optional[Union[str, os.PathLike[str]]] = None,
        proxy: Optional[str] = None,
        max_connections: Optional[SupportsIndex] = 100,
        max_response_size: SupportsIndex = DEFAULT_MAX_RESPONSE_SIZE,
        idempotency_store: Any = None,
        idempotency_ttl: Seconds = DEFAULT_TTL,
    ) -> None:
        key, base, events = _env.where(api_key, base_url, events_url)
        if isinstance(timeout, NotGiven):
            seconds = _env.timeout(_DEFAULT_TIMEOUT)
        else:
            seconds = _LONGEST_TIMEOUT if timeout is None else _seconds("timeout", timeout)
        if isinstance(max_retries, NotGiven):
            retries = _env.max_retries(_DEFAULT_MAX_RETRIES)
        else:
            retries = _count("max_retries", max_retries)
        if isinstance(allow_insecure, NotGiven):
            allow_insecure = _env.allow_insecure(False)
        _env.configure_logging()
        backoff = _seconds("backoff_base", backoff_base)
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
        if idempotency_store is None:
            idempotency_store = _env.idempotency_store()
        self._keys: Optional[Keys] = None
        if idempotency_store is not None:
            ttl = _seconds("idempotency_ttl", idempotency_ttl)
            if not (math.isfinite(ttl) and ttl > 0):
                raise ValidationError(
                    "idempotency_ttl must be a positive number of seconds",
                    field="idempotency_ttl",
                )
            self._keys = Keys(store_of(idempotency_store), key, ttl)
        self.idempotency = Idempotency(self._keys)
        """The keys of ``idempotency_store``: ``status(key)``, ``resolve(key, result)``."""
        self._namespaces()

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
        # The raw view calls through the client it was made on: the derived one makes its own.
        derived.__dict__.pop("with_raw_response", None)
        derived._core = core
        derived._namespaces()
        return derived

    def _check_events(self) -> None:
        # Once for a whole batch, not as each event's outcome.
        if not self._core.events_url:
            raise ValidationError(
                "no events_url: pass events_url= or set PUSHWIRE_EVENTS_URL to track events",
                field="events_url",
            )
