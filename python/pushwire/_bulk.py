"""Results of the bulk forms, and the progress bar they can draw."""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from pushwire._html import MAX_ROWS, _count, _escape, _more, _value, _wrap
from pushwire.errors import PushwireError, ValidationError

Progress = Union[bool, Callable[[int, int], Any], None]


@dataclass(frozen=True)
class ChunkResult:
    """One request of a bulk call: items ``[start, start + size)`` of the input.

    ``prior`` is what an earlier run with the same checkpoint did with it: ``"stored"``, the
    service stored it then, and it was not sent again (``message`` is ``None``);
    ``"in_flight"``, that run sent it and stopped before its answer, so it was sent again
    (adding or removing members twice acts once); ``"failed"``, it failed then and was sent
    again; ``None`` without a checkpoint or for a chunk no earlier run sent."""

    index: int
    start: int
    size: int
    message: Optional[str]
    error: Optional[PushwireError]
    prior: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The chunk as JSON-ready values, its error (if any) as its class's name, its
        message and its status (``None`` where no answer came)."""
        error = None
        if self.error is not None:
            error = {
                "type": type(self.error).__name__,
                "message": str(self.error),
                "status_code": getattr(self.error, "status_code", None),
            }
        return {
            "index": self.index,
            "start": self.start,
            "size": self.size,
            "message": self.message,
            "error": error,
            "prior": self.prior,
        }

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        return _dumped_as(cls, _CHUNK_SHAPE)


@dataclass(frozen=True)
class BulkResult:
    """Every chunk's outcome, in input order. ``failed_items`` lists what to send again."""

    chunks: tuple[ChunkResult, ...]
    items: Sequence[str]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.chunks)

    @property
    def succeeded(self) -> int:
        """How many items went out in chunks that succeeded."""
        return sum(c.size for c in self.chunks if c.ok)

    @property
    def failed(self) -> tuple[ChunkResult, ...]:
        return tuple(c for c in self.chunks if not c.ok)

    @property
    def failed_items(self) -> list[str]:
        return [h for c in self.failed for h in self.items[c.start : c.start + c.size]]

    def to_dict(self) -> dict[str, Any]:
        """The outcome as JSON-ready values: ``ok``, ``succeeded``, each chunk's
        :meth:`ChunkResult.to_dict` and the ``failed_items`` to send again (the input itself
        is left out: it may be a million hashes)."""
        return {
            "ok": self.ok,
            "succeeded": self.succeeded,
            "chunks": [c.to_dict() for c in self.chunks],
            "failed_items": self.failed_items,
        }

    def to_json(self, *, indent: Optional[int] = None) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        return _dumped_as(cls, _BULK_SHAPE)

    def raise_for_errors(self) -> None:
        """Raises the first chunk's error, if any chunk failed."""
        for c in self.chunks:
            if c.error is not None:
                raise c.error

    def __repr__(self) -> str:
        return (
            f"BulkResult(chunks={len(self.chunks)}, succeeded={self.succeeded}, "
            f"failed_chunks={len(self.failed)})"
        )

    def _repr_html_(self) -> str:
        """The summary and a table of the failed chunks, for Jupyter."""
        return _wrap(_html_body(self))


def _html_body(result: BulkResult) -> str:
    failed = result.failed
    items = sum(c.size for c in result.chunks)
    summary = (
        f"{'ok' if result.ok else 'failed'}: {_count(len(result.chunks), 'chunk')} of "
        f"{_count(items, 'item')}, {result.succeeded:,} sent"
    )
    if failed:
        lost = sum(c.size for c in failed)
        summary += f"; {_count(len(failed), 'chunk')} failed ({_count(lost, 'item')})"
    out = f"<p><strong>BulkResult</strong> {_escape(summary)}</p>"
    if not failed:
        return out
    rows = []
    for c in failed[:MAX_ROWS]:
        status = getattr(c.error, "status_code", None)
        cells = [
            _escape(str(c.index)),
            _escape(f"{c.start:,} to {c.start + c.size - 1:,}"),
            _escape(type(c.error).__name__),
            _escape(str(status) if status else ""),
            _value(str(c.error)),
        ]
        rows.append("<tr>" + "".join(f"<td>{v}</td>" for v in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("chunk", "items", "error", "status", "message"))
    return (
        f"{out}<table><caption>failed chunks</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>{_more(len(failed) - len(rows))}"
    )


# What pydantic dumps a chunk and a bulk result as (their `to_dict()`): a type's name, a
# name ending in `?` for one that may be None, a list of one shape, a dict of named shapes,
# and a tuple `(shape,)` for a shape that may be None. Made into pydantic-core's schemas on
# first use, so that pydantic is imported only by its users.
_ERROR_SHAPE = {"type": "str", "message": "str", "status_code": "int?"}
_CHUNK_SHAPE = {
    "index": "int",
    "start": "int",
    "size": "int",
    "message": "str?",
    "error": (_ERROR_SHAPE,),
    "prior": "str?",
}
_BULK_SHAPE = {"ok": "bool", "succeeded": "int", "chunks": [_CHUNK_SHAPE], "failed_items": ["str"]}


def _core_schema(shape: Any) -> Any:
    from pydantic_core import core_schema as cs

    if isinstance(shape, tuple):
        return cs.nullable_schema(_core_schema(shape[0]))
    if isinstance(shape, list):
        return cs.list_schema(_core_schema(shape[0]))
    if isinstance(shape, dict):
        return cs.typed_dict_schema(
            {k: cs.typed_dict_field(_core_schema(v)) for k, v in shape.items()}
        )
    plain: dict[str, Callable[[], Any]] = {
        "int": cs.int_schema,
        "str": cs.str_schema,
        "bool": cs.bool_schema,
    }
    if shape.endswith("?"):
        return cs.nullable_schema(plain[shape[:-1]]())
    return plain[shape]()


def _dumped_as(cls: type, shape: dict[str, Any]) -> Any:
    """pydantic's schema of a bulk outcome: taken as the instance it is (it is made by a
    call, never read from a request), dumped as its ``to_dict()``."""
    from pydantic_core import core_schema as cs

    return cs.json_or_python_schema(
        json_schema=cs.is_instance_schema(cls),
        python_schema=cs.is_instance_schema(cls),
        serialization=cs.plain_serializer_function_ser_schema(
            lambda r: r.to_dict(), return_schema=_core_schema(shape)
        ),
    )


def build_result(
    raw: list[tuple[int, int, int, Optional[str], Any, Optional[str]]], items: Sequence[str]
) -> BulkResult:
    return BulkResult(tuple(ChunkResult(*row) for row in raw), items)


class ProgressBar:
    """A one-line progress bar on stderr, drawn at most ten times a second: ``progress=True``
    when tqdm is not installed."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._last = 0.0
        self._line_open = False
        self._closed = False

    def __call__(self, done: int, total: int) -> None:
        if self._closed:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = width * done // max(total, 1)
        bar = "#" * filled + "-" * (width - filled)
        self._line_open = done < total
        end = "" if self._line_open else "\n"
        sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total}{end}")
        sys.stderr.flush()

    def close(self) -> None:
        """Ends the line of a bar the call left unfinished (an error, a cancellation); later
        reports are ignored."""
        self._closed = True
        if self._line_open:
            self._line_open = False
            sys.stderr.write("\n")
            sys.stderr.flush()


class TqdmBar:
    """``progress=True`` with tqdm installed: ``tqdm.auto``'s bar, a widget in Jupyter and a
    line on stderr in a terminal, made at the first report (a call refused before it sends
    anything draws none)."""

    def __init__(self, tqdm: Callable[..., Any], label: str) -> None:
        self._tqdm = tqdm
        self.label = label
        self._bar: Any = None
        self._fallback: Optional[ProgressBar] = None
        self._closed = False

    def __call__(self, done: int, total: int) -> None:
        if self._closed:
            return
        if self._fallback is not None:
            self._fallback(done, total)
            return
        if self._bar is None:
            try:
                self._bar = self._tqdm(total=total, desc=self.label)
            except ImportError:
                # tqdm.auto in Jupyter without ipywidgets: it cannot draw its widget.
                self._fallback = ProgressBar(self.label)
                self._fallback(done, total)
                return
        if self._bar.total != total:
            self._bar.total = total
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        """Closes the bar, finished or not (an error, a cancellation: Jupyter's widget turns
        red); later reports are ignored."""
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        if self._fallback is not None:
            self._fallback.close()


def _bar(label: str) -> Union[ProgressBar, TqdmBar]:
    try:
        # Looked up at each call: tqdm installed (or made unimportable) later takes effect.
        tqdm = importlib.import_module("tqdm.auto").tqdm
    except ImportError:
        return ProgressBar(label)
    return TqdmBar(tqdm, label)


def progress_callback(progress: Progress, label: str) -> Optional[Callable[[int, int], Any]]:
    if progress is True:
        return _bar(label)
    if progress is None or progress is False:
        return None
    if not callable(progress):
        # Caught here, not on every chunk as a failing callback would be.
        raise ValidationError(
            "progress must be a callable(done, total), True or None, "
            f"not {type(progress).__name__}",
            field="progress",
        )
    return progress


@contextlib.contextmanager
def reporting(progress: Progress, label: str) -> Iterator[Optional[Callable[[int, int], Any]]]:
    """The callback a bulk call reports its progress to; a bar of ``progress=True`` is
    closed when the call ends, however it ends."""
    callback = progress_callback(progress, label)
    try:
        yield callback
    finally:
        if isinstance(callback, (ProgressBar, TqdmBar)):
            callback.close()
