"""``EmulatorProcess``: the emulator in a process of its own, driven over its admin routes."""

from __future__ import annotations

import asyncio

from pushwire.testing import EmulatorProcess


def test_an_emulator_process_serves_both_clients_and_stops() -> None:
    with EmulatorProcess(api_key="proc-key", record_requests=False) as emu:
        assert emu.pid > 0 and emu.base_url != emu.events_url
        segment = emu.admin("create_segment", name="from-admin")["segment_id"]
        client = emu.client()
        assert [s.segment_id for s in client.segments.list()] == [str(segment)]
        asyncio.run(emu.async_client().events.track("e", profile_id="p"))
        assert [e["event_name"] for e in emu.admin("events")] == ["e"]
        assert emu.admin("requests") == []  # the log was off
        process = emu.process
    assert process.poll() is not None  # closed with the block
