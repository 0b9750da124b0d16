"""The seam between the Python methods and the Rust core: each method reaches the core's
function of its own name with named arguments (pyo3's parsing), the check of `make lint`
(tools/surface.py) holds the two to one signature, and a call's arguments are read and
refused in Rust before anything is sent."""

from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pushwire
import pushwire._core as _core
from pushwire.testing import Emulator

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "surface.py"
RESOURCES = ROOT / "python" / "pushwire" / "resources"


def surface(root: Path) -> tuple[int, str]:
    done = subprocess.run([sys.executable, str(TOOL), str(root)], capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def test_every_method_and_its_core_function_agree() -> None:
    code, out = surface(ROOT)
    assert code == 0, out
    assert "21 operations" in out


def test_a_stub_that_names_one_function_for_another_names_one_of_the_same_signature() -> None:
    # stubtest checks `drips_list = triggers_list` as a name of that type, not as a function
    # of its own: the extension's two signatures are held to each other here.
    stub = ast.parse((ROOT / "python" / "pushwire" / "_core.pyi").read_text())
    aliases = {
        target.id: node.value.id
        for node in stub.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    assert {"drips_list", "segments_remove_profiles_bulk"} <= aliases.keys()
    for alias, named in aliases.items():
        theirs, its = (
            inspect.signature(getattr(_core, alias)),
            inspect.signature(getattr(_core, named)),
        )
        assert theirs == its, f"_core.{alias}{theirs} is stubbed as _core.{named}{its}"


def copy_of_the_surface(tmp_path: Path) -> Path:
    package = tmp_path / "python" / "pushwire"
    package.mkdir(parents=True)
    shutil.copytree(RESOURCES, package / "resources")
    shutil.copy(ROOT / "python" / "pushwire" / "_core.pyi", package / "_core.pyi")
    return package


# Each drift, as an edit of a copy of the surface, and what the check must say of it.
DRIFTS = {
    "a keyword renamed in the call": (
        "resources/drips.py",
        "analytics_end_at=analytics_end_at\n",
        "analytics_end=analytics_end_at\n",
        "Drips.get does not pass analytics_end_at= to _core.drips_get",
    ),
    "a parameter the core never gets": (
        "resources/segments.py",
        "        segment_type: Optional[str] = None,\n",
        "        segment_type: Optional[str] = None,\n        strict: bool = False,\n",
        "Segments.list's parameter strict does not reach _core.segments_list",
    ),
    "a core parameter the method lacks": (
        "_core.pyi",
        "def segments_delete(segment_id: _Id) -> PreparedCall: ...",
        "def segments_delete(segment_id: _Id, *, force: bool) -> PreparedCall: ...",
        "Segments.delete has no parameter force, which _core.segments_delete takes",
    ),
    "a method calling another operation": (
        "resources/triggers.py",
        "_core.triggers_get(",
        "_core.drips_get(",
        "Triggers.get calls _core.drips_get, not _core.triggers_get",
    ),
    "a positional where the core takes a keyword": (
        "resources/analytics.py",
        "_core.analytics_summary(start, end, group_by=group_by)",
        "_core.analytics_summary(start, end, group_by)",
        "passes 3 positional arguments to _core.analytics_summary, which takes 2",
    ),
    "an operation no method calls": (
        "_core.pyi",
        "def segments_delete(",
        "def segments_purge(segment_id: _Id) -> PreparedCall: ...\ndef segments_delete(",
        "_core.pyi's operation segments_purge is called by no resource method",
    ),
}


@pytest.mark.parametrize("drift", list(DRIFTS))
def test_the_check_names_each_drift(drift: str, tmp_path: Path) -> None:
    file, old, new, said = DRIFTS[drift]
    package = copy_of_the_surface(tmp_path)
    path = package / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    code, out = surface(tmp_path)
    assert code == 1 and said in out, out


def test_no_method_names_its_operation_by_a_string() -> None:
    """The calls go through `_core.<operation>(...)`: no primitive is given a string name
    or a positional tuple of arguments."""
    for path in RESOURCES.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("_call", "_then", "_bulk")
            ):
                # The call (after `_then`'s `after`), never an operation's name.
                call = node.args[1 if node.func.attr == "_then" else 0]
                assert not (isinstance(call, ast.Constant) and isinstance(call.value, str)), (
                    f"{path.name}:{node.lineno}"
                )


def test_each_core_function_has_the_signature_of_its_method() -> None:
    """pyo3's own signature, as `inspect` and an editor see it."""
    signature = inspect.signature(_core.drips_get)
    assert list(signature.parameters) == ["drip_id", "analytics_start_at", "analytics_end_at"]
    assert signature.parameters["analytics_end_at"].kind is inspect.Parameter.KEYWORD_ONLY
    with pytest.raises(TypeError, match="analytics_end"):
        _core.drips_get(1, analytics_start_at=None, analytics_end=None)  # type: ignore[call-arg]


def test_a_call_is_read_and_refused_in_rust_before_any_client_sees_it() -> None:
    with pytest.raises(pushwire.ValidationError) as e:
        _core.drips_get("seven", analytics_start_at=None, analytics_end_at=None)
    assert e.value.field == "drip_id"
    with pytest.raises(pushwire.ValidationError) as e:
        _core.segments_add_subscribers("1", "one hash")
    assert e.value.field == "subscriber_hashes"
    call = _core.drips_get(7, analytics_start_at=None, analytics_end_at=None)
    assert call.name == "drips.get" and call.idempotency_key is None
    assert call.arguments is None


RANGE: dict[str, Any] = {"analytics_start_at": None, "analytics_end_at": None}
PAGE: dict[str, Any] = {"page": None, "limit": None, **RANGE}
NOTIFICATION = {"title": "Hi", "message": "There", "url": "https://shop.example"}
# A valid call of each operation's function, by the method it serves.
CALLS: dict[str, Callable[[], _core.PreparedCall]] = {
    "triggers.get": lambda: _core.triggers_get(1, **RANGE),
    "triggers.list": lambda: _core.triggers_list(**PAGE),
    "drips.create": lambda: _core.drips_create(
        "Welcome",
        [NOTIFICATION],
        send_to=None,
        utm_params=None,
        check_segments=True,
        idempotency_key=None,
    ),
    "drips.get": lambda: _core.drips_get(1, **RANGE),
    "drips.list": lambda: _core.drips_list(**PAGE),
    "segments.list": lambda: _core.segments_list(
        segment_id=None, limit=None, offset=None, segment_type=None
    ),
    "segments.delete": lambda: _core.segments_delete(1),
    "segments.add_subscribers": lambda: _core.segments_add_subscribers(1, ["h"]),
    "segments.add_profiles": lambda: _core.segments_add_profiles("vip", ["p"]),
    "segments.remove_profiles": lambda: _core.segments_remove_profiles("vip", ["p"]),
    "analytics.summary": lambda: _core.analytics_summary(
        "2024-01-01", "2024-01-31", group_by="day"
    ),
    "analytics.subscribers": lambda: _core.analytics_subscribers(types=None),
    "products.update": lambda: _core.products_update(
        [{"product_id": "p", "price": 1}], idempotency_key=None
    ),
    "notifications.create": lambda: _core.notifications_create(
        {
            "notification_title": "Hi",
            "notification_message": "There",
            "notification_url": "https://shop.example",
        },
        send_late=False,
        check_segments=True,
        idempotency_key=None,
    ),
    "events.track": lambda: _core.events_track(
        "signup", profile_id="p", device_token_hash=None, data=None, idempotency_key=None
    ),
}


@pytest.mark.parametrize("method", sorted(CALLS))
def test_each_call_is_named_by_the_operation_it_sends(method: str) -> None:
    """The name a call's span, log lines and idempotency record carry is its operation's
    declaration's (`src/operations.rs`), which a binding reaches by type: a function bound
    to another operation's declaration names, and sends, that one."""
    assert CALLS[method]().name == method


def test_a_prepared_call_runs_once(emu: Emulator) -> None:
    client = pushwire.Client(api_key=emu.api_key, base_url=emu.base_url)
    try:
        call = _core.segments_list(segment_id=None, limit=None, offset=None, segment_type=None)
        assert client._core.call(call) == []
        with pytest.raises(pushwire.PushwireError, match="runs once"):
            client._core.call(call)
    finally:
        client.close()


def test_a_keyed_call_keeps_its_arguments_by_name_settled() -> None:
    """What its fingerprint is taken of: the arguments by name, a generator read once into
    the list both the fingerprint and the request are made of."""
    products = ({"product_id": f"p{i}", "price": i + 1} for i in range(2))
    call = _core.products_update(products, idempotency_key="k")
    assert call.idempotency_key == "k"
    assert call.arguments == {
        "products": [{"product_id": f"p{i}", "price": i + 1} for i in range(2)]
    }


def test_each_path_of_the_service_is_written_in_one_source_file() -> None:
    """The client's requests, the emulator's routes, its fault matching and gate and the
    OpenAPI document all take their paths from `src/operations.rs`."""
    import re

    literal = re.compile(r'"/(apiv1|api/v1)[/"]')
    holders = set()
    for path in (ROOT / "src").rglob("*.rs"):
        for line in path.read_text().splitlines():
            code = line.split("//", 1)[0]
            if literal.search(code):
                holders.add(path.relative_to(ROOT).as_posix())
    assert holders == {"src/operations.rs"}


def test_the_methods_taking_a_key_are_the_operations_declared_keyed() -> None:
    # Which calls take an idempotency key is declared with each operation in the core
    # (operations.rs): each method taking one is of such an operation, and each such
    # operation has its method taking one.
    client = pushwire.Client(api_key="seam-test-key", base_url="http://127.0.0.1:9")
    taking_a_key = set()
    for namespace in (
        "analytics",
        "drips",
        "events",
        "notifications",
        "products",
        "segments",
        "triggers",
    ):
        resource = getattr(client, namespace)
        for name in dir(resource):
            method = getattr(resource, name)
            if name.startswith("_") or not callable(method):
                continue
            if "idempotency_key" in inspect.signature(method).parameters:
                taking_a_key.add(f"{namespace}.{name}")
    client.close()
    assert _core._KEYED_OPERATIONS == taking_a_key
    assert _core._KEYED_OPERATIONS == {
        "drips.create",
        "events.track",
        "notifications.create",
        "products.update",
    }
