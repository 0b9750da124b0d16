"""Every admin operation of the emulator has its Python method (issue 47), and the inspector's
views read from Python as the page shows them."""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Iterator

import pytest

from pushwire.testing import Emulator

# The admin document's routes that are no operation, and what stands for each in Python.
NOT_OPERATIONS = {
    "openapi": "openapi",  # emu.openapi()
    "admin_openapi": "openapi",  # emu.openapi(admin=True)
    "inspector": "ui_url",  # the page itself, at emu.ui_url
    "inspector_stream": "ui_url",  # the page's own live stream
}


@pytest.fixture(scope="module")
def emu() -> Iterator[Emulator]:
    with Emulator() as e:
        yield e


def test_every_admin_operation_of_the_openapi_document_has_its_python_method(emu: Emulator):
    document = emu.openapi(admin=True)
    ids = {
        op["operationId"].removesuffix("_get").removesuffix("_post")
        for path in document["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    operations = ids - set(NOT_OPERATIONS)
    assert operations == set(emu.operations())

    def has_method(name: str) -> bool:
        found = inspect.getattr_static(Emulator, name, None)
        return callable(found) or isinstance(found, property)  # `now` is a property

    missing = [
        name
        for name in sorted(operations)
        if not has_method(name) and name not in {"retention"}  # Emulator.retention_stats()
    ]
    assert missing == []
    assert callable(Emulator.retention_stats)
    for name in set(NOT_OPERATIONS.values()):
        assert hasattr(Emulator, name)
    # Each method is documented where a user reads it.
    undocumented = [
        n for n in operations if n in vars(Emulator) and not inspect.getdoc(getattr(Emulator, n))
    ]
    assert undocumented == []


def test_broadcasts_are_paged_with_their_counts(emu: Emulator):
    emu.reset()
    for i in range(3):
        emu.add_subscriber(profile_id=f"p{i}")
    client = emu.client()
    sent = [
        client.notifications.create(title=f"Sale {n}", message="m", url="https://shop.example")
        for n in range(3)
    ]
    first = [d for d in emu.deliveries() if d["notification_id"] == sent[0]]
    emu.record_view(first[0]["delivery_id"])
    emu.record_view(first[1]["delivery_id"])
    emu.record_click(first[1]["delivery_id"])

    everything = emu.broadcasts()
    assert [b["notification_id"] for b in everything] == sent[::-1]  # newest first
    oldest = everything[-1]
    assert (oldest["delivered"], oldest["views"], oldest["clicks"]) == (3, 2, 1)
    assert oldest["title"] == "Sale 0" and oldest["status"] == "sent"
    assert isinstance(oldest["created_at"], dt.datetime) and oldest["created_at"].tzinfo
    assert [b["notification_id"] for b in emu.broadcasts(offset=1, limit=1)] == [sent[1]]
    site = next(s for s in emu.sites() if s["default"])
    assert site["broadcasts"] == 3 and site["subscribers"] == 3
    # The summary the inspector charts counts the same views and clicks.
    today = emu.summary()[-1]
    assert (today["view_count"], today["click_count"]) == (2, 1)
    client.close()
