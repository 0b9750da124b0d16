"""What both emulators share: the clients pointed at them, and the ``with`` block."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Optional, Protocol, SupportsIndex, TypedDict, Union

from pushwire._args import NotGiven, Seconds
from pushwire._client import AsyncClient, Client
from pushwire._closing import _Closing

if TYPE_CHECKING:
    # Only the type checker reads it (typeshed ships it): no runtime dependency.
    from typing_extensions import Unpack


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

    def client(self: _Urls, **kwargs: Unpack[_ClientOptions]) -> Client:
        """A :class:`pushwire.Client` pointed at this emulator (keywords as for ``Client``)."""
        kwargs.setdefault("api_key", self.api_key)
        return Client(base_url=self.base_url, events_url=self.events_url, **kwargs)

    def async_client(self: _Urls, **kwargs: Unpack[_ClientOptions]) -> AsyncClient:
        """A :class:`pushwire.AsyncClient` pointed at this emulator (keywords as for
        ``AsyncClient``)."""
        kwargs.setdefault("api_key", self.api_key)
        return AsyncClient(base_url=self.base_url, events_url=self.events_url, **kwargs)
