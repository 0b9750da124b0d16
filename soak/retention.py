"""The emulator left running: a million events through the standalone emulator with its
request log on and the default retention, its resident memory sampled every 100,000 events.
After warm-up (the first retention's worth of requests and events) it stays flat.

    python soak/retention.py            # make soak
    python soak/retention.py --events 200000
"""

from __future__ import annotations

import argparse
import time

from pushwire.testing import DEFAULT_RETENTION, EmulatorProcess

BATCH = 20_000


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--tolerance-mib", type=float, default=16.0)
    args = parser.parse_args()
    samples: list[tuple[int, float, float]] = []
    started = time.monotonic()
    with EmulatorProcess("retention-soak") as emu, emu.client(backoff_base=0) as client:
        sent = 0
        while sent < args.events:
            n = min(BATCH, args.events - sent)
            batch = [
                {
                    "event_name": "page_view",
                    "profile_id": f"user-{(sent + i) % 500}",
                    "data": {"path": f"/products/{(sent + i) % 1000}", "ms": i},
                }
                for i in range(n)
            ]
            failed = [r for r in client.events.track_many(batch) if r is not None]
            if failed:
                raise SystemExit(f"{len(failed)} events failed: {failed[0]}")
            sent += n
            if sent % 100_000 == 0 or sent == args.events:
                samples.append((sent, rss_mib(emu.pid), time.monotonic() - started))
        stats = emu.admin("retention")
    print(f"retention {DEFAULT_RETENTION}: {stats}")
    print("| events | emulator RSS (MiB) | seconds |")
    print("|---:|---:|---:|")
    for n, rss, secs in samples:
        print(f"| {n:,} | {rss:.1f} | {secs:.1f} |")
    warm = samples[0][1]
    peak = max(rss for _, rss, _ in samples)
    print(
        f"after warm-up ({samples[0][0]:,} events): {warm:.1f} MiB; peak {peak:.1f} MiB; "
        f"growth {peak - warm:.1f} MiB"
    )
    if (
        stats["requests"]["kept"] != DEFAULT_RETENTION
        or stats["events"]["kept"] != DEFAULT_RETENTION
    ):
        print("FAIL: the log or the event history is not at the retention")
        return 1
    if peak - warm > args.tolerance_mib:
        print(f"FAIL: the emulator grew by more than {args.tolerance_mib} MiB after warm-up")
        return 1
    print("OK: flat after warm-up")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
