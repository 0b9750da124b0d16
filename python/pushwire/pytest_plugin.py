"""The ``pushwire_emulator`` pytest fixture, registered through the ``pytest11`` entry point.

One emulator serves the whole session; each test gets it reset to a fresh state.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pushwire._core import reset_log_cache
from pushwire.testing import Emulator


@pytest.fixture(scope="session")
def _pushwire_emulator_session() -> Iterator[Emulator]:
    with Emulator() as emu:
        yield emu


@pytest.fixture
def pushwire_emulator(_pushwire_emulator_session: Emulator) -> Iterator[Emulator]:
    """A running :class:`pushwire.testing.Emulator` with fresh state."""
    emu = _pushwire_emulator_session
    emu.reset()
    # `reset` keeps the request log's setting (for load tests that turn it off); a test that
    # turned it off must not leave the next one without its log. The setting the emulator
    # was made with wins (a session fixture overridden with `record_requests=False`).
    emu.set_request_log(emu.record_requests)
    # The Rust core caches the `pushwire` logger's level at its first use: each test reads
    # it afresh, so that `caplog.set_level(...)` works whatever the tests before it did.
    reset_log_cache()
    yield emu
