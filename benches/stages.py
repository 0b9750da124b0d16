"""Where a sequential call's wall time and CPU time go, stage by stage, for pushwire's typed
``segments.list()`` and pyreqwest's ``SyncClient`` GET and ``json()``, on an idle machine
and with one CPU-bound process per core beside them (issue 59).

    python benches/stages.py [--calls N]    # needs perf (linux-perf); prints a Markdown table

Each (condition, client) runs in a child process under ``perf record -e cpu-clock``, the
emulator in a process of its own (not recorded). The child times its calls (wall and CPU,
every thread of the process); perf's samples, by the symbol they landed in (self time),
split the CPU into stages by the first pattern of ``STAGES`` that the symbol matches. The
wall time the process spent off the CPU (wall minus CPU) is the wait for the answer with
the thread parked. A stage is where the CPU was, not a timer around each step: the seam's
and the result's pyo3 glue, say, are told apart by their symbols' names.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from busy import KEY, cores_busy, timed

from pushwire.testing import EmulatorProcess

# Symbol patterns, first match wins. The wait comes first: the spin's polling and the
# scheduler's work of a park and a wake-up, kernel or not.
STAGES = [
    # pyreqwest's wheel is stripped: its own code (reqwest, hyper, its JSON decode and glue)
    # is one stage.
    ("pyreqwest's extension (stripped: not told apart)", r"_pyreqwest"),
    (
        "the wait: spin, park and wake-up",
        r"busy_poll|yield_now|mio::|epoll|futex|schedule|__switch_to|finish_task_switch"
        r"|vdso|clock_gettime|Timespec>::now"
        r"|hrtimer|pick_next|enqueue|dequeue|ttwu|try_to_wake|select_task|update_curr"
        r"|_raw_spin_unlock_irq|psi_|sched_|tokio::runtime::(park|scheduler|time)",
    ),
    ("the kernel's socket path and system calls", r"\[k\]"),
    ("HTTP client (reqwest, hyper, url)", r"reqwest|hyper|http::|url::|idna|percent_enc|h2::"),
    ("async runtime (tokio, futures)", r"tokio|futures"),
    ("decode (JSON into values)", r"serde|pushwire::model|json|memchr"),
    (
        "the result's build (Python objects)",
        r"bindings::(ops::)?(output|models|page)|IntoPyObject|PyList_|PyDict_|PyUnicode_New"
        r"|PyUnicode_From|PyLong_From|PyTuple_New|_PyObject_GC|PyObject_GC|gc_|dealloc",
    ),
    ("argument reading and the seam (pyo3, pushwire's bindings)", r"pyo3|pushwire"),
    ("Python: the method, the interpreter", r"libpython|python3|_Py|Py[A-Z]"),
    ("allocator, memcpy, libc", r"_rjem_|je_|malloc|free|realloc|libc|memmove|memcpy|memset"),
]
OTHER = "other"


def child(kind: str, base_url: str, calls: int) -> None:
    """Times `calls` sequential calls of one client: (wall us, CPU us) per call as JSON."""
    if kind == "pushwire":
        import pushwire

        client = pushwire.Client(api_key=KEY, base_url=base_url, events_url=base_url)
        call = client.segments.list
    else:
        from pyreqwest.client import SyncClientBuilder

        raw = SyncClientBuilder().default_headers({"Api-Key": KEY}).build()
        url = f"{base_url}/apiv1/segments"

        def call() -> object:
            return raw.get(url).build().send().json()["segments"]

    timed(200, call)
    with perf_enabled():
        wall, cpu = timed(calls, call)
    print(json.dumps({"wall_us": wall, "cpu_us": cpu}))


@contextlib.contextmanager
def perf_enabled() -> Iterator[None]:
    """perf records only while the block runs (not the imports and warm-up): its control
    FIFOs, named by the parent in ``PERF_CTL``, told ``enable`` and ``disable``."""
    ctl_path, ack_path = os.environ["PERF_CTL"].split(",")
    with open(ctl_path, "w") as ctl, open(ack_path) as ack:

        def tell(what: str) -> None:
            ctl.write(what + "\n")
            ctl.flush()
            ack.readline()

        tell("enable")
        try:
            yield
        finally:
            tell("disable")


def recorded(kind: str, base_url: str, calls: int) -> tuple[dict[str, float], dict[str, float]]:
    """One child under perf: its timing, and each stage's share of its samples (percent)."""
    tmp = Path(tempfile.mkdtemp())
    data, ctl, ack = tmp / "perf.data", tmp / "ctl", tmp / "ack"
    os.mkfifo(ctl)
    os.mkfifo(ack)
    cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "1999", "-o", str(data)]
    cmd += ["-D", "-1", "--control", f"fifo:{ctl},{ack}", "--"]
    cmd += [sys.executable, __file__, "--child", kind, base_url, str(calls)]
    env = {**os.environ, "PERF_CTL": f"{ctl},{ack}"}
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    timing = json.loads(done.stdout.strip().splitlines()[-1])
    report = subprocess.run(
        ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "dso,sym"]
        + ["--percentage", "relative", "-g", "none"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    shutil.rmtree(tmp, ignore_errors=True)
    shares: dict[str, float] = {}
    for line in report.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(.*)", line)
        if m:
            name = m.group(2)
            stage = next((s for s, pat in STAGES if re.search(pat, name)), OTHER)
            shares[stage] = shares.get(stage, 0.0) + float(m.group(1))
    return timing, shares


def table(calls: int) -> list[str]:
    kinds = ["pushwire", "pyreqwest"]
    cells: dict[tuple[str, str], tuple[dict[str, float], dict[str, float]]] = {}
    with EmulatorProcess(KEY, record_requests=False) as server:
        for i in range(20):
            server.admin("create_segment", name=f"segment-{i}")
        for condition in ("idle", "busy"):
            with cores_busy(condition == "busy"):
                for kind in kinds:
                    cells[(condition, kind)] = recorded(kind, server.base_url, calls)
    columns = [(c, k) for c in ("idle", "busy") for k in kinds]
    lines = [
        "| stage (us a call) | " + " | ".join(f"{k}, {c}" for c, k in columns) + " |",
        "|---" + "|---:" * len(columns) + "|",
    ]
    for stage in [s for s, _ in STAGES] + [OTHER]:
        row = []
        for col in columns:
            timing, shares = cells[col]
            row.append(f"{timing['cpu_us'] * shares.get(stage, 0.0) / 100:.1f}")
        lines.append(f"| {stage} | " + " | ".join(row) + " |")
    for label, key in (("CPU, all stages", "cpu_us"), ("wall time", "wall_us")):
        row = [f"{cells[col][0][key]:.1f}" for col in columns]
        lines.append(f"| **{label}** | " + " | ".join(row) + " |")
    row = [f"{max(cells[c][0]['wall_us'] - cells[c][0]['cpu_us'], 0):.1f}" for c in columns]
    lines.append("| off the CPU: parked, waiting for the answer | " + " | ".join(row) + " |")
    return lines


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--calls", type=int, default=5000)
    given = cli.parse_args()
    if shutil.which("perf") is None:
        sys.exit("perf is not installed: apt-get install linux-perf")
    print(f"`python benches/stages.py --calls {given.calls}` ({os.cpu_count()} cores)\n")
    print("\n".join(table(given.calls)))


if __name__ == "__main__":
    main()
