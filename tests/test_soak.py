"""The short form of the soak (soak/soak.py; `make soak` runs the full 100,000 calls): under
random faults every call ends in a result or a typed error within its budget, the emulator
holds exactly what the client reported done, nothing is sent twice, nothing leaks."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "soak"))

import soak  # noqa: E402


def test_short_soak_under_random_faults() -> None:
    report = soak.run(calls=5000, seed=11)

    # The faults really happened, of every kind.
    assert report["faults_injected"] >= 100
    assert set(report["faults_by_kind"]) == {
        "500",
        "503",
        "429",
        "delay",
        "drop_before",
        "drop_after",
    }
    # Every call ended in a result or a typed error, within its timeout budget.
    assert report["untyped_errors"] == 0, report["untyped_sample"]
    assert sum(report["outcomes"].values()) == report["calls"]
    assert report["slowest_call_s"] <= soak.TIMEOUT + 0.5
    # The service holds what the client reported done, nothing it reported refused, and
    # nothing twice; only calls reported as of unknown outcome may or may not have landed.
    assert report["lost_writes"] == 0
    assert report["refused_but_stored"] == 0
    assert report["duplicates"] == 0
    assert report["unknown_outcomes"] > 0
    # Descriptors and memory come back to their baseline.
    assert report["leaked_fds"] <= 2
    assert report["rss_growth_mb"] < 30
