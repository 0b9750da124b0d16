"""The public-API check of `make lint` (tools/api_check.py): which changes of a method's
signature it lets pass (every existing call binds as before) and which it reports."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("griffe", reason="griffe (requirements-dev.txt)")

TOOL = Path(__file__).resolve().parent.parent / "tools" / "api_check.py"
_spec = importlib.util.spec_from_file_location("api_check", TOOL)
assert _spec is not None and _spec.loader is not None
api_check = importlib.util.module_from_spec(_spec)
sys.modules["api_check"] = api_check
_spec.loader.exec_module(api_check)

SELF = ("self", "positional or keyword", None)
ID = ("segment_id", "positional or keyword", None)
CONCURRENCY = ("concurrency", "keyword-only", "8")
OPTIONS = ("options", "variadic keyword", "{}")


def shape(*parameters: Any, returns: str = "BulkResult") -> object:
    return (False, [SELF, *parameters], returns)


BEFORE = shape(ID, CONCURRENCY, OPTIONS)


@pytest.mark.parametrize(
    "after",
    [
        BEFORE,
        shape(ID, CONCURRENCY, ("checkpoint", "keyword-only", "None"), OPTIONS),
        shape(ID, ("checkpoint", "keyword-only", "None"), CONCURRENCY, OPTIONS),
        shape(ID, ("limit", "positional or keyword", "10"), CONCURRENCY, OPTIONS),
        shape(("segment_id", "positional or keyword", "None"), CONCURRENCY, OPTIONS),
    ],
    ids=[
        "same",
        "a keyword added before **options",
        "a keyword first",
        "a positional added",
        "a required one given a default",
    ],
)
def test_a_change_every_call_still_binds_to_passes(after: object) -> None:
    assert api_check._compatible(BEFORE, after)


@pytest.mark.parametrize(
    "after",
    [
        shape(ID, OPTIONS),
        shape(ID, CONCURRENCY),
        shape(ID, ("concurrency", "keyword-only", "16"), OPTIONS),
        shape(ID, CONCURRENCY, ("checkpoint", "keyword-only", None), OPTIONS),
        shape(ID, ("limit", "positional or keyword", None), CONCURRENCY, OPTIONS),
        shape(("limit", "positional or keyword", "10"), ID, CONCURRENCY, OPTIONS),
        shape(ID, CONCURRENCY, OPTIONS, returns="list[ChunkResult]"),
    ],
    ids=[
        "a keyword removed",
        "**options removed",
        "a default changed",
        "a required keyword added",
        "a required positional added",
        "a positional moved",
        "another return type",
    ],
)
def test_a_change_that_breaks_a_call_is_reported(after: object) -> None:
    assert not api_check._compatible(BEFORE, after)
