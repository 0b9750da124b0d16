"""Builds the wheels and the sdist (`make dist`) and checks that they install and work on every
CPython from 3.9 to 3.13 found on this machine, on CPython 3.14, and on a musl CPython 3.13
(`make dist-check`).

    python tools/dist.py build [--sdist-wheel] [--ahead]  # dist/: one manylinux2014 wheel per
                                   # CPython found, the cp314 and cp314t wheels, the cp313
                                   # musllinux_1_2 x86_64 and aarch64 ones, the sdist (and
                                   # pip's build of it, for `check`; --ahead: what `.ci/run`'s
                                   # later steps compile)
    python tools/dist.py build-cp314 DIR   # only the cp314 wheel, into DIR
    python tools/dist.py check [TESTS]     # a fresh venv per CPython: install, quick start,
                                   # smoke tests; TESTS (pytest's) run against the x86_64
                                   # musl wheel too
    python tools/dist.py smoke     # the same checks, in this interpreter, of the wheel installed

CPython 3.14 needs no interpreter here to be built: pyo3 is told the version and maturin
describes that CPython from its own data. It is checked in Debian unstable's python3.14, in a
root of its own under chroot (tools/py314.py), with the same quick start and smoke tests. No
free-threaded 3.14t can be had here: its wheel is built the same way and checked for the
extension 3.14t imports; the free-threaded tests run under a free-threaded 3.13 built from
Debian's source (tools/py313t.py, `make test-ft`).

Alpine's wheels (musllinux_1_2, CPython 3.13) are cross-built with zig. The x86_64 one is
checked in a CPython 3.13 linked to musl that tools/musl.py builds from Debian's sources:
installed in a bare venv, the quick start, the smoke tests, the emulator command, then the
async and extension tests with their dependencies' musllinux wheels. No aarch64 musl CPython
runs here: the aarch64 one is checked for what such a CPython loads (its tags, its
extension's name, an aarch64 ELF that needs musl's libc and nothing of glibc's). The release
workflow builds the other versions and runs the smoke tests in Alpine's images.

One wheel per CPython version rather than one abi3 wheel: abi3 measured 3.5-10.7% slower in
bench case 2 on this machine (README, "Performance"). The wheels are manylinux2014 (glibc
2.17): built with zig as the C compiler and linker (maturin's `--zig`, the `ziglang` package),
so no Docker image is needed.

The build runs in two lanes at once, each with its own target directory: the manylinux wheels,
then the musl wheels and pip's build of the sdist. Each wheel's build spends about half its
time in rustc's front end on this crate, which uses one core; the other lane's compiling
fills the second. The manylinux lane took about twice as long as the other (19.7 against 9.3
minutes from a fresh clone, before the aarch64 musl wheel, which adds about 4), so `--ahead`
(`.ci/run`) puts in the second lane what CI's later steps compile: `make cross`'s aarch64
wheel (in the same target directory as the musl ones, sharing their build scripts and macros)
and `make test-ft`'s extension for the free-threaded 3.13, with its venv (and the
interpreter, about 8 minutes, where it is not kept); each step finds them built. The
manylinux lane builds the cp314 wheel last, so that `make test-py314`'s build of it after
`make dist` finds everything compiled too.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterator, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import musl  # noqa: E402  (tools/ is not a package)
import py313t  # noqa: E402
import py314  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
VERSIONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]
# Built whether or not this machine has it, and checked in a Debian root (tools/py314.py).
CP314 = "3.14"
# Alpine's (musl libc): the musllinux_1_2 wheels of the CPython version that tools/musl.py makes
# (and checks the x86_64 one in). The release workflow builds every version.
MUSL_TARGET = "x86_64-unknown-linux-musl"
MUSL_ARM64_TARGET = "aarch64-unknown-linux-musl"
# The release builds' own target directory: zig as the C compiler would otherwise rebuild the
# development build's C dependencies (and the next `make develop` rebuild them back). Every
# wheel's build shares it, so the dependencies are compiled once for all the versions.
TARGET_DIR = str(ROOT / "target" / "dist")
# The builds for other targets (the two musl wheels, `make cross`'s aarch64 one): apart from
# the first lane's, since cargo holds a target directory's lock for a whole build; shared by
# them, whose build scripts and macros, compiled for this machine, are compiled once for all.
# (The second lane's other builds, pip's of the sdist and the 3.13t extension, use target/.)
CROSS_TARGET_DIR = str(ROOT / "target" / "dist-cross")
SECOND_LANE_LOG = ROOT / "target" / "dist-second-lane.log"
# pip's build of the sdist (`build --sdist-wheel`), and what it was built from: the sdist's
# SHA-256 and the interpreter, in `from`.
SDIST_BUILD = ROOT / "target" / "sdist-build"


def interpreters() -> dict[str, str]:
    """CPython 3.9-3.13 on this machine: pyenv's, then `python3.X` on PATH."""
    found: dict[str, str] = {}
    roots = [os.environ.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv")]
    for version in VERSIONS:
        candidates = []
        for root in filter(None, roots):
            candidates += sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"))
        on_path = shutil.which(f"python{version}")
        if on_path:
            candidates.append(on_path)
        for exe in candidates:
            out = subprocess.run(
                [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
            )
            if out.returncode == 0 and out.stdout.strip() == version:
                found[version] = exe
                break
    return found


def report(found: dict[str, str]) -> None:
    print("CPython found: " + ", ".join(f"{v} ({exe})" for v, exe in found.items()), flush=True)
    missing = [v for v in VERSIONS if v not in found]
    if missing:
        print("CPython not found (not checked): " + ", ".join(missing), flush=True)
    if "3.9" not in found and "3.13" not in found:
        sys.exit(
            "neither CPython 3.9 nor 3.13 was found: at least one end of the supported range "
            "must be checked"
        )


def run(cmd: list[str], **kwargs: object) -> None:
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)  # type: ignore[call-overload]


def new_venv(exe: str, tmp: str) -> Path:
    """A fresh virtual environment of `exe` in `tmp`; its bin folder."""
    venv = Path(tmp) / "venv"
    run([exe, "-m", "venv", str(venv)])
    return venv / "bin"


def pip_install(bin_: Path, *args: str, **kwargs: object) -> None:
    """`pip install -q` with the venv's own Python."""
    run([str(bin_ / "python"), "-m", "pip", "install", "-q", *args], **kwargs)


def maturin_build(
    out: Path,
    interpreters: list[str],
    env: dict[str, str],
    compatibility: str = "manylinux2014",
    target: Optional[str] = None,
    target_dir: str = TARGET_DIR,
) -> None:
    """`maturin build` of the release wheels for `interpreters` (paths, or `python3.X` for one
    this machine has not, or of another target), `compatibility` with zig, into `out`."""
    maturin = shutil.which("maturin") or sys.exit("maturin is not installed")
    env = dict(env, CARGO_TARGET_DIR=target_dir)
    cmd = [maturin, "build", "--release", "--zig", "--compatibility", compatibility]
    cmd += ["--out", str(out), *(["--target", target] if target else [])]
    for exe in interpreters:
        cmd += ["--interpreter", exe]
    run(cmd, cwd=ROOT, env=env)


def build_cp314(out: Path, abi: str = "") -> Path:
    """The CPython 3.14 wheel (``abi="t"``: the free-threaded 3.14t's), built without a 3.14
    interpreter: pyo3 is told the version (PYO3_CROSS_PYTHON_VERSION) and maturin takes that
    interpreter's layout (ABI flags, the extension's suffix) from its own data (it warns
    that it could not ask that interpreter its platform: the wheel's platform tag comes from
    --compatibility). Returns the wheel."""
    version = CP314 + abi
    maturin_build(out, [f"python{version}"], dict(os.environ, PYO3_CROSS_PYTHON_VERSION=version))
    tag = "cp" + CP314.replace(".", "")
    wheels = sorted(out.glob(f"*-{tag}-{tag}{abi}-manylinux2014_x86_64*.whl"))
    if len(wheels) != 1:
        sys.exit(f"the {version} build left {[w.name for w in wheels]} in {out}, not one wheel")
    return wheels[0]


def build_musl(out: Path, target: str = MUSL_TARGET) -> Path:
    """The musllinux_1_2 wheel of `target` for tools/musl.py's CPython version, cross-built
    with zig as the linker (musl-gcc would link it to glibc's libgcc_s). Returns the wheel."""
    arch = target.split("-")[0]
    env = dict(os.environ)
    if arch == "aarch64":
        # As the release workflow builds it: jemalloc told the largest page size of aarch64
        # kernels (64 KiB), which a cross build cannot probe.
        env["JEMALLOC_SYS_WITH_LG_PAGE"] = "16"
    if shutil.which("rustup"):
        run(["rustup", "target", "add", target])
    maturin_build(out, [f"python{musl.VERSION}"], env, "musllinux_1_2", target, CROSS_TARGET_DIR)
    tag = "cp" + musl.VERSION.replace(".", "")
    wheels = sorted(out.glob(f"*-{tag}-{tag}-musllinux_1_2_{arch}.whl"))
    if len(wheels) != 1:
        sys.exit(f"the musl build left {[w.name for w in wheels]} in {out}, not one wheel")
    return wheels[0]


@contextlib.contextmanager
def in_a_second_lane(argv: list[str], log_path: Path, what: str) -> Iterator[None]:
    """``argv`` run in a process of its own (its output into ``log_path``) while the block
    runs; then waited for, its output printed, and the build stopped if it failed. Stopped,
    with everything it started, if the block raises or the wait for it is cut short (a
    signal that `stop_on_signals` turned into an exception)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    print(f"+ {' '.join(argv)} > {log_path}", flush=True)
    lane: Optional[subprocess.Popen[bytes]] = None
    try:
        with open(log_path, "w") as log:
            lane = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        yield
        code = lane.wait()
    except BaseException:
        if lane is None:
            raise
        # Its whole group: what it started goes on after it otherwise (cargo, rustc). The
        # group may be gone already (the lane ended, and all it started with it).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(lane.pid, signal.SIGKILL)
        lane.wait()
        print(f"--- {what}, in a second lane: stopped; its output: {log_path}", flush=True)
        raise
    print(f"--- {what}, in a second lane: exit {code}", flush=True)
    print(log_path.read_text(errors="replace"), end="", flush=True)
    if code != 0:
        sys.exit(f"{what} failed (exit {code}): see its output above")


def build(sdist_wheel: bool, ahead: bool) -> None:
    """dist/, in two lanes (the module's docstring says why): the manylinux wheels here, the
    musl wheels, (``sdist_wheel``) pip's build of the sdist and (``ahead``) CI's later builds
    in a second process whose output is printed when it ends."""
    found = interpreters()
    report(found)
    shutil.rmtree(DIST, ignore_errors=True)
    maturin = shutil.which("maturin") or sys.exit("maturin is not installed")
    # The sdist first: seconds, and the second lane builds from it.
    run(
        [maturin, "sdist", "--out", str(DIST)],
        cwd=ROOT,
        env=dict(os.environ, CARGO_TARGET_DIR=TARGET_DIR),
    )
    lane = [sys.executable, __file__, "second-lane"]
    lane += ["--sdist-wheel", found[list(found)[-1]]] if sdist_wheel else []
    lane += ["--ahead"] if ahead else []
    what = "the musl wheels" + (", the sdist's build" if sdist_wheel else "")
    what += ", `make cross`'s aarch64 wheel and `make test-ft`'s build" if ahead else ""
    with in_a_second_lane(lane, SECOND_LANE_LOG, what):
        maturin_build(DIST, list(found.values()), dict(os.environ))
        build_cp314(DIST, abi="t")
        build_cp314(DIST)
    for f in sorted(DIST.iterdir()):
        print(f"  {f.name}  {f.stat().st_size / 1e6:.1f} MB")


SMOKE = '''
"""The smoke subset, run against the installed wheel."""
import asyncio

import pytest

import pushwire


def test_a_sync_call(pushwire_emulator):
    seg = pushwire_emulator.create_segment("vip")
    with pushwire_emulator.client() as c:
        assert [s.segment_id for s in c.segments.list()] == [str(seg)]


def test_an_async_call(pushwire_emulator):
    async def main():
        async with pushwire_emulator.async_client() as c:
            await c.events.track("signup", profile_id="u1")
    asyncio.run(main())
    assert [e["event_name"] for e in pushwire_emulator.events()] == ["signup"]


def test_an_error(pushwire_emulator):
    with pushwire_emulator.client(max_retries=0) as c:
        with pytest.raises(pushwire.BadRequestError) as info:
            c.drips.get(999)
    assert info.value.status_code == 400
    with pytest.raises(pushwire.ValidationError):
        pushwire.Client(api_key="k", base_url="ftp://nowhere")


def test_the_fixture_gives_fresh_state(pushwire_emulator):
    assert pushwire_emulator.requests() == []


def test_the_version_is_the_crates():
    assert pushwire.__version__ == "{version}"


def test_a_free_threaded_cpython_keeps_the_gil_off():
    import sys
    import sysconfig

    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        pytest.skip("a CPython built with the GIL")
    import pushwire._core

    # an extension that does not declare itself safe without the GIL turns it on at import
    assert pushwire._core is not None and not sys._is_gil_enabled()
'''


def crate_version() -> str:
    for line in (ROOT / "Cargo.toml").read_text().splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise SystemExit("no version in Cargo.toml")


def printed_settings(proc: subprocess.Popen[str], argv: list[str]) -> dict[str, str]:
    """The ``NAME=value`` lines an emulator prints before it serves (``PUSHWIRE_BASE_URL``,
    ...), read up to the key; an emulator that exits first is a CalledProcessError."""
    printed: dict[str, str] = {}
    assert proc.stdout is not None
    while "PUSHWIRE_API_KEY" not in printed:
        line = proc.stdout.readline()
        if not line:
            raise subprocess.CalledProcessError(proc.wait(), argv)
        name, _, value = line.strip().partition("=")
        printed[name] = value
    return printed


def serve_once(command: list[str], env: dict[str, str]) -> None:
    """The wheel's `pushwire-emulator` (`command`) started on free ports, asked for its
    operations over HTTP, and stopped with SIGTERM: it must exit 0."""
    import json
    import signal
    import urllib.request

    # Windows has no SIGTERM to send (it would be TerminateProcess): there the emulator is
    # told to stop when its standard input closes, and that is how it is stopped.
    windows = os.name == "nt"
    argv = [*command, "--port", "0", *(["--exit-with-parent"] if windows else [])]
    print("+ " + " ".join(argv), flush=True)
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = printed_settings(proc, argv)["PUSHWIRE_BASE_URL"] + "/_emulator/operations"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=30) as answer:
            assert "add_subscriber" in json.loads(answer.read())
    finally:
        if windows:
            assert proc.stdin is not None
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        rc = proc.wait(30)
    if rc != 0:
        raise subprocess.CalledProcessError(rc, argv)


def smoke(python: list[str], emulator: list[str], env: dict[str, str], tmp: Path) -> None:
    """What every installed wheel must do, run by `python` (an interpreter's command line,
    perhaps under an emulator) with pushwire and pytest installed: the quick start, the smoke
    tests, and the `emulator` command serving and stopping cleanly."""
    quickstart = ROOT / "examples" / "quickstart.py"
    run([*python, str(quickstart)], env=env, cwd=tmp, stdout=subprocess.DEVNULL)
    tests = tmp / "test_smoke.py"
    tests.write_text(SMOKE.replace("{version}", crate_version()))
    run([*python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)], env=env, cwd=tmp)
    serve_once(emulator, env)


def check(musl_tests: list[str]) -> None:
    found = interpreters()
    report(found)
    version = crate_version()
    every = sorted(DIST.glob("*.whl"))
    if not every:
        sys.exit("no wheel in dist/: run `make dist` first")
    wheels = [w for w in every if "manylinux" in w.name]
    failed = []
    for py, exe in found.items():
        tag = "cp" + py.replace(".", "")
        wheel = [w for w in wheels if f"-{tag}-" in w.name]
        if not wheel:
            failed.append(f"{py}: no {tag} wheel in dist/")
            continue
        with tempfile.TemporaryDirectory(prefix=f"pushwire-dist-{py}-") as tmp:
            bin_ = new_venv(exe, tmp)
            # Nothing on PATH but the venv: no compiler, no cargo, no system Python.
            env = {"PATH": str(bin_), "HOME": tmp, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
            try:
                pip_install(bin_, "--only-binary", ":all:", "--no-index", str(wheel[0]), env=env)
                # pytest for the smoke tests, from the registry (the wheel needs nothing).
                pip_install(bin_, "pytest", env=env)
                smoke([str(bin_ / "python")], [str(bin_ / "pushwire-emulator")], env, Path(tmp))
                print(f"CPython {py}: ok", flush=True)
            except subprocess.CalledProcessError as e:
                failed.append(f"{py}: {' '.join(map(str, e.cmd))} exited {e.returncode}")
    checks: list[tuple[str, list[Path], Callable[[Path], None]]] = [
        (f"CPython {CP314}", [w for w in wheels if "-cp314-cp314-" in w.name], check_cp314),
        (f"CPython {CP314}t", [w for w in wheels if "-cp314-cp314t-" in w.name], check_cp314t),
        (
            f"CPython {musl.VERSION} on musl",
            [w for w in every if "musllinux_1_2_x86_64" in w.name],
            lambda wheel: check_musl(wheel, musl_tests),
        ),
        (
            f"CPython {musl.VERSION} on musl, aarch64",
            [w for w in every if "musllinux_1_2_aarch64" in w.name],
            check_musl_arm64,
        ),
    ]
    for name, found_wheels, check_one in checks:
        if len(found_wheels) != 1:
            failed.append(f"{name}: want one wheel in dist/, found {found_wheels}")
            continue
        try:
            check_one(found_wheels[0])
            print(f"{name}: ok", flush=True)
        except subprocess.CalledProcessError as e:
            failed.append(f"{name}: {' '.join(map(str, e.cmd))} exited {e.returncode}")
        except ValueError as e:
            failed.append(f"{name}: {e}")
    newest = list(found)[-1]
    try:
        check_sdist(found[newest], version)
    except subprocess.CalledProcessError as e:
        failed.append(f"sdist on {newest}: {' '.join(map(str, e.cmd))} exited {e.returncode}")
    if failed:
        sys.exit("dist-check failed:\n  " + "\n  ".join(failed))
    print(
        f"dist-check: the wheel installs and works on CPython {', '.join([*found, CP314])} "
        f"({CP314}: Debian's, in a root under chroot) and on CPython {musl.VERSION} with musl "
        f"libc; the sdist builds and works on {newest}"
    )


def check_cp314(wheel: Path) -> None:
    """The cp314 wheel checked as the others are, in Debian unstable's CPython 3.14 in the root
    that tools/py314.py keeps: a fresh venv with nothing else on PATH (the root has no
    compiler or cargo anyway), the wheel installed alone, pytest from the registry, the quick
    start, the smoke tests and the `pushwire-emulator` command."""
    with py314.kept_root() as root, tempfile.TemporaryDirectory(prefix="pushwire-dist-3.14-") as t:
        tmp = Path(t).resolve()
        # The clone (the quick start, the wheel) read-only, and the scratch folder, at the
        # same paths in the root as here.
        inside = py314.enter(root, ("ro", ROOT), ("rw", tmp))
        bin_ = tmp / "venv" / "bin"
        env = {
            "PATH": str(bin_),
            "HOME": str(tmp),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_CERT": py314.ROOT_CA,
        }
        run([*inside, py314.PYTHON, "-m", "venv", str(tmp / "venv")], env=env, cwd=tmp)
        pip = [*inside, str(bin_ / "python"), "-m", "pip", "install", "-q"]
        run([*pip, "--only-binary", ":all:", "--no-index", str(wheel)], env=env, cwd=tmp)
        run([*pip, "pytest"], env=env, cwd=tmp)
        smoke([*inside, str(bin_ / "python")], [*inside, str(bin_ / "pushwire-emulator")], env, tmp)


def wheel_tags(wheel_file: str) -> list[str]:
    """The tags a wheel's WHEEL file lists."""
    lines = wheel_file.splitlines()
    return [line.split(":", 1)[1].strip() for line in lines if line.startswith("Tag:")]


def check_cp314t(path: Path) -> None:
    """The free-threaded 3.14t wheel, as far as this machine can check it with no 3.14t to
    run it (`make test-ft` runs the tests under a free-threaded 3.13 instead): each tag of
    its WHEEL file is ``cp314-cp314t``, its extension has the suffix 3.14t imports
    (``cpython-314t``) and was built against 3.14t's headers (it calls the reference-count
    functions and critical sections of the free-threaded ABI, and never ``_Py_Dealloc``,
    which a build with the GIL inlines: what pyo3 0.29's code compiles to for each ABI, so a
    pyo3 upgrade may need this list changed), and its metadata is the others'. Raises
    ValueError saying what is wrong."""
    import zipfile

    extension = "pushwire/_core.cpython-314t-x86_64-linux-gnu.so"
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        infos = [n.rsplit("/", 1)[0] for n in names if n.endswith(".dist-info/METADATA")]
        if not infos or f"{infos[0]}/WHEEL" not in names:
            raise ValueError(f"{path.name} has no .dist-info with METADATA and WHEEL")
        fields = wheel.read(f"{infos[0]}/METADATA").decode()
        tags = wheel_tags(wheel.read(f"{infos[0]}/WHEEL").decode())
        if extension not in names:
            shown = [n for n in names if n.endswith(".so")]
            raise ValueError(f"{path.name} has no {extension} (its extensions: {shown})")
        with tempfile.TemporaryDirectory(prefix="pushwire-cp314t-") as t:
            so = Path(wheel.extract(extension, t))
            try:
                listed = subprocess.run(
                    ["nm", "-D", "--undefined-only", str(so)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
            except (OSError, subprocess.CalledProcessError) as e:
                raise ValueError(f"{path.name}'s extension could not be read by nm: {e}") from e
            symbols = set(listed.stdout.split())
    if not tags or any(not tag.startswith("cp314-cp314t-") for tag in tags):
        raise ValueError(f"{path.name}'s WHEEL tags are {tags}, not cp314t's")
    free_threaded = {"PyCriticalSection_Begin", "_Py_IncRef", "_Py_DecRef"}
    if not free_threaded <= symbols or "_Py_Dealloc" in symbols:
        raise ValueError(
            f"{path.name}'s extension was not built for a free-threaded CPython (it calls "
            f"{sorted(free_threaded & symbols)} of {sorted(free_threaded)}, and _Py_Dealloc: "
            f"{'_Py_Dealloc' in symbols})"
        )
    if f"Version: {crate_version()}" not in fields:
        raise ValueError(f"{path.name}'s metadata is not version {crate_version()}")
    print(f"CPython {CP314}t: {path.name} holds {extension}, built for 3.14t", flush=True)


AARCH64 = 183  # ELF's e_machine of AArch64


def check_musl_arm64(path: Path) -> None:
    """The aarch64 musllinux wheel, as far as this machine can check it with no aarch64 musl
    CPython to run it (the release workflow runs it in Alpine's image): each tag of its
    WHEEL file is ``cp313-cp313-musllinux_1_2_aarch64``, its extension has the name that
    CPython imports (``cpython-313-aarch64-linux-musl``), and it is a 64-bit little-endian
    AArch64 ELF that needs musl's libc (``libc.so``, as zig links it) and nothing else but
    libraries the wheel bundles. Raises ValueError saying what is wrong."""
    import zipfile

    tag = "cp" + musl.VERSION.replace(".", "")
    extension = f"pushwire/_core.cpython-{tag[2:]}-aarch64-linux-musl.so"
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
        infos = [n.rsplit("/", 1)[0] for n in names if n.endswith(".dist-info/WHEEL")]
        if not infos:
            raise ValueError(f"{path.name} has no .dist-info/WHEEL")
        tags = wheel_tags(wheel.read(f"{infos[0]}/WHEEL").decode())
        if not tags or any(t != f"{tag}-{tag}-musllinux_1_2_aarch64" for t in tags):
            raise ValueError(f"{path.name}'s WHEEL tags are {tags}, not {tag}'s musllinux aarch64")
        if extension not in names:
            shown = [n for n in names if n.endswith(".so")]
            raise ValueError(f"{path.name} has no {extension} (its extensions: {shown})")
        elf = wheel.read(extension)
        bundled = {n.rsplit("/", 1)[1] for n in names if ".libs/" in n}
    # e_ident: the magic, the class (2: 64-bit), the byte order (1: little-endian); e_machine.
    if elf[:4] != b"\x7fELF" or elf[4:6] != b"\x02\x01":
        raise ValueError(f"{extension} is not a 64-bit little-endian ELF")
    machine = int.from_bytes(elf[18:20], "little")
    if machine != AARCH64:
        raise ValueError(f"{extension} is built for ELF machine {machine}, not AArch64's")
    with tempfile.TemporaryDirectory(prefix="pushwire-musl-arm64-") as t:
        so = Path(t) / "ext.so"
        so.write_bytes(elf)
        try:
            listed = subprocess.run(
                ["readelf", "-d", str(so)], capture_output=True, text=True, check=True
            )
        except (OSError, subprocess.CalledProcessError) as e:
            raise ValueError(f"{extension} could not be read by readelf: {e}") from e
    needed = [
        line.split("[", 1)[1].rstrip("]")
        for line in listed.stdout.splitlines()
        if "(NEEDED)" in line and "[" in line
    ]
    if "libc.so" not in needed or set(needed) - {"libc.so"} - bundled:
        raise ValueError(f"{extension} needs {needed}: not musl's libc alone (and none bundled)")


def check_musl(wheel: Path, tests: list[str]) -> None:
    """The x86_64 musllinux wheel in a fresh venv of the musl CPython that tools/musl.py keeps, with
    nothing else on PATH: installed alone, the quick start, the smoke tests and the
    `pushwire-emulator` command as for every wheel, then the clone's `tests` (the async and
    extension subset) against it, with the test dependencies from the registry (their
    musllinux wheels: the machine's glibc ones would not load)."""
    python = musl.interpreter()
    with tempfile.TemporaryDirectory(prefix="pushwire-dist-musl-") as t:
        tmp = Path(t)
        bin_ = new_venv(str(python), t)
        env = {"PATH": str(bin_), "HOME": t, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        pip_install(bin_, "--only-binary", ":all:", "--no-index", str(wheel), env=env)
        pip_install(bin_, "--only-binary", ":all:", *musl.TEST_DEPS, env=env)
        # The extension the wheel installed is musl's, loaded by a CPython linked to musl.
        run(
            [str(bin_ / "python"), "-c", musl.CHECK_EXTENSION],
            env=env,
            cwd=tmp,
        )
        smoke([str(bin_ / "python")], [str(bin_ / "pushwire-emulator")], env, tmp)
        if tests:
            py313t.installed_tests(str(bin_ / "python"), tests, env)


def second_lane(sdist_python: Optional[str], ahead: bool) -> None:
    """The second lane of `build`: the musl wheels, then pip's build of the sdist with
    ``sdist_python`` if given, then (``ahead``) `make cross`'s aarch64 wheel and `make
    test-ft`'s extension (each tool's own step, as that tool runs it)."""
    build_musl(DIST)
    build_musl(DIST, MUSL_ARM64_TARGET)
    if sdist_python:
        build_sdist_wheel(sdist_python)
    if ahead:
        run([sys.executable, str(ROOT / "tools" / "cross.py"), "arm64-wheel"])
        run([sys.executable, str(ROOT / "tools" / "py313t.py"), "ready"])


def sdist_origin(exe: str) -> str:
    """What a wheel built from dist/'s sdist with ``exe`` is built from: the sdist's SHA-256
    and the interpreter."""
    (sdist,) = DIST.glob("*.tar.gz")
    return f"{hashlib.sha256(sdist.read_bytes()).hexdigest()} {exe}\n"


def build_sdist_wheel(exe: str) -> Path:
    """The sdist built into a wheel by pip alone (its build backend, maturin, from the registry,
    in an isolated environment) in a fresh venv of ``exe`` with the Rust toolchain and a C
    compiler on PATH, the profile and target directory below, and nothing else; into
    SDIST_BUILD, with what it came from in `from`."""
    (sdist,) = DIST.glob("*.tar.gz")
    cargo = shutil.which("cargo") or sys.exit("cargo is not on PATH: the sdist needs Rust")
    cc = shutil.which("cc") or sys.exit("no C compiler: the sdist's C dependencies need one")
    shutil.rmtree(SDIST_BUILD, ignore_errors=True)
    SDIST_BUILD.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="pushwire-sdist-") as tmp:
        bin_ = new_venv(exe, tmp)
        path = os.pathsep.join(
            dict.fromkeys([str(bin_), str(Path(cargo).parent), str(Path(cc).parent)])
        )
        # What this build shows is that the sdist holds all a build needs: the development
        # profile into the development build's target directory, whose registry crates it
        # finds compiled (the crate itself is built anew from the sdist's copy; the release
        # profile is the wheels' above).
        env = {
            "PATH": path,
            "HOME": os.environ.get("HOME", tmp),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "MATURIN_PEP517_ARGS": "--profile dev",
            "CARGO_TARGET_DIR": str(ROOT / "target"),
        }
        # pip's wheel cache keys a wheel by the sdist's path, not its contents: without
        # --no-cache-dir a later build of another tree at the same version would be the first's.
        wheel_args = ["--no-deps", "--no-binary", "pushwire", "--no-cache-dir"]
        wheel_args += ["-w", str(SDIST_BUILD)]
        run(
            [str(bin_ / "python"), "-m", "pip", "wheel", "-q", *wheel_args, str(sdist)],
            env=env,
            cwd=tmp,
        )
    (wheel,) = SDIST_BUILD.glob("pushwire-*.whl")
    (SDIST_BUILD / "from").write_text(sdist_origin(exe))
    return wheel


def check_sdist(exe: str, version: str) -> None:
    """The sdist built by pip alone (`build_sdist_wheel`: by `build --sdist-wheel` if it built
    this sdist for ``exe``, here otherwise), installed in a fresh venv, and used."""
    (sdist,) = DIST.glob("*.tar.gz")
    stamp = SDIST_BUILD / "from"
    built = sorted(SDIST_BUILD.glob("pushwire-*.whl"))
    if len(built) == 1 and stamp.exists() and stamp.read_text() == sdist_origin(exe):
        wheel = built[0]
        print(f"sdist: {wheel.name}, built from it by pip in `make dist`", flush=True)
    else:
        wheel = build_sdist_wheel(exe)
    with tempfile.TemporaryDirectory(prefix="pushwire-sdist-") as tmp:
        bin_ = new_venv(exe, tmp)
        env = {"PATH": str(bin_), "HOME": tmp, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        pip_install(bin_, "--only-binary", ":all:", "--no-index", str(wheel), env=env, cwd=tmp)
        run(
            [
                str(bin_ / "python"),
                "-c",
                "import pushwire; from pushwire.testing import Emulator\n"
                f"assert pushwire.__version__ == {version!r}\n"
                "with Emulator() as emu, emu.client() as c:\n"
                "    emu.create_segment('vip'); assert len(c.segments.list()) == 1",
            ],
            env=env,
            cwd=tmp,
        )
        print(f"sdist: builds with pip and Rust, and works ({sdist.name})", flush=True)


def stop_on_signals() -> None:
    """SIGTERM (make's or CI's) and SIGHUP (a closed terminal) unwind as an exception does,
    with the usual exit status: so a second lane is stopped too (SIGINT already raises)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, _: sys.exit(128 + signum))


if __name__ == "__main__":
    stop_on_signals()
    flags = sys.argv[2:]
    if sys.argv[1:2] == ["build"] and set(flags) <= {"--sdist-wheel", "--ahead"}:
        build(sdist_wheel="--sdist-wheel" in flags, ahead="--ahead" in flags)
    elif sys.argv[1:2] == ["second-lane"]:
        sdist_python = flags[flags.index("--sdist-wheel") + 1] if "--sdist-wheel" in flags else None
        second_lane(sdist_python, ahead="--ahead" in flags)
    elif sys.argv[1:2] == ["build-cp314"] and len(sys.argv) == 3:
        # `make test-py314`: the wheel of this tree, alone in its folder.
        out = Path(sys.argv[2])
        for old in out.glob("*.whl"):
            old.unlink()
        print(f"built {build_cp314(out)}")
    elif sys.argv[1:2] == ["check"]:
        # What follows `check`: the tests run against the x86_64 musl wheel too (pytest's).
        check(sys.argv[2:])
    elif sys.argv[1:] == ["smoke"]:
        # The release workflow, on each platform, after installing a wheel and pytest.
        with tempfile.TemporaryDirectory(prefix="pushwire-smoke-") as tmp:
            emulator = shutil.which("pushwire-emulator") or sys.exit("no pushwire-emulator on PATH")
            smoke([sys.executable], [emulator], dict(os.environ), Path(tmp))
        print(
            f"smoke: the installed wheel works on {sys.platform}, CPython {sys.version.split()[0]}"
        )
    else:
        sys.exit(__doc__)
