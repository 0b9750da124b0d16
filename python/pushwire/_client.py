"""``pushwire.Client`` and ``pushwire.AsyncClient``: the resource namespaces over the Rust core.

Each method names its arguments as the spec does and hands them to the core, which checks
them (raising :class:`~pushwire.ValidationError` before anything is sent), sends the request
with the GIL released, and returns typed results. The calls are in :mod:`pushwire.resources`,
one module per resource; what both clients share (settings, ``with_options``) in
``pushwire._base``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Literal, Optional, TypeVar

from pushwire._base import _Base
from pushwire._bridge import check_environment, to_thread
from pushwire._closing import _Closing

# The namespaces' classes, found here by the names they have always had here.
from pushwire.resources import *  # noqa: F403

__all__ = ["AsyncClient", "Client"]

_C = TypeVar("_C", bound=_Base)

_CLIENT_DOC = """

    The API is grouped as the spec groups it: ``triggers`` (triggered campaigns), ``drips``,
    ``segments``, ``analytics``, ``products``, ``notifications`` (broadcasts) and ``events``.

    ``api_key``, ``base_url`` (root, without ``/apiv1``) and ``events_url`` (root, without
    ``/api/v1``; needed only to track events) default to ``PUSHWIRE_API_KEY``,
    ``PUSHWIRE_BASE_URL`` and ``PUSHWIRE_EVENTS_URL``.

    - ``timeout``: seconds for a whole call, retries and waits for a free connection
      included (``None``: a day). Not given: ``PUSHWIRE_TIMEOUT``, else 30.
    - ``max_retries`` (0 to 20): retries of a failed call, only where a retry cannot act
      twice (a write is not retried once it may have been received), after
      ``backoff_base * 2**n`` seconds with jitter, or the service's ``Retry-After``. Not
      given: ``PUSHWIRE_MAX_RETRIES``, else 2.
    - ``default_headers``: sent with every request (never the key: that is ``api_key``).
    - ``allow_insecure``: allow plain http to a host that is not loopback. Not given:
      ``PUSHWIRE_ALLOW_INSECURE=1`` allows it (a shared emulator in a compose file).
    - ``ca_bundle``: a PEM file of certificates to trust besides the platform's (a
      corporate CA); certificates are always verified.
    - ``proxy``: a proxy URL for every request (without it, ``HTTPS_PROXY``,
      ``HTTP_PROXY`` and ``NO_PROXY`` apply as for curl, except when every host is
      loopback).
    - ``max_connections``: requests in flight at once (``None``: no bound).
    - ``max_response_size``: the most bytes an answer's body may have, 64 MiB by default
      (the largest answers of the API are about 1 MiB): an endless or huge answer (a broken
      proxy) fails the call with ``ResponseTooLargeError`` instead of filling the memory.

    - ``idempotency_store``: where the keys of ``idempotency_key=`` calls are kept, shared by
      your processes: ``sqlite:///path``, ``redis://...``, or an object with ``add``,
      ``get``, ``set`` and ``delete`` (a Django cache). Not given:
      ``PUSHWIRE_IDEMPOTENCY_STORE``, else none (a call with a key is then refused).
      ``idempotency_ttl``: seconds a key lives, 7 days by default. ``client.idempotency``
      reads and settles keys.

    ``PUSHWIRE_LOG=debug`` (or ``info``) turns the ``pushwire`` logger to that level, with a
    handler to standard error if logging has none. A malformed variable raises a
    ``ValidationError`` naming it.

    ``with_options(timeout=..., max_retries=...)`` gives a client with its own limits on the
    same connections, for one call or one part of an application.

    Bad settings raise at once. A closed client refuses new calls with ``PushwireError``.
    """


class Client(_Base, _Closing):
    __doc__ = (
        "The blocking client. Thread-safe; share one per process (it pools connections)."
        + _CLIENT_DOC
    )

    def close(self) -> None:
        """Closes the client's idle connections (calls still running finish on theirs) and
        writes the idempotency records its store has queued."""
        self._core.close()
        if self._keys is not None:
            self._keys.flush()


class AsyncClient(_Base):
    __doc__ = (
        "The async client: the same surface as :class:`Client`, every call awaited. It runs "
        "on asyncio (uvloop included) and on trio (anyio on either backend), on any number of "
        "loops." + _CLIENT_DOC
    )
    _awaited: Literal[True] = True

    async def aclose(self) -> None:
        """Closes the client's idle connections (calls still running finish on theirs) and
        writes the idempotency records its store has queued."""
        self._core.close()
        if self._keys is not None:
            # Off the event loop: a store's write may wait for its server.
            await to_thread(self._keys.flush)

    async def __aenter__(self: _C) -> _C:
        # Outside asyncio and trio every call would fail: say so once, here.
        check_environment()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.aclose()
