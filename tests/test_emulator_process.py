"""``EmulatorProcess``: the emulator in a process of its own, driven over its admin routes."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import signal
import subprocess
import sys
import time

import pytest

import pushwire
from pushwire.testing import Emulator, EmulatorProcess


def test_an_emulator_process_serves_both_clients_and_stops() -> None:
    with EmulatorProcess(api_key="proc-key", record_requests=False) as emu:
        assert emu.pid > 0 and emu.base_url != emu.events_url
        segment = emu.admin("create_segment", name="from-admin")["segment_id"]
        client = emu.client()
        assert [s.segment_id for s in client.segments.list()] == [str(segment)]
        asyncio.run(emu.async_client().events.track("e", profile_id="p"))
        assert [e["event_name"] for e in emu.admin("events")] == ["e"]
        assert emu.admin("requests") == []  # the log was off
        # A mistake is told as the in-process Emulator tells it, not as a bare HTTP 400.
        with Emulator() as local:
            for op, args in [("create_segment", {}), ("no_such_op", {})]:
                with pytest.raises(ValueError) as over_http:
                    emu.admin(op, **args)
                with pytest.raises(ValueError) as in_process:
                    local._call(op, **args)
                assert str(over_http.value) == str(in_process.value)
        assert str(over_http.value).startswith("unknown operation no_such_op")
        process = emu.process
    assert process.poll() == 0  # closed with the block, and cleanly


def test_connect_drives_a_running_emulator_with_the_typed_methods_and_leaves_it_running(
    tmp_path,
) -> None:
    state = tmp_path / "emulator.state"
    token = "connect-admin-t0ken"
    with EmulatorProcess(api_key="running-key-1", admin_token=token, state=state) as proc:
        # Its admin token is asked for; the default key (test-key) is no site of it.
        with pytest.raises(ValueError, match="Bearer"):
            Emulator.connect(proc.base_url, api_key="running-key-1")
        with pytest.raises(ValueError, match="api_key") as no_site:
            Emulator.connect(proc.base_url, token)
        assert token not in str(no_site.value)
        with Emulator.connect(proc.base_url + "/", token, api_key="running-key-1") as emu:
            assert (emu.base_url, emu.events_url) == (proc.base_url, proc.events_url)
            assert token not in repr(emu) and "running-key-1" not in repr(emu)
            # Seeding and records.
            vip = emu.create_segment("vip")
            member = emu.add_subscriber(country="US", segments=[vip])
            emu.generate_subscribers(3, country=["FR"], seed=1)
            client = emu.client(max_retries=0, backoff_base=0)
            client.notifications.create(
                title="Sale", message="m", url="https://shop.example", include_segments=[vip]
            )
            (delivery,) = emu.deliveries()
            assert delivery["subscriber_hash"] == member
            assert delivery["sent_at"].tzinfo is not None
            # The client read the site's segments (a page, then the empty one after it) to
            # check the broadcast's, then sent it.
            assert [r["path"] for r in emu.requests(path="/apiv1/*")] == [
                "/apiv1/segments",
                "/apiv1/segments",
                "/apiv1/notifications",
            ]
            # Faults.
            emu.inject_fault("/apiv1/segments", status=503)
            with pytest.raises(pushwire.ServerError):
                client.segments.list()
            assert [s.segment_name for s in client.segments.list()] == ["vip"]
            # The clock.
            emu.freeze_clock()
            before = emu.now
            assert emu.advance(3600) - before == dt.timedelta(hours=1)
            # A save to its own state file, and only there.
            assert emu.save() == state and state.stat().st_size > 0
            with pytest.raises(ValueError, match="own state file"):
                emu.save(tmp_path / "elsewhere.state")
            emu.freeze_clock(False)
        # Closed: the emulator still runs, with what the handle seeded.
        assert proc.process.poll() is None
        assert len(proc.admin("subscribers")) == 4
    # Stopped by its owner, it saved; an emulator started from that file holds it all.
    with Emulator.load(state) as again:
        assert [s["segment_name"] for s in again.segments()] == ["vip"]
        assert len(again.subscribers()) == 4


ORPHAN_SCRIPT = """
import os, sys, time
from pushwire.testing import EmulatorProcess

emu = EmulatorProcess(api_key="k")
print(emu.pid, flush=True)
if sys.argv[1] == "killed":
    os._exit(0)  # no close(), no finalizers: as if the process had been killed
if sys.argv[1] == "forked":
    # A forked worker (multiprocessing, a prefork server) uses the emulator, then lives on
    # after the script ends: the emulator belongs to the script, not to its children.
    ready_r, ready_w = os.pipe()
    child = os.fork()
    if child == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        emu.admin("create_segment", name="from-the-child")
        os.write(ready_w, b"x")
        time.sleep(30)
        os._exit(0)
    os.read(ready_r, 1)
    assert [s["segment_name"] for s in emu.admin("segments")] == ["from-the-child"]
    print(child, flush=True)
    os._exit(0)
"""


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A child of the ended script is reparented; it is gone once it is a zombie too.
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ")[1].startswith("Z"):
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("ending", ["exits without close", "killed", "forked a child first"])
def test_an_emulator_process_never_outlives_the_process_that_started_it(ending: str) -> None:
    # A notebook or a script that forgets close() (or dies) must not leave a server behind.
    proc = subprocess.run(
        [sys.executable, "-c", ORPHAN_SCRIPT, ending.split()[0]],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    pid, *forked = (int(word) for word in proc.stdout.split())
    try:
        assert _gone(pid, within=5.0), f"the emulator process {pid} outlived its parent"
        for child in forked:
            assert not _gone(child, within=0.0), "the forked child should still be running"
    finally:
        for leftover in (pid, *forked):
            with contextlib.suppress(ProcessLookupError):
                os.kill(leftover, signal.SIGKILL)


def test_an_emulator_that_never_starts_fails_within_startup_timeout(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A child that hangs before printing its URLs (a wedged interpreter, a stuck import)
    # must not block the test suite that started it for ever.
    hung = tmp_path / "python"
    hung.write_text("#!/bin/sh\nexec sleep 29.3171\n")
    hung.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(hung))
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="did not start within startup_timeout=0.5 s"):
        EmulatorProcess(startup_timeout=0.5)
    assert time.monotonic() - started < 5
    # and the hung child was stopped
    still = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"29.3171" in f.read():
                    still.append(pid)
    assert still == []


def test_an_emulator_process_refuses_a_setting_as_the_in_process_one_does() -> None:
    # A key no request could carry: the same ValueError as Emulator(api_key=...), not
    # "the emulator exited with 2".
    for key, problem in ((" padded-key-1 ", "spaces"), ("clé-12345678", "printable ASCII")):
        with pytest.raises(ValueError, match=problem):
            EmulatorProcess(key)
