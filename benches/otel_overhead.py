"""What tracing costs (issue 38): the time `pushwire.otel` adds to a pushwire call, side by side
with what `opentelemetry-instrumentation-httpx` adds to an httpx call, in the same run.

    python benches/otel_overhead.py                # prints the section
    python benches/otel_overhead.py --update benches/RESULTS.md   # and puts it there

One emulator in its own process (request log off, 20 segments). Each round measures, in
turns, case 1 of `make bench` (sequential `client.segments.list()` on a blocking Client) and
an `httpx.Client` GET of the same route, untraced and then traced (the order swapped every
other round, so the machine's drift hits both alike). Traced means the OpenTelemetry SDK
with an in-memory exporter behind a `SimpleSpanProcessor` (each span exported as it ends, on
the caller's thread) and a `MeterProvider` with an `InMemoryMetricReader`, given to
`PushwireInstrumentor` and `HTTPXClientInstrumentor` alike; both are instrumented and
uninstrumented through their public `instrument()`/`uninstrument()` between runs. What
tracing adds is the traced median less the untraced one.

Then a batch, `events.track_many` of 100,000 events (concurrency 64), untraced and traced
in turns: under tracing it is one span whatever its size, and runs within 2x of its
untraced time (the target).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import logging
import os
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import pushwire
from pushwire.otel import PushwireInstrumentor
from pushwire.testing import EmulatorProcess

KEY = "bench-key"
TITLE = "## Tracing overhead (benches/otel_overhead.py)"
EVENT = {"event_name": "bench_event", "profile_id": "bench-profile", "data": {"n": 1}}


class Tracing:
    """The SDK's providers, in memory, and both instrumentors switched on and off together."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.instrumentors = (PushwireInstrumentor(), HTTPXClientInstrumentor())

    def on(self) -> None:
        for i in self.instrumentors:
            i.instrument(tracer_provider=self.tracer_provider, meter_provider=self.meter_provider)

    def off(self) -> None:
        for i in self.instrumentors:
            i.uninstrument()

    def finished(self) -> int:
        """How many spans ended since the last call (and forgets them)."""
        n = len(self.spans.get_finished_spans())
        self.spans.clear()
        return n


def per_call_us(call: Callable[[], Any], n: int) -> float:
    gc.collect()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - t0) / n * 1e6


def measure(
    server: EmulatorProcess, calls: int, rounds: int, batch: int, batch_rounds: int
) -> tuple[dict[tuple[str, bool], list[float]], dict[bool, list[float]]]:
    """Samples of each case, untraced and traced: us a call, and seconds a batch."""
    tracing = Tracing()
    client = pushwire.Client(api_key=KEY, base_url=server.base_url, events_url=server.events_url)
    hx = httpx.Client(headers={"Api-Key": KEY})
    url = f"{server.base_url}/apiv1/segments"
    cases: dict[str, tuple[Callable[[], Any], int]] = {
        # The call, and the spans one traced call ends (pushwire: the operation's span and
        # its request's CLIENT span; httpx: the request's).
        "pushwire Client segments.list": (client.segments.list, 2),
        "httpx.Client GET /apiv1/segments": (lambda: hx.get(url).json()["segments"], 1),
    }
    samples: dict[tuple[str, bool], list[float]] = {
        (name, traced): [] for name in cases for traced in (False, True)
    }

    def switch(traced: bool) -> None:
        if traced:
            tracing.on()
        else:
            tracing.off()

    def one_round(traced: bool, n: int, keep: bool) -> None:
        switch(traced)
        for name, (call, spans) in cases.items():
            tracing.finished()
            us = per_call_us(call, n)
            got = tracing.finished()
            assert got == (spans * n if traced else 0), (name, traced, got)
            if keep:
                samples[(name, traced)].append(us)

    try:
        for traced in (False, True):  # warm-up: connections open, code paged in
            one_round(traced, max(calls // 10, 50), keep=False)
        for r in range(rounds):
            for traced in (False, True) if r % 2 == 0 else (True, False):
                one_round(traced, calls, keep=True)

        events = [EVENT] * batch
        batch_s: dict[bool, list[float]] = {False: [], True: []}
        for r in range(batch_rounds + 1):
            for traced in (False, True) if r % 2 == 0 else (True, False):
                switch(traced)
                tracing.finished()
                gc.collect()
                t0 = time.perf_counter()
                out = client.events.track_many(events, concurrency=64)
                elapsed = time.perf_counter() - t0
                assert all(e is None for e in out), [e for e in out if e is not None][:3]
                assert tracing.finished() == (1 if traced else 0)
                if r:  # the first round warms up
                    batch_s[traced].append(elapsed)
    finally:
        tracing.off()
        client.close()
        hx.close()
    return samples, batch_s


def fmt_us(x: float) -> str:
    return f"{x:,.1f}"


def section(quick: bool = False, rounds: int = 7) -> list[str]:
    """The Markdown section of benches/RESULTS.md."""
    calls, batch, batch_rounds = (500, 10_000, 2) if quick else (5000, 100_000, 3)
    rounds = 3 if quick else rounds
    started = time.perf_counter()
    load = os.getloadavg()[0]
    # A warning the SDK logs once per instrument() would be noise in the output.
    logging.getLogger("opentelemetry").setLevel(logging.ERROR)
    with EmulatorProcess(KEY, record_requests=False) as server:
        for i in range(20):
            server.admin("create_segment", name=f"segment-{i}")
        samples, batch_s = measure(server, calls, rounds, batch, batch_rounds)
    elapsed = time.perf_counter() - started

    med = {k: statistics.median(v) for k, v in samples.items()}
    names = list(dict.fromkeys(name for name, _ in samples))
    added = {name: med[(name, True)] - med[(name, False)] for name in names}
    p_name, h_name = names
    b_plain, b_traced = statistics.median(batch_s[False]), statistics.median(batch_s[True])
    mode = os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN")
    conventions = (
        f"OTEL_SEMCONV_STABILITY_OPT_IN={mode}"
        if mode
        else "httpx's on its default, the old HTTP conventions"
    )

    lines = [
        TITLE,
        "",
        f"`python benches/otel_overhead.py{' --quick' if quick else ''}` "
        f"({dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {elapsed:.0f} s, "
        f"{os.cpu_count()} cores shared with the emulator, load average {load:.1f} at the "
        "start): one emulator in its own process; "
        f"each round times {calls:,} sequential calls of each client untraced and traced, in "
        f"turns; medians of {rounds} rounds after a warm-up. Traced: the OpenTelemetry SDK, "
        "a `SimpleSpanProcessor` into an `InMemorySpanExporter` and a `MeterProvider` with an "
        "`InMemoryMetricReader`, given to `PushwireInstrumentor` and "
        f"`HTTPXClientInstrumentor` alike ({conventions}). A traced "
        "pushwire call ends 2 spans (the operation's and its request's), an httpx call 1.",
        "",
        "| call | untraced, us/call | traced, us/call | added by tracing, us/call | traced / untraced | runs untraced (min-max) | runs traced (min-max) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        plain, traced = samples[(name, False)], samples[(name, True)]
        lines.append(
            f"| {name} | {fmt_us(med[(name, False)])} | {fmt_us(med[(name, True)])} "
            f"| {fmt_us(added[name])} | {med[(name, True)] / med[(name, False)]:.2f}x "
            f"| {fmt_us(min(plain))}-{fmt_us(max(plain))} "
            f"| {fmt_us(min(traced))}-{fmt_us(max(traced))} |"
        )
    lines += [
        "",
        f"| {batch:,} events, `events.track_many(concurrency=64)` | untraced | traced | traced / untraced |",
        "|---|---|---|---|",
        f"| seconds (median of {batch_rounds}, after a warm-up) | {b_plain:.2f} "
        f"| {b_traced:.2f} | {b_traced / b_plain:.2f}x |",
        f"| events/s | {batch / b_plain:,.0f} | {batch / b_traced:,.0f} | |",
        "",
        "| target | measured | met |",
        "|---|---|---|",
        f"| what tracing adds to a pushwire call <= what it adds to an httpx call "
        f"| {fmt_us(added[p_name])} us vs {fmt_us(added[h_name])} us "
        f"| {'yes' if added[p_name] <= added[h_name] else '**no**'} |",
        f"| a traced batch of {batch:,} events within 2x of its untraced time "
        f"| {b_traced / b_plain:.2f}x | {'yes' if b_traced <= 2 * b_plain else '**no**'} |",
        "",
    ]
    return lines


def update(results: Path, lines: list[str], title: str = TITLE) -> None:
    """Puts the section headed `title` in `results` in place of the one there, or at its
    end."""
    text = results.read_text() if results.exists() else "# Benchmark results\n"
    block = "\n".join(lines).rstrip("\n") + "\n"
    pattern = re.compile(rf"^{re.escape(title)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block + "\n", text, count=1).rstrip("\n") + "\n"
    else:
        text = text.rstrip("\n") + "\n\n" + block
    results.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts, for a smoke run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--update", metavar="RESULTS_MD", help="put the section in this file")
    args = parser.parse_args()
    lines = section(args.quick, args.rounds)
    print("\n".join(lines))
    if args.update:
        update(Path(args.update), lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
