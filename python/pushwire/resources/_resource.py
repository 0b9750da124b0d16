"""What every resource namespace is built on, blocking and awaited, and how one method serves both.

Each operation is written once, as a method of the blocking class (``Notifications.create``):
it hands its arguments to the core's function of the same name (``_core.notifications_create``,
which reads and checks them into a ``PreparedCall``) and ends in one of the four primitives
below, which the two kinds of namespace implement each in its own way:

- ``_call(call, **options)``: the core's result (blocking), or an awaitable of it (async),
  as the kind's ``_send`` gives it; a call made with an ``idempotency_key`` is sent once per
  key instead, by the kind's ``_once`` (``pushwire._idempotency``);
- ``_then(after, call, **options)``: the same, passed through ``after`` (a ``ResultList``,
  ...);
- ``_bulk(make, label, progress, items, **options)``: a bulk call with its progress, ``make``
  making the call given the progress callback;
- ``_pages(fetch)``: every item of the pages ``fetch(page)`` returns, as an iterator or an
  async iterator.

``options`` are the call's :class:`~pushwire.RequestOptions` (``extra_headers``, ...), which
every method takes as ``**options`` and hands to its primitive as they came.

``client.with_raw_response`` has a third and fourth kind of namespace, ``_RawSync`` and
``_RawAsync``, whose ``_call`` and ``_then`` return an :class:`~pushwire.APIResponse` of the
answer instead (``parse()`` runs ``after``); their classes name their methods after the
blocking ones too: ``create = raw(Notifications.create)``, or ``raw_awaitable``.

The async class names its methods after the blocking ones, ``create = awaitable(
Notifications.create)``: a coroutine function that runs the same body on the async
namespace and awaits what it returns. ``paged`` does the same for ``iter``, which returns an
async iterator without being awaited. Both keep the blocking method's name, docstring and
signature (``help()``, ``inspect.signature``), and type checkers see the same parameters
with the awaited result. Between the method and the core's call, the blocking path has two
frames of its own: ``_call``, then ``_send``.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, cast, overload

from pushwire import _telemetry
from pushwire._bridge import from_other_threads, submit
from pushwire._bulk import BulkResult, Progress, build_result, reporting
from pushwire._core import CoreClient, Page, PreparedCall
from pushwire._idempotency import Keys, Outcome
from pushwire._keybatch import Batch
from pushwire._response import APIResponse, per_call
from pushwire.errors import ValidationError

if TYPE_CHECKING:
    from typing_extensions import Concatenate, ParamSpec, Protocol

    P = ParamSpec("P")
    R_co = TypeVar("R_co", covariant=True)

    class _Owner(Protocol):
        """The client a namespace calls through (``pushwire._base._Base``)."""

        _core: CoreClient
        _keys: Optional[Keys]

        @property
        def timeout(self) -> float: ...

        def _check_open(self) -> None: ...

        def _check_events(self) -> None: ...

    class _Method(Protocol[P, R_co]):
        """A method's type once bound: ``(*P) -> R`` (the twins' ``R`` is a coroutine, an
        ``APIResponse`` or an async iterator)."""

        @overload
        def __get__(self, obj: None, owner: Any) -> Callable[Concatenate[Any, P], R_co]: ...
        @overload
        def __get__(self, obj: object, owner: Any) -> Callable[P, R_co]: ...


T = TypeVar("T")
# A bulk call given its progress callback (or None).
_MakeBulk = Callable[[Optional[Callable[[int, int], Any]]], PreparedCall]
# A batch's call given the items it sends.
_MakeBatch = Callable[[list[Any]], PreparedCall]

_log = logging.getLogger("pushwire")


class _Resource:
    """A namespace, calling through its client. An async or raw one is the twin of a
    blocking one, named where it is declared (``class AsyncDrips(_Async, twin=Drips)``): it
    has the twin's docstring, and it must offer each of the twin's methods but those it
    names in ``skip`` (a method left out is an error at import)."""

    __slots__ = ("_client",)

    def __init__(self, client: _Owner) -> None:
        self._client = client

    def __init_subclass__(
        cls, *, twin: Optional[type[_Sync]] = None, skip: tuple[str, ...] = (), **kwargs: Any
    ) -> None:
        super().__init_subclass__(**kwargs)
        if twin is not None:
            _twin_of(cls, twin, skip)

    def _call(self, call: PreparedCall, **options: Any) -> Any:
        """The call sent (``_send``): once for its key when it has one (``_once``)."""
        self._client._check_open()
        if call.idempotency_key is not None:
            return self._once(call, options)
        return self._send(call, options)

    def _send(self, call: PreparedCall, options: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _once(self, call: PreparedCall, options: dict[str, Any]) -> Any:
        raise NotImplementedError


class _Sync(_Resource):
    """A blocking namespace: each primitive calls the core and returns its result."""

    __slots__ = ()

    def _send(self, call: PreparedCall, options: dict[str, Any]) -> Any:
        core = self._client._core
        traced = _telemetry.tracer
        if traced is not None:
            return traced.call(core, call, per_call(options))
        return core.call_with(call, per_call(options)) if options else core.call(call)

    def _once(self, call: PreparedCall, options: dict[str, Any]) -> Any:
        """The call sent once for its key (``pushwire._idempotency``)."""
        keys, claim, opts = _claim(self._client, call, options)
        core = self._client._core
        traced = _telemetry.tracer
        if traced is None:
            return keys.run(*claim, lambda: core.call_with(call, opts), _quiet)
        with traced.operation(call.name, opts) as span:
            span.result = keys.run(*claim, lambda: core.call_with(call, span.options), span.note)
        return span.result

    def _then(self, after: Callable[[Any], T], call: PreparedCall, **options: Any) -> T:
        return after(self._call(call, **options))

    def _batch_once(
        self, after: Callable[[Any], T], batch: Batch, make: _MakeBatch, **options: Any
    ) -> T:
        """A batch whose items may carry their own idempotency key (``_batch``); ``make``
        makes the batch's call of the items it sends."""
        return after(batch.run(lambda sent: self._call(make(sent), **options)))

    def _bulk(
        self, make: _MakeBulk, label: str, progress: Progress, items: Sequence[Any], **options: Any
    ) -> BulkResult:
        with reporting(progress, label) as callback:
            raw = self._call(make(callback), **options)
        return build_result(raw, items)

    @staticmethod
    def _pages(fetch: Callable[[int], Page[T]]) -> Iterator[T]:
        page = 1
        while True:
            current = fetch(page)
            yield from current.data
            if not current.data or current.page >= current.last_page:
                return
            page += 1


class _Async(_Resource):
    """An asyncio namespace: each primitive returns an awaitable of the core's result."""

    __slots__ = ()

    def _send(self, call: PreparedCall, options: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        # A plain function handing back submit's coroutine: one coroutine frame less per call.
        core = self._client._core
        traced = _telemetry.tracer
        if traced is not None:
            return traced.submit(core, call, per_call(options))
        return submit(core, call, options=per_call(options)) if options else submit(core, call)

    async def _then(self, after: Callable[[Any], T], call: PreparedCall, **options: Any) -> T:
        return after(await self._call(call, **options))

    async def _batch_once(
        self, after: Callable[[Any], T], batch: Batch, make: _MakeBatch, **options: Any
    ) -> T:
        """``_Sync._batch_once``, awaited."""
        return after(await batch.run_async(lambda sent: self._call(make(sent), **options)))

    async def _once(self, call: PreparedCall, options: dict[str, Any]) -> Any:
        """The call sent once for its key (``pushwire._idempotency``)."""
        keys, claim, opts = _claim(self._client, call, options)
        core = self._client._core
        traced = _telemetry.tracer
        if traced is None:
            return await keys.run_async(*claim, lambda: submit(core, call, options=opts), _quiet)
        with traced.operation(call.name, opts) as span:
            span.result = await keys.run_async(
                *claim, lambda: submit(core, call, options=span.options), span.note
            )
        return span.result

    async def _bulk(
        self, make: _MakeBulk, label: str, progress: Progress, items: Sequence[Any], **options: Any
    ) -> BulkResult:
        with reporting(progress, label) as callback:
            raw = await self._call(make(_on_loop(callback)), **options)
        return build_result(raw, items)

    @staticmethod
    async def _pages(fetch: Callable[[int], Any]) -> AsyncIterator[Any]:
        page = 1
        while True:
            current = await fetch(page)
            for item in current.data:
                yield item
            if not current.data or current.page >= current.last_page:
                return
            page += 1


def _twin_of(cls: type, twin: type[_Sync], skip: tuple[str, ...] = ()) -> None:
    """Makes ``cls`` the twin of ``twin``: its docstring, each of its methods but ``skip``
    (one left out is an error at import), each named as ``cls``'s own."""
    cls.__doc__ = twin.__doc__
    cls._skipped = skip  # type: ignore[attr-defined]
    missing = [
        name
        for name in vars(twin)
        if not name.startswith("_") and name not in vars(cls) and name not in skip
    ]
    if missing:
        raise TypeError(f"{cls.__name__} lacks {twin.__name__}'s {', '.join(missing)}")
    # A method made by `awaitable`, `paged`, `raw` or `raw_awaitable` is named as this class's
    # own.
    for name, value in vars(cls).items():
        if hasattr(value, "__wrapped__"):
            value.__qualname__ = f"{cls.__qualname__}.{name}"


class _RawView(_Resource):
    """What both kinds of ``with_raw_response`` namespace share: a call of many requests that
    they leave out (``skip``) is said to be one when looked up."""

    __slots__ = ()
    _skipped: tuple[str, ...] = ()

    if not TYPE_CHECKING:  # a type checker flags a missing call as for any class

        def __getattr__(self, name: str) -> Any:
            raise AttributeError(_not_raw(self, name))


class _RawSync(_RawView, _Sync):
    """A blocking namespace of ``client.with_raw_response``: each call returns its answer
    (``APIResponse``). A bulk call or ``iter`` sends many requests and has no one answer to
    show: the class leaves them out (``skip``)."""

    __slots__ = ()

    def _call(self, call: PreparedCall, **options: Any) -> Any:
        return self._then(None, call, **options)

    def _then(self, after: Any, call: PreparedCall, **options: Any) -> Any:
        _no_key(call.idempotency_key)
        self._client._check_open()
        core, opts = self._client._core, per_call(options, raw=True)
        traced = _telemetry.tracer
        if traced is not None:
            result, raw = traced.call(core, call, opts)
        else:
            result, raw = core.call_with(call, opts)
        return APIResponse(raw, result, after)


class _RawAsync(_RawView, _Async):
    """An async namespace of ``client.with_raw_response``: each call returns an awaitable of
    its answer (``APIResponse``)."""

    __slots__ = ()

    def _call(self, call: PreparedCall, **options: Any) -> Coroutine[Any, Any, Any]:
        _no_key(call.idempotency_key)
        return self._then(None, call, **options)

    async def _then(self, after: Any, call: PreparedCall, **options: Any) -> Any:
        self._client._check_open()
        core, opts = self._client._core, per_call(options, raw=True)
        traced = _telemetry.tracer
        if traced is not None:
            result, raw = await traced.submit(core, call, opts)
        else:
            result, raw = await submit(core, call, options=opts)
        return APIResponse(raw, result, after)


def _keyed(client: _Owner, options: Mapping[str, Any]) -> tuple[Keys, float]:
    """The client's keys, and the seconds the call may take (its lease's base)."""
    keys = client._keys
    if keys is None:
        raise ValidationError(
            "idempotency_key needs a store its processes share: pass idempotency_store= to "
            "the client (sqlite:///path, redis://..., or an object) or set "
            "PUSHWIRE_IDEMPOTENCY_STORE",
            field="idempotency_store",
        )
    timeout = options.get("timeout", client.timeout)
    return keys, float(per_call({"timeout": timeout})["timeout"])


def _claim(
    client: _Owner, call: PreparedCall, options: dict[str, Any]
) -> tuple[Keys, tuple[str, str, Optional[dict[str, Any]], float], dict[str, Any]]:
    """A keyed call's store, what it claims there (its key, operation, arguments and the
    seconds the call may take) and its per-call options."""
    keys, timeout = _keyed(client, options)
    claim = (call.idempotency_key or "", call.name, call.arguments, timeout)
    return keys, claim, per_call(options)


def _batch(client: _Owner, item_op: str, items: list[Any], options: Mapping[str, Any]) -> Batch:
    """A batch whose items may carry keys (``Batch``, which claims them when it runs), on
    an open client with a store, each item's call being ``item_op``."""
    client._check_open()
    keys, timeout = _keyed(client, options)
    return Batch(keys, item_op, items, timeout)


def _quiet(outcome: Outcome) -> None:
    """A keyed call's outcome, told to no span (tracing is off)."""


def _no_key(key: Optional[str]) -> None:
    if key is not None:
        raise ValidationError(
            "with_raw_response shows the answer a call got, and a call replayed from its "
            "idempotency key gets none: call it on the client itself",
            field="idempotency_key",
        )


def _not_raw(namespace: Any, name: str) -> str:
    """Why a raw namespace has no ``name``: a call of many requests, or no such call."""
    kind = type(namespace).__name__
    if name in namespace._skipped:
        return (
            f"{kind} has no {name}: it sends many requests, which have no one answer to show; "
            f"call it on the client itself"
        )
    return f"{kind!r} object has no attribute {name!r}"


def raw(fn: Callable[Concatenate[Any, P], T]) -> _Method[P, APIResponse[T]]:
    """The ``with_raw_response`` namespace's method running ``fn``, a blocking namespace's
    method: the same body, whose call returns its answer there."""
    return cast("_Method[P, APIResponse[T]]", _run_as_is(fn, _as_response))


def raw_awaitable(
    fn: Callable[Concatenate[Any, P], T],
) -> _Method[P, Coroutine[Any, Any, APIResponse[T]]]:
    """``raw`` for the async client's ``with_raw_response``: a coroutine function."""
    method = awaitable(fn)
    _show_returning(method, fn, _as_response)
    return cast("_Method[P, Coroutine[Any, Any, APIResponse[T]]]", method)


def awaitable(fn: Callable[Concatenate[Any, P], T]) -> _Method[P, Coroutine[Any, Any, T]]:
    """The async namespace's method running ``fn``, a blocking namespace's method, on the
    async namespace: a coroutine function awaiting what ``fn`` returns there."""

    run: Callable[..., Any] = fn  # on the async namespace, it returns an awaitable

    async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await run(self, *args, **kwargs)

    return cast("_Method[P, Coroutine[Any, Any, T]]", functools.update_wrapper(method, fn))


def paged(fn: Callable[Concatenate[Any, P], Iterator[T]]) -> _Method[P, AsyncIterator[T]]:
    """``iter`` of the async namespace: ``fn`` run on it, which returns an async iterator."""
    method = _run_as_is(fn, lambda returns: returns.replace("Iterator[", "AsyncIterator[", 1))
    return cast("_Method[P, AsyncIterator[T]]", method)


def _run_as_is(fn: Callable[..., Any], returns: Callable[[str], str]) -> Callable[..., Any]:
    """A method calling ``fn`` and returning what it returns, under ``fn``'s name and
    docstring, shown returning ``returns`` of what ``fn`` is annotated to return."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    functools.update_wrapper(method, fn)
    _show_returning(method, fn, returns)
    return method


def _show_returning(method: Any, fn: Callable[..., Any], returns: Callable[[str], str]) -> None:
    """Makes ``help()`` and ``inspect.signature`` show ``method`` with ``fn``'s parameters,
    returning ``returns`` of what ``fn`` is annotated to return."""
    signature = inspect.signature(fn)
    shown = returns(str(signature.return_annotation))
    method.__signature__ = signature.replace(return_annotation=shown)


def _as_response(returns: str) -> str:
    return f"APIResponse[{returns}]"


def _on_loop(
    callback: Optional[Callable[[int, int], Any]],
) -> Optional[Callable[[int, int], Any]]:
    """An async bulk call reports progress from a Rust worker thread: hand each report to the
    event loop (asyncio's or trio's), so the callback runs on the loop's thread like the rest
    of the user's code."""
    if callback is None:
        return None

    def guarded(done: int, total: int) -> None:
        # As with the blocking client: a failing callback is logged and the call goes on
        # (left to the loop, it would be reported as an unhandled callback error).
        try:
            callback(done, total)
        except Exception as e:
            _log.warning("progress callback failed: %s: %s", type(e).__name__, e)

    return from_other_threads(guarded)
