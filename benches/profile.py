"""Where the time goes: case 1 (one call at a time) layer by layer, from wrk's round trip
through Rust alone (`benches/floor.rs`) to the Python call; the concurrent cases (2 and 3)
as CPU per request in the client and in the emulator; and the client's CPU by library and
symbol (perf, when installed) for all three.

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
from typing import Optional

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


def hot_frames(target: str, env: Optional[dict[str, str]] = None) -> list[str]:
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
        env={**os.environ, **(env or {})},
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


SEQ_CALLS = 5_000


def sequential(base_url: str, n: int) -> tuple[float, float]:
    """`Client.segments.list()` n times in a row: microseconds per call, and the client's CPU
    per call (the same as the time while its thread spins)."""
    client = pushwire.Client(api_key=run.KEY, base_url=base_url)
    for _ in range(n // 10):
        client.segments.list()
    me = psutil.Process()
    c0, t0 = cpu(me), time.perf_counter()
    for _ in range(n):
        client.segments.list()
    t1, c1 = time.perf_counter(), cpu(me)
    return (t1 - t0) / n * 1e6, (c1 - c0) / n * 1e6


def sequential_in_child(server: EmulatorProcess, spin_us: Optional[int]) -> tuple[float, float]:
    """[`sequential`] in a process of its own: the spin is set once per process."""
    env = dict(os.environ)
    if spin_us is not None:
        env["PUSHWIRE_SPIN_US"] = str(spin_us)
    out = subprocess.run(
        [sys.executable, __file__, "--sequential", server.base_url],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.split()
    return float(out[0]), float(out[1])


def rust_floors(server: EmulatorProcess) -> dict[str, float]:
    """`benches/floor.rs`'s medians (reqwest alone, pushwire's core), built in release."""
    build = subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--example", "floor"],
        cwd=run.HERE.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    binary = run.HERE.parent / "target" / "release" / "examples" / "floor"
    if build.returncode != 0 or not binary.exists():
        return {}
    out = subprocess.run(
        [str(binary), server.base_url, run.KEY, str(SEQ_CALLS)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {
        name: float(median) for name, median, _ in (line.split("\t") for line in out.splitlines())
    }


def case_one(server: EmulatorProcess) -> list[str]:
    url = f"{server.base_url}/apiv1/segments"
    floor = 1e6 / run.wrk(url, 1, 4) if run.ensure_wrk() else float("nan")
    rust = rust_floors(server)
    spun, _ = sequential_in_child(server, None)
    parked, parked_cpu = sequential_in_child(server, 0)

    def row(layer: str, us: Optional[float], note: str = "") -> str:
        if us is None:
            return f"| {layer} | (not measured: cargo build --release --example floor failed) | | |"
        return f"| {layer} | {us:.1f} | {us / floor:.2f}x | {note} |"

    return [
        "| layer | us/call | / wrk floor | |",
        "|---|---|---|---|",
        row("wrk, 1 connection (the round-trip floor)", floor),
        row("reqwest alone (Rust, no Python: one GET, a `Value` parse)", rust.get("reqwest alone")),
        row(
            "pushwire core (Rust, no Python: `segments::list`, typed)",
            rust.get("pushwire core"),
            "what the pinned HTTP stack allows",
        ),
        row("pushwire `Client.segments.list()` (Python)", spun, "target: <= 1.5x"),
        row(
            "the same, spin off (`PUSHWIRE_SPIN_US=0`)",
            parked,
            f"client CPU {parked_cpu:.1f} us/call",
        ),
    ]


def child(target: str) -> None:
    server = run.start_emulator()
    n = N * 5  # long enough that start-up and imports are noise in the profile
    try:
        if target == "sequential":
            # The 21 segments case 1 lists (run.seed's triggers would only add start-up).
            for i in range(21):
                server.admin("create_segment", name=f"segment-{i}")
            sequential(server.base_url, SEQ_CALLS * 10)
        elif target == "async":
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
        run.seed(server)
        seq_rows = case_one(server)
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
        "# Where the time goes (cases 1, 2 and 3)",
        "",
        "## Case 1: one call at a time, layer by layer",
        "",
        f"`python benches/profile.py`, {os.cpu_count()} cores, {SEQ_CALLS:,} sequential "
        "`GET /apiv1/segments` (21 segments) per run, against the emulator in its own process, "
        "release build. The Rust rows are `benches/floor.rs`, which polls with the same spin "
        "as the extension's blocking calls.",
        "",
        *seq_rows,
        "",
        "## Cases 2 and 3: CPU per request",
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
        "",
        "## The client's CPU, case 1 (spin off, so that the profile is the call's work, not its spinning)",
        "",
        "```",
        *hot_frames("sequential", {"PUSHWIRE_SPIN_US": "0"}),
        "```",
    ]
    Path(run.HERE / "PROFILE.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "--sequential":
        per_call, cpu_per_call = sequential(sys.argv[2], SEQ_CALLS)
        print(per_call, cpu_per_call)
    else:
        main()
