"""The emulator's state kept across restarts: `Emulator(state=...)`, `emu.save(path)`,
`Emulator.load(path)`, `--state FILE` and `--save-every` on the standalone emulator, and
`POST /_emulator/save`. What was saved comes back whole and behaves on as it would have; a
file that is not a sound state file of this version is refused and left as it is; a SIGKILL
loses only what came after the last save, never the file."""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from client_support import drip_notification
from engine_support import after_minutes, campaign_notification
from test_emulator_standalone import BINARY, Running, commands

from pushwire.testing import Emulator, EmulatorProcess

SECOND_KEY = "second-site-key-1234"
# Every admin read, per site: what a user sees of the state.
SITE_READS = [
    "subscribers",
    "segments",
    "notifications",
    "broadcasts",
    "triggers",
    "drips",
    "products",
    "alerts",
    "summary",
]


def populate(emu: Emulator) -> None:
    """A site with one of everything the state holds, and a second site in its own time
    zone; the clock frozen, so that two emulators advanced alike must agree exactly."""
    start = emu.travel_to(emu.now.replace(microsecond=0) + dt.timedelta(days=1))
    emu.freeze_clock()
    emu.add_site(SECOND_KEY, timezone="+05:30")
    vip = emu.create_segment("vip")
    emu.generate_subscribers(
        300,
        country={"US": 0.5, "DE": 0.5},
        browser=["chrome", "firefox"],
        attributes={"plan": {"free": 0.7, "pro": 0.3}, "age": range(18, 70)},
        online=0.8,
        segments={vip: 0.5},
        seed=11,
    )
    for i in range(3):
        emu.add_subscriber(f"buyer-{i}", profile_id=f"p{i}", attributes={"vip": i == 0})
    emu.set_online("buyer-2", False)
    trigger = emu.create_trigger(
        campaign_name="Welcome back",
        rules={"start_event_name": "visit", "stop_event_name": "left"},
        notifications=[campaign_notification("Hi {{name}}", after_minutes(90))],
    )
    emu.add_alert("buyer-0", "P1")
    with emu.client() as c:
        c.drips.create(
            "Onboarding", [drip_notification(title="Day one", schedule_options=after_minutes(30))]
        )
        # Starts the drip: its first send is due in half an hour.
        emu.add_subscriber("newcomer")
        sent = c.notifications.create(
            title="Spring sale",
            message="20% off",
            url="https://shop.example/sale",
            include_segments=[vip],
            actions=[{"label": "Shop", "url": "https://shop.example/a"}],
        )
        c.notifications.create(
            title="Later",
            message="in two hours",
            url="https://shop.example/later",
            valid_from_utc=(start + dt.timedelta(hours=2)).replace(tzinfo=None),
        )
        for i in range(3):
            c.events.track("visit", profile_id=f"p{i}", data={"name": f"n{i}"})
        c.products.update([{"product_id": "P1", "price": 100}])
        c.products.update([{"product_id": "P1", "price": 80}])
    with emu.client(api_key=SECOND_KEY) as c2:
        emu.add_subscriber("far-away", api_key=SECOND_KEY)
        c2.notifications.create(title="Hello", message="there", url="https://far.example/")
    first = emu.deliveries(notification_id=sent, limit=2)
    emu.record_view(first[0]["delivery_id"])
    emu.record_click(first[1]["delivery_id"])
    assert trigger and len(first) == 2
    emu.advance(60)


def everything(emu: Emulator) -> dict[str, Any]:
    """All a user can read of the emulator, every site."""
    seen: dict[str, Any] = {
        "sites": emu._call("sites"),
        "now": emu._call("now"),
        "requests": emu._call("requests", meta=True),
    }
    for key in (emu.api_key, SECOND_KEY):
        for op in SITE_READS:
            seen[f"{key}:{op}"] = emu._call(op, api_key=key)
        seen[f"{key}:deliveries"] = emu._call("deliveries", status="all", api_key=key)
        seen[f"{key}:events"] = emu._call("events", meta=True, api_key=key)
    return seen


def assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == b[k], k


def test_a_saved_state_comes_back_whole_and_behaves_on_as_the_original(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.state"
    with Emulator("team-key-12345678") as original:
        populate(original)
        before = everything(original)
        assert original.save(path) == path
        with Emulator.load(path) as loaded:
            # The saved emulator's key is the default.
            assert loaded.api_key == "team-key-12345678"
            assert_same(before, everything(loaded))
            # The clock, the schedule, the triggered runs, the drip and the waiting device
            # carry on exactly as they would have.
            for emu in (original, loaded):
                emu.advance(3 * 3600)
                emu.set_online("buyer-2", True)
                with emu.client() as c:
                    c.events.track("visit", profile_id="p1")
                    c.products.update([{"product_id": "P1", "price": 50}])
                emu.advance(2 * 3600)
            after, after_loaded = everything(original), everything(loaded)
            # The requests made since differ in their ids, times and ports; not in what they
            # asked and what they got.
            asked = [
                [(r["method"], r["path"], r["body"], r["status"]) for r in e["requests"]["entries"]]
                for e in (after, after_loaded)
            ]
            assert asked[0] == asked[1]
            del after["requests"], after_loaded["requests"]
            assert_same(after, after_loaded)
            # The run of time did something: the later broadcast and the trigger's sends.
            sources = {d["source"] for d in after["team-key-12345678:deliveries"]}
            assert sources == {"broadcast", "trigger", "drip"}
            assert after["team-key-12345678:deliveries"] != before["team-key-12345678:deliveries"]
            # And the service's API answers from it.
            with original.client() as a, loaded.client() as b:
                assert a.segments.list() == b.segments.list()
                assert a.triggers.list() == b.triggers.list()


def test_a_state_file_is_read_at_start_and_written_at_close(tmp_path: Path) -> None:
    path = tmp_path / "team.state"
    with Emulator("team-key-12345678", state=path) as emu:
        # Created at once: a path that cannot be written fails the start, not the stop.
        assert path.exists() and emu.state_file == path
        emu.add_subscriber("kept", country="FR")
        emu.advance(86400)
        clock = emu.now
    # Readable by its owner only: it holds the sites' keys.
    if os.name == "posix":
        assert path.stat().st_mode & 0o077 == 0
    with Emulator(state=path) as again:
        assert again.api_key == "team-key-12345678"
        assert [s["subscriber_hash"] for s in again.subscribers()] == ["kept"]
        # The day advanced is still there (the clock runs on from wall time plus it).
        assert again.now >= clock
        again.add_subscriber("added later")
    with Emulator.load(path) as copy:
        assert len(copy.subscribers()) == 2
        copy.add_subscriber("only in the copy")
    # A loaded copy never writes back.
    with Emulator.load(path) as copy:
        assert len(copy.subscribers()) == 2
    # No temporary file is left beside it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["team.state"]


def test_save_needs_a_file_and_the_admin_api_writes_only_the_state_file(tmp_path: Path) -> None:
    with Emulator() as emu:
        with pytest.raises(ValueError, match="no state file"):
            emu.save()
        r = requests.post(emu.base_url + "/_emulator/save", json={}, timeout=10)
        assert r.status_code == 400 and "--state" in r.json()["error"]
    path = tmp_path / "s.state"
    with Emulator(state=path) as emu:
        emu.add_subscriber("one")
        elsewhere = tmp_path / "elsewhere.state"
        r = requests.post(
            emu.base_url + "/_emulator/save", json={"path": str(elsewhere)}, timeout=10
        )
        assert r.status_code == 400 and "path" in r.json()["error"]
        assert not elsewhere.exists()
        r = requests.post(emu.base_url + "/_emulator/save", json={}, timeout=10)
        assert r.status_code == 200, r.text
        assert r.json()["path"] == str(path) and r.json()["bytes"] == path.stat().st_size
        with Emulator.load(path) as copy:
            assert [s["subscriber_hash"] for s in copy.subscribers()] == ["one"]


def sound_file(tmp_path: Path) -> bytes:
    path = tmp_path / "sound.state"
    with Emulator() as emu:
        emu.generate_subscribers(100, seed=1)
        emu.save(path)
    return path.read_bytes()


def damaged(sound: bytes) -> list[Any]:
    """Files that must be refused: (name, bytes, what the error says)."""
    version_at = 24
    flipped = bytearray(sound)
    flipped[len(sound) // 2] ^= 0x40
    other_version = bytearray(sound)
    # A file of format 1 (the layout before subscribers and deliveries became compact
    # rows), refused with both versions named.
    other_version[version_at : version_at + 4] = (1).to_bytes(4, "little")
    return [
        pytest.param(b'{"sites": []}', "not a pushwire emulator state file", id="json"),
        pytest.param(b"", "not a pushwire emulator state file", id="empty"),
        pytest.param(b"\x7fELF" + bytes(200), "not a pushwire emulator state file", id="binary"),
        pytest.param(sound[:10], "cut short", id="cut-in-signature"),
        pytest.param(sound[:30], "cut short", id="cut-in-header"),
        pytest.param(sound[: len(sound) - 7], "cut short", id="cut-in-payload"),
        pytest.param(bytes(flipped), "damaged", id="a-flipped-bit"),
        pytest.param(sound + b"x", "damaged", id="trailing-bytes"),
        pytest.param(
            bytes(other_version),
            r"state format 1; this emulator \(pushwire [^)]*\) reads format 3 only",
            id="another-version",
        ),
    ]


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return sound_file(tmp_path_factory.mktemp("sound"))


CASES = [
    "json",
    "empty",
    "binary",
    "cut-in-signature",
    "cut-in-header",
    "cut-in-payload",
    "a-flipped-bit",
    "trailing-bytes",
    "another-version",
]


def case(sound: bytes, name: str) -> tuple[bytes, str]:
    (param,) = [p for p in damaged(sound) if p.id == name]
    data, says = param.values
    return data, says


@pytest.mark.parametrize("name", CASES)
def test_a_file_that_is_not_a_sound_state_file_is_refused_and_left_as_it_is(
    tmp_path: Path, sound: bytes, name: str
) -> None:
    data, says = case(sound, name)
    path = tmp_path / "state"
    path.write_bytes(data)
    for start in (lambda: Emulator(state=path), lambda: Emulator.load(path)):
        with pytest.raises(ValueError, match=says) as info:
            start()
        assert str(path) in str(info.value) and "not written over" in str(info.value)
        assert path.read_bytes() == data
    if name == "another-version":
        assert "pushwire 0.1.0" in str(info.value)


@pytest.mark.parametrize("cmd", commands())
def test_the_standalone_emulator_refuses_a_foreign_file_and_leaves_it(
    tmp_path: Path, sound: bytes, cmd: list[str]
) -> None:
    if not Path(cmd[0]).exists():
        pytest.skip(f"{cmd[0]} is not built: run `make test`, which builds it")
    for name in ("json", "cut-in-payload", "another-version"):
        data, says = case(sound, name)
        path = tmp_path / f"{name}.state"
        path.write_bytes(data)
        out = subprocess.run(
            [*cmd, "--port", "0", "--state", str(path)], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 2, out
        assert out.stdout.startswith("PUSHWIRE_REFUSED=") and re.search(says, out.stdout)
        assert path.read_bytes() == data


def test_a_missing_file_to_load_and_an_unwritable_state_path_are_said(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere.state"):
        Emulator.load(tmp_path / "nowhere.state")
    with pytest.raises(OSError, match="no-such-dir"):
        Emulator(state=tmp_path / "no-such-dir" / "s.state")
    with pytest.raises(ValueError, match="save_every needs a state file"):
        Emulator(save_every=1)


def admin(emu: Running, op: str, **body: Any) -> Any:
    r = requests.post(f"{emu.base_url}/_emulator/{op}", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def hashes(emu: Running) -> list[str]:
    return [s["subscriber_hash"] for s in admin(emu, "subscribers")]


def need_binary() -> None:
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not built: run `make test`, which builds it")


def test_a_sigkill_loses_only_what_came_after_the_last_save(tmp_path: Path) -> None:
    need_binary()
    path = tmp_path / "team.state"
    emu = Running([str(BINARY)], "--state", str(path), "--api-key", "team-key-12345678")
    try:
        admin(emu, "add_subscriber", subscriber_hash="saved-1")
        admin(emu, "advance", seconds=3600)
        saved = admin(emu, "save")
        assert saved["path"] == str(path)
        admin(emu, "add_subscriber", subscriber_hash="after-the-save")
    finally:
        emu.proc.kill()
        emu.proc.wait(10)
    again = Running([str(BINARY)], "--state", str(path))
    try:
        # The key came from the file, and the save's state with it; not what came after.
        assert again.key == "team-key-12345678"
        assert hashes(again) == ["saved-1"]
        admin(again, "add_subscriber", subscriber_hash="kept-by-a-clean-stop")
    finally:
        rc, rest = again.stop(signal.SIGTERM)
    assert rc == 0 and f"PUSHWIRE_SAVED={path}" in rest
    last = Running([str(BINARY)], "--state", str(path))
    try:
        assert hashes(last) == ["saved-1", "kept-by-a-clean-stop"]
    finally:
        last.stop()


def test_periodic_saves_survive_a_sigkill_at_any_moment(tmp_path: Path) -> None:
    """Killed at random moments while it saves every 50 ms and requests keep changing its
    state: the file always reads back, with at least what was in it before the last pause."""
    need_binary()
    path = tmp_path / "busy.state"
    rng = random.Random(5)
    count = 0
    for round_ in range(6):
        emu = Running([str(BINARY)], "--state", str(path), "--save-every", "0.05")
        try:
            assert admin(emu, "sites")[0]["subscribers"] == count, f"round {round_}"
            admin(emu, "generate_subscribers", count=20_000, seed=round_)
            count += 20_000
            # Long enough for a periodic save of it to land.
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                with Emulator.load(path) as on_disk:
                    if on_disk._call("sites")[0]["subscribers"] == count:
                        break
                time.sleep(0.05)
            # More changes, then a kill at a random moment in the saves that follow.
            admin(emu, "generate_subscribers", count=5_000, seed=100 + round_)
            time.sleep(rng.uniform(0, 0.3))
        finally:
            emu.proc.send_signal(signal.SIGKILL)
            emu.proc.wait(10)
        with Emulator.load(path) as on_disk:
            count = on_disk._call("sites")[0]["subscribers"]
        assert count % 5_000 == 0 and count >= 20_000 * (round_ + 1)
    # The temporary files of the saves the kills cut short are cleared at the next start.
    Running([str(BINARY)], "--state", str(path)).stop()
    assert [p.name for p in tmp_path.iterdir()] == ["busy.state"]


@pytest.mark.parametrize("cmd", commands())
def test_every_standalone_command_takes_state_and_save_every(
    tmp_path: Path, cmd: list[str]
) -> None:
    path = tmp_path / "s.state"
    emu = Running(cmd, "--state", str(path), "--save-every", "0.1")
    try:
        admin(emu, "add_subscriber", subscriber_hash="periodic")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with Emulator.load(path) as on_disk:
                if on_disk.subscribers():
                    break
            time.sleep(0.05)
        else:
            raise AssertionError("no periodic save within 10 s")
    finally:
        rc, rest = emu.stop()
    assert rc == 0 and f"PUSHWIRE_SAVED={path}" in rest


def test_a_second_emulator_on_one_state_file_is_refused_naming_the_file_and_its_holder(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.state"
    with EmulatorProcess(state=path) as first:
        first.admin("add_subscriber", subscriber_hash="kept")
        # In this process, and as a command: both refused at start, before reading the file.
        with pytest.raises(ValueError) as in_process:
            Emulator(state=path)
        with pytest.raises(ValueError) as as_command:
            EmulatorProcess(state=path)
        for refused in (in_process.value, as_command.value):
            message = str(refused)
            assert str(path) in message and f"pid {first.pid}" in message, message
        # The first runs on, unharmed.
        assert [s["subscriber_hash"] for s in first.admin("subscribers")] == ["kept"]
    # Stopped, it let go: the next one starts on the file and finds what it saved.
    with Emulator(state=path) as next_one:
        assert [s["subscriber_hash"] for s in next_one.subscribers()] == ["kept"]
        # Loading a copy is reading, not holding: allowed while another holds the file.
        with Emulator.load(path) as copy:
            assert len(copy.subscribers()) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["shared.state"]


def test_an_emulator_process_keeps_its_state(tmp_path: Path) -> None:
    path = tmp_path / "process.state"
    with EmulatorProcess("process-key-1234", state=path) as emu:
        emu.admin("add_subscriber", subscriber_hash="in-a-process")
        saved = emu.save()
        assert saved["path"] == str(path) and path.stat().st_size == saved["bytes"]
        emu.admin("add_subscriber", subscriber_hash="saved-by-close")
    with EmulatorProcess(state=path) as again:
        assert again.api_key == "process-key-1234"
        subs = again.admin("subscribers")
        assert [s["subscriber_hash"] for s in subs] == ["in-a-process", "saved-by-close"]


def test_numbers_come_back_to_the_last_bit(tmp_path: Path) -> None:
    awkward = [0.1 + 0.2, 1 / 3, 2.2250738585072014e-308, 5e-324, 1.7976931348623157e308, -0.0]
    path = tmp_path / "floats.state"
    with Emulator() as emu:
        emu.add_subscriber("h", attributes={f"x{i}": x for i, x in enumerate(awkward)})
        with emu.client() as c:
            c.products.update([{"product_id": "P", "price": 0.1 + 0.7}])
        emu.save(path)
        before = (emu.subscribers(), emu.products())
    with Emulator.load(path) as loaded:
        assert (loaded.subscribers(), loaded.products()) == before
        back = loaded.subscribers()[0]["attributes"]
        assert [back[f"x{i}"] for i in range(len(awkward))] == awkward


def test_a_save_never_replaces_a_file_that_is_not_a_state_file(tmp_path: Path) -> None:
    precious = tmp_path / "app.db"
    precious.write_bytes(b"SQLite format 3\x00" + bytes(100))
    with Emulator() as emu:
        with pytest.raises(ValueError, match="not a pushwire emulator state file"):
            emu.save(precious)
        assert precious.read_bytes().startswith(b"SQLite format 3")
        # An older state file, or an empty one, is replaced.
        older = tmp_path / "older.state"
        emu.save(older)
        emu.add_subscriber("newer")
        assert emu.save(older) == older
        empty = tmp_path / "empty.state"
        empty.touch()
        emu.save(empty)
    with Emulator.load(older) as back, Emulator.load(empty) as back_too:
        assert len(back.subscribers()) == len(back_too.subscribers()) == 1


def test_the_start_clears_only_its_own_files_leftovers(tmp_path: Path) -> None:
    ours = tmp_path / ".team.state.Ab12Cd.pushwire-tmp"
    others = [
        tmp_path / ".team.state.bak.Ab12Cd.pushwire-tmp",  # team.state.bak's
        tmp_path / ".team.state.notes",
        tmp_path / "team.state.Ab12Cd.pushwire-tmp",
    ]
    for p in [ours, *others]:
        p.write_bytes(b"x")
    with Emulator(state=tmp_path / "team.state"):
        pass
    assert not ours.exists()
    assert all(p.exists() for p in others)


def test_a_failed_save_at_close_is_raised_and_the_state_can_still_be_saved(
    tmp_path: Path,
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    emu = Emulator(state=gone / "s.state")
    emu.add_subscriber("kept")
    shutil.rmtree(gone)
    with pytest.raises(OSError, match="s.state"):
        emu.close()
    # The state is still held: written elsewhere.
    elsewhere = tmp_path / "elsewhere.state"
    emu.save(elsewhere)
    with Emulator.load(elsewhere) as back:
        assert [s["subscriber_hash"] for s in back.subscribers()] == ["kept"]


def test_an_emulator_process_that_could_not_save_says_so_at_close(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    emu = EmulatorProcess(state=gone / "s.state")
    emu.admin("add_subscriber", subscriber_hash="lost")
    shutil.rmtree(gone)
    with pytest.raises(OSError, match="did not save its state"):
        emu.close()


def test_an_empty_key_is_no_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        Emulator("")
    with pytest.raises(ValueError, match="must not be empty"):
        Emulator.load(tmp_path / "whatever.state", "")
