"""The engine at a larger audience: who receives a broadcast is exactly who it targets, and
every lookup by subscriber hash still finds the right subscriber (seeding, broadcasts and
segment membership find subscribers through an index)."""

from __future__ import annotations

from client_support import BROADCAST

from pushwire.testing import Emulator

N = 60_000


def test_a_broadcast_to_a_large_audience_reaches_exactly_the_targeted():
    with Emulator(record_requests=False) as emu:
        vip = emu.create_segment("vip")
        expected = set()
        for i in range(N):
            country = ("US", "FR", "DE")[i % 3]
            in_vip = i % 5 == 0
            h = emu.add_subscriber(
                subscriber_hash=f"sub-{i:06d}",
                country=country,
                segments=[vip] if in_vip else None,
            )
            if country == "US" and in_vip:
                expected.add(h)
        with emu.client(timeout=120) as c:
            nid = c.notifications.create(
                **BROADCAST, include_countries=["US"], include_segments=[vip]
            )
            reached = {d["subscriber_hash"] for d in emu.deliveries() if d["source_id"] == nid}
            assert reached == expected and len(expected) == N // 15
            # A subscriber added after, and segment membership by hash, still find theirs.
            late = emu.add_subscriber(subscriber_hash="sub-late", country="US")
            c.segments.add_subscribers(vip, ["sub-late", "sub-000003", "nobody"])
            members = next(s for s in emu.segments() if s["segment_id"] == vip)["members"]
            assert late in members and "sub-000003" in members and "nobody" not in members
            assert len(members) == N // 5 + 2
