"""Idempotency stores of the tests' own: the documented protocol over a dict, with and without
its optional compare-and-set pair (one process)."""

from __future__ import annotations

import threading
import time
from typing import Optional


class DictStore:
    """The documented protocol, as a cache object has it (Django's among them): the four
    methods, over a dict guarded by a lock (one process)."""

    def __init__(self) -> None:
        self.values: dict[str, tuple[str, float]] = {}
        self.lock = threading.Lock()

    def _live(self, key: str) -> Optional[str]:
        held = self.values.get(key)
        return held[0] if held is not None and held[1] > time.time() else None

    def add(self, key: str, value: str, timeout: float) -> bool:
        with self.lock:
            if self._live(key) is not None:
                return False
            self.values[key] = (value, time.time() + timeout)
            return True

    def get(self, key: str) -> Optional[str]:
        with self.lock:
            return self._live(key)

    def set(self, key: str, value: str, timeout: float) -> None:
        with self.lock:
            self.values[key] = (value, time.time() + timeout)

    def delete(self, key: str) -> None:
        with self.lock:
            self.values.pop(key, None)


class AtomicDictStore(DictStore):
    """The protocol with its optional compare-and-set pair, atomic under the lock."""

    def compare_and_set(self, key: str, expected: str, value: str, timeout: float) -> bool:
        with self.lock:
            if self._live(key) != expected:
                return False
            self.values[key] = (value, time.time() + timeout)
            return True

    def compare_and_delete(self, key: str, expected: str) -> bool:
        with self.lock:
            if self._live(key) != expected:
                return False
            del self.values[key]
            return True
