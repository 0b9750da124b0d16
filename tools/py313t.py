"""A free-threaded CPython (3.13t) on this machine, the extension built for it, and the
threaded, async, forking and idempotency tests run there with the GIL off (`make test-ft`).

    python tools/py313t.py interpreter      # makes it, or checks the one kept
    python tools/py313t.py ready            # this tree's extension built for it, in a venv
    python tools/py313t.py test [ARGS]      # this tree's extension built for it, then the
                                            # tests (FT_TESTS, or ARGS: pytest's)

No free-threaded interpreter can be fetched as a binary here (Debian ships none, and no
python.org download is reachable), so it is built from the source of Debian trixie's
`python3.13` package (the upstream tarball, `apt-get source --download-only` through a
deb-src line this adds), `./configure --disable-gil`: about 8 minutes on two cores. It is
kept outside the clone, in ~/.cache/pushwire/py313t ($PUSHWIRE_PY313T to put it elsewhere),
marked with its recipe once whole; a folder without the mark is made anew.

The extension declares that it runs without the GIL (`#[pymodule(gil_used = false)]`), and
`tests/test_free_threaded.py` checks that importing it leaves the GIL off. The tests run with
PYTHON_GIL=0 all the same, so that a test dependency declaring nothing cannot turn it back
on, and `PUSHWIRE_EXPECT_NO_GIL=1` makes the suite check after every test that it is still
off. pyo3 0.29 no longer builds for 3.13t by itself (its free-threaded support starts at
3.14t); UNSAFE_PYO3_SKIP_VERSION_CHECK=1 builds it anyway, for this test build only: no wheel
made here is shipped.

It needs root and apt-get the first time (the deb-src line, the build's -dev packages).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
SOURCE_LIST = Path("/etc/apt/sources.list.d/pushwire-trixie-src.sources")
SOURCE_ENTRY = """Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
BUILD_DEPS = ["dpkg-dev", "libssl-dev", "zlib1g-dev", "libffi-dev", "libsqlite3-dev"]
BUILD_DEPS += ["libbz2-dev", "liblzma-dev", "xz-utils"]
MARKER = ".pushwire-py313t"
RECIPE = "trixie python3.13 orig source, ./configure --disable-gil --with-ensurepip=install\n"
# What the tests need beyond pytest: only packages with no compiled part, or with wheels for
# 3.13t (the dev requirements' data libraries have none to install here).
TEST_DEPS = ["pytest>=8", "requests>=2.31", "anyio>=4.4", "trio>=0.25", "hypothesis>=6.100"]
TEST_DEPS += ["redis>=5", "pandas>=2", "opentelemetry-api>=1.27", "opentelemetry-sdk>=1.27"]
TEST_DEPS += ["opentelemetry-instrumentation>=0.48b0"]
FT_TESTS = [
    "tests/test_free_threaded.py",
    "tests/test_async_backends.py",
    "tests/test_async_bridge.py",
    "tests/test_client_runtime.py",
    "tests/test_exactly_once.py",
    "tests/test_exactly_once_edges.py",
    "tests/test_bulk.py",
]


def run(cmd: list[str], **kwargs: object) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)  # type: ignore[call-overload]


def location() -> Path:
    given = os.environ.get("PUSHWIRE_PY313T")
    return Path(given) if given else Path.home() / ".cache" / "pushwire" / "py313t"


def python(prefix: Path) -> Path:
    return prefix / "bin" / "python3.13t"


def works(prefix: Path) -> bool:
    """Whether the kept interpreter is whole, of this recipe, and runs without the GIL."""
    marker = prefix / MARKER
    if not marker.exists() or marker.read_text() != RECIPE:
        return False
    check = "import sys, ssl, sqlite3; assert not sys._is_gil_enabled()"
    return subprocess.run([str(python(prefix)), "-c", check], capture_output=True).returncode == 0


def ready_to_build(tool: str, packages: list[str]) -> None:
    """What building an interpreter from trixie's sources needs: root and apt-get, the deb-src
    line, `packages`, and apt's index read anew."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        sys.exit(f"{tool}: making the interpreter needs root and apt-get")
    if not SOURCE_LIST.exists():
        SOURCE_LIST.write_text(SOURCE_ENTRY)
    run(["sh", str(REPO / "tools" / "system_deps.sh"), *packages])
    run(["apt-get", "update", "-qq"])


def interpreter() -> Path:
    """The free-threaded interpreter, made if the one kept is missing or not whole."""
    prefix = location()
    if works(prefix):
        return python(prefix)
    ready_to_build("tools/py313t.py", BUILD_DEPS)
    shutil.rmtree(prefix, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        run(["apt-get", "source", "-qq", "--download-only", "python3.13"], cwd=tmp)
        orig = next(Path(tmp).glob("python3.13_*.orig.tar.xz"))
        run(["tar", "xf", orig.name], cwd=tmp)
        src = next(p for p in Path(tmp).iterdir() if p.is_dir() and p.name.startswith("Python-"))
        configure = ["./configure", "-q", "--disable-gil", f"--prefix={prefix}"]
        run([*configure, "--with-ensurepip=install"], cwd=src)
        run(["make", "-s", f"-j{os.cpu_count() or 2}"], cwd=src)
        run(["make", "-s", "install"], cwd=src)
    (prefix / MARKER).write_text(RECIPE)
    if not works(prefix):
        sys.exit(f"tools/py313t.py: the interpreter made in {prefix} does not run without the GIL")
    return python(prefix)


def venv_home(venv: Path) -> Optional[str]:
    """The folder of the interpreter ``venv`` was made from (its pyvenv.cfg's ``home``)."""
    try:
        lines = (venv / "pyvenv.cfg").read_text().splitlines()
    except OSError:
        return None
    fields = (line.partition("=") for line in lines)
    return next((v.strip() for k, _, v in fields if k.strip() == "home"), None)


def ready() -> str:
    """This tree's extension built for 3.13t (a debug build) and installed in a venv in
    target/py313t with the tests' dependencies; the venv's Python.

    The build shares the development build's target directory: the dependencies that do not
    depend on pyo3 are already compiled there by `make develop`, and only pyo3's crates and
    this one are compiled again for 3.13t (under a minute, against three in a directory of its
    own; the next `make develop` compiles those back for its CPython). `make dist
    DIST_BUILD_ARGS=--ahead` runs this in its second lane (the interpreter's build too, if it
    is not kept), so that `make test-ft` after it finds it all made."""
    py = interpreter()
    out = REPO / "target" / "py313t"
    env = {**os.environ, "UNSAFE_PYO3_SKIP_VERSION_CHECK": "1"}
    wheels = out / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    maturin = Path(sys.executable).parent / "maturin"
    run([str(maturin), "build", "-q", "-i", str(py), "--out", str(wheels)], cwd=REPO, env=env)
    venv = out / "venv"
    if venv_home(venv) != str(py.parent):  # none yet, or one of another interpreter
        shutil.rmtree(venv, ignore_errors=True)
        run([str(py), "-m", "venv", str(venv)])
    vpy = str(venv / "bin" / "python")
    # Wheels only: the newest of each that has one for 3.13t or none to build.
    run([vpy, "-m", "pip", "install", "-q", "--only-binary=:all:", *TEST_DEPS])
    wheel = next(wheels.glob("pushwire-*.whl"))
    run([vpy, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(wheel)])
    return vpy


def test(args: list[str]) -> None:
    """The tests run against `ready`'s install from a scratch folder (so the installed
    package is the one imported), the GIL kept off."""
    installed_tests(
        ready(), args or FT_TESTS, {**os.environ, "PYTHON_GIL": "0", "PUSHWIRE_EXPECT_NO_GIL": "1"}
    )


def installed_tests(python: str, args: list[str], env: dict[str, str]) -> None:
    """The clone's tests ``args`` (pytest's arguments, ``tests/...`` relative to the clone)
    run by ``python`` from a scratch folder, so that the pushwire it imports is the one
    installed in it, never the clone's."""
    tests = [str(REPO / a) if a.startswith("tests/") else a for a in args]
    with tempfile.TemporaryDirectory() as scratch:
        run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(REPO)]
            + ["-c", str(REPO / "pyproject.toml"), *tests],
            cwd=scratch,
            env=env,
        )


def main() -> None:
    if sys.argv[1:2] == ["interpreter"]:
        print(interpreter())
    elif sys.argv[1:] == ["ready"]:
        print(ready())
    elif sys.argv[1:2] == ["test"]:
        test(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
