"""CPython 3.14 on this machine, where the cp314 wheel is installed and run (`make dist-check`,
`make test-py314`).

    python tools/py314.py root                 # makes the root, or checks the one kept
    python tools/py314.py test WHEEL [ARGS]    # the test suite (or ARGS, pytest's) under 3.14,
                                               # against WHEEL (a cp314 wheel or its folder)

This machine's Debian has no CPython 3.14, and none can be fetched as a binary; Debian's
unstable suite, from the same package registry, has one. `debootstrap --variant=minbase
--include=python3.14,python3.14-venv sid` makes a root (35 to 75 s here; 300 MB, 1.2 GB with
`test`'s venv) whose Python runs natively under chroot. The root is kept outside the clone,
in ~/.cache/pushwire/py314-root ($PUSHWIRE_PY314_ROOT to put it elsewhere), so that later runs
and fresh clones find it made: one that is not whole, or that an older recipe made, is made
anew. Its Python is what Debian unstable had that day; `rm -rf` the folder for a newer one.

A command runs in the root in a mount namespace of its own (`unshare --mount`): /proc, an
empty /tmp and /dev/shm, this machine's resolv.conf, hosts and certificate bundle (so pip
reaches the registry as the machine does), and the folders it needs bound at their own paths,
so that a path means the same inside as outside. The mounts end with the namespace, when the
command ends, however it ends: nothing is left mounted in the kept root, or over the clone.

`test` installs requirements-dev.txt from the registry in a venv kept in the root (remade
when that file changes), then the wheel, and runs pytest from a scratch folder with the clone
bound read-only: the wheel is what is tested, never the development build. The clone's
target/ is hidden from it: the cargo-built emulator is the development build's, and its
tests skip as not built. What else cannot run in the root (Node, a browser, Redis; a wheel
built with cargo, CANNOT_RUN below) skips with the reason, which pytest's -ra prints.

It needs root, unshare, chroot and debootstrap (tools/system_deps.sh installs debootstrap
where apt-get is). Without them it fails, saying why: CI must not pass with 3.14 unchecked.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUITE = "sid"
PACKAGES = ["python3.14", "python3.14-venv", "ca-certificates"]
PYTHON = "/usr/bin/python3.14"
MIRROR = os.environ.get("PUSHWIRE_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# Written last when a root is made (beside its place, then moved there whole), and compared
# when it is used: a folder there without it was not made here and is left alone; a root of
# another recipe, or whose Python does not run, is made anew.
MARKER = ".pushwire-py314"
RECIPE = f"debootstrap --variant=minbase --include={','.join(PACKAGES)} {SUITE}\n"
# Inside the root: the venv of `test`, and the stamp of the requirements it holds.
DEV_VENV = "/opt/pushwire-dev"
DEV_STAMP = "requirements-dev.sha256"
# The root's files that tools/py314_enter.sh covers with this machine's, for the network and
# the registry: plain files in the root, so that a bind over one stays inside it.
HOST_FILES = ["/etc/resolv.conf", "/etc/hosts", "/etc/ssl/certs/ca-certificates.crt"]
ROOT_CA = HOST_FILES[-1]


def run(cmd: list[str], **kwargs: object) -> None:
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)  # type: ignore[call-overload]


def location() -> Path:
    if os.environ.get("PUSHWIRE_PY314_ROOT"):
        return Path(os.environ["PUSHWIRE_PY314_ROOT"]).resolve()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return (cache / "pushwire" / "py314-root").resolve()


def host_ca() -> str:
    """The certificate bundle this machine's pip trusts (PIP_CERT where it is set)."""
    for candidate in (os.environ.get("PIP_CERT"), ssl.get_default_verify_paths().cafile):
        if candidate and os.path.isfile(candidate):
            return candidate
    sys.exit("py314: no certificate bundle on this machine (PIP_CERT, or OpenSSL's default)")


# ---------------------------------------------------------------------------------------
# Running a command in the root


def enter(root: Path, *mounts: tuple[str, Path]) -> list[str]:
    """The command line to put before a command to run it in `root`, in the caller's working
    folder (which one of `mounts` must show there) and environment. `mounts`, in order:
    ("ro", path) and ("rw", path) bind this machine's folder at the same path, ("hide", path)
    covers one with an empty folder (tools/py314_enter.sh does them)."""
    unshare = shutil.which("unshare") or sys.exit("py314: no unshare (util-linux)")
    specs = [f"{kind}:{path}" for kind, path in mounts]
    return [
        unshare,
        "--mount",
        "--propagation",
        "private",
        "/bin/sh",
        str(REPO / "tools" / "py314_enter.sh"),
        str(root),
        f"ca:{host_ca()}",
        *specs,
        "--",
    ]


# ---------------------------------------------------------------------------------------
# The root


def python_fails(root: Path) -> str:
    """What the root's Python printed when it could not make a venv's parts; "" if it can."""
    out = subprocess.run(
        [*enter(root), PYTHON, "-c", "import ensurepip, ssl, venv"],
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        capture_output=True,
        text=True,
    )
    return "" if out.returncode == 0 else out.stderr.strip() or f"exit {out.returncode}"


def make(root: Path) -> None:
    """A new root at `root`, made beside it and moved there whole."""
    run(["sh", str(REPO / "tools" / "system_deps.sh"), "debootstrap"])
    debootstrap = shutil.which("debootstrap") or sys.exit(
        "py314: no debootstrap (Debian: debootstrap; tools/system_deps.sh installs it as root)"
    )
    # What a run that was stopped while making one left.
    for stale in root.parent.glob(f"{root.name}.new-*"):
        shutil.rmtree(stale)
    new = Path(tempfile.mkdtemp(dir=root.parent, prefix=f"{root.name}.new-"))
    new.chmod(0o755)  # a root folder's mode, not mkdtemp's 0700
    started = time.monotonic()
    cmd = [debootstrap, "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(new)]
    try:
        run([*cmd, MIRROR], stdout=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        sys.exit(f"py314: debootstrap failed: see {new}/debootstrap/debootstrap.log")
    for path in HOST_FILES:
        target = new / path.lstrip("/")
        if target.is_symlink():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()
    failure = python_fails(new)
    if failure:
        sys.exit(f"py314: the root made in {new} has no working {PYTHON}: {failure}")
    (new / MARKER).write_text(RECIPE)
    new.rename(root)
    print(f"py314: made {root} in {time.monotonic() - started:.0f} s", flush=True)


@contextlib.contextmanager
def kept_root() -> Iterator[Path]:
    """The root, made if it is missing or not whole, held for this run alone (another run,
    from this clone or another, waits for it)."""
    # Here, not at the top: tools/dist.py imports this file, and runs on Windows too (smoke).
    import fcntl

    if os.geteuid() != 0:
        sys.exit("py314: the CPython 3.14 root needs root (debootstrap, chroot, mount)")
    root = location()
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = root / MARKER
        if root.exists():
            if not marker.exists():
                sys.exit(
                    f"py314: {root} exists and is not a root that tools/py314.py made: "
                    "remove it, or set PUSHWIRE_PY314_ROOT to another folder"
                )
            if marker.read_text() != RECIPE or python_fails(root):
                print(f"py314: {root} is not whole, or of an older recipe: made anew", flush=True)
                shutil.rmtree(root)
        if not root.exists():
            make(root)
        version = subprocess.run(
            [*enter(root), PYTHON, "-VV"],
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        print(f"py314: {version}, in {root}", flush=True)
        yield root


# ---------------------------------------------------------------------------------------
# The test suite


def dev_venv(root: Path) -> Path:
    """The venv in the root with requirements-dev.txt installed (wheels only: the root has no
    compiler), made anew when that file changes. Its path inside the root."""
    requirements = REPO / "requirements-dev.txt"
    digest = hashlib.sha256(requirements.read_bytes()).hexdigest()
    venv = Path(DEV_VENV)
    stamp = root / DEV_VENV.lstrip("/") / DEV_STAMP
    if stamp.exists() and stamp.read_text() == digest:
        return venv
    shutil.rmtree(root / DEV_VENV.lstrip("/"), ignore_errors=True)
    started = time.monotonic()
    env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
    env.update(PIP_CERT=ROOT_CA, PIP_DISABLE_PIP_VERSION_CHECK="1")
    inside = enter(root, ("ro", REPO))
    run([*inside, PYTHON, "-m", "venv", DEV_VENV], env=env, cwd=REPO)
    pip = [*inside, str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    run([*pip, "--only-binary", ":all:", "-r", str(requirements)], env=env, cwd=REPO)
    stamp.write_text(digest)
    print(f"py314: the dev dependencies installed in {time.monotonic() - started:.0f} s")
    return venv


def the_wheel(given: Path) -> Path:
    wheels = sorted(given.glob("*-cp314-cp314-*.whl")) if given.is_dir() else [given]
    if len(wheels) != 1 or not wheels[0].is_file():
        sys.exit(f"py314: want one cp314 wheel, found {[str(w) for w in wheels]} ({given})")
    return wheels[0].resolve()


def in_repo(arg: str) -> str:
    """A path (or node id) of pytest's command line, relative to the clone, made absolute:
    pytest runs from a scratch folder."""
    path, sep, rest = arg.partition("::")
    if arg.startswith("-") or not (REPO / path).exists():
        return arg
    return str(REPO / path) + sep + rest


def test(wheel: Path, args: list[str]) -> None:
    with kept_root() as root, tempfile.TemporaryDirectory(prefix="pushwire-py314-") as tmp:
        work = Path(tmp).resolve()
        venv = dev_venv(root)
        python = str(venv / "bin" / "python")
        env = {
            "PATH": f"{venv}/bin:/usr/bin:/bin",
            "HOME": str(work),
            "LANG": "C.UTF-8",
            "PIP_CERT": ROOT_CA,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            # Nothing written into the clone (bound read-only) or the kept venv.
            "PYTHONDONTWRITEBYTECODE": "1",
            # This file, as pytest's plugin `py314` (the skips below).
            "PYTHONPATH": str(REPO / "tools"),
        }
        # The wheel, over whatever an earlier run installed.
        install = [python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall"]
        run([*enter(root, ("ro", wheel.parent)), *install, "--no-index", str(wheel)], env=env)
        targets = [in_repo(a) for a in args] or [str(REPO / "tests"), str(REPO / "examples")]
        pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "py314"]
        inside = enter(root, ("ro", REPO), ("hide", REPO / "target"), ("rw", work))
        print(
            f"py314: testing {wheel.name}; the clone's target/ is hidden, so the tests of the "
            "cargo-built emulator (the development build's, not the wheel's) skip as not built",
            flush=True,
        )
        started = time.monotonic()
        try:
            run([*inside, *pytest, *targets], env=env, cwd=work)
        finally:
            print(f"py314: pytest under CPython 3.14 took {time.monotonic() - started:.0f} s")


# ---------------------------------------------------------------------------------------
# pytest's plugin `py314`, loaded by `test` in the root (`-p py314`)

# Tests that cannot run in the root, and why. A test file, or a node id's start.
CANNOT_RUN = {
    "tests/test_packaging.py": (
        "builds its own wheel with cargo, which the 3.14 root has not: the wheel tested here "
        "is the release one, installed as a user installs it"
    ),
}


def pytest_sessionstart(session: object) -> None:
    """The run tests the installed wheel, never a pushwire found in the clone."""
    import pytest

    import pushwire

    if not Path(pushwire.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()):
        pytest.exit(f"pushwire was imported from {pushwire.__file__}, not the wheel", 1)


def pytest_collection_modifyitems(config: object, items: list[object]) -> None:
    import pytest

    for item in items:
        for prefix, reason in CANNOT_RUN.items():
            if item.nodeid.startswith(prefix):  # type: ignore[attr-defined]
                skip = pytest.mark.skip(reason=f"not in the CPython 3.14 root: {reason}")
                item.add_marker(skip)  # type: ignore[attr-defined]


if __name__ == "__main__":
    if sys.argv[1:] == ["root"]:
        with kept_root():
            pass
    elif sys.argv[1:2] == ["test"] and len(sys.argv) >= 3:
        try:
            test(the_wheel(Path(sys.argv[2])), sys.argv[3:])
        except subprocess.CalledProcessError as e:
            # The command run in the root, without the mounts before it.
            cmd = [str(c) for c in e.cmd]
            inner = cmd[cmd.index("--") + 1 :] if "--" in cmd else cmd
            sys.exit(f"py314: {' '.join(inner)} exited {e.returncode}")
    else:
        sys.exit(__doc__)
