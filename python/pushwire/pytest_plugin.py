"""The ``pushwire_emulator`` pytest fixture, registered through the ``pytest11`` entry point.

One emulator serves the whole session; each test gets it reset to a fresh state. When a test
that used it fails, its report gains a section, ``pushwire emulator``, with what the emulator
saw during the test (``--pushwire-no-report`` or the ini option ``pushwire_report = false``
leave it out).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any, Callable

import pytest

from pushwire.testing import Emulator

SECTION = "pushwire emulator"
# The most recent entries of each kind the section shows; it says how many it left out.
# Requests in a row that read the same (a retried call, a loop) take one line.
MAX_REQUESTS = 20
READ_REQUESTS = 500
MAX_BROADCASTS = 10
MAX_DELIVERIES = 10
MAX_LINE = 160


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pushwire")
    group.addoption(
        "--pushwire-no-report",
        action="store_true",
        default=False,
        help="leave out of a failed test's report what the pushwire emulator saw during it",
    )
    parser.addini(
        "pushwire_report",
        type="bool",
        default=True,
        help="add what the pushwire emulator saw to the report of a failed test that used it "
        "(default: true)",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    # Asked for by the test or through another fixture: funcargs holds them all. The fixture
    # reset the emulator when the test started, so what it holds now is this test's.
    emu = getattr(item, "funcargs", {}).get("pushwire_emulator")
    if emu is None or not _reporting(item.config):
        return
    report.sections.append((SECTION, _what_it_saw(emu)))


def _reporting(config: pytest.Config) -> bool:
    if config.getoption("pushwire_no_report", default=False):
        return False
    return bool(config.getini("pushwire_report"))


def _what_it_saw(emu: Any) -> str:
    """What the emulator saw since its last reset: its requests, broadcasts and deliveries
    (the most recent of each), and the address of its inspector page. Never raises: an
    emulator that cannot be read (stopped) is said so in the text."""
    lines = []
    try:
        ui_url = getattr(emu, "ui_url", None)
        if ui_url:
            lines.append(f"inspector: {ui_url} (while the test session runs)")
        lines += _seen(emu)
    except Exception as e:
        lines.append(f"(the emulator could not be read: {type(e).__name__}: {e})")
    key = getattr(emu, "api_key", None)
    if isinstance(key, str) and len(key) >= 8:
        # As the request log does: titles and URLs a test made out of the key do not show
        # it (redacted before lines are cut, so that no part of it shows either).
        lines = [line.replace(key, "[redacted]") for line in lines]
    return "\n".join(
        line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…" for line in lines
    )


def _admin(emu: Any) -> Callable[..., Any]:
    """The admin operations: an in-process ``Emulator``'s, or an ``EmulatorProcess``'s."""
    call = getattr(emu, "_call", None) or getattr(emu, "admin", None)
    if call is None:
        raise TypeError(f"{type(emu).__name__} is not an emulator")
    return call  # type: ignore[no-any-return]


def _part(kind: str, total: int, lines: list[tuple[str, int]], limit: int) -> list[str]:
    """A heading and the last ``limit`` lines, each standing for ``count`` entries in a row
    that read the same; a line says how many earlier entries are not shown."""
    if not total:
        return [f"{kind}: none"]
    shown = lines[-limit:]
    out = [f"{kind} ({total}):"]
    earlier = total - sum(count for _, count in shown)
    if earlier:
        out.append(f"  … {earlier} earlier not shown")
    out += [f"  {line}" + (f"  (×{count})" if count > 1 else "") for line, count in shown]
    return out


def _runs(lines: list[str]) -> list[tuple[str, int]]:
    runs: list[tuple[str, int]] = []
    for line in lines:
        if runs and runs[-1][0] == line:
            runs[-1] = (line, runs[-1][1] + 1)
        else:
            runs.append((line, 1))
    return runs


def _seen(emu: Any) -> list[str]:
    call = _admin(emu)

    # The most recent requests, enough of them for a retried call or a loop of the same
    # request to fold into one line.
    total = int(call("requests", meta=True, limit=0)["total"])
    read = max(total - READ_REQUESTS, 0)
    requests = []
    for r in call("requests", meta=True, limit=READ_REQUESTS, offset=read or None)["entries"]:
        query = f"?{r['query']}" if r.get("query") else ""
        fault = f" [fault: {r['fault']}]" if r.get("fault") else ""
        requests.append(f"{r['method']} {r['path']}{query} -> {r['status']}{fault}")
    lines = _part("requests", total, _runs(requests), MAX_REQUESTS)

    broadcasts = []
    for b in call("notifications"):
        request = b.get("request") or {}
        when = request.get("valid_from_utc")
        at = f" for {when}" if when and b.get("status") == "scheduled" else ""
        title = _short(request.get("notification_title"))
        broadcasts.append((f"#{b['notification_id']} {b['status']}{at}: {title}", 1))
    lines += _part("broadcasts", len(broadcasts), broadcasts, MAX_BROADCASTS)

    total = int(call("deliveries", meta=True, status="all", limit=0)["total"])
    read = max(total - MAX_DELIVERIES, 0)
    deliveries = []
    for d in call("deliveries", meta=True, status="all", limit=MAX_DELIVERIES, offset=read or None)[
        "entries"
    ]:
        seen = [what for what in ("viewed", "clicked") if d.get(f"{what}_at")]
        line = (
            f"#{d['delivery_id']} {d['status']}: {_short(d.get('title'))} to "
            f"{str(d.get('subscriber_hash'))[:12]} ({d.get('source')} #{d.get('source_id')})"
        )
        deliveries.append((line + (f", {' and '.join(seen)}" if seen else ""), 1))
    lines += _part("deliveries", total, deliveries, MAX_DELIVERIES)
    return lines


def _short(text: Any) -> str:
    """A title, quoted (a newline in it stays on its line), cut to a readable length."""
    text = str(text)
    return repr(text if len(text) <= 60 else text[:59] + "…")


@pytest.fixture(scope="session")
def _pushwire_emulator_session() -> Iterator[Emulator]:
    emu = Emulator()
    emu._shared = True
    try:
        yield emu
    finally:
        emu._server.stop()


@pytest.fixture
def pushwire_emulator(_pushwire_emulator_session: Emulator) -> Iterator[Emulator]:
    """A running :class:`pushwire.testing.Emulator` with fresh state."""
    emu = _pushwire_emulator_session
    emu.reset()
    # `reset` keeps the request log's setting (for load tests that turn it off); a test that
    # turned it off must not leave the next one without its log. The setting the emulator
    # was made with wins (a session fixture overridden with `record_requests=False`).
    emu.set_request_log(emu.record_requests)
    emu.set_retention(emu.retention)
    yield emu


@pytest.fixture
def pushwire_emulator_env(
    pushwire_emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Emulator]:
    """:func:`pushwire_emulator`, with ``PUSHWIRE_API_KEY``, ``PUSHWIRE_BASE_URL`` and
    ``PUSHWIRE_EVENTS_URL`` pointing at it for the test: code that makes its client from the
    environment (``pushwire.Client()``, when it first needs one) talks to the emulator."""
    monkeypatch.setenv("PUSHWIRE_API_KEY", pushwire_emulator.api_key)
    monkeypatch.setenv("PUSHWIRE_BASE_URL", pushwire_emulator.base_url)
    monkeypatch.setenv("PUSHWIRE_EVENTS_URL", pushwire_emulator.events_url)
    yield pushwire_emulator


@pytest.fixture
def pushwire_emulator_python_clock(pushwire_emulator: Emulator) -> Iterator[Emulator]:
    """:func:`pushwire_emulator`, its clock this process's for the test
    (:meth:`~pushwire.testing.Emulator.follow_python_clock`): time-machine and freezegun move
    the emulator with the code under test."""
    pushwire_emulator.follow_python_clock()
    try:
        yield pushwire_emulator
    finally:
        pushwire_emulator.follow_python_clock(False)
