"""The emulator at growing audiences, in-process, request log off: seeding one subscriber at a
time (half of them in the targeted country), one broadcast to that country, reading every
delivery, and a request after it all.

    python benches/emulator_scale.py 1000 10000 50000 200000
"""

from __future__ import annotations

import sys
import time

from pushwire.testing import Emulator


def main(sizes: list[int]) -> None:
    print(
        "| subscribers | seeding, per subscriber | one broadcast | `deliveries()` | a request after |"
    )
    print("|---:|---:|---:|---:|---:|")
    for n in sizes:
        with Emulator(record_requests=False) as emu:
            t0 = time.perf_counter()
            for i in range(n):
                emu.add_subscriber(country="US" if i % 2 else "FR")
            seed = (time.perf_counter() - t0) / n * 1e6
            client = emu.client(timeout=600)
            t0 = time.perf_counter()
            client.notifications.create(
                title="t", message="m", url="https://shop.example/", include_countries=["US"]
            )
            broadcast = (time.perf_counter() - t0) * 1e3
            t0 = time.perf_counter()
            delivered = emu.deliveries()
            read = (time.perf_counter() - t0) * 1e3
            t0 = time.perf_counter()
            for _ in range(200):
                client.segments.list()
            after = (time.perf_counter() - t0) / 200 * 1e6
            assert len(delivered) == n // 2
            print(
                f"| {n:,} | {seed:.1f} us | {broadcast:,.1f} ms | {read:,.1f} ms | {after:.1f} us |"
            )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000, 50000])
