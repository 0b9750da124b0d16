"""The OpenAPI documents of the service and of the emulator's admin API: generated from the
code that enforces the API, valid OpenAPI 3.1, served, printed and importable alike, holding
every limit of `validate` with its value and every route the emulator serves and nothing
else; the standalone emulator conforms to it under schemathesis; and a client generated
from it by openapi-python-client makes a broadcast and an event."""

from __future__ import annotations

import ast
import importlib
import json
import operator
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests
from openapi_spec_validator import validate
from test_emulator_standalone import BINARY, Running

from pushwire.testing import Emulator, openapi

ROOT = Path(__file__).resolve().parent.parent
METHODS = ("get", "post", "put", "patch", "delete")


def test_both_documents_are_valid_openapi_3_1() -> None:
    for doc in (openapi(), openapi(admin=True)):
        assert doc["openapi"] == "3.1.0"
        validate(doc)


def test_the_document_is_served_printed_and_importable_alike(emu: Emulator) -> None:
    served = requests.get(f"{emu.base_url}/_emulator/openapi.json", timeout=10)
    assert served.status_code == 200
    assert served.headers["content-type"] == "application/json"
    doc = served.json()
    assert doc == emu.openapi() == openapi(emu.base_url, emu.events_url)
    # Its servers are where this emulator answers: the main one, and the events interface's.
    assert doc["servers"][0]["url"] == emu.base_url
    assert doc["paths"]["/api/v1/events"]["servers"][0]["url"] == emu.events_url
    admin = requests.get(f"{emu.base_url}/_emulator/admin-openapi.json", timeout=10).json()
    assert admin == emu.openapi(admin=True)
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not built: run `make test`, which builds it")
    for flag, want in (
        ("--print-openapi", openapi("http://127.0.0.1:8900", "http://127.0.0.1:8901")),
        ("--print-admin-openapi", openapi("http://127.0.0.1:8900", admin=True)),
    ):
        # The Rust binary and the Python command print the same document.
        for cmd in ([str(BINARY)], [sys.executable, "-m", "pushwire.emulator"]):
            printed = subprocess.run([*cmd, flag], capture_output=True, text=True, timeout=30)
            assert printed.returncode == 0, printed.stderr
            assert json.loads(printed.stdout) == want
    moved = subprocess.run(
        [str(BINARY), "--print-openapi", "--port", "9100", "--events-port", "9200"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert json.loads(moved.stdout) == openapi("http://127.0.0.1:9100", "http://127.0.0.1:9200")


# --- it cannot drift -------------------------------------------------------------------------

_OPS = {ast.Mult: operator.mul, ast.Add: operator.add, ast.Sub: operator.sub}


def _value(node: ast.expr) -> Any:
    """A constant expression of limits.rs (numbers, `*`, `+`, `-`, strings), as Python reads
    the same text."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_value(node.left), _value(node.right))
    raise AssertionError(f"not a constant expression: {ast.dump(node)}")


def limits_of_validate() -> dict[str, Any]:
    """Every `pub const` of src/validate/limits.rs with its value."""
    text = (ROOT / "src" / "validate" / "limits.rs").read_text(encoding="utf-8")
    found = {}
    for name, expr in re.findall(r"pub const (\w+): [^=]+= ([^;]+);", text):
        found[name] = _value(ast.parse(expr.replace("_", ""), mode="eval").body)
    assert len(found) >= 20, "limits.rs was not read"
    return found


def marked(doc: Any) -> Iterator[dict[str, Any]]:
    """Every object of the document marked with the limits it carries."""
    if isinstance(doc, dict):
        if "x-pushwire-limit" in doc:
            yield doc
        for value in doc.values():
            yield from marked(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from marked(value)


def test_every_limit_of_validate_is_in_the_document_with_its_value() -> None:
    doc = openapi()
    marks: dict[str, list[dict[str, Any]]] = {}
    for node in marked(doc):
        for name in node["x-pushwire-limit"]:
            marks.setdefault(name, []).append(node)
    limits = limits_of_validate()
    missing = sorted(set(limits) - set(marks))
    assert not missing, f"limits of validate not in the document: {missing}"
    unknown = sorted(set(marks) - set(limits))
    assert not unknown, f"the document names limits validate does not have: {unknown}"
    for name, value in limits.items():
        for node in marks[name]:
            values = [v for k, v in node.items() if k != "x-pushwire-limit"]
            assert value in values, f"{name} = {value!r}, the document says {node}"
    # A few read as a user reads them.
    form = doc["paths"]["/apiv1/notifications"]["post"]["requestBody"]["content"]
    fields = form["application/x-www-form-urlencoded"]["schema"]["properties"]
    assert fields["notification_title"]["maxLength"] == limits["TITLE_MAX"]
    assert fields["subscriber_hash"]["maxItems"] == limits["BROADCAST_HASHES_MAX"]
    event = doc["paths"]["/api/v1/events"]["post"]["requestBody"]["content"]
    assert (
        event["application/json"]["schema"]["properties"]["event_name"]["maxLength"]
        == limits["EVENT_NAME_MAX"]
    )


def operations_declared() -> set[tuple[str, str]]:
    """(method, path) of every operation src/operations.rs declares, which the emulator's
    router serves (its own test checks each has its handler) and the client calls."""
    text = (ROOT / "src" / "operations.rs").read_text(encoding="utf-8")
    found = {
        (method.lower(), path) for method, path in re.findall(r'"(GET|POST)"\s+"(/api[^"]*)"', text)
    }
    assert len(found) >= 14, f"operations.rs was not read: {found}"
    return found


def test_every_route_the_emulator_serves_is_in_the_document_and_nothing_else(
    emu: Emulator,
) -> None:
    doc = openapi(emu.base_url, emu.events_url)
    documented = {
        (method, path)
        for path, item in doc["paths"].items()
        for method in item
        if method in METHODS
    }
    assert documented == operations_declared()
    # Over HTTP: each documented operation is routed (not the interfaces' 404 or 405), and
    # each other method on a documented path is not.
    for path, item in doc["paths"].items():
        root = emu.events_url if path.startswith("/api/v1") else emu.base_url
        url = root + re.sub(r"\{\w+\}", "1", path)
        for method in METHODS:
            r = requests.request(method, url, headers={"Api-Key": emu.api_key}, timeout=10)
            if method in item:
                assert r.status_code not in (404, 405), (method, path, r.text)
            else:
                assert r.status_code == 405, (method, path, r.status_code)


def test_the_admin_document_names_every_operation_and_nothing_else(emu: Emulator) -> None:
    listed = requests.get(f"{emu.base_url}/_emulator/operations", timeout=10).json()
    paths = set(openapi(admin=True)["paths"])
    fixed = {
        "/_emulator/openapi.json",
        "/_emulator/admin-openapi.json",
        "/_emulator/ui",
        "/_emulator/ui/stream",
    }
    assert paths - fixed == {f"/_emulator/{name}" for name in listed}
    for path in fixed:
        assert requests.get(emu.base_url + path, timeout=10, stream=True).status_code == 200


# --- what other tools make of it -------------------------------------------------------------


def test_the_standalone_emulator_conforms_to_its_document_under_schemathesis(
    tmp_path: Path,
) -> None:
    emu = Running([str(BINARY)], "--api-key", "schemathesis-key")
    try:
        run = subprocess.run(
            [
                str(Path(sys.executable).parent / "st"),
                "run",
                f"{emu.base_url}/_emulator/openapi.json",
                "--header",
                "Api-Key: schemathesis-key",
                "--seed",
                "20261126",
                "--max-examples",
                "25",
                "--phases",
                "examples,coverage,fuzzing",
                # Every answer must conform; whether a generated request is accepted depends
                # on the state (a segment that does not exist), which a document cannot say.
                "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,"
                "response_schema_conformance",
                "--no-color",
            ],
            # Its cache of the run's findings goes there, not into the checkout.
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        emu.stop()
    assert run.returncode == 0, run.stdout[-6000:]
    generated = re.search(r"(\d+) generated, (\d+) passed", run.stdout)
    assert generated is not None, run.stdout[-3000:]
    assert int(generated.group(1)) >= 200 and generated.group(1) == generated.group(2)


def test_a_client_generated_from_the_document_broadcasts_and_tracks(
    emu: Emulator, tmp_path: Path
) -> None:
    (tmp_path / "api.json").write_text(json.dumps(emu.openapi()), encoding="utf-8")
    gen = subprocess.run(
        [
            str(Path(sys.executable).parent / "openapi-python-client"),
            "generate",
            "--path",
            "api.json",
            "--meta",
            "none",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert gen.returncode == 0, gen.stdout + gen.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        package = "push_notification_service_api_client"
        client_mod = importlib.import_module(package)
        notifications = importlib.import_module(f"{package}.api.notifications.create_notification")
        events = importlib.import_module(f"{package}.api.events.track_event")
        models = importlib.import_module(f"{package}.models")
        main = client_mod.AuthenticatedClient(
            base_url=emu.base_url, token=emu.api_key, prefix="", auth_header_name="Api-Key"
        )
        created = notifications.sync(
            client=main,
            body=models.CreateNotificationBody(
                notification_title="Sale",
                notification_message="Half price",
                notification_url="https://shop.example/sale",
                include_countries=["FR", "DE"],
            ),
        )
        assert created.success is True and created.notification_id > 0
        (broadcast,) = emu.notifications()
        assert broadcast["notification_id"] == created.notification_id
        tracker = client_mod.AuthenticatedClient(
            base_url=emu.events_url, token=emu.api_key, prefix="", auth_header_name="Api-Key"
        )
        tracked = events.sync(
            client=tracker,
            body=models.TrackEventBody(event_name="signup", profile_id="42"),
        )
        assert tracked.error_code == 0
        assert [e["event_name"] for e in emu.events()] == ["signup"]
        # The service's refusal comes back as the document's error shape.
        refused = events.sync(client=tracker, body=models.TrackEventBody(event_name="x"))
        assert isinstance(refused, models.EventError) and refused.error.code == 1003
    finally:
        sys.path.remove(str(tmp_path))
        for name in list(sys.modules):
            if name.startswith("push_notification_service_api_client"):
                del sys.modules[name]
