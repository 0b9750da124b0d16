"""Where the time goes in the concurrent cases (2 and 3): CPU per request in the client and
in the emulator, and the client's CPU by library and symbol (perf, when installed).

    python benches/profile.py        # writes benches/PROFILE.md
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402

import pushwire  # noqa: E402
from pushwire.testing import EmulatorProcess  # noqa: E402

N = 40_000


def cpu(p: psutil.Process) -> float:
    t = p.cpu_times()
    return t.user + t.system


def measure(label: str, fn, server: EmulatorProcess) -> str:  # type: ignore[no-untyped-def]
    me, emu = psutil.Process(), psutil.Process(server.pid)
    c0, s0, t0 = cpu(me), cpu(emu), time.perf_counter()
    fn()
    c1, s1, t1 = cpu(me), cpu(emu), time.perf_counter()
    wall = t1 - t0
    return (
        f"| {label} | {N / wall:,.0f} | {(c1 - c0) / N * 1e6:.1f} | {(s1 - s0) / N * 1e6:.1f} "
        f"| {(c1 - c0 + s1 - s0) / wall:.2f} |"
    )


def hot_frames(target: str) -> list[str]:
    """The client's CPU by thread, by component and its hottest symbols, from `perf record -e cpu-clock`
    of one case run in a child process (the emulator's threads are named pushwire-emulator,
    so the `python` command is the client)."""
    if shutil.which("perf") is None:
        return ["(perf is not installed: apt-get install linux-perf)"]
    data = Path(tempfile.mkdtemp()) / "perf.data"
    subprocess.run(
        ["perf", "record", "-e", "cpu-clock", "-F", "999", "-g", "-o", str(data), "--"]
        + [sys.executable, __file__, "--child", target],
        capture_output=True,
        check=False,
    )
    if not data.exists():
        return ["(perf could not record here)"]

    def report(sort: str) -> list[tuple[float, str]]:
        text = subprocess.run(
            ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--comm", CLIENT]
            + ["--percentage", "relative"]
            + ["--sort", sort, "-g", "none"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        rows = []
        for line in text.splitlines():
            m = re.match(r"\s+([\d.]+)%\s+(.*)", line)
            if m:
                rows.append((float(m.group(1)), m.group(2).rstrip()))
        return rows

    out = ["by thread:", ""]
    out += [f"{pct:6.2f}%  {name}" for pct, name in report("comm")]
    out += ["", "by component:", ""]
    groups: dict[str, float] = {}
    for pct, name in report("dso,sym"):
        group = next((g for g, pat in COMPONENTS if re.search(pat, name)), "other")
        groups[group] = groups.get(group, 0.0) + pct
    out += [f"{pct:6.2f}%  {g}" for g, pct in sorted(groups.items(), key=lambda kv: -kv[1])]
    out += ["", "hottest symbols:", ""]
    out += [f"{pct:6.2f}%  {name[:100]}" for pct, name in report("sym")[:25]]
    return out


# The client process's threads: the caller (`python`) and the I/O threads. The emulator runs
# in a process of its own whose threads are named `pushwire-emulator`.
CLIENT = ",".join(["python"] + [f"pushwire-io-{i}" for i in range(16)])

# Symbol patterns, first match wins.
COMPONENTS = [
    ("kernel (TCP, scheduling, syscalls)", r"\[k\]"),
    (
        "HTTP client (reqwest, hyper, http, url, idna)",
        r"reqwest|hyper|http::|url::|idna|percent_enc",
    ),
    ("async runtime (tokio, futures)", r"tokio|futures|mio::"),
    ("allocator (jemalloc, libc malloc)", r"_rjem_|je_|malloc|free|realloc|arena_|tcache"),
    ("CPython", r"libpython|_Py|Py[A-Z]"),
    ("JSON (serde)", r"serde"),
    ("pushwire's own code", r"pushwire"),
    ("memcpy and other libc", r"libc|memmove|memcpy|memset|memcmp"),
    ("Rust core and bytes", r"core::|alloc::|bytes::|std::"),
]


def child(target: str) -> None:
    server = run.start_emulator()
    n = N * 5  # long enough that start-up and imports are noise in the profile
    try:
        if target == "async":
            asyncio.run(run.pushwire_concurrent(server, n, 64))
        else:
            client = pushwire.Client(
                api_key=run.KEY, base_url=server.base_url, events_url=server.events_url
            )
            client.events.track_many([run.EVENT] * n, concurrency=64)
    finally:
        server.close()


def main() -> None:
    server = run.start_emulator()
    client = pushwire.Client(
        api_key=run.KEY, base_url=server.base_url, events_url=server.events_url
    )
    try:
        rows = [
            measure(
                "2. AsyncClient, 64 in flight",
                lambda: asyncio.run(run.pushwire_concurrent(server, N, 64)),
                server,
            ),
            measure(
                "3. track_many, concurrency 64",
                lambda: client.events.track_many([run.EVENT] * N, concurrency=64),
                server,
            ),
        ]
        wrk_rate = (
            run.wrk(
                f"{server.events_url}/api/v1/events", 64, 5, str(run.HERE / "wrk" / "post_json.lua")
            )
            if run.ensure_wrk()
            else 0.0
        )
        emu_before = cpu(psutil.Process(server.pid))
    finally:
        server.close()
    lines = [
        "# Where the time goes (cases 2 and 3)",
        "",
        f"`python benches/profile.py`, {os.cpu_count()} cores, {N:,} events per case, release build.",
        "",
        "| case | req/s | client CPU us/req | emulator CPU us/req | cores busy |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"wrk on the same endpoint, 64 connections: {wrk_rate:,.0f} req/s (wrk itself is a few us of CPU a request).",
        f"(emulator CPU total at the end: {emu_before:.1f} s)",
        "",
        "## The client's CPU, case 3 (perf, cpu-clock, self time: by thread, by component, then by symbol; the client process only)",
        "",
        "```",
        *hot_frames("batch"),
        "```",
        "",
        "## The client's CPU, case 2",
        "",
        "```",
        *hot_frames("async"),
        "```",
    ]
    Path(run.HERE / "PROFILE.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
