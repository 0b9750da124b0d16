"""Cases 1, 2 and 4 of `make bench` and 10,000 results read, for two builds, alternating.

    make bench-ab BASE=<commit>     # builds both release extensions, then runs this

A change that should not move the speed (a new layout, a refactor) is shown to keep it by
running the two builds in turns on the same emulator in one sitting, so the machine's drift
hits both alike: A, B, A, B, ... Each run is a fresh interpreter that imports one build from
its `python/` folder, warms up, and measures

- case 1: sequential `client.segments.list()` on a blocking Client, microseconds a call;
- case 2: `events.track` on an AsyncClient, 64 in flight, requests a second;
- case 4: `triggers.list(limit=500)` read into results (as `make bench`'s case 4), ms a call;
- 10k rows: all of 10,000 triggered campaigns read into results (`triggers.iter`, 20 pages
  of 500), ms for the whole;
- the emulator's scale cases (`--scale N`, 1,000,000 by default; 0 leaves them out), in the
  same fresh interpreter after the client's: N subscribers generated, us each; the
  targeted broadcast of `benches/emulator_scale.py`, ms and ns a delivery; the state saved
  and read back, ms.

The base commit is checked out as a detached worktree under target/ab-base and its release
extension built there with cargo, in the tree's own target directory (the dependencies are
built once for both), and copied into the worktree's package.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY = "bench-key"


MEASURES = {
    "case1_us": ("case 1 us/call", "{:.2f}"),
    "case2_rps": ("case 2 req/s", "{:,.0f}"),
    "case4_ms": ("case 4 ms/call", "{:.2f}"),
    "rows_ms": ("10k rows ms", "{:.1f}"),
}
SCALE_MEASURES = {
    "generate_us": ("generated us/subscriber", "{:.3f}"),
    "broadcast_ms": ("targeted broadcast ms", "{:.1f}"),
    "delivery_ns": ("ns/delivery", "{:.0f}"),
    "save_ms": ("save ms", "{:,.0f}"),
    "load_ms": ("load ms", "{:,.0f}"),
}
TRIGGERS = 10_000


def child(base_url: str, events_url: str, n_seq: int, n_conc: int, scale: int) -> None:
    import pushwire

    client = pushwire.Client(api_key=KEY, base_url=base_url, events_url=events_url)
    for _ in range(n_seq // 10):
        client.segments.list()
    t0 = time.perf_counter()
    for _ in range(n_seq):
        client.segments.list()
    seq_us = (time.perf_counter() - t0) / n_seq * 1e6

    n_dec = 40
    for _ in range(5):
        client.triggers.list(limit=500)
    t0 = time.perf_counter()
    for _ in range(n_dec):
        client.triggers.list(limit=500)
    dec_ms = (time.perf_counter() - t0) / n_dec * 1e3
    rows = []
    for _ in range(3):
        t0 = time.perf_counter()
        read = list(client.triggers.iter(limit=500))
        rows.append((time.perf_counter() - t0) * 1e3)
        assert len(read) == TRIGGERS, len(read)
    client.close()

    async def concurrent(n: int) -> float:
        aclient = pushwire.AsyncClient(api_key=KEY, base_url=base_url, events_url=events_url)
        per = n // 64

        async def worker() -> None:
            for _ in range(per):
                await aclient.events.track("bench_event", profile_id="bench", data={"n": 1})

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(64)))
        rate = per * 64 / (time.perf_counter() - t0)
        await aclient.aclose()
        return rate

    asyncio.run(concurrent(640))
    rate = asyncio.run(concurrent(n_conc))
    out = {"case1_us": seq_us, "case2_rps": rate, "case4_ms": dec_ms, "rows_ms": min(rows)}
    if scale:
        import emulator_scale

        out.update(emulator_scale.core_scale(scale))
    print(json.dumps({"file": pushwire.__file__, **out}))


def build_base(commit: str) -> Path:
    """The base commit's package folder, with its release extension built in."""
    tree = ROOT / "target" / "ab-base"
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = tree / "python" / "pushwire" / f"_core{suffix}"
    rev = ["git", "rev-parse", f"{commit}^{{commit}}"]
    want = subprocess.run(rev, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    if built.exists():
        have = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True
        )
        if have.stdout == want:
            return tree / "python"
    if tree.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True)
    env = {
        **os.environ,
        "CARGO_TARGET_DIR": str(ROOT / "target"),
        "PYO3_PYTHON": sys.executable,
    }
    features = "python,pyo3/extension-module"
    cmd = ["cargo", "build", "--release", "--lib", "--features", features]
    subprocess.run(cmd, cwd=tree, env=env, check=True)
    shutil.copy(
        ROOT / "target" / "release" / "libpushwire.so",
        tree / "python" / "pushwire" / f"_core{suffix}",
    )
    return tree / "python"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the commit to compare with")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5000, help="case 1's calls a run")
    ap.add_argument("--events", type=int, default=20000, help="case 2's events a run")
    ap.add_argument("--scale", type=int, default=1_000_000, help="subscribers generated a run")
    ap.add_argument("--child", nargs=2, metavar=("BASE_URL", "EVENTS_URL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child, args.calls, args.events, args.scale)
        return 0

    from run import seed_triggers

    from pushwire.testing import EmulatorProcess

    builds = {f"base {args.base}": build_base(args.base), "this tree": ROOT / "python"}
    measures = {**MEASURES, **(SCALE_MEASURES if args.scale else {})}
    samples: dict[str, dict[str, list[float]]] = {b: {k: [] for k in measures} for b in builds}
    with EmulatorProcess(KEY, record_requests=False) as server:
        for i in range(21):
            server.admin("create_segment", name=f"segment-{i}")
        seed_triggers(server, TRIGGERS)
        for r in range(args.rounds):
            for name, path in builds.items():
                env = {**os.environ, "PYTHONPATH": str(path)}
                cmd = [
                    sys.executable,
                    __file__,
                    "--base",
                    args.base,
                    "--child",
                    server.base_url,
                    server.events_url,
                ]
                cmd += ["--calls", str(args.calls), "--events", str(args.events)]
                cmd += ["--scale", str(args.scale)]
                out = json.loads(
                    subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
                )
                if not out["file"].startswith(str(path)):
                    raise RuntimeError(f"{name} imported pushwire from {out['file']}, not {path}")
                for k in measures:
                    samples[name][k].append(out[k])
                shown = ", ".join(
                    f"{label} {fmt.format(out[k])}" for k, (label, fmt) in measures.items()
                )
                print(f"round {r + 1} {name}: {shown}", flush=True)
    print()
    print(
        "| build | "
        + " | ".join(f"{label}: median (min-max)" for label, _ in measures.values())
        + " |"
    )
    print("|---" * (len(measures) + 1) + "|")
    for name, s in samples.items():
        cells = []
        for k, (_, fmt) in measures.items():
            v = s[k]
            cells.append(
                f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"
            )
        print(f"| {name} | " + " | ".join(cells) + " |")
    base, this = samples.values()
    for k, (label, _) in measures.items():
        ratio = statistics.median(this[k]) / statistics.median(base[k])
        print(f"{label}: this tree / base = {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
