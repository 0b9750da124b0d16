"""Security: the key never leaks, plain http is refused off loopback, proxies and extra CA
roots are honoured, and a slow or dropped request never stalls the others."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import serve_in_threads

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
                artefacts.append(json.dumps(emu.requests(), default=str))
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


def test_requests_go_through_the_configured_proxy() -> None:
    # The emulator answers absolute-form requests, so it can stand in as the proxy of a
    # host that does not exist: an answer proves the request went through the proxy. It is
    # told to answer requests to that name (its Host check refuses names it does not know).
    with Emulator(allowed_hosts=["pushwire.invalid"]) as emu:
        _through_the_proxy(emu)


def _through_the_proxy(emu: Emulator) -> None:
    emu.create_segment("via-proxy")
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


def test_the_environments_proxy_applies_except_to_a_service_on_this_machine(
    pushwire_emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY set for a corporate network: a client of a host elsewhere goes through it,
    a client of the emulator on loopback does not (the proxy cannot reach this machine's
    loopback, and would be sent the key)."""
    emu = pushwire_emulator
    emu.create_segment("direct")
    proxy_seen: list[str] = []
    proxy = socket.socket()
    proxy.bind(("127.0.0.2", 0))
    proxy.listen(8)
    proxy.settimeout(0.2)

    def record() -> None:
        while True:
            try:
                conn, _ = proxy.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            proxy_seen.append(conn.recv(4096).decode(errors="replace"))
            conn.close()

    threading.Thread(target=record, daemon=True).start()
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.2:{proxy.getsockname()[1]}")
    try:
        with emu.client(max_retries=0) as client:
            assert [s.segment_name for s in client.segments.list()] == ["direct"]
        assert proxy_seen == []
        with (
            pushwire.Client(
                api_key=SECRET,
                base_url="http://pushwire.invalid",
                allow_insecure=True,
                max_retries=0,
                timeout=5,
            ) as elsewhere,
            pytest.raises(pushwire.APIConnectionError),
        ):
            elsewhere.segments.list()
        deadline = time.monotonic() + 5
        while not proxy_seen and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proxy_seen and "pushwire.invalid" in proxy_seen[0]
    finally:
        proxy.close()


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


def openssl(*args: object) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


def make_ca_and_leaf(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate for localhost and 127.0.0.1 that it signed: (ca, cert, key)."""
    ca, ca_key = tmp_path / "ca.pem", tmp_path / "ca-key.pem"
    cert, key, csr = tmp_path / "leaf.pem", tmp_path / "leaf-key.pem", tmp_path / "leaf.csr"
    ext = tmp_path / "leaf.ext"
    ext.write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n"
    )
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=pushwire test CA",
        "-keyout",
        ca_key,
        "-out",
        ca,
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        key,
        "-out",
        csr,
    )
    openssl(
        "x509",
        "-req",
        "-in",
        csr,
        "-CA",
        ca,
        "-CAkey",
        ca_key,
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        ext,
        "-out",
        cert,
    )
    return ca, cert, key


class TlsRelay:
    """Terminates TLS with `cert` on a loopback port and relays the bytes to `target`."""

    def __init__(self, target: str, cert: Path, key: Path, host: str = "127.0.0.1") -> None:
        target_host, target_port = target.removeprefix("http://").split(":")
        self.target = (target_host, int(target_port))
        self.ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ctx.load_cert_chain(cert, key)
        self.sock = socket.create_server((host, 0))
        self.port = self.sock.getsockname()[1]
        serve_in_threads(self.sock, self.relay)

    def relay(self, raw: socket.socket) -> None:
        try:
            tls = self.ctx.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()  # the client refused our certificate: what some tests want
            return
        upstream = socket.create_connection(self.target)

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    try:
                        s.close()
                    except OSError:
                        pass

        threading.Thread(target=pump, args=(upstream, tls), daemon=True).start()
        pump(tls, upstream)

    def close(self) -> None:
        self.sock.close()


def assert_certificate_refused(emu: Emulator, base_url: str, **options: Any) -> None:
    """A call to `base_url` fails on the server's certificate (and is not tried again)."""
    client = pushwire.Client(api_key=emu.api_key, base_url=base_url, max_retries=0, **options)
    with pytest.raises(pushwire.APIConnectionError, match="(?i)certificate"):
        client.segments.list()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
def test_tls_certificates_are_verified_and_ca_bundle_adds_a_root(
    tmp_path: Path, pushwire_emulator: Emulator
) -> None:
    emu = pushwire_emulator
    emu.create_segment("over-tls")
    ca, cert, key = make_ca_and_leaf(tmp_path)
    relay = TlsRelay(emu.base_url, cert, key)
    try:
        for host in ("localhost", "127.0.0.1"):
            url = f"https://{host}:{relay.port}"
            # Not signed by a root the platform trusts: refused, nothing sent in clear.
            assert_certificate_refused(emu, url)
            # With the CA added, the same server is trusted, and answers through the relay.
            trusted = pushwire.Client(
                api_key=emu.api_key, base_url=url, ca_bundle=ca, max_retries=0
            )
            assert [s.segment_name for s in trusted.segments.list()] == ["over-tls"]
        # Another CA does not vouch for this server.
        other = tmp_path / "other"
        other.mkdir()
        other_ca, _, _ = make_ca_and_leaf(other)
        assert_certificate_refused(emu, f"https://localhost:{relay.port}", ca_bundle=other_ca)
        # The right CA, but a name the certificate is not for: the hostname is checked too.
        elsewhere = TlsRelay(emu.base_url, cert, key, host="127.0.0.2")
        try:
            assert_certificate_refused(
                emu, f"https://127.0.0.2:{elsewhere.port}", ca_bundle=ca, allow_insecure=True
            )
        finally:
            elsewhere.close()
    finally:
        relay.close()


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
