"""A failing test that used the ``pushwire_emulator`` fixture says what the emulator saw:
pytest's report gains a section with the test's requests, broadcasts and deliveries and the
inspector's address, as it shows a failed test's captured output. A test that passes gets
none, ``--pushwire-no-report`` or ``pushwire_report = false`` turn it off, and the API key
never shows. Each case runs pytest in a process of its own (``pytester``), with the plugin
loaded as users get it, through its entry point."""

from __future__ import annotations

import re

import pytest

SECTION = re.compile(r"-+ pushwire emulator -+")
# Where the next part of pytest's report starts: a separator line.
SEPARATOR = re.compile(r"(-{3,}|={3,}|_{3,}) ")
KEY = "test-key"  # the fixture's emulator's

SALE = """
import pytest


@pytest.fixture
def emu(pushwire_emulator):  # the fixture through another one: the report comes all the same
    return pushwire_emulator


def test_summer_sale(emu):
    emu.add_subscriber()
    emu.inject_fault("/apiv1/notifications", status=503, retry_after=0)
    emu.client(backoff_base=0).notifications.create(
        title="Summer <sale> for " + emu.api_key,
        message="40% off",
        url="https://shop.example/sale?key=" + emu.api_key,
    )
    sent = len(emu.deliveries())
    assert sent == 0
"""


def section(result: pytest.RunResult) -> list[str]:
    """The lines of the report's ``pushwire emulator`` section (exactly one)."""
    lines = result.outlines
    starts = [i for i, line in enumerate(lines) if SECTION.fullmatch(line)]
    assert len(starts) == 1, result.stdout.str()
    body = lines[starts[0] + 1 :]
    end = next((i for i, line in enumerate(body) if SEPARATOR.match(line)), len(body))
    return body[:end]


def test_a_failing_test_reports_what_the_emulator_saw(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_sale=SALE)

    result = pytester.runpytest_subprocess()

    result.assert_outcomes(failed=1)
    inspector, *seen = section(result)
    assert re.fullmatch(
        r"inspector: http://127\.0\.0\.1:\d+/_emulator/ui \(while the test session runs\)",
        inspector,
    )
    assert seen[:6] == [
        "requests (2):",
        "  POST /apiv1/notifications -> 503 [fault: status 503]",
        "  POST /apiv1/notifications -> 200",
        "broadcasts (1):",
        "  #1 sent: 'Summer <sale> for [redacted]'",
        "deliveries (1):",
    ]
    assert re.fullmatch(
        r"  #1 delivered: 'Summer <sale> for \[redacted\]' to [0-9a-f]{12} \(broadcast #1\)",
        seen[6],
    )
    assert len(seen) == 7
    # The key is in the broadcast's title and URL, and nowhere in the report.
    assert KEY not in result.stdout.str()


def test_a_passing_test_reports_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_quiet="""
        import pytest


        def test_sale(pushwire_emulator):
            pushwire_emulator.client().notifications.create(
                title="Summer sale", message="40% off", url="https://shop.example"
            )


        @pytest.mark.xfail(reason="known")
        def test_known_bug(pushwire_emulator):
            pushwire_emulator.client().segments.list()
            assert False


        def test_without_the_emulator():
            assert 1 == 2
        """
    )

    # -rA shows the sections of the tests that passed too: there must be none.
    result = pytester.runpytest_subprocess("-rA")

    result.assert_outcomes(passed=1, xfailed=1, failed=1)
    assert "pushwire emulator" not in result.stdout.str()


@pytest.mark.parametrize("how", ["--pushwire-no-report", "pushwire_report = false"])
def test_the_report_can_be_turned_off(pytester: pytest.Pytester, how: str) -> None:
    pytester.makepyfile(test_sale=SALE)
    if how.startswith("--"):
        result = pytester.runpytest_subprocess(how)
    else:
        pytester.makeini(f"[pytest]\n{how}\n")
        result = pytester.runpytest_subprocess()

    result.assert_outcomes(failed=1)
    assert "pushwire emulator" not in result.stdout.str()
    assert "assert 1 == 0" in result.stdout.str()  # the failure itself is reported


def test_the_option_is_in_pytests_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--pushwire-no-report*", "*pushwire_report (bool)*"])


def test_a_long_test_is_summed_up(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_busy="""
        def test_busy(pushwire_emulator):
            emu = pushwire_emulator
            emu.add_subscriber()
            client = emu.client(backoff_base=0)
            for n in range(12):
                client.notifications.create(
                    title=f"Deal {n}", message="Today only", url="https://shop.example"
                )
            for n in range(25):
                client.segments.list(offset=n)
            emu.inject_fault("/apiv1/segments", status=503, retry_after=0, times=2)
            client.segments.list()  # answered 503 twice, then 200
            assert False
        """
    )

    result = pytester.runpytest_subprocess()

    result.assert_outcomes(failed=1)
    _, *seen = section(result)
    # 40 requests; the last 20 lines stand for 21 of them (a retried call's 503s on one).
    assert seen[:3] == [
        "requests (40):",
        "  … 19 earlier not shown",
        "  GET /apiv1/segments?offset=7 -> 200",
    ]
    assert seen[19:22] == [
        "  GET /apiv1/segments?offset=24 -> 200",
        "  GET /apiv1/segments -> 503 [fault: status 503]  (×2)",
        "  GET /apiv1/segments -> 200",
    ]
    assert seen[22:25] == ["broadcasts (12):", "  … 2 earlier not shown", "  #3 sent: 'Deal 2'"]
    assert seen[34:36] == ["deliveries (12):", "  … 2 earlier not shown"]
    assert seen[36].startswith("  #3 delivered: 'Deal 2' to ")
    assert len(seen) == 46


def test_an_emulator_that_cannot_be_read_does_not_break_the_report(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_stopped="""
        def test_stops_it(pushwire_emulator):
            pushwire_emulator._server.stop()  # gone, as a crashed emulator would be
            assert "sent" == "received"
        """
    )

    result = pytester.runpytest_subprocess()

    result.assert_outcomes(failed=1)
    assert "internal error" not in result.stdout.str().lower()
    assert section(result)[-1] == (
        "(the emulator could not be read: RuntimeError: the emulator is stopped)"
    )
