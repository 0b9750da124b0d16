"""The release workflow (.github/workflows/release.yml) promises what it cannot show here: it
runs only on GitHub. These tests hold it to the promises: no platform allowed to fail, every
CPython 3.9-3.14 and the free-threaded 3.14t built and smoke-tested on each platform's own
runner, Alpine's wheels in Alpine's images, nothing published before those pass. (`make
lint` checks it against GitHub's workflow schema.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "release.yml"
PYTHONS = ["3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"]


@pytest.fixture(scope="module")
def jobs() -> dict[str, Any]:
    return dict(yaml.safe_load(WORKFLOW.read_text())["jobs"])


def test_no_platform_is_allowed_to_fail(jobs: dict[str, Any]) -> None:
    lenient = [name for name, job in jobs.items() if job.get("continue-on-error")]
    assert lenient == []
    assert all(
        job["strategy"].get("fail-fast") is False for job in jobs.values() if "strategy" in job
    )


def test_every_runner_that_builds_wheels_has_every_cpython(jobs: dict[str, Any]) -> None:
    for name in ("macos", "windows"):
        (setup,) = [
            s for s in jobs[name]["steps"] if s.get("uses", "").startswith("actions/setup-python")
        ]
        assert setup["with"]["python-version"].split() == PYTHONS, name


def test_every_wheel_is_smoke_tested_on_its_own_platform_before_publishing(
    jobs: dict[str, Any],
) -> None:
    smoke = jobs["smoke"]
    matrix = smoke["strategy"]["matrix"]
    assert matrix["python"] == PYTHONS
    # Linux x86_64 and arm64, both Macs, Windows: a native runner each.
    assert set(matrix["os"]) == {
        "ubuntu-latest",
        "ubuntu-24.04-arm",
        "macos-15-intel",
        "macos-14",
        "windows-latest",
    }
    assert set(smoke["needs"]) >= {"linux", "macos", "windows"}
    commands = " ".join(step.get("run", "") for step in smoke["steps"])
    assert "--only-binary :all:" in commands, (
        "a missing wheel must fail, not fall back to the sdist"
    )
    assert "tools/dist.py smoke" in commands
    assert set(jobs["publish"]["needs"]) == {
        "linux",
        "musllinux",
        "macos",
        "windows",
        "smoke",
        "smoke-musl",
        "sdist",
    }


def test_every_musllinux_wheel_is_smoke_tested_in_alpine(jobs: dict[str, Any]) -> None:
    smoke = jobs["smoke-musl"]
    matrix = smoke["strategy"]["matrix"]
    assert matrix["python"] == [p for p in PYTHONS if not p.endswith("t")]
    assert set(matrix["arch"]) == set(jobs["musllinux"]["strategy"]["matrix"]["target"])
    assert smoke["needs"] == ["musllinux"]
    commands = " ".join(step.get("run", "") for step in smoke["steps"])
    assert "-alpine" in commands
    assert "--only-binary :all:" in commands
    assert "tools/dist.py smoke" in commands
