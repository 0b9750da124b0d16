"""What one call may add beyond its typed arguments (``RequestOptions``), and the raw answer
``client.with_raw_response`` gives (``APIResponse``)."""

from __future__ import annotations

import datetime as _dt
import json as _json
from collections.abc import Mapping
from typing import Any, Callable, Generic, Optional, TypedDict, TypeVar, Union

from pushwire._args import Seconds, _seconds
from pushwire._env import LONGEST_TIMEOUT
from pushwire._headers import Headers
from pushwire.errors import PushwireError

T = TypeVar("T", covariant=True)

__all__ = ["APIResponse", "RequestOptions"]


class RequestOptions(TypedDict, total=False):
    """The keyword arguments every method takes besides its own.

    - ``extra_headers``: headers sent with this call's requests, after the client's
      ``default_headers`` (a name given in both is sent with this call's value). Never the
      key, ``Content-Type`` or a header that frames the message (``Content-Length``, ``Host``,
      ...): those are refused by name.
    - ``extra_query``: query parameters added to the URL (as a form's fields).
    - ``extra_body``: fields added to the body, in the call's own encoding: JSON as given,
      or a form (text, numbers, bools, and lists of them as indexed keys, ``name[0]``, as
      the spec's forms spell them; a form cannot carry a dict, which is refused).
    - ``timeout``: seconds for this call, retries included (``None``: a day), in place of the
      client's.

    The typed arguments are checked as always; the extras are sent as given. An extra that
    would replace what the call sends from its own arguments is refused by name
    (``ValidationError``) before anything is sent."""

    extra_headers: Optional[Mapping[str, str]]
    extra_query: Optional[Mapping[str, Any]]
    extra_body: Optional[Mapping[str, Any]]
    timeout: Optional[Seconds]


def per_call(options: Mapping[str, Any], raw: bool = False) -> dict[str, Any]:
    """``options`` as the core takes them: the timeout in seconds (``None`` is a day), and
    whether to keep the raw answer. The core checks the rest, and refuses unknown names."""
    out = dict(options)
    if "timeout" in out:
        timeout = out["timeout"]
        out["timeout"] = LONGEST_TIMEOUT if timeout is None else _seconds("timeout", timeout)
    if raw:
        out["raw"] = True
    return out


class APIResponse(Generic[T]):
    """An answer as the service sent it, from ``client.with_raw_response``::

        response = client.with_raw_response.notifications.create(title=..., ...)
        response.headers["X-Request-Id"]
        notification_id = response.parse()  # what the plain call returns

    The call ran as the plain call runs (checks, retries, errors raised), and this is its
    last attempt's answer: ``status_code``, ``http_version`` (``"HTTP/1.1"``, ``"HTTP/2"``),
    ``headers`` (a :class:`~pushwire.Headers`), ``content`` (the body's bytes), ``method``
    and ``url`` of the request (the key is never in either), ``elapsed`` (the whole call,
    retries included) and ``retries_taken``. The body was read whole, so ``parse()`` needs
    no await, on the async client too."""

    __slots__ = (
        "_after",
        "_parsed",
        "_result",
        "content",
        "elapsed",
        "headers",
        "http_version",
        "method",
        "retries_taken",
        "status_code",
        "url",
    )

    status_code: int
    http_version: str
    headers: Headers
    content: bytes
    method: str
    url: str
    elapsed: _dt.timedelta
    retries_taken: int

    def __init__(
        self,
        raw: tuple[int, str, list[tuple[str, str]], bytes, str, str, float, int],
        result: Any,
        after: Optional[Callable[[Any], T]] = None,
    ) -> None:
        status, version, pairs, content, method, url, elapsed, retries = raw
        self.status_code = status
        self.http_version = version
        self.headers = Headers(pairs)
        self.content = content
        self.method = method
        self.url = url
        self.elapsed = _dt.timedelta(seconds=elapsed)
        self.retries_taken = retries
        self._result = result
        self._after = after
        self._parsed: Union[T, _Unparsed] = _UNPARSED

    def parse(self) -> T:
        """What the plain call returns, read from this answer (the same object each time).
        An answer the typed read cannot take (a successful status whose body lacks a field
        the result needs, or is not JSON) raises :class:`~pushwire.APIError` here, as the
        plain call raises it; the answer itself is still here to read."""
        if isinstance(self._result, PushwireError):
            raise self._result
        if isinstance(self._parsed, _Unparsed):
            result = self._result if self._after is None else self._after(self._result)
            self._parsed = result
            return result
        return self._parsed

    @property
    def text(self) -> str:
        """The body as text (UTF-8; a byte that is not is shown as U+FFFD)."""
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body read as JSON."""
        return _json.loads(self.content)

    def __repr__(self) -> str:
        return f"<APIResponse [{self.status_code}] {self.method} {self.url}>"


class _Unparsed:
    __slots__ = ()


_UNPARSED = _Unparsed()
