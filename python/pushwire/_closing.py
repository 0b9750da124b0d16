"""The ``with`` block of what has a ``close()``: the blocking client and the emulators."""

from __future__ import annotations

from types import TracebackType
from typing import Optional, TypeVar

_T = TypeVar("_T", bound="_Closing")


class _Closing:
    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _T) -> _T:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()
