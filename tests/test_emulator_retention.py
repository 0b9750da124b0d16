"""The emulator keeps the most recent requests and events (10,000 by default), counts what it
pruned, and never prunes the service's own state: an emulator left running for days stays
at the size of its state."""

from __future__ import annotations

import time

import pytest
import requests

from pushwire.testing import DEFAULT_RETENTION, Emulator, EmulatorProcess


def track(emu: Emulator, n: int, prefix: str = "e") -> None:
    with emu.client(backoff_base=0) as client:
        results = client.events.track_many(
            [{"event_name": f"{prefix}{i}", "profile_id": f"p{i % 7}"} for i in range(n)]
        )
    assert all(r is None for r in results)


def test_the_most_recent_requests_and_events_are_kept_and_the_rest_counted():
    with Emulator(retention=50) as emu:
        # A triggered campaign each event starts: its deliveries are the service's state.
        emu.create_trigger(
            campaign_name="Every event",
            rules={"start_event_name": "go", "stop_event_name": "stop"},
            notifications=[{"title": "Hi", "message": "m", "url": "https://shop.example/"}],
        )
        people = [emu.add_subscriber(profile_id=f"u{i}") for i in range(120)]
        with emu.client(backoff_base=0) as client:
            for i in range(120):
                client.events.track("go", profile_id=f"u{i}")
        log = emu.requests()
        assert len(log) == 50 and log.pruned == 70 and log.retention == 50
        # The most recent, oldest first.
        assert [r["body"] for r in log][-1].find('"u119"') > 0
        assert [r["body"] for r in log][0].find('"u70"') > 0
        events = emu.events()
        assert len(events) == 50 and events.pruned == 70
        assert [e["profile_id"] for e in events] == [f"u{i}" for i in range(70, 120)]
        # The service's state is whole: every subscriber got the campaign's message.
        emu.advance(1)
        reached = {d["subscriber_hash"] for d in emu.deliveries() if d["source"] == "trigger"}
        assert reached == set(people)
        assert len(emu.subscribers()) == 120
        stats = emu.retention_stats()
        assert stats == {
            "retention": 50,
            "requests": {"kept": 50, "pruned": 70},
            "events": {"kept": 50, "pruned": 70},
        }


def test_the_default_keeps_ten_thousand_and_zero_keeps_all():
    with Emulator() as emu:
        track(emu, DEFAULT_RETENTION + 30)
        events = emu.events()
        assert len(events) == DEFAULT_RETENTION and events.pruned == 30
        # Sent 64 at a time, they arrive in about the order sent: the kept are distinct,
        # and the newest among them.
        assert len({e["event_name"] for e in events}) == DEFAULT_RETENTION
        assert {f"e{i}" for i in range(200, DEFAULT_RETENTION + 30)} <= {
            e["event_name"] for e in events
        }
        assert emu.requests().pruned == 30
    with Emulator(retention=0) as emu:
        track(emu, DEFAULT_RETENTION + 30)
        assert len(emu.events()) == DEFAULT_RETENTION + 30 and emu.events().pruned == 0
        assert len(emu.requests()) == DEFAULT_RETENTION + 30


def test_lowering_the_retention_prunes_at_once_and_reset_keeps_the_setting():
    with Emulator() as emu:
        track(emu, 40)
        emu.set_retention(10)
        assert len(emu.events()) == 10 and emu.events().pruned == 30
        assert len(emu.requests()) == 10 and emu.requests().pruned == 30
        emu.reset()
        assert emu.requests().pruned == 0 and emu.events().retention == 10
        track(emu, 15)
        assert len(emu.events()) == 10 and emu.events().pruned == 5


def test_a_status_written_after_its_entry_was_pruned_lands_on_no_other_entry():
    with Emulator(retention=3) as emu:
        emu.inject_fault("/apiv1/segments", status=503, delay=0.6)
        seg = emu.create_segment("vip")
        url = emu.base_url + "/apiv1/segments"
        with requests.Session() as slow_session:
            import threading

            slow = threading.Thread(
                target=lambda: slow_session.get(url, headers={"Api-Key": emu.api_key}, timeout=10)
            )
            slow.start()
            time.sleep(0.1)
            for _ in range(5):
                r = requests.post(
                    emu.base_url + "/apiv1/segments/delete",
                    headers={"Api-Key": emu.api_key},
                    data={"segment_id": "999999"},
                    timeout=10,
                )
                assert r.status_code == 400
            slow.join()
        log = emu.requests()
        assert [e["status"] for e in log] == [400, 400, 400]
        assert all(e["fault"] is None for e in log)
        assert seg


def test_the_admin_routes_show_and_set_the_retention():
    with Emulator() as emu:
        admin = emu.base_url + "/_emulator/"
        assert requests.post(admin + "set_retention", json={"retention": 5}, timeout=10).ok
        track(emu, 8)
        meta = requests.get(admin + "requests", params={"meta": "true"}, timeout=10).json()
        assert len(meta["entries"]) == 5 and meta["pruned"] == 3 and meta["retention"] == 5
        # Without `meta`, the entries alone, as before.
        assert len(requests.get(admin + "requests", timeout=10).json()) == 5
        events = requests.get(admin + "events?meta=true", timeout=10).json()
        assert events["pruned"] == 3 and len(events["entries"]) == 5
        stats = requests.get(admin + "retention", timeout=10).json()
        assert stats["requests"] == {"kept": 5, "pruned": 3}
        bad = requests.post(admin + "set_retention", json={"retention": -1}, timeout=10)
        assert bad.status_code == 400 and "retention" in bad.json()["error"]


def test_the_standalone_emulator_takes_the_retention_flag():
    with EmulatorProcess(retention=4) as emu:
        with emu.client(backoff_base=0) as client:
            for i in range(9):
                client.events.track("view", profile_id=f"p{i}")
        meta = emu.admin("events", meta=True)
        assert len(meta["entries"]) == 4 and meta["pruned"] == 5
    with pytest.raises(ValueError, match="retention"):
        EmulatorProcess(retention=-3)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_a_bad_retention_is_refused(bad):
    with pytest.raises(ValueError, match="retention"):
        Emulator(retention=bad)
