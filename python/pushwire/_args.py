"""What the calls take, and the checks of it done in Python before the core sees it.

The core checks every argument against the spec; these are the checks it cannot do: the
shapes a Python caller gets wrong (a string where a list belongs, a DataFrame iterating over
its column names, a NaN cell) and the client's own settings.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import numbers
import operator
from collections.abc import Iterable, Mapping
from typing import Any, Optional, SupportsFloat, SupportsIndex, Union

from pushwire.errors import ValidationError

DateLike = Union[_dt.date, str]
DateTimeLike = Union[_dt.datetime, str]
# What the core takes where the service wants a whole number or an id: ints, numpy's
# included (anything with ``__index__``), ids also as strings of digits, and whole numbers
# also as ``Decimal`` (a Django ``DecimalField``).
IdLike = Union[str, SupportsIndex]
WholeLike = Union[SupportsIndex, decimal.Decimal]
# A number of seconds as the settings take it: any real number (numpy's included) or a
# Decimal. A few other things pass the type (a bool, a numpy array or timedelta) and are
# refused at run time with a ValidationError naming the setting.
Seconds = SupportsFloat


class NotGiven:
    """The default of a setting whose value, when not given, comes from the environment (see
    :class:`~pushwire.Client`), as distinct from ``None``, which is a value (``timeout=None``:
    no timeout). Pass :data:`NOT_GIVEN` to leave a setting to the environment from code that
    forwards its own arguments."""

    _instance: Optional[NotGiven] = None

    def __new__(cls) -> NotGiven:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __reduce__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()


def _strs(name: str, values: Optional[Iterable[Any]]) -> Optional[list[str]]:
    if values is None:
        return None
    if isinstance(values, (str, bytes, bytearray, Mapping)):
        raise ValidationError(f"{name} must be a list of strings, not a single value", field=name)
    out: list[str] = []
    for v in values:
        if isinstance(v, str):
            out.append(v)
        elif not isinstance(v, bool) and hasattr(v, "__index__"):  # ints, numpy ints
            out.append(str(v.__index__()))
        else:
            raise ValidationError(f"{name} entries must be strings or integers", field=name)
    if isinstance(values, (set, frozenset)):
        # A set's order is the process's own (hash randomization): sorted, every process
        # sends, and fingerprints, the same list.
        out.sort()
    return out


def _is_list(value: object) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping))


def _items(name: str, values: Iterable[Any]) -> list[Any]:
    if hasattr(values, "columns"):
        # A DataFrame iterates over its column names.
        raise ValidationError(
            f"{name} must be a list of strings, not a DataFrame: pass one column, df['column']",
            field=name,
        )
    if isinstance(values, (str, bytes, bytearray, Mapping)):
        # A dict would send its keys, as a str its characters.
        kind = "a dict" if isinstance(values, Mapping) else "a single string"
        raise ValidationError(f"{name} must be a list of strings, not {kind}", field=name)
    return list(values)


def _given(value: Any) -> Any:
    """None for a dataframe's missing cell (NaN, ``pd.NA``, ``pd.NaT``, numpy's NaN of any
    width and its ``NaT``), as ``track_many`` reads one."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return None if bool(value != value) else value  # a numpy scalar: NaN and NaT only
    return value


def _events(events: Iterable[Any]) -> list[Any]:
    if hasattr(events, "columns"):
        # A DataFrame iterates over its column names.
        raise ValidationError(
            "events must be a list of dicts, not a DataFrame: pass df.to_dict('records') "
            "(pandas) or df.to_dicts() (polars)",
            field="events",
        )
    if isinstance(events, (str, bytes, Mapping)) or not isinstance(events, Iterable):
        raise ValidationError(
            f"events must be a list of dicts, not {type(events).__name__}", field="events"
        )
    return list(events)


def _headers(headers: Optional[Mapping[str, str]]) -> Optional[dict[str, str]]:
    if not headers:
        return None
    if not isinstance(headers, Mapping):
        raise ValidationError(
            f"default_headers must be a dict, not {type(headers).__name__}",
            field="default_headers",
        )
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ValidationError(
                f"default_headers must map strings to strings: {name!r}: {value!r}",
                field="default_headers",
            )
    return dict(headers)


def _seconds(name: str, value: object) -> float:
    """A number of seconds, numpy's and Decimal included (the core checks the range)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, decimal.Decimal)):
        raise ValidationError(
            f"{name} must be a number of seconds, not {type(value).__name__}", field=name
        )
    try:
        return float(value)
    except (OverflowError, ValueError):  # a huge int; Decimal("sNaN")
        raise ValidationError(f"{name} is out of range", field=name) from None
    except TypeError:  # a Real that float() refuses (numpy's timedelta64)
        raise ValidationError(
            f"{name} must be a number of seconds, not {type(value).__name__}", field=name
        ) from None


def _count(name: str, value: object) -> int:
    """A whole number (anything with ``__index__``, never a bool or a float)."""
    if isinstance(value, bool):
        raise ValidationError(f"{name} must be an integer, not bool", field=name)
    try:
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValidationError(
            f"{name} must be an integer, not {type(value).__name__}", field=name
        ) from None
    if not -(2**63) <= n < 2**63:
        raise ValidationError(f"{name} is out of range", field=name)
    return n
