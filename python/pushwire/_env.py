"""The settings a client takes from the environment where its code passes none.

A setting passed to the constructor always wins; an unset or empty variable leaves the
built-in default. A value that cannot be read is a :class:`~pushwire.ValidationError`
naming the variable, raised when the client is made (never a silent fallback: a deployment
that sets ``PUSHWIRE_TIMEOUT=30s`` should learn it at start, not from its first hung call).

- ``PUSHWIRE_API_KEY``, ``PUSHWIRE_BASE_URL``, ``PUSHWIRE_EVENTS_URL``: where and as whom.
- ``PUSHWIRE_ALLOW_INSECURE``: ``1``/``true``/``yes``/``on`` allows plain http to a host
  that is not loopback (a shared emulator at ``http://emulator:8900`` in a compose file or a
  CI service container); ``0``/``false``/``no``/``off`` does not.
- ``PUSHWIRE_TIMEOUT``: seconds for a whole call (``none`` for no timeout).
- ``PUSHWIRE_MAX_RETRIES``: 0 to 20.
- ``PUSHWIRE_LOG``: ``debug`` or ``info`` turns the ``pushwire`` logger to that level with a
  handler to standard error, as ``OPENAI_LOG`` does for openai-python.
"""

from __future__ import annotations

import logging
import math
import os
from typing import Optional

from pushwire.errors import ValidationError

# What `timeout=None` stands for: the longest timeout the core takes (a day), as near to "no
# timeout" as a call that may hang on a dead connection should get.
LONGEST_TIMEOUT = 86_400.0

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO}


def where(
    api_key: Optional[str], base_url: Optional[str], events_url: Optional[str]
) -> tuple[str, str, str]:
    """The key and the two roots: the arguments, else the environment; a missing key or
    base URL is refused here, naming both ways to give it."""
    for name, value in (("api_key", api_key), ("base_url", base_url), ("events_url", events_url)):
        if value is not None and not isinstance(value, str):
            raise ValidationError(
                f"{name} must be a string, not {type(value).__name__}", field=name
            )
    api_key = api_key if api_key is not None else os.environ.get("PUSHWIRE_API_KEY")
    base_url = base_url if base_url is not None else os.environ.get("PUSHWIRE_BASE_URL")
    if events_url is None:
        events_url = os.environ.get("PUSHWIRE_EVENTS_URL", "")
    if not api_key:
        raise ValidationError("no API key: pass api_key= or set PUSHWIRE_API_KEY", field="api_key")
    if not base_url:
        raise ValidationError(
            "no base URL: pass base_url= or set PUSHWIRE_BASE_URL", field="base_url"
        )
    return api_key, base_url, events_url


def _raw(name: str) -> Optional[str]:
    value = os.environ.get(name, "").strip()
    return value or None


def _bad(name: str, value: str, want: str) -> ValidationError:
    return ValidationError(f"{name}={value!r} is not {want}", field=name)


def allow_insecure(default: bool) -> bool:
    value = _raw("PUSHWIRE_ALLOW_INSECURE")
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise _bad("PUSHWIRE_ALLOW_INSECURE", value, "one of 1, true, yes, on, 0, false, no, off")


def timeout(default: float) -> float:
    value = _raw("PUSHWIRE_TIMEOUT")
    if value is None:
        return default
    if value.lower() == "none":
        return LONGEST_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        raise _bad("PUSHWIRE_TIMEOUT", value, "a number of seconds (or none)") from None
    if not (math.isfinite(seconds) and 0 < seconds <= LONGEST_TIMEOUT):
        raise _bad("PUSHWIRE_TIMEOUT", value, "a positive number of seconds, at most a day")
    return seconds


def idempotency_store() -> Optional[str]:
    """``PUSHWIRE_IDEMPOTENCY_STORE``: the store of idempotency keys, as a URL."""
    return _raw("PUSHWIRE_IDEMPOTENCY_STORE")


def max_retries(default: int) -> int:
    value = _raw("PUSHWIRE_MAX_RETRIES")
    if value is None:
        return default
    if not (value.isascii() and value.isdigit()) or int(value) > 20:
        raise _bad("PUSHWIRE_MAX_RETRIES", value, "a whole number from 0 to 20")
    return int(value)


# The handler `PUSHWIRE_LOG` added, kept so that making more clients adds no second one,
# and the value last applied: a later client leaves alone a level the application has set
# since, unless the variable itself changed.
_handler: Optional[logging.Handler] = None
_applied: Optional[str] = None


def configure_logging() -> None:
    """Applies ``PUSHWIRE_LOG``: the ``pushwire`` logger at that level, with one handler to
    standard error unless the application gave it handlers of its own."""
    global _handler, _applied
    value = _raw("PUSHWIRE_LOG")
    if value is None:
        return
    level = _LEVELS.get(value.lower())
    if level is None:
        raise _bad("PUSHWIRE_LOG", value, "debug or info")
    if value == _applied:
        return
    _applied = value
    logger = logging.getLogger("pushwire")
    logger.setLevel(level)
    # Records already reaching a handler (the application's, or the root logger's from
    # `logging.basicConfig`) are not printed twice.
    if _handler is None and not logger.hasHandlers():
        _handler = logging.StreamHandler()
        _handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(_handler)
