"""Where tracing plugs into the calls: ``tracer`` is ``None`` until
:meth:`pushwire.otel.PushwireInstrumentor.instrument` sets it, and every call checks it
first. This module imports nothing: without the ``otel`` extra, or before ``instrument()``,
a call pays one attribute read for tracing and OpenTelemetry is never imported.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, ContextManager, Optional, Protocol

from pushwire._core import CoreClient, PreparedCall

if TYPE_CHECKING:
    from pushwire._idempotency import Outcome


class CallTracer(Protocol):
    """What :mod:`pushwire.otel` gives the call primitives: a call run under its spans."""

    def call(self, core: CoreClient, call: PreparedCall, options: dict[str, Any]) -> Any:
        """``core.call_with(call, options)`` under the operation's span."""
        ...

    def submit(
        self, core: CoreClient, call: PreparedCall, options: dict[str, Any]
    ) -> Coroutine[Any, Any, Any]:
        """The awaited twin of :meth:`call`, on the asyncio bridge."""
        ...

    def operation(self, op: str, options: dict[str, Any]) -> ContextManager[TracedCall]:
        """The operation's span around what the block runs (a keyed call's claim and send),
        closed with the outcome it leaves in ``result`` or what it raised."""
        ...


class TracedCall(Protocol):
    """A call under :meth:`CallTracer.operation`: its options (with the observer), its
    result, and what it did with its idempotency key."""

    options: dict[str, Any]
    result: Any

    def note(self, outcome: Outcome) -> None: ...


tracer: Optional[CallTracer] = None
