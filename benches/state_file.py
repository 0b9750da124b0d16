"""The emulator's state file at real audience sizes: a generated population (as in
`emulator_scale.py`: 3 countries, 2 device types, 3 browsers, 2 attributes, a segment of
half), then the same site after one broadcast to the segment (a delivery for each of half the
subscribers); each saved with `emu.save` and read back with `Emulator.load`, in a fresh
process per size (the median of 3).

    python benches/state_file.py 100000 1000000
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import tempfile
import time
from typing import Any

from emulator_scale import START, each_in_own_process, main, markdown_table, scale_population

from pushwire.testing import Emulator

REPEATS = 3


def timed(emu: Emulator, path: str) -> dict[str, Any]:
    sites = emu._call("sites")
    saves, loads = [], []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        emu.save(path)
        saves.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        loaded = Emulator.load(path, record_requests=False)
        loads.append(time.perf_counter() - t0)
        with loaded:
            assert loaded._call("sites") == sites, "the state read back is not the one saved"
    return {
        "save_s": statistics.median(saves),
        "load_s": statistics.median(loads),
        "mb": os.path.getsize(path) / 2**20,
    }


def measure(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n}
    with Emulator(record_requests=False) as emu, tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "site.state")
        emu.travel_to(START + dt.timedelta(days=365))
        vip = emu.create_segment("vip")
        scale_population(emu, n, vip)
        out["subscribers"] = timed(emu, path)
        with emu.client(timeout=600) as client:
            sent = client.notifications.create(
                title="Spring sale",
                message="20% off for members",
                url="https://shop.example/sale",
                include_segments=[vip],
            )
        out["deliveries"] = emu._call("deliveries", notification_id=sent, limit=0, meta=True)[
            "total"
        ]
        out["with_deliveries"] = timed(emu, path)
    return out


def table(results: list[dict[str, Any]]) -> list[str]:
    def state(t: dict[str, Any]) -> str:
        """The cells of one state: save, load, file."""
        return f"{t['save_s'] * 1e3:,.0f} ms | {t['load_s'] * 1e3:,.0f} ms | {t['mb']:,.0f} MB"

    return markdown_table(
        "| subscribers | save | load | file | + deliveries | save | load | file |",
        [
            f"| {r['n']:,} | {state(r['subscribers'])} "
            f"| {r['deliveries']:,} | {state(r['with_deliveries'])} |"
            for r in results
        ],
    )


def run(sizes: list[int]) -> list[str]:
    """Each size in its own process; the table's lines."""
    return each_in_own_process(__file__, sizes, table)


if __name__ == "__main__":
    main(__file__, measure, table, [100_000, 1_000_000])
