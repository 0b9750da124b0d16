"""Security: the key never leaks, plain http is refused off loopback, proxies and extra CA
roots are honoured, and a slow or dropped request never stalls the others."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import pushwire
from pushwire.testing import Emulator

SECRET = "pw-live-7f3KsecretKEY-xyz"


def test_the_key_never_appears_in_reprs_errors_logs_or_the_request_log(tmp_path: Path) -> None:
    """A whole session with a distinctive key, every artefact it leaves grepped for the key."""
    script = tmp_path / "session.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, logging, sys
            import pushwire
            from pushwire.testing import Emulator

            logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                                format="%(name)s %(levelname)s %(message)s")
            artefacts = []
            with Emulator(api_key={SECRET!r}) as emu:
                seg = emu.create_segment("vip")
                client = emu.client(backoff_base=0)
                artefacts.append(repr(client))
                artefacts.append(repr(client.segments.list()))
                artefacts.append(repr(client.segments.add_subscribers(seg, ["h1"])))
                artefacts.append(repr(client.notifications.create(
                    title="t", message="m", url="https://x.example")))
                client.events.track("e", profile_id="p", data={{"k": "v"}})
                emu.inject_fault("/apiv1/segments", status=503, times=1)
                client.segments.list()  # retried: an INFO line
                emu.inject_fault("/apiv1/segments", status=500, times=3)
                for call in [
                    lambda: client.segments.list(),
                    lambda: client.segments.delete(999),
                    lambda: client.notifications.create(title="", message="m", url="u"),
                    lambda: pushwire.Client(api_key={SECRET!r}, base_url="http://example.com"),
                    lambda: pushwire.Client(api_key={SECRET!r} + "x", base_url=emu.base_url,
                                            max_retries=0).segments.list(),
                ]:
                    try:
                        call()
                    except pushwire.PushwireError as e:
                        artefacts += [str(e), repr(e), json.dumps(getattr(e, "body", None))]
                emu.inject_fault("/apiv1/notifications", drop="after")
                try:
                    client.notifications.create(title="t", message="m", url="https://x.example")
                except pushwire.APIConnectionError as e:
                    artefacts += [str(e), repr(e)]
                artefacts.append(json.dumps(emu.requests()))
            print(json.dumps(artefacts))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    artefacts = json.loads(done.stdout)
    logs = done.stderr
    assert "pushwire" in logs and "/apiv1/segments" in logs  # the logs were really written
    assert len(artefacts) >= 15
    for text in [*artefacts, logs]:
        assert SECRET not in text
        assert SECRET.lower() not in text.lower()


@pytest.mark.parametrize(
    ("field", "url", "words"),
    [
        ("base_url", "https://api.example.com/?x=1", "query"),
        ("base_url", "https://api.example.com/#frag", "fragment"),
        ("events_url", "https://ev.example.com/?token=1", "query"),
        ("base_url", "https://user:s3cretpw@api.example.com", "credentials"),
    ],
)
def test_a_root_url_with_a_query_or_credentials_is_refused(
    field: str, url: str, words: str
) -> None:
    # Such a root would send requests somewhere else than meant (the path after `?`), or
    # send credentials the key is meant to replace.
    urls = {"base_url": "https://api.example.com", "events_url": "https://ev.example.com"}
    urls[field] = url
    with pytest.raises(pushwire.PushwireError, match=words) as e:
        pushwire.Client(api_key="k", **urls)
    assert field in str(e.value)
    assert "s3cretpw" not in str(e.value)


def test_plain_http_is_refused_off_loopback_unless_allowed() -> None:
    with pytest.raises(pushwire.PushwireError, match="allow_insecure"):
        pushwire.Client(api_key="k", base_url="http://api.example.com")
    with pytest.raises(pushwire.PushwireError, match="allow_insecure"):
        pushwire.Client(
            api_key="k", base_url="https://api.example.com", events_url="http://ev.example.com"
        )
    pushwire.Client(api_key="k", base_url="http://api.example.com", allow_insecure=True)
    pushwire.Client(api_key="k", base_url="https://api.example.com")
    pushwire.Client(api_key="k", base_url="http://127.0.0.1:1")
    pushwire.Client(api_key="k", base_url="http://localhost:1")


def test_requests_go_through_the_configured_proxy(pushwire_emulator: Emulator) -> None:
    emu = pushwire_emulator
    emu.create_segment("via-proxy")
    # The emulator answers absolute-form requests, so it can stand in as the proxy of a
    # host that does not exist: an answer proves the request went through the proxy.
    client = pushwire.Client(
        api_key=emu.api_key,
        base_url="http://pushwire.invalid",
        allow_insecure=True,
        proxy=emu.base_url,
        max_retries=0,
    )
    assert [s.segment_name for s in client.segments.list()] == ["via-proxy"]
    with pytest.raises(pushwire.APIConnectionError):
        pushwire.Client(
            api_key=emu.api_key,
            base_url="http://pushwire.invalid",
            allow_insecure=True,
            max_retries=0,
            timeout=5,
        ).segments.list()
    with pytest.raises(pushwire.PushwireError, match="proxy"):
        pushwire.Client(api_key="k", base_url=emu.base_url, proxy="::not a url::")


def test_an_extra_ca_bundle_is_loaded_and_checked(tmp_path: Path) -> None:
    with pytest.raises(pushwire.PushwireError, match="ca_bundle"):
        pushwire.Client(api_key="k", base_url="https://x.example", ca_bundle=tmp_path / "none.pem")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    with pytest.raises(pushwire.PushwireError, match="ca_bundle"):
        pushwire.Client(api_key="k", base_url="https://x.example", ca_bundle=junk)
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    pem = tmp_path / "ca.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=pushwire test CA", "-keyout", str(tmp_path / "k.pem"), "-out", str(pem)],
        check=True,
        capture_output=True,
    )
    pushwire.Client(api_key="k", base_url="https://x.example", ca_bundle=pem)


@pytest.mark.parametrize("fault", [{"delay": 2.0}, {"drop": "before", "delay": 1.0}])
def test_a_slow_or_dropped_request_does_not_stall_the_others(
    pushwire_emulator: Emulator, fault: dict[str, object]
) -> None:
    emu = pushwire_emulator
    emu.inject_fault("/apiv1/triggers", times=1, **fault)  # type: ignore[arg-type]
    slow = emu.client(max_retries=0, timeout=10)
    started = threading.Event()

    def stuck() -> None:
        started.set()
        try:
            slow.triggers.list()
        except pushwire.PushwireError:
            pass

    t = threading.Thread(target=stuck)
    t.start()
    started.wait()
    time.sleep(0.2)  # the slow request is in the emulator now
    fast = emu.client()
    t0 = time.perf_counter()
    for _ in range(20):
        fast.segments.list()
        fast.events.track("e", profile_id="p")
    assert time.perf_counter() - t0 < 1.0
    t.join(15)
    assert not t.is_alive()
