"""An error carries its answer's headers and the request's id, through both clients, over
real HTTP against the emulator; the emulator sets an answer's headers on request
(``inject_fault(headers=...)``) and names every answer's request (``X-Request-Id``)."""

from __future__ import annotations

import json
import pickle

import pytest
from client_support import Driver, api_requests

from pushwire import (
    APIError,
    BadRequestError,
    Headers,
    RateLimitError,
    ServerError,
)
from pushwire.testing import Emulator


def test_an_error_carries_the_answers_headers_repeated_ones_kept(
    drv: Driver, emu: Emulator
) -> None:
    emu.inject_fault(
        "/apiv1/segments",
        status=503,
        headers={"X-Request-Id": "gw-7f3a", "Set-Cookie": ["a=1", "b=2"], "X-Served-By": 7},
    )
    with pytest.raises(ServerError) as info:
        drv(drv.client.with_options(max_retries=0).segments.list)
    err = info.value
    assert isinstance(err.headers, Headers)
    # The fault's id stands in for the emulator's, as a gateway's would.
    assert err.request_id == "gw-7f3a"
    assert err.headers.get_list("x-request-id") == ["gw-7f3a"]
    assert err.headers.get_list("SET-COOKIE") == ["a=1", "b=2"]
    assert err.headers["set-cookie"] == "a=1, b=2"
    assert err.headers["x-served-by"] == "7"
    assert err.headers["content-type"] == "application/json"
    assert "X-Served-By" in err.headers and "x-missing" not in err.headers
    # Copied whole, repeated values kept apart.
    assert Headers(err.headers).get_list("set-cookie") == ["a=1", "b=2"]
    assert Headers(err.headers) == err.headers


def test_the_request_id_names_the_request_in_the_emulators_log(drv: Driver, emu: Emulator) -> None:
    with pytest.raises(BadRequestError) as info:
        drv(drv.client.drips.get, 424242)
    (logged,) = api_requests(emu)
    assert info.value.request_id == logged["request_id"]
    assert info.value.request_id.startswith("req_")


def test_a_refusal_answered_with_200_carries_its_headers_too(drv: Driver, emu: Emulator) -> None:
    # The service sends some refusals as HTTP 200 with `success: false` (spec section 7).
    emu.inject_fault(
        "/apiv1/segments",
        status=200,
        body={"success": False, "message": "Account suspended"},
        headers={"X-Request-Id": "gw-200"},
    )
    with pytest.raises(APIError) as info:
        drv(drv.client.segments.list)
    assert info.value.status_code == 200
    assert info.value.request_id == "gw-200"


def test_headers_survive_pickle_and_celerys_json_rebuild(drv: Driver, emu: Emulator) -> None:
    emu.inject_fault(
        "/apiv1/segments", status=429, retry_after=0, times=3, headers={"X-Request-Id": "rl-1"}
    )
    with pytest.raises(RateLimitError) as info:
        drv(drv.client.with_options(max_retries=0).segments.list)
    err = info.value
    for copy in (
        pickle.loads(pickle.dumps(err)),
        # Celery's JSON result format: the args through JSON, then `type(e)(*args)`.
        type(err)(*json.loads(json.dumps(err.args))),
    ):
        assert type(copy) is RateLimitError
        assert copy.request_id == "rl-1"
        assert copy.headers == err.headers
        assert copy.retry_after == 0
        assert copy.status_code == 429


def test_a_header_that_echoes_the_key_is_redacted(drv: Driver, emu: Emulator) -> None:
    emu.inject_fault(
        "/apiv1/drips", status=400, headers={"X-Echo": f"key={emu.api_key}"}, method="GET"
    )
    with pytest.raises(BadRequestError) as info:
        drv(drv.client.drips.list)
    assert emu.api_key not in repr(info.value.headers)
    assert info.value.headers["x-echo"] == "key=[redacted]"


def test_headers_without_a_status_decorate_the_real_answer(emu: Emulator) -> None:
    import urllib.request

    emu.inject_fault("/apiv1/segments", headers={"X-Trace": "t-1"})
    request = urllib.request.Request(
        f"{emu.base_url}/apiv1/segments", headers={"api-key": emu.api_key}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as answer:
        assert answer.status == 200
        assert answer.headers["X-Trace"] == "t-1"
        assert answer.headers["X-Request-Id"].startswith("req_")
        assert json.loads(answer.read())["success"] is True
    assert api_requests(emu)[0]["fault"] == "headers x-trace"


@pytest.mark.parametrize(
    ("headers", "named"),
    [
        ({"Content-Length": "5"}, "Content-Length"),
        ({"Transfer-Encoding": "chunked"}, "Transfer-Encoding"),
        ({"bad name": "x"}, "'bad name'"),
        ({"X-Ok": "line\nbreak"}, "X-Ok"),
        ({"X-Ok": {"nested": 1}}, "X-Ok"),
    ],
)
def test_a_header_a_fault_cannot_set_is_refused_by_name(
    emu: Emulator, headers: dict[str, object], named: str
) -> None:
    with pytest.raises(ValueError) as info:
        emu.inject_fault("/apiv1/segments", status=500, headers=headers)  # type: ignore[arg-type]
    assert "headers" in str(info.value)
    assert named.strip("'").lower() in str(info.value).lower()
