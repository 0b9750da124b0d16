"""The other platforms, built and exercised on this Linux x86_64 machine (`make cross`).

    python tools/cross.py windows   # MinGW build; the Rust tests and the emulator under wine
    python tools/cross.py arm64     # a manylinux2014 aarch64 wheel, run under qemu-user
    python tools/cross.py macos     # the crate and the extension checked for both Macs
    python tools/cross.py all       # the three
    python tools/cross.py arm64-wheel  # only the aarch64 wheel's build (`make dist`'s --ahead)

Windows (x86_64-pc-windows-gnu, Debian's mingw-w64): the extension and the standalone
emulator pass clippy and link; the Rust tests (the client core against the emulator, over
loopback: `tests/client_core.rs`) run under Debian's wine64, and raw HTTP requests are
answered by `pushwire-emulator.exe` under wine. Nothing here needs a Windows Python: the
extension links against an import library pyo3 writes itself.

aarch64 Linux: the wheel is built as the release workflow builds it (maturin, zig as the
linker, manylinux2014), installed for an arm64 Debian's own CPython 3.11 (an unpacked
`debootstrap --foreign` root, kept in target/cross/), and that interpreter runs under
qemu-aarch64-static: the quick start, the smoke tests of `make dist-check`, and the
`pushwire-emulator` command.

macOS (aarch64 and x86_64): `cargo check` of the crate with the extension and of the
standalone emulator, zig compiling the C parts. A wheel cannot be linked here: the crate
links Apple's Security and CoreFoundation frameworks (the platform's certificate verifier),
which only the macOS SDK has; the release workflow builds the macOS wheels on macOS.

The Debian packages each part needs are installed by tools/system_deps.sh where the machine
allows; a part whose tools are missing says so and fails, as CI must not pass without it.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dist  # noqa: E402  (tools/ is not a package)

ROOT = dist.ROOT
WORK = ROOT / "target" / "cross"
WINDOWS = "x86_64-pc-windows-gnu"
ARM64 = "aarch64-unknown-linux-gnu"
MACS = ["aarch64-apple-darwin", "x86_64-apple-darwin"]
# The Python the cross-built extension is checked against (pyo3 needs a version, not an
# interpreter); arm64's is the one Debian bookworm ships.
PY_VERSION = "3.11"
DEBIAN_MIRROR = os.environ.get("PUSHWIRE_DEBIAN_MIRROR", "http://deb.debian.org/debian")
KEY = "cross-check-key-42"

run = dist.run


def need(*commands: str) -> None:
    missing = [c for c in commands if not shutil.which(c)]
    if missing:
        sys.exit(f"make cross: missing {', '.join(missing)} (tools/system_deps.sh installs them)")


def system_deps(*packages: str) -> None:
    run(["sh", str(ROOT / "tools" / "system_deps.sh"), *packages])


def rust_targets(*targets: str) -> None:
    run(["rustup", "target", "add", *targets], stderr=subprocess.DEVNULL)


# ---------------------------------------------------------------------------------------
# Windows


def wine() -> str:
    """Debian's wine64 installs its launcher outside PATH when the `wine` package is absent."""
    for candidate in (shutil.which("wine64"), "/usr/lib/wine/wine64", shutil.which("wine")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("make cross: no wine64 (Debian: wine64)")


def wine_env() -> dict[str, str]:
    """A wine prefix of its own under target/, quiet, with the ProcessPrng shim first."""
    shim_dir = WORK / "wine"
    shim = shim_dir / "bcryptprimitives.dll"
    source = ROOT / "tools" / "wine" / "process_prng.c"
    if not shim.exists() or shim.stat().st_mtime < source.stat().st_mtime:
        shim_dir.mkdir(parents=True, exist_ok=True)
        run(
            ["x86_64-w64-mingw32-gcc", "-O2", "-shared", "-o", str(shim), str(source), "-ladvapi32"]
        )
    env = dict(os.environ)
    env.update(
        WINEPREFIX=str(shim_dir / "prefix"),
        WINEDEBUG="-all",
        # The shim ahead of wine's own bcryptprimitives; no Mono or Gecko prompts.
        WINEDLLOVERRIDES="bcryptprimitives=n,b;mscoree,mshtml=",
        WINEPATH="Z:" + str(shim_dir).replace("/", "\\"),
    )
    return env


def windows() -> None:
    windows_run(windows_build())


def windows_build() -> dict[str, str]:
    """Everything of `windows` that compiles (clippy, the extension's link, the tests'
    build); the environment the rest runs in."""
    system_deps("gcc-mingw-w64-x86-64", "wine64")
    need("x86_64-w64-mingw32-gcc")
    rust_targets(WINDOWS)
    env = wine_env()
    env["PYO3_CROSS_PYTHON_VERSION"] = PY_VERSION
    target = ["--target", WINDOWS]
    # The extension and the standalone emulator in one pass (one build of the dependencies).
    run(
        ["cargo", "clippy", "-q", *target, "--lib", "--bin", "pushwire-emulator"]
        + ["--features", "python,cli", "--", "-D", "warnings"],
        env=env,
    )
    # The extension links (against pyo3's import library of python311.dll) and exports its
    # module's entry point.
    run(["cargo", "build", "-q", *target, "--lib", "--features", "python"], env=env)
    dll = ROOT / "target" / WINDOWS / "debug" / "pushwire.dll"
    exports = subprocess.run(
        ["x86_64-w64-mingw32-objdump", "-p", str(dll)], capture_output=True, text=True, check=True
    ).stdout
    for needed in ("PyInit__core", f"python{PY_VERSION.replace('.', '')}.dll"):
        if needed not in exports:
            sys.exit(f"make cross: {dll.name} does not name {needed}")
    print(f"windows: the extension links ({dll.name} exports PyInit__core)", flush=True)
    run(["cargo", "test", "-q", *target, "--tests", "--no-run"], env=env)
    return env


def windows_run(env: dict[str, str]) -> None:
    """What `windows` runs under wine, once `windows_build` has compiled it."""
    target = ["--target", WINDOWS]
    launcher = wine()
    wine_boot(launcher, env)
    # The Rust tests (unit and integration, the emulator binary built with them) under wine.
    test_env = dict(env, CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=launcher)
    run(["cargo", "test", "-q", *target, "--tests"], env=test_env)
    exe = ROOT / "target" / WINDOWS / "debug" / "pushwire-emulator.exe"
    emulator_exe_answers(launcher, exe, env)
    print(
        "windows: clippy clean, the extension links, "
        "the Rust tests and the emulator pass under wine"
    )


def wine_boot(launcher: str, env: dict[str, str]) -> None:
    """Makes the wine prefix (`wineboot -i`), wine's errors kept in target/cross/wine/boot.log.

    A first boot can fail for reasons outside this project: the launcher waits at most five
    minutes for wineboot.exe to fill the prefix (copying some 700 MB of DLLs), then goes on
    and fails to load kernel32.dll (exit 53) from a prefix half written; a disk that fills
    fails the same way. A failed boot is reported with wine's own errors and the free disk
    space, the prefix is removed with its wineserver, and it is made once more from nothing:
    the set-up of a tool, as a package install is; every test after it runs once."""
    prefix = Path(env["WINEPREFIX"])
    log = prefix.parent / "boot.log"
    # err lines kept (the boot-event timeout and a failed wineboot start among them).
    boot_env = dict(env, WINEDEBUG="fixme-all")
    server = Path(launcher).parent / "wineserver"
    for attempt in (1, 2):
        print(f"+ {launcher} wineboot -i  (wine's errors: {log})", flush=True)
        with log.open("w") as out:
            done = subprocess.run(
                [launcher, "wineboot", "-i"], env=boot_env, stdout=out, stderr=out, check=False
            )
        if done.returncode == 0:
            return
        free = shutil.disk_usage(prefix.parent).free // 2**20
        tail = log.read_text(errors="replace").splitlines()[-30:]
        print(
            f"make cross: wineboot -i exited {done.returncode} (attempt {attempt}); "
            f"{free} MiB free on the prefix's disk; the end of {log.name}:",
            *tail,
            sep="\n",
            flush=True,
        )
        stop = [str(server) if server.exists() else "wineserver", "-k"]
        subprocess.run(stop, env=env, check=False, stderr=subprocess.DEVNULL)
        shutil.rmtree(prefix, ignore_errors=True)
    sys.exit("make cross: wine could not make its prefix twice running (above: wine's errors)")


def emulator_exe_answers(launcher: str, exe: Path, env: dict[str, str]) -> None:
    """`pushwire-emulator.exe` under wine, on free ports: raw HTTP requests get the spec's
    answers on both interfaces, then closing its standard input stops it with status 0."""
    argv = [launcher, str(exe), "--port", "0", "--api-key", KEY, "--exit-with-parent"]
    print("+ " + " ".join(argv), flush=True)
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        printed = dist.printed_settings(proc, argv)
        main = printed["PUSHWIRE_BASE_URL"]
        events = printed["PUSHWIRE_EVENTS_URL"]
        form = (
            "notification_title=Hi&notification_message=Hello"
            "&notification_url=https%3A%2F%2Fx.example%2F"
        )
        checks = [
            (
                main,
                "GET",
                "/apiv1/segments",
                KEY,
                None,
                200,
                {"success": True, "segments": [], "count": 0},
            ),
            (
                main,
                "GET",
                "/apiv1/segments",
                "wrong-key-1234",
                None,
                401,
                {"success": False, "message": "API KEY Invalid"},
            ),
            (
                main,
                "POST",
                "/apiv1/notifications",
                KEY,
                form,
                200,
                {"success": True, "notification_id": 1},
            ),
            (
                events,
                "POST",
                "/api/v1/events",
                KEY,
                json.dumps({"event_name": "signup", "profile_id": "u1"}),
                200,
                {"error_code": 0, "data": {}},
            ),
        ]
        for base, method, path, key, body, status, want in checks:
            got_status, got = raw(base, method, path, key, body)
            if (got_status, got) != (status, want):
                sys.exit(
                    f"make cross: {method} {path} under wine answered {got_status} {got}, "
                    f"want {status} {want}"
                )
            print(f"windows: {method} {path} -> {got_status} {json.dumps(got)}", flush=True)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            rc = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = -1
    if rc != 0:
        sys.exit(f"make cross: the emulator under wine exited {rc} when its standard input closed")


def raw(base: str, method: str, path: str, key: str, body: str | None) -> tuple[int, object]:
    """One request on a fresh connection, exactly as written; the status and parsed body."""
    host, _, port = base.removeprefix("http://").partition(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    headers = {"api-key": key}
    if body is not None:
        headers["content-type"] = (
            "application/json" if body.startswith("{") else "application/x-www-form-urlencoded"
        )
    conn.request(method, path, body=body, headers=headers)
    answer = conn.getresponse()
    data = json.loads(answer.read())
    conn.close()
    return answer.status, data


# ---------------------------------------------------------------------------------------
# aarch64 Linux


def arm64_root() -> Path:
    """An arm64 Debian bookworm with its python3, unpacked (no second stage: nothing of it
    is configured or run but its Python)."""
    root = WORK / "arm64-root"
    python = root / "usr" / "bin" / f"python{PY_VERSION}"
    if python.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    run(
        [
            "debootstrap",
            "--foreign",
            "--arch=arm64",
            "--variant=minbase",
            "--include=python3",
            "bookworm",
            str(root),
            DEBIAN_MIRROR,
        ],
        stdout=subprocess.DEVNULL,
    )
    for deb in sorted((root / "var" / "cache" / "apt" / "archives").glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    if not python.exists():
        sys.exit(f"make cross: the arm64 root has no {python.name}")
    return root


def arm64() -> None:
    arm64_run(arm64_wheel())


def arm64_wheel() -> Path:
    """The aarch64 wheel, built; its path. In the target directory of `make dist`'s builds for
    other targets, where `make dist DIST_BUILD_ARGS=--ahead` builds it first."""
    rust_targets(ARM64)
    maturin = shutil.which("maturin") or sys.exit("maturin is not installed")
    wheels = WORK / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    # As the release workflow builds it: jemalloc told the largest page size of aarch64
    # kernels (64 KiB), which a cross build cannot probe.
    env = dict(os.environ, CARGO_TARGET_DIR=dist.CROSS_TARGET_DIR, JEMALLOC_SYS_WITH_LG_PAGE="16")
    run(
        [
            maturin,
            "build",
            "--release",
            "--zig",
            "--compatibility",
            "manylinux2014",
            "--target",
            ARM64,
            "--interpreter",
            f"python{PY_VERSION}",
            "--out",
            str(wheels),
        ],
        cwd=ROOT,
        env=env,
    )
    (wheel,) = wheels.glob("*.whl")
    tag = f"cp{PY_VERSION.replace('.', '')}"
    if f"-{tag}-{tag}-" not in wheel.name or "manylinux2014_aarch64" not in wheel.name:
        sys.exit(f"make cross: unexpected wheel {wheel.name}")
    return wheel


def arm64_run(wheel: Path) -> None:
    """The aarch64 ``wheel`` installed for arm64 Debian's CPython and run under qemu."""
    system_deps("qemu-user-static", "debootstrap")
    need("qemu-aarch64-static", "debootstrap", "dpkg")
    root = arm64_root()
    with tempfile.TemporaryDirectory(prefix="pushwire-arm64-") as tmp:
        site = Path(tmp) / "site"
        # Installed for the arm64 interpreter by this machine's pip: the wheel, and pytest
        # for the smoke tests (pure Python), nothing built.
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--target",
                str(site),
                "--platform",
                "manylinux2014_aarch64",
                "--python-version",
                PY_VERSION,
                "--implementation",
                "cp",
                "--only-binary",
                ":all:",
                str(wheel),
                "pytest",
            ],
            env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
        )
        python = [
            "qemu-aarch64-static",
            "-L",
            str(root),
            str(root / "usr" / "bin" / f"python{PY_VERSION}"),
        ]
        guest = {"PATH": "/usr/bin:/bin", "HOME": tmp, "PYTHONPATH": str(site), "LANG": "C.UTF-8"}
        machine = subprocess.run(
            [
                *python,
                "-c",
                "import platform, pushwire._core as c; print(platform.machine(), c.__file__)",
            ],
            env=guest,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        if machine[0] != "aarch64" or "aarch64" not in machine[1]:
            sys.exit(f"make cross: not an arm64 interpreter and extension: {machine}")
        dist.smoke(python, [*python, "-m", "pushwire.emulator"], guest, Path(tmp))
    print(f"arm64: {wheel.name} runs the quick start, the smoke tests and the emulator under qemu")


# ---------------------------------------------------------------------------------------
# macOS


def macos() -> None:
    rust_targets(*MACS)
    zig = [sys.executable, "-m", "ziglang"]
    if subprocess.run([*zig, "version"], capture_output=True).returncode != 0:
        sys.exit("make cross: zig is not installed (pip install ziglang)")
    with tempfile.TemporaryDirectory(prefix="pushwire-zigcc-") as tmp:
        env = dict(os.environ, PYO3_CROSS_PYTHON_VERSION=PY_VERSION)
        # zig carries only part of the macOS SDK's headers, and not <sys/syscall.h>, which
        # jemalloc includes unconditionally (it calls syscall() only where its configure
        # finds it usable, which macOS's deprecated one is not): an empty one stands in,
        # searched after zig's own.
        stubs = Path(tmp) / "stubs"
        (stubs / "sys").mkdir(parents=True)
        (stubs / "sys" / "syscall.h").write_text("/* empty: see tools/cross.py */\n")
        for triple in MACS:
            arch = triple.split("-")[0]
            # The C parts (ring, jemalloc) compiled by zig for the Mac.
            var = triple.replace("-", "_")
            # cc-rs also passes clang's `--target=arm64-apple-macosx`, which zig does not
            # read: the wrapper drops it and names the target zig's way.
            drop_target = (
                'for a do shift; case "$a" in --target=*) ;; *) set -- "$@" "$a";; esac; done'
            )
            # Every arm64 Mac has the crypto extensions (ring's assembly uses them there).
            cpu = " -mcpu=apple_m1" if arch == "aarch64" else ""
            cc = f"cc -target {arch}-macos{cpu} -idirafter {stubs}"
            for tool, command in (("CC", cc), ("AR", "ar")):
                script = Path(tmp) / f"{tool.lower()}-{arch}"
                script.write_text(
                    f'#!/bin/sh\n{drop_target}\nexec {" ".join(zig)} {command} "$@"\n'
                )
                script.chmod(0o755)
                env[f"{tool}_{var}"] = str(script)
        # Both Macs in one pass: the build scripts and macros, compiled for this machine, are
        # built once for the two.
        run(
            ["cargo", "check", "-q", *[a for t in MACS for a in ("--target", t)]]
            + ["--lib", "--bin", "pushwire-emulator", "--features", "python,cli"],
            env=env,
        )
        for triple in MACS:
            print(f"macos: {triple}: the crate, the extension and the emulator check", flush=True)


def every_part() -> None:
    """Windows, arm64 and the Macs, one after another: the aarch64 wheel's build beside the
    Windows ones made the whole slower (each is mostly its dependencies' compiling, which
    keeps both cores busy). `make dist DIST_BUILD_ARGS=--ahead` builds the aarch64 wheel in
    its second lane, beside wheels whose dependencies are compiled already (each spends about
    half its time on one core), once that lane's own builds are done."""
    windows()
    arm64()
    macos()


PARTS = {
    "windows": windows,
    "arm64": arm64,
    "macos": macos,
    "all": every_part,
    "arm64-wheel": arm64_wheel,
}

if __name__ == "__main__":
    chosen = sys.argv[1:] or ["all"]
    if all(c in PARTS for c in chosen):
        for part in chosen:
            PARTS[part]()
    else:
        sys.exit(__doc__)
