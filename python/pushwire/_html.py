"""The HTML Jupyter shows for results: ``_repr_html_`` of the models, :class:`~pushwire.Page`
and :class:`ResultList` end in :func:`render`, which shows a :class:`~pushwire.BulkResult` as
its own ``_repr_html_`` draws it (in ``_bulk``, with this module's helpers).

A model is a card of its fields, a page or a list a table with one row per item, a bulk
result its summary and a table of its failed chunks. Tables stop after ``MAX_ROWS`` rows
(a line says how many more), values are cut at ``MAX_TEXT`` characters (the whole value,
up to ``MAX_TITLE``, shows on hover), and every value is escaped. Nothing is fetched and no
script runs: one small style element, scoped to the output's class, and the notebook's theme
does the rest.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
from collections.abc import Iterable, Mapping
from typing import Any, Optional, TypeVar

from pushwire._core import Page

__all__ = ["ResultList", "render"]

MAX_ROWS = 50
MAX_COLUMNS = 40
MAX_TEXT = 80
MAX_CARD_TEXT = 200
MAX_TITLE = 1000
# How many entries of a nested list or dict a cell spells out, and how deep.
_MAX_NESTED = 8
_MAX_DEPTH = 3

_T = TypeVar("_T")


def _is_bulk(obj: object) -> bool:
    return all(hasattr(obj, name) for name in ("chunks", "failed", "succeeded", "_repr_html_"))


# One small scoped style per output (as pandas does), so that cells need none of their own.
_STYLE = (
    "<style>.pushwire-result th, .pushwire-result td {text-align: left; vertical-align: top;"
    " padding: 2px 8px} .pushwire-result caption {caption-side: top; text-align: left}"
    " .pushwire-muted {opacity: 0.6}</style>"
)
_MUTED = 'class="pushwire-muted"'


class ResultList(list[_T]):
    """A list of results, as a call returns it: a plain ``list`` in every way (``==``,
    ``repr()``, pickling), which Jupyter shows as a table."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        return render(self)

    def to_dict(self) -> list[Any]:
        """The results as JSON values, what ``to_json()`` writes: each model as its
        ``to_dict()`` gives it (the service's shape), each dict (a summary row) with its
        dates and times as ISO 8601 text (``"2026-03-01"``). What ``json.dumps``, Flask's
        ``jsonify`` and Django's ``JsonResponse`` write as it is."""
        return [item.to_dict() if hasattr(item, "to_dict") else _jsonable(item) for item in self]

    def to_json(self, *, indent: Optional[int] = None) -> str:
        """The results as JSON: ``to_dict()`` as text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    """``value`` with each date and time within it as ISO 8601 text."""
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def render(obj: object) -> str:
    """The HTML of a result: a model, a :class:`~pushwire.Page`, a list of results, a
    :class:`~pushwire.BulkResult` (anything else as its escaped ``repr``)."""
    if isinstance(obj, Page):
        last = max(obj.last_page, 1)
        caption = f"page {obj.page} of {last}, {_count(obj.total, 'item')}"
        data = obj.data
        return _wrap(_table(data[:MAX_ROWS], len(data), caption))
    if _is_bulk(obj):
        # A BulkResult draws itself (``_bulk`` imports this module, not the other way round).
        return str(obj._repr_html_())  # type: ignore[attr-defined]
    if isinstance(obj, (list, tuple)):
        return _wrap(_table(list(obj[:MAX_ROWS]), len(obj), _count(len(obj), "item")))
    fields = _fields(obj)
    if fields is not None:
        return _wrap(_card(type(obj).__name__, fields))
    return f"<pre>{_escape(repr(obj))}</pre>"


def _wrap(body: str) -> str:
    return f'<div class="pushwire-result">{_STYLE}{body}</div>'


def _fields(obj: object) -> Optional[dict[str, Any]]:
    """A model's or a dict's fields (a model's nested models as dicts), else None."""
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict) and not isinstance(obj, type):
        out = to_dict()
        if isinstance(out, dict):
            return out
    if isinstance(obj, Mapping):
        return {str(k): v for k, v in obj.items()}
    return None


def _card(name: str, fields: Mapping[str, Any]) -> str:
    shown = list(fields.items())[:MAX_ROWS]
    rows = [
        f"<tr><th>{_escape(key)}</th><td>{_value(value, MAX_CARD_TEXT)}</td></tr>"
        for key, value in shown
    ]
    return (
        f"<table><caption><strong>{_escape(name)}</strong></caption>"
        f"<tbody>{''.join(rows)}</tbody></table>{_more(len(fields) - len(shown))}"
    )


def _table(shown: list[Any], total: int, caption: str) -> str:
    """The first rows of a list (``shown``, of ``total``), a column per field."""
    records = [_fields(item) for item in shown]
    columns: list[str] = []
    for record in records:
        for key in record if record is not None else ("value",):
            if key not in columns and len(columns) < MAX_COLUMNS:
                columns.append(key)
    head = "<th></th>" + "".join(f"<th>{_escape(c)}</th>" for c in columns)
    body = []
    for i, (item, record) in enumerate(zip(shown, records)):
        row = {"value": item} if record is None else record
        cells = "".join(f"<td>{_value(row[c]) if c in row else ''}</td>" for c in columns)
        body.append(f"<tr><td {_MUTED}>{i}</td>{cells}</tr>")
    if not total:
        body.append(f"<tr><td {_MUTED}>no items</td></tr>")
    return (
        f"<table><caption>{_escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>{_more(total - len(shown))}"
    )


def _more(n: int) -> str:
    return f"<p {_MUTED}>… {n:,} more</p>" if n > 0 else ""


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def _value(value: Any, limit: int = MAX_TEXT) -> str:
    """A value as the HTML of one cell: cut to ``limit`` characters, escaped."""
    if value is None:
        return f"<span {_MUTED}>None</span>"
    text = _text(value, 0)
    if len(text) <= limit:
        return _escape(text)
    whole = text[:MAX_TITLE] + ("…" if len(text) > MAX_TITLE else "")
    return f'<span title="{_escape(whole)}">{_escape(text[: limit - 1])}…</span>'


def _text(value: Any, depth: int) -> str:
    """A compact one-line text of a value; nested lists and dicts spelt out only so far."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, int)):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text if len(text) <= 12 else f"{value:.6g}"
    if isinstance(value, _dt.datetime):
        # A naive midnight is a calendar day (an analytics row's `date`): shown as the day.
        if value.tzinfo is None and value.time() == _dt.time():
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    fields = _fields(value)
    if fields is not None:
        if depth >= _MAX_DEPTH:
            return "{…}"
        parts = [f"{k}: {_nested(v, depth)}" for k, v in list(fields.items())[:_MAX_NESTED]]
        return "{" + _joined(parts, len(fields)) + "}"
    if isinstance(value, (list, tuple, set, frozenset)):
        if depth >= _MAX_DEPTH:
            return "[…]"
        entries = list(value) if isinstance(value, (list, tuple)) else sorted(value, key=str)
        parts = [_nested(v, depth) for v in entries[:_MAX_NESTED]]
        return "[" + _joined(parts, len(entries)) + "]"
    return repr(value)


def _nested(value: Any, depth: int) -> str:
    # Strings inside a list or dict are quoted, so that "a, b" reads as one entry.
    return repr(value) if isinstance(value, str) else _text(value, depth + 1)


def _joined(parts: Iterable[str], total: int) -> str:
    parts = list(parts)
    if total > len(parts):
        parts.append(f"… {total - len(parts)} more")
    return ", ".join(parts)
