"""A CPython 3.13 linked to musl libc on this glibc machine, where the musllinux wheel is
installed and run (`make dist-check`, tools/dist.py).

    python tools/musl.py interpreter      # makes it, or checks the one kept

No musl CPython can be fetched as a binary here (Debian ships none, no other registry is
reachable), so it is built from Debian trixie's source packages, their upstream tarballs
(`apt-get source --download-only` through tools/py313t.py's deb-src line): musl itself, then
zlib, bzip2, xz-utils, libffi, sqlite3 and OpenSSL as static libraries compiled with its
musl-gcc, then python3.13 against them: about 5 minutes on two cores, 430 MB. musl and the
libraries stay beside it (musl/, deps/), for what is built with it later. It is kept outside
the clone, in ~/.cache/pushwire/musl-py313 ($PUSHWIRE_MUSL_PY to put it elsewhere), marked
with its recipe once whole; a folder without the mark is made anew.

The interpreter is dynamically linked, so it loads extension modules, and pip's tags for it
are musllinux_1_2_x86_64 and older. What the build needs beyond the sources:
- its own musl (1.2.5, loaded from musl/lib), not Debian bookworm's (1.2.3): that one does
  not apply the packed relative relocations (DT_RELR, musl 1.2.4 on) of the libstdc++ and
  libgcc_s that musllinux wheels bundle (numpy's, pandas's), which crash on import.
- a compiler wrapper, bin/musl-cc: CPython's configure asks the compiler its multiarch and
  stops if that differs from the triplet it finds (gcc answers x86_64-linux-gnu); and
  musl-gcc leaves out /usr/include, where libffi, OpenSSL and CPython find <linux/...>: the
  wrapper adds links to the kernel's headers (musl/kernel), after musl's own.
- autoreconf for libffi (its Debian tarball has no configure), tclsh for sqlite3's.
- OpenSSL's folder is /etc/ssl, so it finds Debian's certificates as the system's does.
- PKG_CONFIG_LIBDIR=deps/lib/pkgconfig, so nothing of the machine's glibc is linked in.
- each version of a source package the index lists is tried until one downloads: the mirror
  has been seen to lack the files of the newest.

It needs root and apt-get the first time (the deb-src line, gcc and the build's tools).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import py313t  # noqa: E402  (tools/ is not a package)

VERSION = "3.13"
BUILD_DEPS = ["gcc", "make", "pkgconf", "dpkg-dev", "xz-utils", "perl", "tcl", "autoconf"]
BUILD_DEPS += ["automake", "libtool", "libltdl-dev"]
MARKER = ".pushwire-musl"
RECIPE = (
    "trixie musl; trixie zlib bzip2 xz-utils libffi sqlite3 openssl, static, with its musl-gcc;"
    " trixie python3.13 ./configure --with-ensurepip=install\n"
)
# What the async and extension tests (`make dist-check`) need beyond pytest: each has a
# musllinux wheel, or no compiled part.
TEST_DEPS = [*py313t.TEST_DEPS, "tqdm>=4.66", "polars>=1", "nbclient>=0.10", "ipykernel>=6.29"]
TEST_DEPS += ["mypy>=1.11", "pandas-stubs"]
# Run in the interpreter: whether musl is its libc, as pip sees it (the executable's loader is
# musl's, 1.2 or newer: pip asks it) and as it runs (glibc is not loaded).
ON_MUSL = (
    "from pip._vendor.packaging.tags import sys_tags\n"
    "assert any(t.platform == 'musllinux_1_2_x86_64' for t in sys_tags()), 'no musllinux tag'\n"
    "maps = open('/proc/self/maps').read()\n"
    "assert 'libc.so.6' not in maps, 'glibc is loaded'\n"
)
CHECK = (
    "import bz2, ctypes, hashlib, lzma, sqlite3, ssl, zlib\n"
    "ssl.create_default_context(); ctypes.CDLL(None).getpid(); hashlib.sha256(b'')\n" + ON_MUSL
)
# Run in a venv where the musllinux wheel is installed: its extension is loaded, under musl.
CHECK_EXTENSION = (
    "import os, pushwire._core as core\n"
    + ON_MUSL
    + "assert os.path.realpath(core.__file__) in maps, core.__file__\n"
    "print('musl:', core.__file__)\n"
)
WRAPPER = """#!/bin/sh
# musl-gcc, telling CPython's configure musl's multiarch, with the kernel's headers after musl's.
[ "$1" = --print-multiarch ] && {{ echo x86_64-linux-musl; exit 0; }}
exec {musl}/bin/musl-gcc "$@" -idirafter {musl}/kernel
"""
KERNEL = {
    "linux": "/usr/include/linux",
    "asm": "/usr/include/x86_64-linux-gnu/asm",
    "asm-generic": "/usr/include/asm-generic",
}
JOBS = f"-j{os.cpu_count() or 2}"


def location() -> Path:
    given = os.environ.get("PUSHWIRE_MUSL_PY")
    return Path(given) if given else Path.home() / ".cache" / "pushwire" / "musl-py313"


def python(prefix: Path) -> Path:
    return prefix / "bin" / f"python{VERSION}"


def works(prefix: Path) -> bool:
    """Whether the kept interpreter is whole, of this recipe, runs on musl with the modules
    that pip and the package need, and is seen by pip as musllinux."""
    marker = prefix / MARKER
    if not marker.exists() or marker.read_text() != RECIPE:
        return False
    return subprocess.run([str(python(prefix)), "-c", CHECK], capture_output=True).returncode == 0


def fetch(package: str, tmp: Path) -> Path:
    """The upstream source of trixie's `package`, unpacked in tmp/src; its folder."""
    listed = subprocess.run(
        ["apt-cache", "showsrc", "--only-source", package],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    versions = [line.split()[1] for line in listed.splitlines() if line.startswith("Version:")]
    for version in versions:
        download = tmp / "apt" / package
        shutil.rmtree(download, ignore_errors=True)
        download.mkdir(parents=True)
        command = ["apt-get", "source", "-qq", "--download-only", f"{package}={version}"]
        try:
            py313t.run(command, cwd=download)
        except subprocess.CalledProcessError:
            continue  # this version's files are not on the mirror: the next one listed
        (orig,) = (p for p in download.glob("*.orig.tar.*") if p.suffix != ".asc")
        src = tmp / "src"
        src.mkdir(exist_ok=True)
        before = set(src.iterdir())
        py313t.run(["tar", "xf", str(orig)], cwd=src)
        (unpacked,) = set(src.iterdir()) - before
        return unpacked
    sys.exit(f"tools/musl.py: no version of the source package {package} could be downloaded")


def recipes(musl: Path, deps: Path, cc: Path) -> dict[str, list[list[str]]]:
    """The commands that build musl (with the machine's gcc) into musl, then each library,
    static and position-independent (with musl's), into deps."""
    pic = "CFLAGS=-O2 -fPIC"
    make, install = ["make", "-s", JOBS], ["make", "-s", "install"]
    configure = ["./configure", "-q", f"--prefix={deps}", f"--libdir={deps}/lib", pic]
    configure += ["--disable-shared", "--with-pic"]
    return {
        "musl": [
            ["env", "CC=gcc", "./configure", f"--prefix={musl}", f"--syslibdir={musl}/lib"],
            make,
            install,
        ],
        "zlib": [["env", pic, "./configure", "--static", f"--prefix={deps}"], make, install],
        "bzip2": [
            [*make, f"CC={cc}", pic, "libbz2.a"],
            ["install", "-m644", "-Dt", f"{deps}/lib", "libbz2.a"],
            ["install", "-m644", "-Dt", f"{deps}/include", "bzlib.h"],
        ],
        "xz-utils": [
            [*configure, "--disable-scripts", "--disable-doc", "--disable-nls", "--disable-xz"]
            + ["--disable-xzdec", "--disable-lzmadec", "--disable-lzmainfo"],
            make,
            install,
        ],
        "libffi": [
            ["autoreconf", "-fi"],
            [*configure, "--disable-docs", "--disable-multi-os-directory"],
            make,
            install,
        ],
        "sqlite3": [[*configure, "--disable-tcl", "--disable-readline"], make, install],
        "openssl": [
            ["./Configure", "linux-x86_64", "no-shared", "no-tests", "no-docs", "no-apps"]
            + [f"--prefix={deps}", "--libdir=lib", "--openssldir=/etc/ssl"],
            [*make, "build_libs"],
            ["make", "-s", "install_dev"],
        ],
    }


def build(prefix: Path, tmp: Path) -> None:
    """musl into prefix/musl, the libraries into prefix/deps, then CPython into prefix, from
    sources unpacked in tmp."""
    musl, deps = prefix / "musl", prefix / "deps"
    (musl / "kernel").mkdir(parents=True)
    for name, target in KERNEL.items():
        (musl / "kernel" / name).symlink_to(target)
    cc = prefix / "bin" / "musl-cc"
    cc.parent.mkdir(parents=True)
    cc.write_text(WRAPPER.format(musl=musl))
    cc.chmod(0o755)
    env = {**os.environ, "CC": str(cc), "PKG_CONFIG_LIBDIR": f"{deps}/lib/pkgconfig"}
    env.pop("CFLAGS", None)  # OpenSSL's Configure would take it in place of its own
    for package, commands in recipes(musl, deps, cc).items():
        src = fetch(package, tmp)
        for command in commands:
            py313t.run(command, cwd=src, env=env)
    src = fetch("python3.13", tmp)
    configure = ["./configure", "-q", f"--prefix={prefix}", "--with-ensurepip=install"]
    configure += [f"--with-openssl={deps}", f"CPPFLAGS=-I{deps}/include", f"LDFLAGS=-L{deps}/lib"]
    py313t.run(configure, cwd=src, env=env)
    py313t.run(["make", "-s", JOBS], cwd=src, env=env)
    py313t.run(["make", "-s", "install"], cwd=src, env=env)


def interpreter() -> Path:
    """The musl interpreter, made if the one kept is missing or not whole."""
    prefix = location()
    if works(prefix):
        return python(prefix)
    py313t.ready_to_build("tools/musl.py", BUILD_DEPS)
    shutil.rmtree(prefix, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="pushwire-musl-") as tmp:
        build(prefix, Path(tmp))
    (prefix / MARKER).write_text(RECIPE)
    if not works(prefix):
        sys.exit(f"tools/musl.py: the interpreter made in {prefix} fails its check:\n{CHECK}")
    return python(prefix)


def main() -> None:
    if sys.argv[1:] == ["interpreter"]:
        print(interpreter())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
