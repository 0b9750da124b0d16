"""Results of the bulk forms, and the progress bar they can draw."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from pushwire.errors import PushwireError, ValidationError

Progress = Union[bool, Callable[[int, int], Any], None]


@dataclass(frozen=True)
class ChunkResult:
    """One request of a bulk call: items ``[start, start + size)`` of the input."""

    index: int
    start: int
    size: int
    message: Optional[str]
    error: Optional[PushwireError]

    @property
    def ok(self) -> bool:
        return self.error is None


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


def build_result(
    raw: list[tuple[int, int, int, Optional[str], Any]], items: Sequence[str]
) -> BulkResult:
    return BulkResult(tuple(ChunkResult(*row) for row in raw), items)


class ProgressBar:
    """A one-line progress bar on stderr, drawn at most ten times a second."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = width * done // max(total, 1)
        bar = "#" * filled + "-" * (width - filled)
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{self.label} [{bar}] {done}/{total}{end}")
        sys.stderr.flush()


def progress_callback(progress: Progress, label: str) -> Optional[Callable[[int, int], Any]]:
    if progress is True:
        return ProgressBar(label)
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
