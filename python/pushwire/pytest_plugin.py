"""The ``pushwire_emulator`` pytest fixture, registered through the ``pytest11`` entry point.

One emulator serves the whole session; each test gets it reset to a fresh state.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pushwire.testing import Emulator


@pytest.fixture(scope="session")
def _pushwire_emulator_session() -> Iterator[Emulator]:
    emu = Emulator()
    emu._shared = True
    try:
        yield emu
    finally:
        emu._server.stop()


@pytest.fixture
def pushwire_emulator(_pushwire_emulator_session: Emulator) -> Iterator[Emulator]:
    """A running :class:`pushwire.testing.Emulator` with fresh state."""
    emu = _pushwire_emulator_session
    emu.reset()
    # `reset` keeps the request log's setting (for load tests that turn it off); a test that
    # turned it off must not leave the next one without its log. The setting the emulator
    # was made with wins (a session fixture overridden with `record_requests=False`).
    emu.set_request_log(emu.record_requests)
    emu.set_retention(emu.retention)
    yield emu


@pytest.fixture
def pushwire_emulator_env(
    pushwire_emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Emulator]:
    """:func:`pushwire_emulator`, with ``PUSHWIRE_API_KEY``, ``PUSHWIRE_BASE_URL`` and
    ``PUSHWIRE_EVENTS_URL`` pointing at it for the test: code that makes its client from the
    environment (``pushwire.Client()``, when it first needs one) talks to the emulator."""
    monkeypatch.setenv("PUSHWIRE_API_KEY", pushwire_emulator.api_key)
    monkeypatch.setenv("PUSHWIRE_BASE_URL", pushwire_emulator.base_url)
    monkeypatch.setenv("PUSHWIRE_EVENTS_URL", pushwire_emulator.events_url)
    yield pushwire_emulator
