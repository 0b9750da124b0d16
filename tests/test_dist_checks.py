"""`make dist-check`'s checks of the wheels no interpreter here can import. The free-threaded
3.14t one: it must take a wheel built for 3.14t and refuse one built for 3.14 with the GIL that
only carries 3.14t's names (its file name, its extension's suffix, its WHEEL tags). The
extensions are shared objects made here with the machine's C compiler, each calling what a
build for its ABI calls."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import dist  # noqa: E402

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("nm") is None,
    reason="needs a C compiler and nm (Debian's build-essential)",
)

# What an extension calls: a free-threaded build calls the reference-count functions and
# critical sections; a build with the GIL inlines both and calls _Py_Dealloc.
FREE_THREADED = "PyCriticalSection_Begin(0); _Py_IncRef(0); _Py_DecRef(0);"
WITH_THE_GIL = "_Py_Dealloc(0);"
NAME = f"pushwire-{dist.crate_version()}-cp314-cp314t-manylinux2014_x86_64.whl"


def extension(tmp: Path, calls: str) -> bytes:
    names = [c.split("(")[0].strip() for c in calls.split(";") if c.strip()]
    source = tmp / "ext.c"
    source.write_text(
        "".join(f"void {n}(void *);\n" for n in names) + f"void PyInit__core(void) {{ {calls} }}\n"
    )
    built = tmp / "ext.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(built), str(source)], check=True)
    return built.read_bytes()


def wheel(tmp: Path, calls: str, tag: str = "cp314-cp314t", suffix: str = "314t") -> Path:
    info = f"pushwire-{dist.crate_version()}.dist-info"
    path = tmp / NAME
    with zipfile.ZipFile(path, "w") as out:
        out.writestr(f"pushwire/_core.cpython-{suffix}-x86_64-linux-gnu.so", extension(tmp, calls))
        out.writestr(f"{info}/METADATA", f"Name: pushwire\nVersion: {dist.crate_version()}\n")
        out.writestr(
            f"{info}/WHEEL",
            f"Wheel-Version: 1.0\nTag: {tag}-manylinux2014_x86_64\n"
            f"Tag: {tag}-manylinux_2_17_x86_64\n",
        )
    return path


def test_a_wheel_built_for_the_free_threaded_abi_is_taken(tmp_path: Path) -> None:
    dist.check_cp314t(wheel(tmp_path, FREE_THREADED))


def test_a_wheel_built_with_the_gil_under_314t_names_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not built for a free-threaded CPython"):
        dist.check_cp314t(wheel(tmp_path, WITH_THE_GIL))


@pytest.mark.parametrize(
    ("tag", "suffix", "refused"),
    [("cp314-cp314", "314t", "WHEEL tags"), ("cp314-cp314t", "314", "has no pushwire/_core")],
)
def test_a_wheel_whose_tags_or_extension_are_not_314ts_is_refused(
    tmp_path: Path, tag: str, suffix: str, refused: str
) -> None:
    with pytest.raises(ValueError, match=refused):
        dist.check_cp314t(wheel(tmp_path, FREE_THREADED, tag=tag, suffix=suffix))


def test_a_wheel_without_its_wheel_file_is_refused_saying_so(tmp_path: Path) -> None:
    built = wheel(tmp_path, FREE_THREADED)
    bare = tmp_path / "bare" / NAME
    bare.parent.mkdir()
    with zipfile.ZipFile(built) as src, zipfile.ZipFile(bare, "w") as out:
        for name in src.namelist():
            if not name.endswith("/WHEEL"):
                out.writestr(name, src.read(name))
    with pytest.raises(ValueError, match="no .dist-info with METADATA and WHEEL"):
        dist.check_cp314t(bare)


# The aarch64 musllinux wheel, which no CPython here can import: it must be an AArch64
# extension named as that CPython imports it, needing musl's libc alone. The extensions are
# made here with the machine's C compiler and marked AArch64 in their ELF header (the
# dynamic section that names what they need reads the same for either machine).
MUSL_ARM64 = f"pushwire-{dist.crate_version()}-cp313-cp313-musllinux_1_2_aarch64.whl"


def elf(
    tmp: Path, libc: str, machine: Optional[int] = dist.AARCH64, also: Optional[str] = None
) -> bytes:
    """An extension needing this machine's glibc or a libc named as musl's (and ``also``, a
    library of that name), marked as built for ``machine``."""
    (tmp / "ext.c").write_text("void PyInit__core(void) {}\n")
    built = tmp / "ext.so"
    (tmp / "stub.c").write_text("void stub(void) {}\n")
    stubs = []
    for name in ["libc.so" if libc == "musl" else None, also]:
        if name is not None:
            stub = tmp / "stubs" / name
            stub.parent.mkdir(exist_ok=True)
            cc = ["cc", "-shared", "-fPIC", "-nostdlib", f"-Wl,-soname,{name}"]
            subprocess.run([*cc, "-o", str(stub), str(tmp / "stub.c")], check=True)
            stubs.append(str(stub))
    glibc = ["-lc"] if libc == "glibc" else ["-nostdlib"]
    cmd = ["cc", "-shared", "-fPIC", "-o", str(built), str(tmp / "ext.c"), *glibc]
    subprocess.run([*cmd, "-Wl,--no-as-needed", *stubs], check=True)
    data = bytearray(built.read_bytes())
    if machine is not None:
        data[18:20] = machine.to_bytes(2, "little")
    return bytes(data)


def musl_wheel(
    tmp: Path,
    extension: bytes,
    tag: str = "cp313-cp313-musllinux_1_2_aarch64",
    bundled: Optional[str] = None,
) -> Path:
    info = f"pushwire-{dist.crate_version()}.dist-info"
    path = tmp / MUSL_ARM64
    with zipfile.ZipFile(path, "w") as out:
        out.writestr("pushwire/_core.cpython-313-aarch64-linux-musl.so", extension)
        if bundled is not None:  # as auditwheel bundles a library: beside the package
            out.writestr(f"pushwire.libs/{bundled}", b"")
        out.writestr(f"{info}/METADATA", f"Name: pushwire\nVersion: {dist.crate_version()}\n")
        out.writestr(f"{info}/WHEEL", f"Wheel-Version: 1.0\nTag: {tag}\n")
    return path


def test_an_aarch64_extension_needing_musls_libc_alone_is_taken(tmp_path: Path) -> None:
    dist.check_musl_arm64(musl_wheel(tmp_path, elf(tmp_path, "musl")))


def test_an_aarch64_extension_needing_a_library_its_wheel_bundles_is_taken(tmp_path: Path) -> None:
    extension = elf(tmp_path, "musl", also="libz-1a2b3c4d.so.1")
    dist.check_musl_arm64(musl_wheel(tmp_path, extension, bundled="libz-1a2b3c4d.so.1"))


def test_an_aarch64_extension_needing_a_library_nothing_bundles_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"needs \['libc.so', 'libssl.so.3'\]"):
        dist.check_musl_arm64(musl_wheel(tmp_path, elf(tmp_path, "musl", also="libssl.so.3")))


@pytest.mark.parametrize(
    ("libc", "machine", "tag", "refused"),
    [
        ("glibc", dist.AARCH64, "cp313-cp313-musllinux_1_2_aarch64", "not musl's libc alone"),
        ("musl", None, "cp313-cp313-musllinux_1_2_aarch64", "ELF machine 62, not AArch64's"),
        ("musl", dist.AARCH64, "cp313-cp313-musllinux_1_2_x86_64", "WHEEL tags"),
    ],
    ids=["glibc", "x86_64", "tag"],
)
def test_a_musl_aarch64_wheel_that_is_not_is_refused_saying_why(
    tmp_path: Path, libc: str, machine: Optional[int], tag: str, refused: str
) -> None:
    with pytest.raises(ValueError, match=refused):
        dist.check_musl_arm64(musl_wheel(tmp_path, elf(tmp_path, libc, machine), tag=tag))
