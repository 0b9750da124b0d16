"""A client configured by its environment, as in a compose file, a CI service container or a
twelve-factor deployment: ``PUSHWIRE_ALLOW_INSECURE``, ``PUSHWIRE_TIMEOUT``,
``PUSHWIRE_MAX_RETRIES`` and ``PUSHWIRE_LOG``, each checked over real HTTP against the
emulator; a setting passed in code always wins."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest

import pushwire
from pushwire import _env
from pushwire.testing import Emulator

VARIABLES = (
    "PUSHWIRE_ALLOW_INSECURE",
    "PUSHWIRE_TIMEOUT",
    "PUSHWIRE_MAX_RETRIES",
    "PUSHWIRE_LOG",
    "PUSHWIRE_API_KEY",
    "PUSHWIRE_BASE_URL",
    "PUSHWIRE_EVENTS_URL",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    logger = logging.getLogger("pushwire")
    level, handlers = logger.level, list(logger.handlers)
    yield
    # What PUSHWIRE_LOG did to the process's logging is undone for the next test.
    logger.setLevel(level)
    logger.handlers[:] = handlers
    _env._handler = None
    _env._applied = None


def from_env(emu: Emulator, monkeypatch: pytest.MonkeyPatch, base_url: str) -> pushwire.Client:
    monkeypatch.setenv("PUSHWIRE_API_KEY", emu.api_key)
    monkeypatch.setenv("PUSHWIRE_BASE_URL", base_url)
    monkeypatch.setenv("PUSHWIRE_EVENTS_URL", emu.events_url)
    return pushwire.Client()


def named_host() -> str:
    """This machine's name when it resolves to loopback (Debian's /etc/hosts does so): a URL
    with it is plain http to a named host, as `http://emulator:8900` is in a compose file, and
    still reaches an emulator on 127.0.0.1."""
    name = socket.gethostname()
    try:
        address = socket.gethostbyname(name)
    except OSError:
        pytest.skip(f"this machine's name {name!r} does not resolve")
    if name.lower() == "localhost" or address != "127.0.0.1":
        pytest.skip(f"this machine's name {name!r} resolves to {address}, not 127.0.0.1")
    return name


def test_allow_insecure_from_the_environment_reaches_an_emulator_on_a_named_host(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = emu.base_url.rsplit(":", 1)[1]
    url = f"http://{named_host()}:{port}"
    with pytest.raises(pushwire.ValidationError, match="PUSHWIRE_ALLOW_INSECURE=1") as refused:
        from_env(emu, monkeypatch, url)
    assert refused.value.field == "base_url"

    monkeypatch.setenv("PUSHWIRE_ALLOW_INSECURE", "1")
    emu.create_segment("vip")
    with from_env(emu, monkeypatch, url) as client:
        assert [s.segment_name for s in client.segments.list()] == ["vip"]
    assert [r["path"] for r in emu.requests()] == ["/apiv1/segments"]

    # Code that says no is obeyed whatever the environment says.
    with pytest.raises(pushwire.ValidationError, match="allow_insecure"):
        pushwire.Client(allow_insecure=False)


def test_max_retries_from_the_environment_sets_how_often_a_failure_is_retried(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PUSHWIRE_MAX_RETRIES", "0")
    emu.inject_fault("/apiv1/segments", status=503, times=5)
    with from_env(emu, monkeypatch, emu.base_url) as client:
        assert client.max_retries == 0
        with pytest.raises(pushwire.APIError):
            client.segments.list()
    assert len(emu.requests()) == 1

    emu.clear_requests()
    with pushwire.Client(max_retries=1, backoff_base=0.01) as client:
        with pytest.raises(pushwire.APIError):
            client.segments.list()
    assert len(emu.requests()) == 2, "the argument wins over the environment"


def test_timeout_from_the_environment_bounds_a_call(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PUSHWIRE_TIMEOUT", "0.5")
    monkeypatch.setenv("PUSHWIRE_MAX_RETRIES", "0")
    emu.inject_fault("/apiv1/segments", delay=5)
    with from_env(emu, monkeypatch, emu.base_url) as client:
        assert client.timeout == 0.5
        with pytest.raises(pushwire.APITimeoutError):
            client.segments.list()
    monkeypatch.setenv("PUSHWIRE_TIMEOUT", "none")
    with pushwire.Client() as client:
        assert client.timeout == 86_400.0
    with pushwire.Client(timeout=3) as client:
        assert client.timeout == 3.0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PUSHWIRE_TIMEOUT", "30s"),
        ("PUSHWIRE_TIMEOUT", "-1"),
        ("PUSHWIRE_TIMEOUT", "nan"),
        ("PUSHWIRE_MAX_RETRIES", "three"),
        ("PUSHWIRE_MAX_RETRIES", "21"),
        ("PUSHWIRE_MAX_RETRIES", "-1"),
        ("PUSHWIRE_MAX_RETRIES", "\u00b2"),
        ("PUSHWIRE_ALLOW_INSECURE", "maybe"),
        ("PUSHWIRE_LOG", "verbose"),
    ],
)
def test_a_malformed_variable_is_refused_by_name_before_anything_is_sent(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(pushwire.ValidationError) as info:
        from_env(emu, monkeypatch, emu.base_url)
    assert info.value.field == name
    assert name in str(info.value) and repr(value) in str(info.value)
    assert emu.requests() == []


def test_pushwire_log_debug_prints_each_call_without_the_key(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    logging.getLogger("pushwire").handlers.clear()
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # no root handler either
    monkeypatch.setenv("PUSHWIRE_LOG", "debug")
    with from_env(emu, monkeypatch, emu.base_url) as client:
        client.segments.list()
        # A second client adds no second handler: each line is printed once.
        with pushwire.Client() as again:
            again.segments.list(limit=1)
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if "GET /apiv1/segments" in line]
    assert len(lines) == 2, err
    assert all(" DEBUG pushwire: " in line and "-> 200" in line for line in lines), err
    assert emu.api_key not in err


def test_pushwire_log_info_leaves_debug_lines_out(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    logging.getLogger("pushwire").handlers.clear()
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    monkeypatch.setenv("PUSHWIRE_LOG", "INFO")
    emu.inject_fault("/apiv1/segments", status=503, times=1)
    with from_env(emu, monkeypatch, emu.base_url) as client:
        client.with_options(max_retries=1).segments.list()
    err = capfd.readouterr().err
    assert " INFO pushwire: retrying GET /apiv1/segments" in err, err
    assert "DEBUG" not in err
