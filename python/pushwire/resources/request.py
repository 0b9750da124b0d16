"""``client.request``: a call this release has no method for, sent as the typed calls are.

Its answer is the :class:`~pushwire.APIResponse` that ``with_raw_response`` gives, whose
``parse()`` is the body read as JSON (``None`` for an empty one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Optional, Union

import pushwire._core as _core
from pushwire._args import NOT_GIVEN, NotGiven, Seconds
from pushwire._response import APIResponse
from pushwire.resources._resource import _RawAsync, _RawSync, awaitable


class Requests(_RawSync):
    """What ``client.request`` calls through: the raw namespace of no resource."""

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        form: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
        idempotent: Optional[bool] = None,
        interface: Literal["main", "events"] = "main",
        timeout: Union[Seconds, None, NotGiven] = NOT_GIVEN,
    ) -> APIResponse[Any]:
        """Sends ``method path`` to the service, for an endpoint this release has no method
        for, and returns its answer (:class:`~pushwire.APIResponse`; ``parse()`` is the body
        read as JSON, ``None`` for an empty one)::

            answer = client.request("GET", "/apiv1/segments", query={"limit": 5})
            answer.status_code, answer.parse()["data"]

        ``path`` is what the spec writes after ``{base_url}`` (``/apiv1/...``), or after
        ``{events_url}`` (``/api/v1/...``) with ``interface="events"``; a whole URL is taken
        only when it is on that root: the key goes to the configured hosts and nowhere else.
        ``query`` and ``form`` are encoded as the spec's forms (a list as ``name[0]``,
        ``name[1]``); ``body`` is sent as JSON (one of the two). ``headers`` are sent after
        the client's own (never the key, ``Content-Type`` or a framing header).

        Retries follow the method: GET, HEAD, OPTIONS, PUT and DELETE are retried as reads
        are; POST and PATCH, like the typed writes, only when the service refused them
        unprocessed (429, or 503 with ``Retry-After``), unless ``idempotent=True`` says that
        sending twice acts once (``idempotent=False`` makes any method a write). Errors,
        logs, tracing (the operation ``request``), ``outcome_unknown`` and ``timeout``
        (seconds for this call; ``None``: a day) are the typed calls'."""
        options = {} if isinstance(timeout, NotGiven) else {"timeout": timeout}
        call = _core.request(
            method,
            path,
            query=query,
            body=body,
            form=form,
            headers=headers,
            idempotent=idempotent,
            interface=interface,
        )
        out: APIResponse[Any] = self._then(None, call, **options)
        return out


class AsyncRequests(_RawAsync):
    """What ``AsyncClient.request`` calls through."""

    request = awaitable(Requests.request)
