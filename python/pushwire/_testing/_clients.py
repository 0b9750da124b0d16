"""What both emulators share: the clients pointed at them, and the ``with`` block."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional, Protocol, SupportsIndex, TypedDict, Union, cast

from pushwire._args import NotGiven, Seconds
from pushwire._client import AsyncClient, Client
from pushwire._closing import _Closing
from pushwire._core import openapi_document

if TYPE_CHECKING:
    # Only the type checker reads it (typeshed ships it): no runtime dependency.
    from typing_extensions import Unpack


def openapi(
    base_url: str = "http://127.0.0.1:8900",
    events_url: str = "http://127.0.0.1:8901",
    *,
    admin: bool = False,
) -> dict[str, Any]:
    """The service's OpenAPI 3.1 document (both interfaces, every operation, every limit of
    the spec), generated from the code the client and the emulator enforce it with; its
    servers are ``base_url`` and ``events_url`` (the standalone emulator's defaults when left
    out). With ``admin``, the emulator's admin API's document instead."""
    return cast("dict[str, Any]", json.loads(openapi_document(base_url, events_url, admin)))


class _ClientOptions(TypedDict, total=False):
    """The keywords of ``Client``/``AsyncClient`` besides the URLs, which the emulator sets:
    a misspelt one is caught by the type checker, as it is in the constructors."""

    api_key: Optional[str]
    timeout: Union[Seconds, None, NotGiven]
    max_retries: Union[SupportsIndex, NotGiven]
    default_headers: Optional[Mapping[str, str]]
    allow_insecure: Union[bool, NotGiven]
    backoff_base: Seconds
    ca_bundle: Optional[Union[str, os.PathLike[str]]]
    proxy: Optional[str]
    max_connections: Optional[SupportsIndex]
    max_response_size: SupportsIndex


class _Urls(Protocol):
    @property
    def api_key(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def events_url(self) -> str: ...


class _Clients(_Closing):
    """Clients pointed at an emulator, in this process or its own; ``with`` closes it."""

    @property
    def ui_url(self: _Urls) -> str:
        """The inspector page: what the emulator saw, live, in a browser."""
        return f"{self.base_url}/_emulator/ui"

    def openapi(self: _Urls, *, admin: bool = False) -> dict[str, Any]:
        """The service's OpenAPI 3.1 document, its servers this emulator's two interfaces
        (as ``GET /_emulator/openapi.json`` serves it); with ``admin``, the admin API's."""
        return openapi(self.base_url, self.events_url, admin=admin)

    def client(self: _Urls, **kwargs: Unpack[_ClientOptions]) -> Client:
        """A :class:`pushwire.Client` pointed at this emulator (keywords as for ``Client``)."""
        kwargs.setdefault("api_key", self.api_key)
        return Client(base_url=self.base_url, events_url=self.events_url, **kwargs)

    def async_client(self: _Urls, **kwargs: Unpack[_ClientOptions]) -> AsyncClient:
        """A :class:`pushwire.AsyncClient` pointed at this emulator (keywords as for
        ``AsyncClient``)."""
        kwargs.setdefault("api_key", self.api_key)
        return AsyncClient(base_url=self.base_url, events_url=self.events_url, **kwargs)
