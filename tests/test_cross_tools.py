"""`make cross`'s making of the wine prefix (tools/cross.py `wine_boot`): a first boot that
fails is reported with wine's own errors and the free disk space, and the prefix is made again
from nothing, once. The launcher here is a script in wine's place that fails as wine does on a
full disk (exit 53, kernel32.dll not loaded, a prefix half written). Then the second lane
that `make dist` builds in (tools/dist.py `in_a_second_lane`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import cross  # noqa: E402

FAILING_BOOT = """#!/bin/sh
# $0 wineboot -i: the prefix half written; fails the first N times (N in fails, beside it).
count="$(cat "$(dirname "$WINEPREFIX")/fails")"
mkdir -p "$WINEPREFIX/drive_c/windows/system32"
if [ "$count" -gt 0 ]; then
    echo $((count - 1)) > "$(dirname "$WINEPREFIX")/fails"
    : > "$WINEPREFIX/drive_c/windows/system32/kernel32.dll"
    echo "0024:err:environ:run_wineboot boot event wait timed out" >&2
    echo "wine: could not load kernel32.dll, status c0000135" >&2
    exit 53
fi
echo "$WINEDEBUG" > "$WINEPREFIX/booted"
"""


def launcher(tmp: Path, fails: int) -> tuple[str, dict[str, str]]:
    bin_ = tmp / "wine"
    bin_.mkdir()
    for name, text in (("wine64", FAILING_BOOT), ("wineserver", "#!/bin/sh\n")):
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(0o755)
    (tmp / "fails").write_text(f"{fails}\n")
    return str(bin_ / "wine64"), dict(os.environ, WINEPREFIX=str(tmp / "prefix"), WINEDEBUG="-all")


def test_a_failed_first_boot_is_reported_and_made_again_from_nothing(tmp_path, capsys):
    wine, env = launcher(tmp_path, fails=1)
    cross.wine_boot(wine, env)
    printed = capsys.readouterr().out
    assert "wineboot -i exited 53 (attempt 1)" in printed
    assert "MiB free on the prefix's disk" in printed
    assert "could not load kernel32.dll" in printed
    assert "boot event wait timed out" in printed  # wine's err lines are not hidden
    prefix = tmp_path / "prefix"
    # The second boot started from an empty prefix: the half-written DLL is gone.
    assert not (prefix / "drive_c/windows/system32/kernel32.dll").exists()
    assert (prefix / "booted").read_text().strip() == "fixme-all"


def test_two_failed_boots_stop_make_cross_saying_why(tmp_path, capsys):
    wine, env = launcher(tmp_path, fails=2)
    with pytest.raises(SystemExit) as stopped:
        cross.wine_boot(wine, env)
    assert "could not make its prefix" in str(stopped.value)
    printed = capsys.readouterr().out
    assert "(attempt 1)" in printed and "(attempt 2)" in printed
    assert not (tmp_path / "prefix" / "booted").exists()


# `make dist`'s second lane (tools/dist.py `in_a_second_lane`): a build run in a process of
# its own while the first lane builds.


def test_a_second_lane_that_fails_stops_the_build_showing_its_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lane = [sys.executable, "-c", "print('error: could not compile'); raise SystemExit(101)"]
    with pytest.raises(SystemExit) as stopped:
        with cross.dist.in_a_second_lane(lane, tmp_path / "lane.log", "the musl wheel"):
            pass
    assert "the musl wheel failed (exit 101)" in str(stopped.value)
    assert "error: could not compile" in capsys.readouterr().out


def test_a_first_lane_that_fails_stops_the_second_and_all_it_started(tmp_path: Path) -> None:
    started = tmp_path / "started"
    # The lane's own child (as cargo is maturin's): stopped with it.
    lane = ["sh", "-c", f"sleep 60 & echo $! > {started}; wait"]
    with pytest.raises(RuntimeError):
        with cross.dist.in_a_second_lane(lane, tmp_path / "lane.log", "the aarch64 wheel"):
            while not started.exists() or not started.read_text().strip():
                time.sleep(0.01)
            raise RuntimeError("the Windows build failed")
    assert_ends(int(started.read_text()))


def assert_ends(pid: int) -> None:
    for _ in range(1000):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # A killed child of a killed shell is reaped by init: give it that moment.
        time.sleep(0.01)
    raise AssertionError(f"the second lane's child {pid} outlived it")


WAITS_FOR_ITS_LANE = """
import signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import dist
dist.stop_on_signals()
signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal, however started
lane = ["sh", "-c", "sleep 60 & echo $! > " + sys.argv[2] + "; wait"]
with dist.in_a_second_lane(lane, Path(sys.argv[3]), "the aarch64 wheel"):
    print("the first lane done", flush=True)  # make dist waits for the second
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_build_stopped_while_it_waits_for_its_second_lane_stops_the_lane(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """make's or CI's SIGTERM, a closed terminal's SIGHUP or Ctrl-C, while `make dist` waits
    for a second lane that runs on after the first (`--ahead`): the lane and all it started
    stop with the build, which says where the lane's output is."""
    started = tmp_path / "started"
    tools = str(Path(cross.__file__).parent)
    argv = [sys.executable, "-c", WAITS_FOR_ITS_LANE, tools, str(started), str(tmp_path / "log")]
    build = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert build.stdout is not None
        for line in build.stdout:  # the lane's command, then the first lane's end
            if "the first lane done" in line:
                break
        else:
            pytest.fail(f"the build ended before its first lane did: {build.communicate()[0]}")
        while not started.exists() or not started.read_text().strip():
            time.sleep(0.01)
        build.send_signal(sig)
        out, _ = build.communicate(timeout=30)
    finally:
        build.kill()
    assert_ends(int(started.read_text()))
    assert build.returncode != 0, out
    assert f"stopped; its output: {tmp_path / 'log'}" in out
