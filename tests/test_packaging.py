"""What a user gets from ``pip install pushwire``: the wheel, installed into a fresh virtual
environment away from this source tree, runs the quick start against its embedded emulator,
serves the pytest fixture through its entry point, starts the emulator in a process of its
own, and ships its type information.

Every other test imports pushwire from the source tree (``maturin develop``); only this one
would notice a file missing from the wheel or an entry point that is not registered. The
wheel is a stripped debug build (a few seconds after ``maturin develop``), so the test
checks the packaging, not the optimiser.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # The wheel must not find the source tree: run from a directory outside it.
    out = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert out.returncode == 0, f"{cmd} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A fresh venv with the wheel and pytest installed: (its python, a work directory)."""
    maturin = shutil.which("maturin", path=str(Path(sys.executable).parent)) or shutil.which(
        "maturin"
    )
    assert maturin, "maturin is needed to build the wheel (make test installs it)"
    base = tmp_path_factory.mktemp("wheel")
    wheels = base / "dist"
    run(
        [maturin, "build", "--profile", "dev", "--strip", "-q", "-o", str(wheels)],
        cwd=ROOT,
        timeout=900,
    )
    [wheel] = wheels.glob("pushwire-*.whl")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=base)
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", str(wheel), "pytest"], cwd=base)
    work = base / "work"
    work.mkdir()
    yield python, work


def test_the_wheel_is_imported_from_site_packages_with_its_types(
    installed: tuple[Path, Path],
) -> None:
    python, work = installed
    out = run(
        [
            str(python),
            "-c",
            "import pathlib, pushwire; p = pathlib.Path(pushwire.__file__).parent; "
            "print(p); print(sorted(f.name for f in p.iterdir()))",
        ],
        cwd=work,
    )
    where, files = out.stdout.splitlines()
    assert "site-packages" in where and str(ROOT) not in where
    shipped = ("py.typed", "_core.pyi", "_core_models.pyi", "testing.py", "pytest_plugin.py")
    for name in (*shipped, "emulator.py"):
        assert name in files, f"{name} is missing from the wheel: {files}"


def test_the_quick_start_runs_from_the_installed_wheel(installed: tuple[Path, Path]) -> None:
    python, work = installed
    script = work / "quickstart.py"
    shutil.copy(ROOT / "examples" / "quickstart.py", script)
    out = run([str(python), str(script)], cwd=work)
    assert out.stdout.strip(), "the quick start printed nothing"
    assert "Traceback" not in out.stderr


def test_the_pytest_fixture_is_registered_by_the_entry_point(
    installed: tuple[Path, Path],
) -> None:
    python, work = installed
    shutil.copy(ROOT / "examples" / "test_with_emulator.py", work / "test_with_emulator.py")
    out = run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_with_emulator.py"],
        cwd=work,
    )
    assert " passed" in out.stdout and "failed" not in out.stdout and "error" not in out.stdout


def test_the_emulator_runs_in_a_process_of_its_own(installed: tuple[Path, Path]) -> None:
    python, work = installed
    script = work / "own_process.py"
    script.write_text(
        textwrap.dedent(
            """
            from pushwire.testing import EmulatorProcess

            with EmulatorProcess() as emu:
                segment = emu.admin("create_segment", name="packaged")["segment_id"]
                listed = emu.client().segments.list()
                print([(s.segment_name, int(s.segment_id) == segment) for s in listed])
            """
        )
    )
    out = run([str(python), str(script)], cwd=work)
    assert out.stdout.strip() == "[('packaged', True)]"
