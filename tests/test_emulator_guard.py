"""A web page the developer has open cannot drive the emulator (issue: the emulator as a
service left running): a request addressed to a name that is not the machine's (DNS
rebinding) is refused on every route, and a browser's cross-site write to the admin API is
refused, both with nothing changed; clients that are not browsers, and the names the user
allows, are answered as before. Over real HTTP, against the in-process emulator, the
standalone binary and the Python command."""

from __future__ import annotations

import socket
import sys
from typing import Any

import pytest
import requests
from test_emulator_standalone import BINARY, Running

from pushwire.testing import Emulator, EmulatorProcess

ATTACKER = "attacker.example"


def startup_lines(emu: Running) -> dict[str, str]:
    """The lines it printed from the key up to "serving" (the UI URL, a notice)."""
    assert emu.proc.stdout is not None
    lines = dict(emu.printed)
    while True:
        line = emu.proc.stdout.readline()
        if not line or line.startswith("serving"):
            return lines
        name, _, value = line.strip().partition("=")
        lines[name] = value


def port_of(url: str) -> str:
    return url.rsplit(":", 1)[1]


def get(url: str, host: str, **headers: str) -> requests.Response:
    return requests.get(url, headers={"Host": host, **headers}, timeout=10)


def test_a_rebound_name_is_refused_on_every_route_and_reads_nothing(emu: Emulator) -> None:
    emu.add_subscriber(profile_id="p1")
    requests.get(f"{emu.base_url}/apiv1/segments", headers={"Api-Key": emu.api_key}, timeout=10)
    main = f"{ATTACKER}:{port_of(emu.base_url)}"
    routes = [
        (f"{emu.base_url}/_emulator/requests", main),
        (f"{emu.base_url}/_emulator/subscribers", main),
        (f"{emu.base_url}/_emulator/ui", main),
        (f"{emu.base_url}/_emulator/openapi.json", main),
    ]
    for url, host in routes:
        r = get(url, host)
        assert r.status_code == 403, url
        assert "--allowed-host attacker.example" in r.json()["error"]
        assert "p1" not in r.text and "request_id" not in r.text
    api = get(f"{emu.base_url}/apiv1/segments", main, **{"Api-Key": emu.api_key})
    assert api.status_code == 403
    assert api.json()["success"] is False and "--allowed-host" in api.json()["message"]
    events = requests.post(
        f"{emu.events_url}/api/v1/events",
        headers={"Host": f"{ATTACKER}:{port_of(emu.events_url)}", "Api-Key": emu.api_key},
        json={"event_name": "signup", "profile_id": "p1"},
        timeout=10,
    )
    assert events.status_code == 403 and "--allowed-host" in events.json()["error"]["message"]
    # A write under the rebound name changes nothing.
    reset = requests.post(f"{emu.base_url}/_emulator/reset", headers={"Host": main}, timeout=10)
    assert reset.status_code == 403
    assert [s["profile_id"] for s in emu.subscribers()] == ["p1"]
    assert list(emu.events()) == []
    # The refused requests never reached the request log either.
    assert [r["path"] for r in emu.requests()] == ["/apiv1/segments"]


def test_addresses_loopback_names_and_the_machines_own_name_are_answered(emu: Emulator) -> None:
    port = port_of(emu.base_url)
    for host in [
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        f"LocalHost:{port}",
        f"app.localhost:{port}",
        f"[::1]:{port}",
        f"10.0.0.7:{port}",  # an address is no rebinding: a container's own IP
        f"{socket.gethostname()}:{port}",
    ]:
        assert get(f"{emu.base_url}/_emulator/requests", host).status_code == 200, host


def test_names_the_user_allows_are_answered() -> None:
    with Emulator(allowed_hosts=["emulator", ".corp.example"]) as emu:
        port = port_of(emu.base_url)
        url = f"{emu.base_url}/apiv1/segments"
        key = {"Api-Key": emu.api_key}
        for host in ("emulator", "ci.corp.example", "corp.example"):
            assert get(url, f"{host}:{port}", **key).status_code == 200, host
        for host in ("emulator.attacker.example", "corp.example.attacker.example"):
            assert get(url, f"{host}:{port}", **key).status_code == 403, host
    with Emulator(allowed_hosts="*") as emu:
        assert get(f"{emu.base_url}/_emulator/now", ATTACKER).status_code == 200
    with pytest.raises(ValueError, match="allowed_hosts"):
        Emulator(allowed_hosts=[""])


@pytest.mark.parametrize(
    "cmd",
    [
        pytest.param([str(BINARY)], id="rust-binary"),
        pytest.param([sys.executable, "-m", "pushwire.emulator"], id="python-m"),
    ],
)
def test_the_standalone_emulator_takes_allowed_host(cmd: list[str]) -> None:
    emu = Running(cmd, "--allowed-host", "emulator", "--allowed-host", ".svc.local")
    try:
        port = port_of(emu.base_url)
        url = f"{emu.base_url}/_emulator/requests"
        assert get(url, f"emulator:{port}").status_code == 200
        assert get(url, f"push.svc.local:{port}").status_code == 200
        refused = get(url, f"{ATTACKER}:{port}")
        assert refused.status_code == 403 and "--allowed-host" in refused.json()["error"]
    finally:
        emu.stop()


def test_an_emulator_process_takes_allowed_hosts() -> None:
    with EmulatorProcess(allowed_hosts=["emulator"]) as emu:
        port = port_of(emu.base_url)
        assert get(f"{emu.base_url}/_emulator/now", f"emulator:{port}").status_code == 200
        assert get(f"{emu.base_url}/_emulator/now", f"{ATTACKER}:{port}").status_code == 403


def admin_post(emu: Emulator, op: str, body: Any = None, **headers: str) -> requests.Response:
    return requests.post(
        f"{emu.base_url}/_emulator/{op}", json=body, headers=headers or None, timeout=10
    )


def test_a_cross_site_write_is_refused_and_changes_nothing(emu: Emulator) -> None:
    requests.get(f"{emu.base_url}/apiv1/segments", headers={"Api-Key": emu.api_key}, timeout=10)
    before = list(emu.requests())
    # A "simple" request a page sends without a preflight: text/plain, another origin.
    r = requests.post(
        f"{emu.base_url}/_emulator/clear_requests",
        data="{}",
        headers={"Origin": f"https://{ATTACKER}", "Content-Type": "text/plain"},
        timeout=10,
    )
    assert r.status_code == 403
    assert "another origin" in r.json()["error"] and "nothing was changed" in r.json()["error"]
    assert list(emu.requests()) == before
    # The browser's own mark, without an Origin.
    fault = admin_post(
        emu,
        "inject_fault",
        {"path": "/apiv1/segments", "status": 500},
        **{"Sec-Fetch-Site": "cross-site"},
    )
    assert fault.status_code == 403
    ok = requests.get(
        f"{emu.base_url}/apiv1/segments", headers={"Api-Key": emu.api_key}, timeout=10
    )
    assert ok.status_code == 200  # no fault was injected
    clock = admin_post(emu, "advance", {"seconds": 3600}, Origin="http://localhost:3000")
    assert clock.status_code == 403  # a dev server on another port is another origin


def test_the_emulators_own_pages_and_non_browser_clients_still_write(emu: Emulator) -> None:
    # The inspector's page sends its own origin; curl and the Python admin send none.
    own = admin_post(emu, "create_segment", {"name": "vip"}, Origin=emu.base_url)
    assert own.status_code == 200
    plain = admin_post(emu, "create_segment", {"name": "vvip"})
    assert plain.status_code == 200
    same = admin_post(emu, "create_segment", {"name": "x"}, **{"Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200
    assert {s["segment_name"] for s in emu.segments()} >= {"vip", "vvip", "x"}
    # A read is never refused: the browser keeps its answer from another page anyway.
    read = requests.get(
        f"{emu.base_url}/_emulator/segments", headers={"Origin": f"https://{ATTACKER}"}, timeout=10
    )
    assert read.status_code == 200


# --- the admin token and the notice of an emulator other machines can reach -----------------


def test_an_admin_token_guards_every_admin_route_of_the_standalone_emulator() -> None:
    emu = Running([str(BINARY)], "--host", "0.0.0.0", "--admin-token", "t0k3n-for-ci")
    try:
        notice = startup_lines(emu).get("PUSHWIRE_NOTICE", "")
        assert "0.0.0.0" in notice and "admin token" in notice
        base = emu.base_url.replace("0.0.0.0", "127.0.0.1")
        for path in ("/_emulator/now", "/_emulator/requests", "/_emulator/openapi.json"):
            r = requests.get(base + path, timeout=10)
            assert r.status_code == 401, path
            assert "--admin-token" in r.json()["error"]
        for headers in (
            {"Authorization": "Bearer t0k3n-for-ci"},
            {"X-Pushwire-Admin-Token": "t0k3n-for-ci"},
            {"Cookie": "pushwire_admin_token=t0k3n-for-ci"},
        ):
            assert requests.get(f"{base}/_emulator/now", headers=headers, timeout=10).ok
        wrong = requests.post(
            f"{base}/_emulator/reset", headers={"Authorization": "Bearer guess"}, timeout=10
        )
        assert wrong.status_code == 401
        # The inspector: a sign-in page, or the token in the URL once, kept in a cookie.
        page = requests.get(f"{base}/_emulator/ui", timeout=10)
        assert page.status_code == 401 and 'name="token"' in page.text
        once = requests.get(
            f"{base}/_emulator/ui?token=t0k3n-for-ci", allow_redirects=False, timeout=10
        )
        assert once.status_code == 303 and once.headers["Location"] == "/_emulator/ui"
        cookie = once.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        signed = requests.post(
            f"{base}/_emulator/login",
            data={"token": "t0k3n-for-ci"},
            allow_redirects=False,
            timeout=10,
        )
        assert signed.status_code == 303 and "HttpOnly" in signed.headers["Set-Cookie"]
        # The API is the service's: its key, not the admin token.
        api = requests.get(f"{base}/apiv1/segments", headers={"Api-Key": emu.key}, timeout=10)
        assert api.status_code == 200
    finally:
        emu.stop()


def test_the_token_comes_from_the_environment_and_the_python_command_takes_it_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PUSHWIRE_ADMIN_TOKEN", "from-the-env")
    for cmd in ([str(BINARY)], [sys.executable, "-m", "pushwire.emulator"]):
        emu = Running(cmd)
        try:
            assert "PUSHWIRE_NOTICE" not in startup_lines(emu)  # loopback: nothing to say
            assert requests.get(f"{emu.base_url}/_emulator/now", timeout=10).status_code == 401
            ok = requests.get(
                f"{emu.base_url}/_emulator/now",
                headers={"Authorization": "Bearer from-the-env"},
                timeout=10,
            )
            assert ok.status_code == 200, cmd
        finally:
            emu.stop()


def test_without_a_token_an_exposed_emulator_says_so_and_an_emulator_process_sends_its_own() -> (
    None
):
    with Emulator(host="0.0.0.0") as emu:
        assert emu.notice is not None and "--admin-token" in emu.notice
    with Emulator() as emu:
        assert emu.notice is None
    with EmulatorProcess(admin_token="proc-t0ken") as proc:
        assert proc.admin("create_segment", name="vip")["segment_id"]
        assert requests.get(f"{proc.base_url}/_emulator/segments", timeout=10).status_code == 401
    with pytest.raises(ValueError, match="admin token"):
        Emulator(admin_token="has space")
