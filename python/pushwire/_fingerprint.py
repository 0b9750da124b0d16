"""A keyed call's fingerprint: a SHA-256 of its operation and arguments, the same in every
process for the same call, which a key's record keeps (``pushwire._idempotency``) so that the
same key with other arguments is refused. What it is taken of is what the call sends: a
one-shot iterable read once (``settled``), an event as both ``events.track`` and
``track_many`` send it."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pushwire._args import _given

__all__ = ["event_fingerprint_args", "fingerprint", "fingerprinted", "settled"]


def fingerprint(op: str, args: Any) -> str:
    """A SHA-256 of the call's arguments in a canonical JSON: every process gives the same
    arguments the same one (dict keys sorted as text, sets sorted, models as their dicts,
    times in ISO 8601, numpy's scalars as Python's, a whole float as its int)."""
    text = json.dumps([op, _canonical(args)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        # A whole float is the int it names, as the core sends an id or a count: a
        # dataframe's int column with a missing cell is float64 (1.0 is profile 1).
        return int(value)
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _canonical(to_dict())
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    item = getattr(value, "item", None)  # a numpy scalar
    if callable(item) and not hasattr(value, "__len__"):
        return _canonical(item())
    if hasattr(value, "__iter__"):
        return [_canonical(v) for v in value]
    return f"{type(value).__qualname__}:{value}"


def settled(value: Any) -> Any:
    """``value`` with every one-shot iterable in it (a generator, a ``map``) made a list, so
    that its fingerprint and the call read the same items: models, text, bytes, numbers and
    sets as they are, dicts and lists item by item."""
    simple = (str, bytes, bytearray, int, float, type(None), set, frozenset)
    if isinstance(value, simple) or hasattr(value, "to_dict"):
        return value
    if isinstance(value, Mapping):
        return {k: settled(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(settled(v) for v in value)
    if isinstance(value, list) or (hasattr(value, "__iter__") and not hasattr(value, "__len__")):
        return [settled(v) for v in value]
    return value


def event_fingerprint_args(event: Mapping[str, Any]) -> dict[str, Any]:
    """An event as ``events.track`` and ``track_many`` both fingerprint it: its fields but
    the key, and those of its ``data``, without the missing ones (``None``, a dataframe's
    NaN, ``pd.NA``), as both send it, so that one key serves either call."""
    out = {}
    for k, v in event.items():
        if k == "idempotency_key" or _given(v) is None:
            continue
        if k == "data" and isinstance(v, Mapping):
            v = {dk: dv for dk, dv in v.items() if _given(dv) is not None}
        out[k] = v
    return out


def fingerprinted(op: str, args: Mapping[str, Any]) -> Any:
    """What a call's fingerprint is taken of: its arguments by name, an event's as the dict
    ``track_many``'s events are (a dataframe's missing cell left out, as it is sent)."""
    if op == "events.track":
        return event_fingerprint_args(args)
    if "check_segments" in args:
        # Whether the client checks the segments changes nothing sent.
        return {k: v for k, v in args.items() if k != "check_segments"}
    return args
