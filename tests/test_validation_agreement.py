"""Property: the client's validation and the emulator's agree. What the client refuses, the
emulator refuses with the spec's error when the same input reaches it as raw HTTP; what the
client accepts, the emulator accepts."""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pushwire
from pushwire.testing import Emulator

EMU = Emulator(api_key="agree-key")
CLIENT = EMU.client(max_retries=0, timeout=10)
HEADERS = {"Api-Key": EMU.api_key}

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

text = st.text(alphabet=st.sampled_from("ab yZ\u00e9\u4e2d.-"), max_size=12)


def sized(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.integers(lo, hi).map(lambda n: ("Ab c" * 60)[:n])


urls = st.sampled_from(
    ["https://shop.example/x", "http://a.example", "ftp://a.example", "not a url", "", "  "]
)
broadcasts = st.fixed_dictionaries(
    {
        "title": st.one_of(sized(0, 90), text),
        "message": st.one_of(sized(0, 140), text),
        "url": urls,
        "type": st.sampled_from(["now", "later", "draft"]),
    },
    optional={
        "valid_from_utc": st.sampled_from(
            ["2031-01-01 10:00:00", "2031-01-01T10:00:00", "2031-13-01 10:00:00", "tomorrow"]
        ),
        "expiry": st.integers(-2, 40330),
        "require_interaction": st.integers(-1, 2),
        # From 1: an empty list is refused by the client alone (it would mean no filter,
        # and the form cannot even carry it), a documented client-side rule.
        "subscriber_hash": st.integers(1, 103).map(lambda n: [f"h{i}" for i in range(n)]),
        "image_url": urls,
        "from_date": st.sampled_from(["2026-01-01", "2026-01-01T10:00:00Z", "yesterday"]),
        "actions": st.lists(
            st.fixed_dictionaries({"label": text, "url": urls}), min_size=0, max_size=3
        ),
    },
)


def broadcast_form(b: dict[str, Any]) -> dict[str, str]:
    """The same input as the spec's form body (arrays as indexed keys)."""
    form = {
        "notification_title": b["title"],
        "notification_message": b["message"],
        "notification_url": b["url"],
        "notification_type": b["type"],
    }
    for key in ("valid_from_utc", "image_url", "from_date"):
        if key in b:
            form[key] = b[key]
    if "expiry" in b:
        form["notification_expiry"] = str(b["expiry"])
    if "require_interaction" in b:
        form["require_interaction"] = str(b["require_interaction"])
    for i, h in enumerate(b.get("subscriber_hash", [])):
        form[f"subscriber_hash[{i}]"] = h
    for i, a in enumerate(b.get("actions", []), start=1):
        form[f"multi_element_title{i}"] = a["label"]
        form[f"multi_element_url{i}"] = a["url"]
    return form


def passes_the_client(call: Callable[..., Any], kwargs: dict[str, Any]) -> bool:
    """Whether the client's own checks let `call(**kwargs)` through, on a fresh emulator."""
    EMU.reset()
    try:
        call(**kwargs)
    except pushwire.ValidationError:
        return False
    return True


@SETTINGS
@given(broadcasts)
def test_broadcast_validation_agrees(b: dict[str, Any]) -> None:
    if passes_the_client(CLIENT.notifications.create, b):
        assert len(EMU.notifications()) == 1  # the emulator took what the client sent
        return
    assert EMU.requests() == []  # refused before sending
    if b["type"] == "now" and "valid_from_utc" in b:
        # A documented client-side rule: the service takes the pair and sends at once,
        # ignoring the time, which the caller surely did not mean.
        return
    r = requests.post(
        f"{EMU.base_url}/apiv1/notifications", data=broadcast_form(b), headers=HEADERS
    )
    assert r.status_code == 400, (b, r.text)
    body = r.json()
    assert body["success"] is False and body["message"]


json_scalars = st.one_of(
    st.text(max_size=30),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
)
data_keys = st.one_of(
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,20}", fullmatch=True),
    st.sampled_from(["_lead", "-lead", "has space", "dot.ted", "k" * 255, "k" * 256, ""]),
)
events = st.fixed_dictionaries(
    {"event_name": st.one_of(sized(0, 70), st.just("Service.reserved"), text)},
    optional={
        "profile_id": st.one_of(text, st.just("")),
        "device_token_hash": text,
        "data": st.one_of(
            st.dictionaries(data_keys, st.one_of(json_scalars, st.just([1])), max_size=4),
            st.just({"big": "x" * 4090}),
            st.just({"big": "x" * 4080}),
        ),
    },
)


@SETTINGS
@given(events)
def test_event_validation_agrees(e: dict[str, Any]) -> None:
    if passes_the_client(CLIENT.events.track, e):
        assert len(EMU.events()) == 1
        return
    assert EMU.requests() == []
    r = requests.post(
        f"{EMU.events_url}/api/v1/events",
        data=json.dumps(e),
        headers={**HEADERS, "Content-Type": "application/json"},
    )
    assert r.status_code == 400, (e, r.text)
    error: Optional[dict[str, Any]] = r.json().get("error")
    assert error is not None and error["code"] == 1003 and error["details"]
