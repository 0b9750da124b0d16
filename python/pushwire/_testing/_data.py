"""The data the emulator takes and gives back: its records, the retention of them, and the
conversions of a caller's values (datetimes, numpy numbers, DataFrame columns, distributions)
to the JSON of its admin operations."""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Optional, Union

DateLike = Union[_dt.date, _dt.datetime, str]
# A path as the standard library takes one.
StrPath = Union[str, "os.PathLike[str]"]

# How many requests the request log keeps, and events each site keeps, by default.
DEFAULT_RETENTION = 10_000


class Records(list[dict[str, Any]]):
    """The records the emulator kept, oldest first (a plain list of dicts), with
    :attr:`pruned`, how many older ones the retention dropped, :attr:`retention`, how many
    it keeps (0: all), and :attr:`total`, how many matched the filters before the page was
    cut (``limit``/``offset``)."""

    pruned: int
    retention: int
    total: int

    def __init__(self, answer: dict[str, Any]) -> None:
        super().__init__(answer["entries"])
        self.pruned = int(answer["pruned"])
        self.retention = int(answer["retention"])
        self.total = int(answer.get("total", len(self)))


def _retention(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"retention must be a whole number of entries, 0 to keep all, not {value!r}"
        )
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return value.isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# A distribution of a generated population's field: values each as likely, or a mapping of
# value to weight.
Distribution = Union[Sequence[Any], Mapping[Any, float], range]


def _distribution(field: str, dist: Distribution) -> dict[str, list[Any]]:
    """``dist`` in the form the emulator reads (``{"values": [...], "weights": [...]}``),
    checked here so that a mistake names its field before anything is sent."""
    if isinstance(dist, Mapping):
        values, weights = list(dist.keys()), list(dist.values())
    elif isinstance(dist, (str, bytes)) or not isinstance(dist, (Sequence, range)):
        raise ValueError(
            f"{field} must be a list of values (each as likely) or a dict of value to "
            f"weight, not {type(dist).__name__}"
        )
    else:
        values, weights = list(dist), [1.0] * len(dist)
    if not values:
        raise ValueError(f"{field} has no values")
    for w in weights:
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not w >= 0 or w == math.inf:
            raise ValueError(f"{field}: a weight must be a number from 0 up, not {w!r}")
    if not sum(weights) > 0:
        raise ValueError(f"{field}: the weights add up to 0")
    return {"values": values, "weights": weights}


def _column(values: list[Any]) -> list[Any]:
    """A frame's column as the emulator reads it: a missing cell (``NaN``, ``NaT``,
    ``None``) is no value."""
    return [None if v is None or (v != v) is True else v for v in values]


def _frame_columns(frame: Any) -> Optional[dict[str, list[Any]]]:
    """A pandas or polars data frame as lists by column; ``None`` for anything else."""
    module = type(frame).__module__
    if module.startswith("pandas") and hasattr(frame, "columns"):
        return {str(c): _column(frame[c].tolist()) for c in frame.columns}
    if module.startswith("polars") and hasattr(frame, "to_dict"):
        return {str(k): _column(v) for k, v in frame.to_dict(as_series=False).items()}
    return None


def _parse_time(s: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def _with_times(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The emulator's records with every instant (a key ending in ``_at``) an aware
    ``datetime`` in UTC, as one type wherever a test meets a time."""
    for row in rows:
        for key, value in row.items():
            if key.endswith("_at") and isinstance(value, str):
                row[key] = _parse_time(value)
    return rows


def _segment_ids(field: str, ids: Iterable[Any]) -> list[int]:
    """Segment ids as the admin operations take them (numbers), from ids given as ``int`` or
    as the ``str`` the emulator and ``segments.list()`` return; a name is refused naming
    ``field[i]``, as the client refuses it in ``include_segments``."""
    out = []
    for i, raw in enumerate(ids):
        text = str(raw).strip()
        if isinstance(raw, bool) or not text.isdigit() or int(text) <= 0:
            raise ValueError(
                f"{field}[{i}] must be a segment id (as create_segment returns it), not {raw!r}"
            )
        out.append(int(text))
    return out


def _host_names(names: Iterable[str]) -> list[str]:
    """``allowed_hosts`` as a list of names (a lone string is one name, not its letters)."""
    if isinstance(names, str):
        names = [names]
    out = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"allowed_hosts holds {name!r}: each must be a host name")
        out.append(name.strip())
    return out


# Why an emulator in another process cannot follow this one's clock, and what to do instead.
_NOT_IN_THIS_PROCESS = (
    "follow_python_clock() needs the emulator in this process (pushwire.testing.Emulator()): "
    "an emulator in another process (EmulatorProcess, Emulator.connect) reads its own clock, "
    "which time-machine and freezegun do not move; move it with travel_to() or advance()"
)
