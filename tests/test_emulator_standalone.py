"""The emulator outside Python's own process: the Rust binary `pushwire-emulator` (no Python
in it, for a Node, PHP or Go team's tests), the console script of the same name and
`python -m pushwire.emulator`. Each takes the same flags, prints the URLs and the key it
serves, is driven over raw HTTP, and stops cleanly on SIGINT and SIGTERM."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "debug" / "pushwire-emulator"
SCRIPT = Path(sys.executable).parent / "pushwire-emulator"


def commands() -> list:
    return [
        pytest.param([sys.executable, "-m", "pushwire.emulator"], id="python-m"),
        pytest.param([str(SCRIPT)], id="console-script"),
        pytest.param([str(BINARY)], id="rust-binary"),
    ]


def need(cmd: list[str]) -> None:
    if not Path(cmd[0]).exists():
        # make test builds both (cargo build --bin, maturin develop): say why, never silently.
        pytest.skip(f"{cmd[0]} is not built: run `make test`, which builds it")


class Running:
    def __init__(self, cmd: list[str], *args: str, stdin: Optional[int] = None) -> None:
        need(cmd)
        self.proc = subprocess.Popen(
            [*cmd, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=stdin,
            text=True,
        )
        self.printed: dict[str, str] = {}
        assert self.proc.stdout is not None
        while "PUSHWIRE_API_KEY" not in self.printed:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(
                    f"exited early: {self.proc.stderr.read() if self.proc.stderr else ''}"
                )
            name, _, value = line.strip().partition("=")
            self.printed[name] = value
        self.base_url = self.printed["PUSHWIRE_BASE_URL"]
        self.events_url = self.printed["PUSHWIRE_EVENTS_URL"]
        self.key = self.printed["PUSHWIRE_API_KEY"]

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str]:
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("did not stop within 10 s") from None
        rest = self.proc.stdout.read() if self.proc.stdout else ""
        return rc, rest


@pytest.mark.parametrize("cmd", commands())
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_driven_over_raw_http_and_stopped_cleanly(cmd: list[str], sig: int):
    emu = Running(cmd, "--api-key", "node-team-key", "--retention", "3")
    try:
        assert emu.key == "node-team-key"
        admin = emu.base_url + "/_emulator/"
        seg = requests.post(admin + "create_segment", json={"name": "vip"}, timeout=10).json()
        hashes = [
            requests.post(
                admin + "add_subscriber", json={"segments": [seg["segment_id"]]}, timeout=10
            ).json()["subscriber_hash"]
            for _ in range(2)
        ]
        r = requests.post(
            emu.base_url + "/apiv1/notifications",
            headers={"Api-Key": emu.key},
            data={
                "notification_title": "Sale",
                "notification_message": "Half price",
                "notification_url": "https://shop.example/",
                "include_segments[0]": str(seg["segment_id"]),
            },
            timeout=10,
        )
        assert r.status_code == 200, r.text
        delivered = requests.get(admin + "deliveries", timeout=10).json()
        assert sorted(d["subscriber_hash"] for d in delivered) == sorted(hashes)
        for i in range(5):
            r = requests.post(
                emu.events_url + "/api/v1/events",
                headers={"Api-Key": emu.key},
                json={"event_name": "view", "profile_id": f"p{i}"},
                timeout=10,
            )
            assert r.status_code == 200, r.text
        # The flags took: the retention of 3.
        events = requests.get(admin + "events?meta=true", timeout=10).json()
        assert len(events["entries"]) == 3 and events["pruned"] == 2
        wrong = requests.get(
            emu.base_url + "/apiv1/segments", headers={"Api-Key": "nope"}, timeout=10
        )
        assert wrong.status_code == 401
    finally:
        rc, rest = emu.stop(sig)
    assert rc == 0 and "stopped" in rest


@pytest.mark.parametrize("cmd", commands())
def test_it_stops_when_its_parent_closes_standard_input(cmd: list[str]):
    emu = Running(cmd, "--exit-with-parent", stdin=subprocess.PIPE)
    assert emu.proc.stdin is not None
    emu.proc.stdin.close()
    assert emu.proc.wait(10) == 0


@pytest.mark.parametrize("cmd", commands())
def test_a_refused_setting_is_said_on_standard_output(cmd: list[str]):
    need(cmd)
    out = subprocess.run(
        [*cmd, "--port", "0", "--api-key", " padded "], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 2
    assert out.stdout.startswith("PUSHWIRE_REFUSED=") and "spaces" in out.stdout


def test_the_binary_and_the_script_take_the_same_flags():
    for cmd in ([str(BINARY)], [str(SCRIPT)]):
        need(cmd)
    flags = {}
    for name, cmd in (("binary", [str(BINARY)]), ("script", [str(SCRIPT)])):
        out = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0
        flags[name] = {w.strip(",") for w in out.stdout.split() if w.startswith("--")}
    common = {"--help", "--version"}
    assert flags["binary"] - common == flags["script"] - common
    assert "--retention" in flags["binary"] and "--exit-with-parent" in flags["binary"]


def test_a_node_test_suite_drives_the_binary_with_fetch(tmp_path: Path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Node client cannot run here")
    emu = Running([str(BINARY)])
    try:
        script = tmp_path / "suite.mjs"
        script.write_text(
            textwrap.dedent(
                """
                const [base, events, key] = process.argv.slice(2);
                const admin = (op, body) => fetch(`${base}/_emulator/${op}`, {
                  method: "POST", headers: {"Content-Type": "application/json"},
                  body: JSON.stringify(body ?? {}),
                }).then((r) => r.json());
                const sub = await admin("add_subscriber", {country: "US"});
                const sent = await fetch(`${base}/apiv1/notifications`, {
                  method: "POST",
                  headers: {"Api-Key": key},
                  body: new URLSearchParams({
                    notification_title: "Hi", notification_message: "m",
                    notification_url: "https://shop.example/", "include_countries[0]": "US",
                  }),
                }).then((r) => r.json());
                const tracked = await fetch(`${events}/api/v1/events`, {
                  method: "POST", headers: {"Api-Key": key, "Content-Type": "application/json"},
                  body: JSON.stringify({event_name: "signup", profile_id: "u1"}),
                }).then((r) => r.json());
                const deliveries = await admin("deliveries", {});
                console.log(JSON.stringify({sub, sent, tracked, deliveries}));
                """
            )
        )
        out = subprocess.run(
            [node, str(script), emu.base_url, emu.events_url, emu.key],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        seen = json.loads(out.stdout)
        assert seen["sent"]["success"] is True and seen["tracked"]["error_code"] == 0
        assert [d["subscriber_hash"] for d in seen["deliveries"]] == [
            seen["sub"]["subscriber_hash"]
        ]
    finally:
        rc, _ = emu.stop()
    assert rc == 0


def test_the_binary_needs_no_python():
    need([str(BINARY)])
    if sys.platform != "linux" or shutil.which("ldd") is None:
        pytest.skip("ldd is Linux's: the link check runs there")
    linked = subprocess.run(["ldd", str(BINARY)], capture_output=True, text=True).stdout
    assert "python" not in linked.lower()
    # And it runs with no Python on PATH at all.
    env = {"PATH": "/nonexistent", "HOME": os.environ.get("HOME", "/")}
    out = subprocess.run(
        [str(BINARY), "--version"], capture_output=True, text=True, timeout=30, env=env
    )
    assert out.returncode == 0 and out.stdout.startswith("pushwire-emulator ")


@pytest.mark.parametrize("cmd", commands())
def test_a_signal_as_soon_as_the_urls_are_read_stops_it_cleanly(cmd: list[str]):
    for sig in (signal.SIGTERM, signal.SIGINT) * 3:
        emu = Running(cmd)
        rc, _ = emu.stop(sig)
        assert rc == 0


@pytest.mark.parametrize("cmd", commands())
@pytest.mark.parametrize(
    "args,said",
    [
        (["--host", "localhost"], "host must be an IP address"),
        (["--port", "65535"], "--events-port"),
    ],
    ids=["host-name", "last-port"],
)
def test_both_commands_refuse_the_same_settings_the_same_way(cmd, args, said):
    need(cmd)
    out = subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert out.stdout.startswith("PUSHWIRE_REFUSED=") and said in out.stdout


@pytest.mark.parametrize("cmd", commands())
def test_a_flag_is_spelt_whole(cmd: list[str]):
    need(cmd)
    out = subprocess.run([*cmd, "--ret", "5"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "--ret" in out.stderr
